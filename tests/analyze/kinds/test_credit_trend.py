"""The daily minimum's trend: days ahead of a daily drain that empties."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from analyzer.analyze.kinds.credit_trend import CreditTrend, daily_minima, slope_per_day
from analyzer.model.metrics import Measure
from analyzer.model.past import Grid, Past
from analyzer.model.series import Series, Status
from tests.helpers import evaluate, volume_state

MONDAY = datetime(2026, 11, 16, tzinfo=UTC)
RULE = CreditTrend(id="trend", resource_types=["volume"], severity="warning")


def minima(*values: float, start: datetime = MONDAY) -> Series:
    points = [(start + timedelta(days=i), v) for i, v in enumerate(values)]
    return Series.of(points, 86_400, Status.OK)


def with_past(series: Series):  # type: ignore[no-untyped-def]
    state = volume_state("gp2", 800, {Measure.BURST_BALANCE: minima(100.0)})
    return replace(state, past=Past(minima={Measure.BURST_BALANCE: series}))


def test_minima_falling_ten_points_a_day_are_empty_within_two_days() -> None:
    found = evaluate(RULE, with_past(minima(60, 50, 40, 30, 20)))
    assert found is not None
    assert "falling about 10 points a day" in found.summary
    assert "(40%, 30%, 20% on the last 3 days)" in found.summary
    assert "empty within 2 days" in found.summary
    assert found.evidence["forecast"] == "trend"
    assert found.evidence["points_per_day"] == pytest.approx(-10)
    assert found.seconds_to_empty == pytest.approx(2 * 86_400)


@pytest.mark.parametrize(
    "values",
    [
        (20, 21, 19, 20),  # low but flat: not a trend
        (90, 85, 80),  # falling, but a fortnight from empty
        (30, 20),  # two days are not a trend
        (20, 10, 0),  # already empty: the exhausted rule says so
    ],
)
def test_no_warning_without_a_trend_that_reaches_zero_within_a_week(values) -> None:  # type: ignore[no-untyped-def]
    assert evaluate(RULE, with_past(minima(*values))) is None


def test_weekends_are_read_apart_from_weekdays() -> None:
    # Mon–Fri falling to 20 %, the weekend full: the weekdays decide on a Friday...
    week = minima(60, 50, 40, 30, 20, 100, 100)
    friday = Series.of(week.points()[:5], 86_400, Status.OK)
    assert [v for _, v in daily_minima(friday, 3)[-3:]] == [40, 30, 20]
    # ...and on Sunday the weekend days (too few) do not hide the week: all days count.
    assert len(daily_minima(week, 3)) == 7
    assert slope_per_day(daily_minima(week, 3)[-3:]) > 0


def _grid(burst_hour) -> Grid:  # type: ignore[no-untyped-def]
    """Five days before MONDAY + 5: each with a drain of an hour at `burst_hour(day)`."""
    values = np.full(5 * 288, 100.0, dtype=np.float32)
    for day in range(5):
        first = day * 288 + burst_hour(day) * 12
        values[first : first + 12] = 40.0
    return Grid(MONDAY, 300, values)


@pytest.mark.parametrize(
    ("burst_hour", "fires"), [(lambda d: 15, True), (lambda d: 4 * d + 1, False)]
)
def test_minima_of_bursts_at_other_hours_each_day_are_no_trend(burst_hour, fires) -> None:  # type: ignore[no-untyped-def]
    state = with_past(minima(60, 50, 40, 30, 20))
    state = replace(
        state,
        past=Past(minima=state.past.minima, days={Measure.BURST_BALANCE: _grid(burst_hour)}),
    )
    assert (evaluate(RULE, state) is not None) is fires


def _an_hour_at(low: float) -> list[float]:
    """A day's balance, a minute a value: full, but for `low` from 15:00 to 16:00."""
    return [low if 15 * 60 <= m < 16 * 60 else 100.0 for m in range(1440)]


def _replayed(balance: list[float], first: datetime):  # type: ignore[no-untyped-def]
    """A gp2 volume whose balance runs `balance` a minute a value from `first`, as the replay
    sees it at its end with the past the daemon would have fetched: (state, end)."""
    from analyzer.offline.replay import cut, data_past
    from tests.helpers import series

    state = volume_state(
        "gp2",
        800,
        {
            Measure.BURST_BALANCE: series(balance, first),
            Measure.IOPS: series([10.0] * len(balance), first),
        },
    )
    at = first + timedelta(minutes=len(balance))
    return cut(state, at, data_past(state)), at


@pytest.mark.parametrize("morning", [timedelta(hours=7, minutes=30), timedelta(hours=23)])
def test_a_falling_minimum_warns_on_the_sixth_morning_from_whole_days_only(
    morning: timedelta,
) -> None:
    """A database's daily minimum fell 90, 75, 60, 45, 30 % over five days (Monday to
    Friday); the sixth day, the bucket is full. Replayed as the daemon reads its past (whole
    UTC days only), the trend warns that morning and all day: today's partial day, its
    minimum 100 % so far, is not a day of the trend."""
    from analyzer.analyze.states import build

    balance = [v for low in (90, 75, 60, 45, 30) for v in _an_hour_at(low)]
    balance += [100.0] * int(morning.total_seconds() // 60)
    seen, at = _replayed(balance, MONDAY)
    assert [v for _, v in seen.past.minima[Measure.BURST_BALANCE].points()] == [90, 75, 60, 45, 30]
    snap = build(at, at, [seen])
    found = RULE.evaluate(snap.resources[0], snap, at)
    assert found is not None and "(60%, 45%, 30% on the last 3 days)" in found.summary


def _deepening_grid(lows: tuple[float, ...]) -> Grid:
    """A working-hours drain each day, from 09:00 down to `lows[day]` at 13:00, refilled by
    20:00: the same hours, deeper each day."""
    hours = np.arange(288) / 12
    days = []
    for low in lows:
        down = np.clip((hours - 9) / 4, 0, 1)
        up = np.clip((hours - 13) / 7, 0, 1)
        days.append(100 - (100 - low) * down * (1 - up))
    return Grid(MONDAY, 300, np.concatenate(days).astype(np.float32))


def test_a_drain_deeper_each_day_at_the_same_hours_is_a_trend() -> None:
    """The days drain alike by when, not by how deep: 90, 75, 60, 45, 30 % at the same hours
    is the trend itself, where comparing the depths would read it as no pattern."""
    from analyzer.analyze.profile import days_alike, drain_alike

    grid = _deepening_grid((90, 75, 60, 45, 30))
    friday = MONDAY + timedelta(days=4)
    assert days_alike(grid, friday) is False  # the depths differ too much to be one pattern
    assert drain_alike(grid, friday) is True
    state = with_past(minima(90, 75, 60, 45, 30))
    state = replace(state, past=Past(minima=state.past.minima, days={Measure.BURST_BALANCE: grid}))
    found = evaluate(RULE, state)
    assert found is not None and "(60%, 45%, 30% on the last 3 days)" in found.summary


def test_days_that_barely_move_are_not_drains_to_compare() -> None:
    from analyzer.analyze.profile import drain_alike

    flat = Grid(MONDAY, 300, np.full(5 * 288, 99.0, dtype=np.float32))
    assert drain_alike(flat, MONDAY + timedelta(days=4)) is None


def _near_misses(start_minute: int):  # type: ignore[no-untyped-def]
    """A volume whose data begins at `start_minute` of a Monday, full that evening, then
    drained to 6.6 % and 5.6 % on the next two days, near misses that never empty; read on
    the Thursday morning as the daemon reads its past."""
    balance = [100.0] * (1440 - start_minute)
    balance += [v for low in (6.6, 5.6) for v in _an_hour_at(low)]
    balance += [100.0] * (7 * 60)
    return _replayed(balance, MONDAY + timedelta(minutes=start_minute))[0]


def test_a_first_day_the_data_barely_covers_is_not_a_day_of_the_trend() -> None:
    """Data from 20:32: that day's minimum, 100 %, is that of three and a half hours. Counted
    as a day, 100, 6.6 and 5.6 % would fall 47 points a day and warn of an exhaustion that
    never comes."""
    seen = _near_misses(20 * 60 + 32)
    assert [v for _, v in seen.past.minima[Measure.BURST_BALANCE].points()] == [
        pytest.approx(6.6),
        pytest.approx(5.6),
    ]
    assert evaluate(RULE, seen) is None
    # Data from midnight covers the Monday: its 100 % is a day's, and the three days do fall.
    whole = _near_misses(0)
    assert len(whole.past.minima[Measure.BURST_BALANCE].points()) == 3
    assert evaluate(RULE, whole) is not None
