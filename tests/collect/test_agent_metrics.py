"""The CloudWatch agent's metrics: which volumes have them, with which dimensions, and read in
place of AWS/EBS's."""

from __future__ import annotations

from datetime import timedelta

import boto3
import pytest

from analyzer.analyze import normalize
from analyzer.collect import queries
from analyzer.collect.agent_metrics import AgentDiscovery, attach, by_volume, chosen
from analyzer.collect.cloudwatch import CloudWatch
from analyzer.collect.window import Window
from analyzer.errors import AwsAccessError
from analyzer.model import metrics
from analyzer.model.metrics import Measure, Namespace, Tier
from analyzer.model.resources import AgentMetrics, Instance, Inventory, Volume
from analyzer.model.series import Status
from tests.helpers import T0

READ_OPS = metrics.agent_instead("VolumeReadOps")
IOPS_US = metrics.agent_instead("VolumeIOPSExceededCheck")
assert READ_OPS is not None and IOPS_US is not None
PAIR = (("InstanceId", "i-1"), ("VolumeId", "vol-1"))


def volume(vid="vol-1", attached="i-1", multi=False, agent=None) -> Volume:
    return Volume(
        vid, "us-east-1", "gp3", 100, "in-use", 3000, 125, attached, multi_attach=multi, agent=agent
    )


def test_each_volume_gets_the_dimension_sets_the_agent_publishes_it_with():
    listed = [
        (READ_OPS.name, PAIR),
        (IOPS_US.name, PAIR),
        ("diskio_io_time", PAIR),  # not a metric the analyzer reads
        (READ_OPS.name, (("InstanceId", "i-9"), ("VolumeId", "vol-2"), ("ImageId", "ami-1"))),
        (READ_OPS.name, (("InstanceId", "i-1"),)),  # no volume: an instance-level metric
    ]
    found = by_volume(listed, "CWAgent")
    assert found == {
        "vol-1": [AgentMetrics("CWAgent", PAIR, tuple(sorted([READ_OPS.name, IOPS_US.name])))],
        "vol-2": [
            AgentMetrics(
                "CWAgent",
                (("InstanceId", "i-9"), ("VolumeId", "vol-2"), ("ImageId", "ami-1")),
                (READ_OPS.name,),
            )
        ],
    }


def test_the_set_naming_the_volumes_instance_wins_and_an_unclear_one_is_not_guessed():
    here = AgentMetrics("CWAgent", PAIR, (READ_OPS.name,))
    before = AgentMetrics(
        "CWAgent", (("InstanceId", "i-0"), ("VolumeId", "vol-1")), (READ_OPS.name,)
    )
    bare = AgentMetrics("CWAgent", (("VolumeId", "vol-1"),), (READ_OPS.name,))
    other = AgentMetrics("CWAgent", (("Host", "b"), ("VolumeId", "vol-1")), (READ_OPS.name,))
    assert chosen(volume(), [before, here]) is here
    assert chosen(volume(), [before]) is None  # moved since: not what it does now
    assert chosen(volume(), [bare]) is bare
    assert chosen(volume(), [bare, other]) is None
    assert chosen(volume(multi=True), [here]) is None
    assert chosen(volume(), []) is None


def test_a_volume_the_agent_publishes_for_is_asked_its_metrics_instead_with_their_dimensions():
    agent = AgentMetrics("MyAgent", PAIR, (IOPS_US.name, READ_OPS.name))
    asked = queries.for_volume(volume(agent=agent), nitro=True, tier=Tier.HOT)
    by_name = {q.metric: q for q in asked}
    # Published by the agent: asked there, in its namespace, with its exact dimensions.
    assert by_name[READ_OPS.name].namespace == "MyAgent"
    assert by_name[READ_OPS.name].dimensions == PAIR
    assert by_name[IOPS_US.name].stat == "Sum" and by_name[IOPS_US.name].scale == 1e-6
    assert "VolumeReadOps" not in by_name and "VolumeIOPSExceededCheck" not in by_name
    # Not published by it: from AWS/EBS as before.
    assert by_name["VolumeWriteOps"].namespace == "AWS/EBS"
    assert by_name["VolumeThroughputExceededCheck"].namespace == "AWS/EBS"
    assert by_name["VolumeStalledIOCheck"].namespace == "AWS/EBS"
    # The same number of metrics, so the same bill.
    plain = queries.for_volume(volume(), nitro=True, tier=Tier.HOT)
    assert len(asked) == len(plain)
    # A volume a node agent covers: only what CloudWatch alone has, the agent's or not.
    covered = queries.for_volume(volume(agent=agent), nitro=True, tier=Tier.HOT, covered=True)
    assert {q.metric for q in covered} == {"VolumeStalledIOCheck"}


def test_the_agents_series_normalize_as_aws_ebs_ones_with_the_seconds_at_the_cap():
    from analyzer.model.series import Series

    stamps = tuple(T0 + timedelta(minutes=m) for m in range(3))

    def s(*values):
        return Series.of(list(zip(stamps, values, strict=True)), 60)

    ebs = normalize.volume(
        {
            "VolumeReadOps": s(600, 600, 600),
            "VolumeWriteOps": s(0, 0, 0),
            "VolumeIOPSExceededCheck": s(0, 1, 1),
        }
    )
    write = metrics.agent_instead("VolumeWriteOps")
    assert write is not None
    agent = normalize.volume(
        {READ_OPS.name: s(600, 600, 600), write.name: s(0, 0, 0), IOPS_US.name: s(0, 0.4, 23.0)}
    )
    assert agent[Measure.IOPS].values == ebs[Measure.IOPS].values
    assert list(agent[Measure.IOPS_EXCEEDED].values) == [0, 1, 1]
    assert list(agent[Measure.IOPS_AT_CAP].values) == [0, 0.4, 23.0]
    assert Measure.IOPS_AT_CAP not in ebs


def test_read_from_cloudwatch_as_the_agent_publishes_them(aws):
    """moto stands in for CloudWatch: ListMetrics finds the volume with the agent's dimensions,
    the queries ask exactly those, and the microseconds come back as seconds. The same metric
    asked with VolumeId alone answers nothing, as CloudWatch would."""
    client = boto3.client("cloudwatch", region_name="us-east-1")
    dims = [{"Name": "InstanceId", "Value": "i-1"}, {"Name": "VolumeId", "Value": "vol-1"}]
    client.put_metric_data(
        Namespace="CWAgent",
        MetricData=[
            {
                "MetricName": name,
                "Dimensions": dims,
                "Timestamp": T0 + timedelta(minutes=m),
                "Value": value,
            }
            for m in range(5)
            for name, value in ((READ_OPS.name, 6000.0), (IOPS_US.name, 12_500_000.0))
        ],
    )
    inv = Inventory(
        "us-east-1",
        (volume(),),
        (Instance("i-1", "us-east-1", "m5.large", "running", volume_ids=("vol-1",)),),
    )
    cloud = CloudWatch(client, "us-east-1")
    found = AgentDiscovery("CWAgent").discover(inv, cloud)
    [mine] = found.volumes
    assert mine.agent is not None
    assert set(mine.agent.names) == {READ_OPS.name, IOPS_US.name}
    assert dict(mine.agent.dimensions) == {"InstanceId": "i-1", "VolumeId": "vol-1"}
    asked = [q for q in queries.for_volume(mine, True, Tier.HOT) if q.namespace == "CWAgent"]
    window = Window(T0, T0 + timedelta(minutes=5), 60)
    series, _ = cloud.fetch(asked, window)
    by_name = {q.metric: s for q, s in series.items()}
    assert list(by_name[IOPS_US.name].values) == [12.5] * 5
    assert list(by_name[READ_OPS.name].values) == [6000.0] * 5
    alone = [
        q.__class__(
            q.resource_id,
            q.namespace,
            q.metric,
            (("VolumeId", "vol-1"),),
            q.stat,
            q.period_s,
            q.scale,
        )
        for q in asked
    ]
    empty, _ = cloud.fetch(alone, window)
    assert all(s.status is Status.NO_DATA for s in empty.values())


class Refusing:
    region = "us-east-1"

    def __init__(self):
        self.calls = 0

    def list_metrics(self, namespace, dimension):
        self.calls += 1
        raise AwsAccessError("cloudwatch:ListMetrics in us-east-1: AccessDenied: not allowed")


def test_a_failed_list_reads_every_volume_from_aws_ebs_with_one_warning():
    from structlog.testing import capture_logs

    inv = Inventory("us-east-1", (volume(),))
    discovery = AgentDiscovery("CWAgent")
    refusing = Refusing()
    with capture_logs() as logs:
        assert discovery.discover(inv, refusing) is inv
        assert discovery.discover(inv, refusing) is inv
    warned = [e for e in logs if e["event"] == "agent_metrics.failed"]
    assert len(warned) == 1 and "AccessDenied" in warned[0]["error"]
    assert refusing.calls == 2
    assert "us-east-1" in discovery.failing


def test_the_list_call_is_valid_for_the_service_model_and_follows_pages():
    from botocore.stub import Stubber

    client = boto3.client("cloudwatch", region_name="us-east-1")
    with Stubber(client) as stub:
        first = {
            "Namespace": "CWAgent",
            "Dimensions": [{"Name": "VolumeId"}],
            "RecentlyActive": "PT3H",
        }
        stub.add_response(
            "list_metrics",
            {
                "Metrics": [
                    {
                        "MetricName": READ_OPS.name,
                        "Dimensions": [{"Name": "VolumeId", "Value": "vol-1"}],
                    }
                ],
                "NextToken": "t",
            },
            first,
        )
        stub.add_response("list_metrics", {"Metrics": []}, {**first, "NextToken": "t"})
        listed = CloudWatch(client, "us-east-1").list_metrics("CWAgent", "VolumeId")
    assert listed == [(READ_OPS.name, (("VolumeId", "vol-1"),))]


def test_one_metric_is_listed_by_its_name():
    from botocore.stub import Stubber

    client = boto3.client("cloudwatch", region_name="us-east-1")
    with Stubber(client) as stub:
        stub.add_response(
            "list_metrics",
            {"Metrics": []},
            {
                "Namespace": "CWAgent",
                "Dimensions": [{"Name": "InstanceId"}],
                "RecentlyActive": "PT3H",
                "MetricName": "mem_used_percent",
            },
        )
        listing = CloudWatch(client, "us-east-1")
        assert listing.list_metrics("CWAgent", "InstanceId", "mem_used_percent") == []


def test_a_monitoring_account_lists_the_source_accounts_metrics():
    from botocore.stub import Stubber

    client = boto3.client("cloudwatch", region_name="us-east-1")
    with Stubber(client) as stub:
        stub.add_response(
            "list_metrics",
            {"Metrics": []},
            {
                "Namespace": "CWAgent",
                "Dimensions": [{"Name": "VolumeId"}],
                "RecentlyActive": "PT3H",
                "IncludeLinkedAccounts": True,
                "OwningAccount": "111111111111",
            },
        )
        CloudWatch(client, "us-east-1", account_id="111111111111").list_metrics(
            "CWAgent", "VolumeId"
        )


def test_an_access_denied_list_is_an_access_error():
    from botocore.stub import Stubber

    client = boto3.client("cloudwatch", region_name="us-east-1")
    with Stubber(client) as stub:
        stub.add_client_error("list_metrics", "AccessDenied", "not allowed")
        with pytest.raises(AwsAccessError, match="cloudwatch:ListMetrics in us-east-1"):
            CloudWatch(client, "us-east-1").list_metrics("CWAgent", "VolumeId")


def test_attach_leaves_volumes_without_agent_metrics_alone():
    inv = Inventory("us-east-1", (volume(), volume("vol-2", "i-2")))
    found = attach(
        inv, {"vol-2": [AgentMetrics("CWAgent", (("VolumeId", "vol-2"),), (READ_OPS.name,))]}
    )
    assert found.volumes[0].agent is None and found.volumes[1].agent is not None
    assert attach(inv, {}) is inv
    assert Namespace.AGENT.value == "CWAgent"


def test_an_agent_silent_for_five_minutes_is_left_for_three_hours_and_a_failure_is_not_silence():
    from analyzer.collect.agent_metrics import RETRY_S, SILENT_S, Silence
    from analyzer.model.series import Series

    agent = AgentMetrics("CWAgent", PAIR, (READ_OPS.name,))
    inv = Inventory("us-east-1", (volume(agent=agent), volume("vol-2", "i-2")))
    end = T0 + timedelta(minutes=30)

    def ops(last_minute: int) -> Series:
        return Series.of([(T0 + timedelta(minutes=m), 0.0) for m in range(last_minute + 1)], 60)

    silence = Silence()
    live = {"vol-1": {READ_OPS.name: ops(27)}}  # idle, but publishing its zeros
    assert silence.check(inv, live, {"vol-1"}, end, end) == set()
    quiet = {"vol-1": {READ_OPS.name: ops(30 - SILENT_S // 60 - 1)}}
    assert silence.check(inv, quiet, {"vol-2"}, end, end) == set()  # not polled now
    failed = {"vol-1": {READ_OPS.name: Series.failed("cloudwatch:GetMetricData: boom", 60)}}
    assert silence.check(inv, failed, {"vol-1"}, end, end) == set()
    before = silence.volumes
    assert silence.check(inv, quiet, {"vol-1"}, end, end) == {"vol-1"}
    assert silence.volumes == {"vol-1"} and silence.volumes is not before
    assert silence.check(inv, quiet, {"vol-1"}, end, end) == set()  # said once
    kept = silence.volumes
    silence.expire(end + timedelta(seconds=RETRY_S - 1))
    assert silence.volumes is kept
    silence.expire(end + timedelta(seconds=RETRY_S))
    assert silence.volumes == frozenset()
    # Planned from AWS/EBS while silent.
    asked = queries.for_inventory(inv, agentless={"vol-1"})["vol-1"]
    assert {q.namespace for q in asked} == {"AWS/EBS"}


def test_an_agent_publishing_every_five_minutes_is_read_at_five_minutes():
    """`metrics_collection_interval: 300`: one point of five minutes' growth every five
    minutes. Read as a minute's, it would be five times the rate."""
    from analyzer.model.series import Series

    write = metrics.agent_instead("VolumeWriteOps")
    assert write is not None
    stamps = [T0 + timedelta(minutes=5 * i) for i in range(4)]
    every_5 = Series.of([(t, 900_000.0) for t in stamps], 60)  # 3,000 IOPS for 300 s
    zeros = Series.of([(t, 0.0) for t in stamps], 60)
    measures = normalize.volume({READ_OPS.name: every_5, write.name: zeros})
    assert measures[Measure.IOPS].period_s == 300
    assert list(measures[Measure.IOPS].values) == [3_000.0] * 4


class Flaky:
    region = "us-east-1"

    def __init__(self, *answers):
        self.answers = list(answers)

    def list_metrics(self, namespace, dimension):
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_a_failed_list_keeps_what_it_listed_last_but_a_refusal_does_not():
    from analyzer.errors import AwsCallError

    inv = Inventory("us-east-1", (volume(),))
    listed = [(READ_OPS.name, PAIR)]
    throttled = AwsCallError("cloudwatch:ListMetrics in us-east-1: Throttling: slow down")
    refused = AwsAccessError("cloudwatch:ListMetrics in us-east-1: AccessDenied: no")
    discovery = AgentDiscovery("CWAgent")
    lister = Flaky(listed, throttled, refused, listed)
    assert discovery.discover(inv, lister).volumes[0].agent is not None
    assert discovery.discover(inv, lister).volumes[0].agent is not None  # kept
    assert discovery.discover(inv, lister).volumes[0].agent is None  # refused: AWS/EBS
    assert discovery.discover(inv, lister).volumes[0].agent is not None
    assert discovery.failing == {}


def test_an_agent_publishing_every_five_minutes_is_not_silent_between_its_points():
    from analyzer.collect.agent_metrics import Silence
    from analyzer.model.series import Series

    agent = AgentMetrics("CWAgent", PAIR, (READ_OPS.name,))
    inv = Inventory("us-east-1", (volume(agent=agent),))
    points = [(T0 + timedelta(minutes=5 * i), 0.0) for i in range(6)]  # last at 25 min
    current = {"vol-1": {READ_OPS.name: Series.of(points, 60)}}
    end = T0 + timedelta(minutes=34)
    assert Silence().check(inv, current, {"vol-1"}, end, end) == set()
    later = T0 + timedelta(minutes=36)  # two intervals gone by
    assert Silence().check(inv, current, {"vol-1"}, later, later) == {"vol-1"}
