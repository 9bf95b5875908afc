"""Incident 3's replica as the AWS API describes it, and every region's GetMetricData answered
from given datapoints, kept whole, for as long as the block lasts. (The fortnight itself is
replayed end to end in tests/scenarios/test_incident_3_fortnight.py.)"""

from __future__ import annotations

from datetime import timedelta

import boto3
import pytest

from analyzer.collect.aws import Clients
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.datapoints import Datapoints
from analyzer.sim.fortnight import FORTNIGHT_END, KEEP_S, create_replica, metrics_from
from analyzer.sim.scenario import FORTNIGHT_START, REGION


def test_the_fortnight_ends_on_the_second_friday_evening() -> None:
    assert timedelta(days=11, hours=20) == FORTNIGHT_END - FORTNIGHT_START
    assert FORTNIGHT_END.weekday() == 4 and FORTNIGHT_END.hour == 20
    assert KEEP_S == 15 * 86_400


def test_the_replica_is_described_as_the_api_describes_it(aws: None) -> None:
    replica = create_replica()
    assert (replica.db_instance_id, replica.region) == ("orders-replica", REGION)
    assert (replica.engine, replica.instance_class) == ("mysql", "db.m5.2xlarge")
    assert (replica.storage_type, replica.allocated_gib) == ("gp2", 800)
    assert replica.class_info is not None and replica.class_info.name == "m5.2xlarge"
    [listed] = boto3.client("rds", region_name=REGION).describe_db_instances()["DBInstances"]
    assert listed["DBInstanceIdentifier"] == "orders-replica"


def _ask(clients: Clients, end_days: float) -> list[float]:
    answer = clients.cloudwatch.get_metric_data(
        MetricDataQueries=[
            {
                "Id": "m0",
                "MetricStat": {
                    "Metric": {
                        "Namespace": "AWS/RDS",
                        "MetricName": "BurstBalance",
                        "Dimensions": [{"Name": "DBInstanceIdentifier", "Value": "db-a"}],
                    },
                    "Period": 60,
                    "Stat": "Average",
                },
            }
        ],
        StartTime=FORTNIGHT_START,
        EndTime=FORTNIGHT_START + timedelta(days=end_days),
    )
    return list(answer["MetricDataResults"][0]["Values"])


def test_metrics_come_from_the_data_kept_whole_while_the_block_lasts() -> None:
    # The first and the last minute of fourteen days: neither is dropped as time runs on.
    data: Datapoints = {
        ("db-a", "BurstBalance"): [
            (FORTNIGHT_START, 90.0),
            (FORTNIGHT_START + timedelta(days=14), 10.0),
        ]
    }
    with metrics_from(data):
        clients = Clients.for_region(REGION)
        assert isinstance(clients.cloudwatch, SimulatedCloudWatch)
        assert _ask(clients, 14.5) == [90.0, 10.0]
        assert isinstance(Clients.for_region("eu-west-1").cloudwatch, SimulatedCloudWatch)
        # An explicit stand-in still wins.
        mine = SimulatedCloudWatch()
        assert Clients.for_region(REGION, cloudwatch=mine).cloudwatch is mine
    assert not isinstance(Clients.for_region(REGION).cloudwatch, SimulatedCloudWatch)


def test_the_plain_clients_come_back_when_the_block_fails() -> None:
    with pytest.raises(RuntimeError), metrics_from({}):
        raise RuntimeError
    assert not isinstance(Clients.for_region(REGION).cloudwatch, SimulatedCloudWatch)
