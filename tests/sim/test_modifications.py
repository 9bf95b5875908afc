"""A ModifyVolume in the simulated account is recorded as AWS records it, at the simulated
present, and the volume's simulation runs under its new configuration from then on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3

from analyzer.model.resources import Volume
from analyzer.model.units import KIB
from analyzer.sim import account as demo
from analyzer.sim.scenario import REGION, DemoInstance, DemoVolume
from analyzer.sim.workloads import Demand, constant

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
"""Days before the wall clock: a record stamped with the wall clock would not be at it."""
SHOP = DemoInstance(
    "shop",
    "m5.large",
    "a gp2 50 GiB volume held at its baseline",
    (DemoVolume("shop-data", "gp2", 50, Demand(constant(1_500), 4 * KIB), balance_percent=0.0),),
)


def _minutes(account: demo.DemoAccount, volume: Volume, name: str, until: datetime) -> list:
    """A metric's minutes from five before the present to `until` (the exceeded check under
    the volume and its instance, as AWS publishes it)."""
    dimensions = [{"Name": "VolumeId", "Value": volume.volume_id}]
    if name.endswith("Check"):
        dimensions.append({"Name": "InstanceId", "Value": volume.attached_to or ""})
    answer = account.cloudwatch.get_metric_data(
        MetricDataQueries=[
            {
                "Id": "m0",
                "MetricStat": {
                    "Metric": {
                        "Namespace": "AWS/EBS",
                        "MetricName": name,
                        "Dimensions": dimensions,
                    },
                    "Period": 60,
                    "Stat": "Maximum" if name.endswith("Check") else "Sum",
                },
            }
        ],
        StartTime=account.now - timedelta(minutes=5),
        EndTime=until,
    )
    result = answer["MetricDataResults"][0]
    return list(zip(result["Timestamps"], result["Values"], strict=True))


def test_a_modification_is_stamped_at_the_simulated_present_with_what_the_volume_was() -> None:
    with demo.account(NOW, scenario=(SHOP,), databases=()) as account:
        [volume] = [
            v for v in account.region(REGION).describe.volumes() if v.tags["Name"] == "shop-data"
        ]
        ec2 = boto3.client("ec2", region_name=REGION)
        ec2.modify_volume(VolumeId=volume.volume_id, VolumeType="gp3", Iops=3000, Throughput=125)
        [made] = ec2.describe_volumes_modifications(VolumeIds=[volume.volume_id])[
            "VolumesModifications"
        ]
        assert made["StartTime"] == account.now
        assert (made["OriginalVolumeType"], made["OriginalSize"]) == ("gp2", 50)
        assert (made["TargetVolumeType"], made["TargetSize"]) == ("gp3", 50)
        assert (made["TargetIops"], made["TargetThroughput"]) == (3000, 125)
        [described] = account.region(REGION).describe.volume_modifications()[volume.volume_id]
        assert described.started == account.now

        # Before the change, held at the 150 IOPS baseline and flagged; after it, the 1,500
        # IOPS asked, under the gp3's 3,000, unflagged, and no bucket any more.
        later = account.now + timedelta(minutes=5)
        ops = _minutes(account, volume, "VolumeReadOps", later)
        flags = _minutes(account, volume, "VolumeIOPSExceededCheck", later)
        balance = _minutes(account, volume, "BurstBalance", later)
        before = [v for t, v in ops if t < account.now]
        after = [v for t, v in ops if t >= account.now]
        assert max(before) < 151 * 60 and len(after) == 5 and min(after) > 1_000 * 60
        assert [v for t, v in flags if t < account.now] == [1.0] * 5
        assert [v for t, v in flags if t >= account.now] == [0.0] * 5
        assert balance and all(t < account.now for t, _ in balance)
