"""The past days: each balance's daily minimum over two weeks, asked a few times a day."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from analyzer.collect.past import PastDays, past_queries
from analyzer.collect.queries import MetricQuery
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
    metrics = FakeMetricData(lambda q, t: 100.0 - t.day / 10)  # never drained: no profile
    past = PastDays()
    stats = FetchStats()
    past.refresh(metrics, INVENTORY, NOW, stats)
    [window] = metrics.windows
    # Fourteen whole UTC days, up to the start of today.
    assert window.end == datetime(2026, 11, 19, tzinfo=UTC)
    assert window.start == window.end - timedelta(days=14)
    assert stats.metrics_requested == 1
    days = past.of("vol-gp2").minima[Measure.BURST_BALANCE]
    assert len(days) == 14 and days.values[-1] == 100.0 - 1.8
    past.refresh(metrics, INVENTORY, NOW + timedelta(hours=1), FetchStats())
    assert len(metrics.windows) == 1  # not due
    past.refresh(metrics, INVENTORY, NOW + timedelta(hours=6), FetchStats())
    assert len(metrics.windows) == 2
    assert not past.of("vol-gp3")


def test_a_new_whole_day_is_read_in_the_first_cycle_after_midnight() -> None:
    """Yesterday becomes a whole day at midnight (UTC): it is asked for then, not up to six
    hours later, so that a trend of the daily minima speaks when its replay does."""
    metrics = FakeMetricData(lambda q, t: 100.0)
    past = PastDays()
    late = datetime(2026, 11, 19, 23, 10, tzinfo=UTC)
    past.refresh(metrics, INVENTORY, late, FetchStats())
    past.refresh(metrics, INVENTORY, late + timedelta(minutes=30), FetchStats())
    assert len(metrics.windows) == 1  # the same day: not due
    past.refresh(metrics, INVENTORY, late + timedelta(minutes=51), FetchStats())
    assert len(metrics.windows) == 2
    assert metrics.windows[-1].end == datetime(2026, 11, 20, tzinfo=UTC)


def test_a_bucket_whose_minima_show_a_drain_gets_its_day_profile() -> None:
    """vol-gp2 fell to 40 % on a day: its balance's 5-minute means over fifteen days are
    asked too; vol-full never went below 98 %: only its minima."""
    full = Volume("vol-full", "us-east-1", "gp2", 100, "in-use", attached_to="i-1")
    inventory = Inventory("us-east-1", (GP2, full))

    def value(query: MetricQuery, at: datetime) -> float:
        if query.resource_id == "vol-full":
            return 99.0
        return 40.0 if query.period_s == 86_400 else 50.0 + at.minute / 10

    metrics = FakeMetricData(value)
    past = PastDays()
    stats = FetchStats()
    past.refresh(metrics, inventory, NOW, stats)
    assert stats.metrics_requested == 3
    _, profile = metrics.windows
    assert profile.period_s == 300
    assert profile.end == NOW
    assert profile.start == NOW - timedelta(days=15)
    grid = past.of("vol-gp2").days[Measure.BURST_BALANCE]
    assert len(grid) == 15 * 288
    assert grid.values[-1] == 50.0 + 25 / 10
    assert not past.of("vol-full").days
    assert past.of("vol-full").minima


def test_profile_requests_are_batched_to_fit_one_answer_page() -> None:
    volumes = tuple(
        Volume(f"vol-{i}", "us-east-1", "gp2", 100, "in-use", attached_to="i-1") for i in range(50)
    )
    metrics = FakeMetricData(lambda q, t: 10.0)
    PastDays().refresh(metrics, Inventory("us-east-1", volumes), NOW, FetchStats())
    sizes = [w.periods for w in metrics.windows]
    assert sizes[0] == 14  # the minima of all fifty in one call
    assert len(metrics.windows) == 1 + 3  # 4,320 points each: 23 a call


def test_a_history_that_begins_within_the_window_leaves_its_first_day_out() -> None:
    """CloudWatch's daily Minimum of the day a volume's history began is that of its last
    hours only: it is no day of the trend. A history older than the window keeps its first
    day."""
    from datetime import UTC, datetime, timedelta

    from analyzer.collect.past import whole_days
    from analyzer.model.series import Series, Status

    since = datetime(2026, 11, 2, tzinfo=UTC)
    days = [since + timedelta(days=d) for d in range(3, 7)]
    late = Series.of(list(zip(days, [100.0, 6.6, 5.6, 30.0], strict=True)), 86_400, Status.OK)
    assert list(whole_days(late, since).values) == [6.6, 5.6, 30.0]
    old = Series.of([(since, 90.0), *late.points()], 86_400, Status.OK)
    assert list(whole_days(old, since).values) == [90.0, 100.0, 6.6, 5.6, 30.0]
    empty = Series.of([], 86_400, Status.OK)
    assert list(whole_days(empty, since).values) == []


def test_a_first_day_the_profile_shows_read_from_its_first_hour_counts() -> None:
    from datetime import UTC, datetime, timedelta

    import numpy as np

    from analyzer.collect.past import whole_days
    from analyzer.model.past import Grid
    from analyzer.model.series import Series, Status

    since = datetime(2026, 11, 2, tzinfo=UTC)
    first = since + timedelta(days=3)
    late = Series.of(
        [(first + timedelta(days=d), v) for d, v in enumerate((100.0, 6.6, 5.6))],
        86_400,
        Status.OK,
    )

    def grid(from_minute: int) -> Grid:
        values = np.full(6 * 288, np.nan, dtype=np.float32)
        values[3 * 288 + from_minute // 5 :] = 100.0
        return Grid(since, 300, values)

    assert list(whole_days(late, since, grid(0)).values) == [100.0, 6.6, 5.6]
    assert list(whole_days(late, since, grid(20 * 60 + 30)).values) == [6.6, 5.6]
