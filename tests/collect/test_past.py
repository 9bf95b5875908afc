"""The past days: each balance's daily minimum over two weeks, asked a few times a day."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from analyzer.collect.past import PastDays, past_queries
from analyzer.model.metrics import Measure
from analyzer.model.resources import Inventory, Volume
from analyzer.model.state import FetchStats
from tests.fakes import FakeMetricData

NOW = datetime(2026, 11, 19, 8, 30, tzinfo=UTC)
GP2 = Volume("vol-gp2", "us-east-1", "gp2", 100, "in-use", attached_to="i-1")
GP3 = Volume("vol-gp3", "us-east-1", "gp3", 100, "in-use", attached_to="i-1")
INVENTORY = Inventory("us-east-1", (GP2, GP3))


def test_only_balances_are_asked_for_as_whole_days_minima() -> None:
    wanted = past_queries(INVENTORY)
    assert set(wanted) == {"vol-gp2"}  # gp3 has no bucket
    [query] = wanted["vol-gp2"]
    assert (query.metric, query.stat, query.period_s) == ("BurstBalance", "Minimum", 86_400)


def test_fetched_once_kept_and_asked_again_hours_later() -> None:
    metrics = FakeMetricData(lambda q, t: 100.0 - t.day)
    past = PastDays()
    stats = FetchStats()
    past.refresh(metrics, INVENTORY, NOW, stats)
    [window] = metrics.windows
    # Fourteen whole UTC days, up to the start of today.
    assert window.end == datetime(2026, 11, 19, tzinfo=UTC)
    assert window.start == window.end - timedelta(days=14)
    assert stats.metrics_requested == 1
    days = past.of("vol-gp2")[Measure.BURST_BALANCE]
    assert len(days) == 14 and days.values[-1] == 100.0 - 18
    past.refresh(metrics, INVENTORY, NOW + timedelta(hours=1), FetchStats())
    assert len(metrics.windows) == 1  # not due
    past.refresh(metrics, INVENTORY, NOW + timedelta(hours=6), FetchStats())
    assert len(metrics.windows) == 2
    assert past.of("vol-gp3") == {}
