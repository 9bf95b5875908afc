"""The fleet's savings read scope by scope: each volume's past read and weighed, a volume whose
read failed said and left out, the largest saving first."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import prices, rules
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region
from analyzer.collect.window import Window
from analyzer.live import fleet_savings
from analyzer.live.cycle import Analyzer
from analyzer.model.resources import Instance, Volume
from analyzer.model.series import Series
from analyzer.model.state import FetchStats
from tests.fakes import M5, FakeDescriber, FakeMetricData
from tests.helpers import T0

VOLUMES = [
    Volume("vol-big", "us-east-1", "io2", 500, "in-use", 20_000, None, "i-1"),
    Volume("vol-small", "us-east-1", "io2", 100, "in-use", 5_000, None, "i-1"),
    Volume("vol-bad", "us-east-1", "io2", 100, "in-use", 5_000, None, "i-1"),
]


def busy(query: MetricQuery, at: datetime) -> float | None:
    """1,000 IOPS of 16 KiB reads every period, for as long as CloudWatch keeps."""
    per_second = {"VolumeReadOps": 1_000.0, "VolumeReadBytes": 1_000.0 * 16_384}.get(query.metric)
    if query.stat == "SampleCount":
        return query.period_s / 60
    if per_second is None:
        return 0.0
    # A minute sum, or a coarse period's busiest minute.
    return per_second * 60


class OneFails(FakeMetricData):
    def fetch(
        self, queries: Sequence[MetricQuery], window: Window
    ) -> tuple[dict[MetricQuery, Series], FetchStats]:
        found, stats = super().fetch(queries, window)
        for query in queries:
            if query.resource_id == "vol-bad":
                found[query] = Series.failed("ThrottlingException: Rate exceeded")
                stats.metrics_failed += 1
        return found, stats


def test_min_headroom_keeps_the_shipped_cap_rules_quiet_at_the_peak() -> None:
    floor = fleet_savings.min_headroom(rules.load())
    assert floor == pytest.approx(1 / 0.95 + 0.001)
    assert 0.95 * floor > 1.0


def test_each_volume_is_weighed_the_failed_one_said_and_the_largest_first() -> None:
    describer = FakeDescriber(
        found_volumes=VOLUMES,
        found_instances=[Instance("i-1", "us-east-1", "m5.large", "running", type_info=M5)],
    )
    config = settings.load({"region": ["us-east-1"]})
    analyzer = Analyzer(
        config, rules.load(), connect=lambda r: Region(r, describer, OneFails(busy))
    )
    found = fleet_savings.find(analyzer, T0 + timedelta(minutes=3))
    assert found.volumes == 3 and found.unread == ["vol-bad"]
    assert [s.resource_id for s in found.savings] == ["vol-big", "vol-small"]
    big = found.savings[0]
    assert big.target is not None and big.target["iops"] == 1_200
    assert big.labels == {"region": "us-east-1"}
    # 14 metrics a volume read whole; the failed one stops at its first stretch's four.
    assert found.stats.metrics_requested == 14 * 2 + 4


def test_an_rds_instance_whose_iops_price_is_missing_is_named_and_a_stopped_one_skipped() -> None:
    """A price entry without an IOPS price (or whose io2 tiers the RDS prices do not read)
    would make IOPS free: the instance is unpriced, said, not weighed. A stopped instance,
    which AWS/RDS publishes nothing of, is neither read nor said unread."""
    from analyzer.analyze.prices import VolumePrice
    from analyzer.model.resources import DbInstance

    io1 = DbInstance("orders", "us-east-1", "mysql", "db.m5.large", "io1", 400, "available", 20_000)
    stopped = DbInstance("old", "us-east-1", "mysql", "db.m5.large", "io1", 400, "stopped", 20_000)
    describer = FakeDescriber(found_volumes=[], found_instances=[], found_dbs=[io1, stopped])
    config = settings.load({"region": ["us-east-1"]})
    metrics = FakeMetricData(busy)
    analyzer = Analyzer(config, rules.load(), connect=lambda r: Region(r, describer, metrics))
    analyzer.price_list = prices.load().model_copy(
        update={"rds_storage": {"io1": VolumePrice(per_gib=0.125)}}
    )
    found = fleet_savings.find(analyzer, T0)
    assert found.unpriced == ["orders"] and found.unread == [] and metrics.windows == []
