"""GetMetricData answered from a node's NVMe statistics: CloudWatch's metric names and statistics
(Amazon CloudWatch User Guide, "Amazon EBS metrics" and "Amazon EC2 metrics", EBS metrics of
Nitro instances) at a period of a few seconds, from the page's counters (Amazon EBS User Guide,
"Amazon EBS detailed performance statistics")."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from analyzer.collect.logpage import Stats
from analyzer.collect.queries import MetricQuery, for_inventory
from analyzer.collect.window import Window
from analyzer.model.limits import gp2
from analyzer.model.resources import Instance, InstanceType, Inventory, Volume
from analyzer.model.series import Series, Status
from analyzer.node import balance
from analyzer.node.balance import Anchor
from analyzer.node.counters import Counters
from analyzer.node.source import NodeMetrics

T = 1_764_150_000.0
"""An epoch second on a whole minute."""
PERIOD = 5
WINDOW = Window(datetime.fromtimestamp(T, UTC), datetime.fromtimestamp(T + 30, UTC), PERIOD)
REGION = "us-east-1"
M5 = InstanceType("m5.large", 3_600, 18_750, 81.25e6, 593.75e6, nitro=True)
INVENTORY = Inventory(
    REGION,
    (
        Volume("vol-1", REGION, "gp2", 50, "in-use", attached_to="i-1"),
        Volume("vol-2", REGION, "gp2", 50, "in-use", attached_to="i-1"),
    ),
    (Instance("i-1", REGION, "m5.large", "running", True, ("vol-1", "vol-2"), M5),),
)
QUERIES = {
    (q.resource_id, q.metric): q
    for queries in for_inventory(INVENTORY, period_s=PERIOD).values()
    for q in queries
}


def _held(t: float, start: float) -> int:
    """Microseconds a limit held I/O back by `t`: all of [start, start + 5), nothing else."""
    return round(1_000_000 * min(max(t - start, 0.0), 5.0))


def _vol1(t: float) -> Stats:
    """1,000 reads of 4 KiB and 500 writes of 16 KiB a second, 0.5 ms each; its IOPS limit
    held I/O back in [10, 15) s, the instance's in [20, 25) s."""
    s = t + 60
    return Stats(
        read_ops=round(1_000 * s),
        write_ops=round(500 * s),
        read_bytes=round(1_000 * 4_096 * s),
        write_bytes=round(500 * 16_384 * s),
        read_time_us=round(1_000 * 500 * s),
        write_time_us=round(500 * 500 * s),
        volume_iops_exceeded_us=_held(t, 10),
        instance_iops_exceeded_us=_held(t, 20),
        queue_length=round(t) % 5,
    )


def _vol2(t: float) -> Stats:
    """100 reads of 4 KiB a second; the instance's IOPS limit held it back in [20, 25) s."""
    s = t + 60
    return Stats(
        read_ops=round(100 * s),
        read_bytes=round(100 * 4_096 * s),
        instance_iops_exceeded_us=_held(t, 20),
    )


def _counters(stats: Callable[[float], Stats]) -> Counters:
    """Read every second from a minute before the window to after it."""
    counters = Counters(keep_s=3_600)
    for second in range(-60, 40):
        counters.add(T + second, stats(float(second)))
    return counters


def _node(**kwargs: object) -> NodeMetrics:
    node = NodeMetrics(REGION, counters={"vol-1": _counters(_vol1), "vol-2": _counters(_vol2)})
    for name, value in kwargs.items():
        setattr(node, name, value)
    node.know([INVENTORY])
    return node


def _answer(node: NodeMetrics, resource_id: str, metric: str) -> Series:
    query = QUERIES[(resource_id, metric)]
    return node.fetch([query], WINDOW)[0][query]


def _values(series: Series) -> list[float]:
    assert series.status is Status.OK, series.error
    assert series.timestamps == tuple(
        datetime.fromtimestamp(T + at, UTC) for at in range(0, 30, PERIOD)
    )
    assert series.period_s == PERIOD
    return list(series.values)


def test_the_queries_are_the_catalogues_at_five_seconds() -> None:
    """The fixture asks what the cycle asks: every metric of a gp2 volume and a Nitro instance."""
    assert {q.period_s for q in QUERIES.values()} >= {PERIOD}
    assert ("vol-1", "BurstBalance") in QUERIES
    assert ("i-1", "EBSReadOps") in QUERIES


@pytest.mark.parametrize(
    ("metric", "per_period"),
    [
        ("VolumeReadOps", 5_000.0),
        ("VolumeWriteOps", 2_500.0),
        ("VolumeReadBytes", 5_000.0 * 4_096),
        ("VolumeWriteBytes", 2_500.0 * 16_384),
        ("VolumeTotalReadTime", 2.5),  # seconds: 5,000 reads × 500 µs
        ("VolumeTotalWriteTime", 1.25),
    ],
)
def test_a_volumes_sums_are_the_counters_growth_per_period(metric: str, per_period: float) -> None:
    assert _values(_answer(_node(), "vol-1", metric)) == [pytest.approx(per_period)] * 6


def test_the_queue_length_is_the_average_of_its_readings() -> None:
    """Readings 0, 1, 2, 3, 4 in each period: 2, not their sum or the last."""
    assert _values(_answer(_node(), "vol-1", "VolumeQueueLength")) == [2.0] * 6


def test_a_volumes_exceeded_check_is_one_in_the_periods_its_limit_held_io_back() -> None:
    node = _node()
    assert _values(_answer(node, "vol-1", "VolumeIOPSExceededCheck")) == [0, 0, 1, 0, 0, 0]
    assert _values(_answer(node, "vol-1", "VolumeThroughputExceededCheck")) == [0.0] * 6


@pytest.mark.parametrize(
    ("metric", "per_period"),
    [
        ("EBSReadOps", 5_000.0 + 500.0),
        ("EBSWriteOps", 2_500.0),
        ("EBSReadBytes", (5_000.0 + 500.0) * 4_096),
        ("EBSWriteBytes", 2_500.0 * 16_384),
    ],
)
def test_the_instances_sums_are_over_its_volumes(metric: str, per_period: float) -> None:
    assert _values(_answer(_node(), "i-1", metric)) == [pytest.approx(per_period)] * 6


def test_the_instances_exceeded_check_is_the_highest_of_its_volumes() -> None:
    """Both volumes were held back in [20, 25): the check is 1, not their sum."""
    node = _node()
    assert _values(_answer(node, "i-1", "InstanceEBSIOPSExceededCheck")) == [0, 0, 0, 0, 1, 0]
    assert _values(_answer(node, "i-1", "InstanceEBSThroughputExceededCheck")) == [0.0] * 6


def test_burst_balance_is_modelled_from_the_anchor() -> None:
    """1,500 IOPS of at most 16 KiB on a 50 GiB gp2 (150 IOPS baseline, 5.4 million credits):
    0.125 % a period."""
    node = _node(anchors={"vol-1": [Anchor(T, 90.0)]})
    step = (1_500 - 150) * PERIOD / 5.4e6 * 100
    got = _values(_answer(node, "vol-1", "BurstBalance"))
    assert got == [pytest.approx(90.0 - step * (i + 1)) for i in range(6)]
    bucket = gp2(50).bucket
    assert bucket is not None
    expected = balance.modelled(bucket, node.counters["vol-1"], [Anchor(T, 90.0)], T, T + 30, 5)
    assert got == list(expected.values)


def test_burst_balance_without_an_anchor_has_no_data() -> None:
    node = _node(anchors={"vol-2": [Anchor(T, 90.0)]})
    series = _answer(node, "vol-1", "BurstBalance")
    assert series.status is Status.NO_DATA and len(series) == 0


def test_burst_balance_of_a_volume_not_in_the_inventory_has_no_data() -> None:
    node = _node(anchors={"vol-1": [Anchor(T, 90.0)]})
    node.know([Inventory(REGION)])
    assert _answer(node, "vol-1", "BurstBalance").status is Status.NO_DATA


WHY = "vol-2 (/dev/nvme2n1): log page is 100 bytes, not 4,096 (a short read)"


@pytest.mark.parametrize(
    "metric", ["VolumeReadOps", "VolumeQueueLength", "VolumeIOPSExceededCheck", "BurstBalance"]
)
def test_an_unreadable_volume_answers_an_error_saying_why(metric: str) -> None:
    node = _node(unreadable={"vol-2": WHY}, anchors={"vol-2": [Anchor(T, 90.0)]})
    series = _answer(node, "vol-2", metric)
    assert (series.status, series.error, len(series)) == (Status.ERROR, WHY, 0)


@pytest.mark.parametrize(
    "metric",
    [
        "EBSReadOps",
        "EBSWriteOps",
        "EBSReadBytes",
        "EBSWriteBytes",
        "InstanceEBSIOPSExceededCheck",
        "InstanceEBSThroughputExceededCheck",
    ],
)
def test_an_unreadable_volume_fails_its_instances_sums_never_zeros(metric: str) -> None:
    series = _answer(_node(unreadable={"vol-2": WHY}), "i-1", metric)
    assert series.status is Status.ERROR and len(series) == 0
    assert series.error == WHY  # which names the volume and its device already


def test_an_unreadable_volume_leaves_the_other_volume_answered() -> None:
    node = _node(unreadable={"vol-2": WHY})
    assert _values(_answer(node, "vol-1", "VolumeReadOps")) == [pytest.approx(5_000.0)] * 6


def test_a_volume_the_node_does_not_read_has_no_data() -> None:
    node = _node()
    del node.counters["vol-2"]
    for metric in ("VolumeReadOps", "VolumeQueueLength", "VolumeIOPSExceededCheck"):
        series = _answer(node, "vol-2", metric)
        assert (series.status, series.error) == (Status.NO_DATA, None)


def test_an_instance_with_a_volume_the_node_does_not_read_has_no_sums() -> None:
    """vol-1's I/O alone is not the instance's: an understated sum would hide an instance
    limit, so the sum is unknown rather than partial."""
    node = _node()
    del node.counters["vol-2"]
    for metric in ("EBSReadOps", "InstanceEBSIOPSExceededCheck"):
        assert _answer(node, "i-1", metric).status is Status.NO_DATA


def test_an_instance_outside_the_inventory_has_no_data() -> None:
    node = _node()
    node.know([Inventory(REGION, INVENTORY.volumes)])
    assert _answer(node, "i-1", "EBSReadOps").status is Status.NO_DATA


@pytest.mark.parametrize(
    ("resource_id", "metric"),
    [
        ("vol-1", "VolumeStalledIOCheck"),
        ("i-1", "StatusCheckFailed_AttachedEBS"),
        ("i-1", "EBSIOBalance%"),
        ("i-1", "EBSByteBalance%"),
    ],
)
def test_metrics_the_page_does_not_hold_have_no_data(resource_id: str, metric: str) -> None:
    series = _answer(_node(), resource_id, metric)
    assert (series.status, series.error, len(series)) == (Status.NO_DATA, None, 0)


def test_fetch_answers_every_query_and_counts_what_it_answered() -> None:
    node = _node(unreadable={"vol-2": WHY})
    queries = list(QUERIES.values())
    answers, stats = node.fetch(queries, WINDOW)
    assert set(answers) == set(queries)
    assert stats.metrics_requested == len(queries)
    # None of them CloudWatch's, none billed.
    assert stats.free == len(queries) and stats.billed == 0
    assert stats.datapoints == sum(len(s) for s in answers.values())
    # vol-2's own queries the page answers (10: not its stalled-I/O check, which the page
    # does not hold) and i-1's six sums and checks.
    failed = [q for q, s in answers.items() if s.status is Status.ERROR]
    assert stats.metrics_failed == len(failed) == 10 + 6
    assert stats.errors == [answers[q].error for q in queries if q in failed]
    # vol-1's nine answered metrics, BurstBalance having no anchor, at six periods each.
    assert stats.datapoints == 9 * 6


def test_before_runs_once_a_fetch_before_the_answers() -> None:
    node = _node()
    calls: list[int] = []

    def before() -> None:
        calls.append(len(node.counters))
        node.counters.pop("vol-2", None)  # what it does shows in the answers

    node.before = before
    query = QUERIES[("vol-2", "VolumeReadOps")]
    answers, _ = node.fetch([query, QUERIES[("vol-1", "VolumeReadOps")]], WINDOW)
    assert calls == [2]
    assert answers[query].status is Status.NO_DATA
    node.fetch([], WINDOW)
    assert calls == [2, 1]


def test_know_takes_the_volumes_and_instances_of_the_inventories() -> None:
    node = NodeMetrics(REGION)
    other = Inventory("eu-west-1", (Volume("vol-9", "eu-west-1", "gp3", 10, "in-use"),))
    node.know([INVENTORY, other])
    assert set(node.volumes) == {"vol-1", "vol-2", "vol-9"}
    assert node.instances == {"i-1": INVENTORY.instances[0]}
    node.know([other])  # a later description replaces the earlier one
    assert set(node.volumes) == {"vol-9"} and node.instances == {}


def test_an_unused_query_for_another_namespace_has_no_data() -> None:
    query = MetricQuery(
        "db-1", "AWS/RDS", "ReadIOPS", (("DBInstanceIdentifier", "db-1"),), "Average", 60
    )
    answers, stats = _node().fetch([query], WINDOW)
    assert answers[query].status is Status.NO_DATA and stats.metrics_failed == 0
