"""A volume's operations and bytes over its last fourteen days, by the minute, for replaying
its fixes: four metrics a volume, asked as AWS/EBS publishes them."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from analyzer.collect.demand import DAYS, cpu_query, demand_queries, fetch_cpu_peaks, fetch_demand
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window
from analyzer.model.series import Series
from analyzer.model.state import FetchStats
from tests.fakes import M5, FakeMetricData
from tests.helpers import instance_state, volume_state

NOW = datetime(2026, 11, 27, 8, 30, 5, tzinfo=UTC)
SETTLE_S = 120.0


def test_a_volume_is_asked_its_four_sums_by_the_minute() -> None:
    asked = demand_queries(volume_state("gp2", 80).resource)
    assert sorted(q.metric for q in asked) == [
        "VolumeReadBytes",
        "VolumeReadOps",
        "VolumeWriteBytes",
        "VolumeWriteOps",
    ]
    assert {(q.namespace, q.stat, q.period_s) for q in asked} == {("AWS/EBS", "Sum", 60)}
    assert {q.dimensions for q in asked} == {(("VolumeId", "vol-1"),)}


def test_an_instance_is_asked_its_ebs_sums_at_its_monitoring_s_period() -> None:
    # Basic monitoring publishes AWS/EC2 every five minutes: a finer period would not split
    # its points (EC2 User Guide, "Instance metrics").
    for detailed, period in ((True, 60), (False, 300)):
        asked = demand_queries(instance_state(M5, detailed=detailed).resource)
        assert sorted(q.metric for q in asked) == [
            "EBSReadBytes",
            "EBSReadOps",
            "EBSWriteBytes",
            "EBSWriteOps",
        ]
        assert {(q.namespace, q.stat, q.period_s) for q in asked} == {("AWS/EC2", "Sum", period)}


def test_an_rds_instance_is_asked_its_four_storage_rates_and_they_are_rates_already() -> None:
    from analyzer.model.resources import DbInstance
    from tests.helpers import db_state

    db = DbInstance("orders", "us-east-1", "mysql", "db.m5.2xlarge", "gp2", 200, "available")
    state = db_state(db, {})
    asked = demand_queries(state.resource)
    assert sorted(q.metric for q in asked) == [
        "ReadIOPS",
        "ReadThroughput",
        "WriteIOPS",
        "WriteThroughput",
    ]
    assert {(q.namespace, q.stat, q.period_s) for q in asked} == {("AWS/RDS", "Average", 60)}
    assert {q.dimensions for q in asked} == {(("DBInstanceIdentifier", "orders"),)}

    def value(query: MetricQuery, _at: datetime) -> float | None:
        return {"ReadIOPS": 2_500.0, "WriteIOPS": 50.0}.get(query.metric, 40e6)

    [(rid, seen)] = fetch_demand(
        FakeMetricData(value), [state.resource], NOW, SETTLE_S, FetchStats()
    )
    # Per second already: read and write add up, and are not divided by the minute.
    assert rid == "orders" and seen.iops.max() == 2_550.0 and seen.bps.max() == 80e6


def test_rates_over_the_fortnight_from_the_first_datapoint() -> None:
    """vol-new was created three days ago: its demand begins then, not fourteen days back."""
    created = NOW - timedelta(days=3)

    def value(query: MetricQuery, at: datetime) -> float | None:
        if query.resource_id == "vol-new" and at < created:
            return None
        if at.hour == 2 and "Ops" in query.metric:
            return 600.0 * 60  # 600 a second each way
        return 6_000.0 * 60 if "Bytes" in query.metric else 60.0

    metrics = Counted(value)
    stats = FetchStats()
    states = [volume_state(volume_id=v).resource for v in ("vol-old", "vol-new")]
    found = dict(fetch_demand(metrics, states, NOW, SETTLE_S, stats))
    assert stats.metrics_requested == 8
    # 20,160 minutes a metric, a call each: one series held at a time, billed the same.
    assert metrics.calls == [1] * 8
    [window] = {*metrics.windows}
    assert window.end == datetime(2026, 11, 27, 8, 28, tzinfo=UTC)
    assert window.start == window.end - timedelta(days=DAYS)
    old, new = found["vol-old"], found["vol-new"]
    assert old.start == window.start and old.days == 14.0
    assert new.start >= created and round(new.days) == 3
    assert old.iops.max() == 1_200.0 and old.iops.min() == 2.0
    assert old.bps.max() == 12_000.0
    assert not old.floor.any()
    # Read as taken: one volume's fortnight held at a time.
    lazy = Counted(value)
    next(fetch_demand(lazy, states, NOW, SETTLE_S, FetchStats()))
    assert lazy.calls == [1] * 4


def test_a_metric_s_fortnight_is_let_go_of_before_the_next_is_read() -> None:
    """Four fortnights of 20,160 minutes are never held at once, nor two: each is folded into
    the rates and dropped before the next metric is asked."""
    alive: list[weakref.ref[object]] = []

    class Watched(FakeMetricData):
        def fetch(
            self, queries: Sequence[MetricQuery], window: Window
        ) -> tuple[dict[MetricQuery, Series], FetchStats]:
            held = [ref for ref in alive if ref() is not None]
            assert not held, f"{len(held)} earlier series still held"
            out, stats = super().fetch(queries, window)
            alive.extend(weakref.ref(series.values) for series in out.values())
            return out, stats

    states = [volume_state(volume_id=v).resource for v in ("vol-a", "vol-b")]
    found = dict(fetch_demand(Watched(lambda _q, _t: 60.0), states, NOW, SETTLE_S, FetchStats()))
    assert set(found) == {"vol-a", "vol-b"} and len(alive) == 8


def test_a_volume_whose_counts_failed_or_never_came_is_left_out() -> None:
    class Failing(FakeMetricData):
        def fetch(
            self, queries: Sequence[MetricQuery], window: Window
        ) -> tuple[dict[MetricQuery, Series], FetchStats]:
            out, stats = super().fetch(queries, window)
            for query in queries:
                if query.resource_id == "vol-failed" and query.metric == "VolumeWriteOps":
                    out[query] = Series.failed("AccessDenied")
            return out, stats

    def value(query: MetricQuery, _at: datetime) -> float | None:
        return None if query.resource_id == "vol-idle" else 60.0

    states = [volume_state(volume_id=v).resource for v in ("vol-ok", "vol-failed", "vol-idle")]
    found = dict(fetch_demand(Failing(value), states, NOW, SETTLE_S, FetchStats()))
    assert set(found) == {"vol-ok"}
    # A stopped instance publishes nothing, and is asked nothing.
    stopped = replace(instance_state(M5).resource, state="stopped")
    assert not [*fetch_demand(Failing(value), [stopped], NOW, SETTLE_S, FetchStats())]


class Counted(FakeMetricData):
    """Counts the queries of each call."""

    def fetch(
        self, queries: Sequence[MetricQuery], window: Window
    ) -> tuple[dict[MetricQuery, Series], FetchStats]:
        self.calls.append(len(queries))
        return super().fetch(queries, window)

    @property
    def calls(self) -> list[int]:
        return self.__dict__.setdefault("_calls", [])


def test_an_instance_s_peak_cpu_is_its_highest_5_minute_mean_over_the_fortnight() -> None:
    def value(query: MetricQuery, at: datetime) -> float | None:
        if query.resource_id == "i-dark":
            return None
        return 71.5 if at.day == 20 and at.hour == 14 else 12.0

    metrics = Counted(value)
    stats = FetchStats()
    peaks = fetch_cpu_peaks(metrics, ["i-1", "i-dark", "i-1"], NOW, SETTLE_S, stats)
    assert peaks == {"i-1": (71.5, 14.0)}
    assert stats.metrics_requested == 2 and metrics.calls == [2]
    [window] = metrics.windows
    assert window.period_s == 300 and window.end - window.start == timedelta(days=DAYS)
    [query] = [cpu_query("i-1")]
    assert (query.namespace, query.metric, query.stat) == ("AWS/EC2", "CPUUtilization", "Average")
    assert query.dimensions == (("InstanceId", "i-1"),)
    assert fetch_cpu_peaks(metrics, [], NOW, SETTLE_S, stats) == {}


def test_an_rds_instance_s_cpu_and_least_free_memory_are_asked_by_its_identifier() -> None:
    from analyzer.collect.demand import fetch_least_free_memory, free_memory_query
    from analyzer.model.metrics import Namespace

    def value(query: MetricQuery, at: datetime) -> float | None:
        if query.metric == "FreeableMemory":
            return 4e9 if at.day == 21 else 40e9
        return 55.0 if at.day == 22 else 20.0

    metrics = Counted(value)
    stats = FetchStats()
    assert fetch_cpu_peaks(metrics, ["orders"], NOW, SETTLE_S, stats, Namespace.RDS) == {
        "orders": (55.0, 14.0)
    }
    assert fetch_least_free_memory(metrics, ["orders"], NOW, SETTLE_S, stats) == {
        "orders": (4e9, 14.0)
    }
    cpu, free = cpu_query("orders", Namespace.RDS), free_memory_query("orders")
    assert (cpu.namespace, cpu.dimensions) == ("AWS/RDS", (("DBInstanceIdentifier", "orders"),))
    assert (free.metric, free.stat, free.period_s) == ("FreeableMemory", "Minimum", 300)
    assert stats.metrics_requested == 2


class Listing:
    """ListMetrics as the CloudWatch agent's `append_dimensions` leave it."""

    region = "us-east-1"

    def __init__(self, listed: list[tuple[str, tuple[tuple[str, str], ...]]]) -> None:
        self.listed = listed
        self.asked: list[tuple[str, str]] = []

    def list_metrics(self, namespace: str, dimension: str, metric=None):  # type: ignore[no-untyped-def]
        self.asked.append((namespace, dimension, metric))
        return [(name, dims) for name, dims in self.listed if metric in (None, name)]


def test_an_instance_s_memory_is_read_where_the_agent_publishes_it_under_its_dimensions() -> None:
    from analyzer.collect.demand import fetch_most_memory_used

    one = (("ImageId", "ami-1"), ("InstanceId", "i-1"), ("InstanceType", "m5.large"))
    moved = (("InstanceId", "i-2"), ("InstanceType", "m5.xlarge"))
    before = (("InstanceId", "i-2"), ("InstanceType", "m5.large"))
    listing = Listing(
        [
            ("mem_used_percent", one),
            ("disk_used_percent", (("InstanceId", "i-3"), ("path", "/"))),
            ("mem_used_percent", moved),
            ("mem_used_percent", before),
            ("mem_used_percent", (("InstanceId", "i-other"),)),
        ]
    )

    def value(query: MetricQuery, at: datetime) -> float | None:
        if query.dimensions == moved:
            return 30.0
        if query.dimensions == before:
            return 55.0 if at.day == 20 else 20.0
        return 42.0 if at.day == 21 else 12.0

    metrics = Counted(value)
    stats = FetchStats()
    ids = ["i-1", "i-2", "i-3"]
    found = fetch_most_memory_used(metrics, listing, "CWAgent", ids, NOW, SETTLE_S, stats)
    # Each dimension set asked as listed; an instance under two sets gets the most of both.
    assert found == {"i-1": (42.0, 14.0), "i-2": (55.0, 14.0)}
    assert listing.asked == [("CWAgent", "InstanceId", "mem_used_percent")]
    assert stats.metrics_requested == 3 and metrics.calls == [3]
    [window] = metrics.windows
    assert window.period_s == 300
    assert fetch_most_memory_used(metrics, None, "CWAgent", ids, NOW, SETTLE_S, stats) == {}
