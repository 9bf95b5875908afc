"""The fortnight a fix is replayed over, read where the plan's scope is: its cost told, and a
read that fails said in the plan, never raised."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from analyzer.act import past
from analyzer.act.plan import plan_of
from analyzer.analyze import prices
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.sold import Asked
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window
from analyzer.errors import AwsCallError
from analyzer.model.resources import Volume
from analyzer.model.series import Series
from analyzer.model.state import FetchStats
from tests.fakes import FakeMetricData
from tests.helpers import T0

IO2 = Volume("vol-1", "us-east-1", "io2", 500, "in-use", 20_000, attached_to="i-1")
PLAN = plan_of(Asked.parse("vol-1:iops=3600", "apply"), "us-east-1", IO2, Catalog(prices.load()))


def steady(query: MetricQuery, at: datetime) -> float | None:
    """1,000 IOPS of 16 KiB reads, every minute."""
    return {"VolumeReadOps": 60_000.0, "VolumeReadBytes": 60_000.0 * 16_384}.get(query.metric, 0.0)


def test_the_fortnight_is_read_where_the_plan_is_and_its_cost_told() -> None:
    told: list[FetchStats] = []
    read = past.reader({"us-east-1": FakeMetricData(steady)}, 120.0, lambda: T0, told.append)
    proven = read(PLAN)
    assert proven.past is not None and proven.past.minutes_limited == 0
    assert proven.past.days >= 13.9
    assert proven.busiest is not None and proven.busiest.iops == 1_000.0
    assert told and told[0].metrics_requested == 4


class Refusing(FakeMetricData):
    def fetch(
        self, queries: Sequence[MetricQuery], window: Window
    ) -> tuple[dict[MetricQuery, Series], FetchStats]:
        raise AwsCallError("cloudwatch:GetMetricData in us-east-1: Rate exceeded")


def test_a_read_that_fails_leaves_the_plan_without_its_past_and_says_why() -> None:
    read = past.reader({"us-east-1": Refusing(steady)}, 120.0, lambda: T0 + timedelta(hours=1))
    unread = read(PLAN)
    assert unread.past is None and "Rate exceeded" in unread.past_note
