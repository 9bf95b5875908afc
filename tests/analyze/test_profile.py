"""The day profile: the rest of today as the bucket's own past days ran it, at today's rate."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from analyzer.analyze import profile
from analyzer.analyze.profile import DayForecast, _changes, day_forecast, days_alike
from analyzer.model.past import Grid
from analyzer.model.series import Series

MONDAY = datetime(2026, 11, 2, tzinfo=UTC)
TODAY = MONDAY + timedelta(days=14)  # Monday again: two weeks of past days
REFILL = 40.0
"""Points of balance an hour the bucket earns (its baseline)."""


def workdays(busy: float, today: float | None = None, weekend: float = 0.0) -> Callable:
    """Charge in points an hour: `busy` from 09:00 to 17:00 on weekdays (`today` on TODAY),
    `weekend` then on weekend days, nothing otherwise."""

    def charge(at: datetime) -> float:
        if not 9 <= at.hour < 17:
            return 0.0
        if at.weekday() >= 5:
            return weekend
        return today if today is not None and at.date() == TODAY.date() else busy

    return charge


def balances(charge: Callable, until: datetime, start: datetime = MONDAY) -> Series:
    """The bucket's balance each minute from `start` (full) to `until`."""
    points, level, at = [], 100.0, start
    while at < until:
        points.append((at, level))
        level = min(max(level + (REFILL - charge(at)) / 60, 0.0), 100.0)
        at += timedelta(minutes=1)
    return Series.of(points, 60)


def forecast(charge: Callable, at: datetime, start: datetime = MONDAY) -> DayForecast | None:
    history = balances(charge, at, start)
    grid = Grid.of(history, start, at, 300)
    return day_forecast(
        grid,
        history,
        at,
        refill_percent_per_s=REFILL / 3600,
        min_days=3,
        horizon_s=12 * 3600,
        window_s=1800,
        departs_above=1.2,
    )


NEAR_MISS = 40 + 93 / 8
"""Drains 93 points from 09:00 to 17:00: 7 % left."""


def test_a_near_miss_day_that_follows_its_past_ends_with_credits_left() -> None:
    found = forecast(workdays(NEAR_MISS), TODAY + timedelta(hours=16, minutes=35))
    assert found is not None
    assert found.kind == "weekdays"
    assert len(found.days) == 10
    assert found.ratio == pytest.approx(1.0, abs=0.01)
    assert not found.departs
    assert found.empties_at is None
    assert found.eases_at is not None
    assert abs((found.eases_at - (TODAY + timedelta(hours=17))).total_seconds()) <= 300
    assert found.left_percent == pytest.approx(7, abs=1.5)  # 5-minute means round the trough


def test_a_day_with_a_little_more_demand_is_seen_to_empty_hours_ahead() -> None:
    """15 points an hour net instead of 11.6: empty at 15:40 instead of 7 % at 17:00."""
    found = forecast(workdays(NEAR_MISS, today=55.0), TODAY + timedelta(hours=10))
    assert found is not None
    assert found.ratio == pytest.approx(55 / NEAR_MISS, rel=0.01)
    assert not found.departs
    assert found.empties_at is not None
    expected = TODAY + timedelta(hours=9 + 99 / 15)
    assert abs((found.empties_at - expected).total_seconds()) < 300
    assert found.left_percent == 0.0


def test_a_day_well_above_its_past_departs_from_it() -> None:
    found = forecast(workdays(NEAR_MISS, today=70.0), TODAY + timedelta(hours=10))
    assert found is not None
    assert found.ratio == pytest.approx(70 / NEAR_MISS, rel=0.01)
    assert found.departs


def test_a_drain_where_the_past_days_had_none_departs() -> None:
    found = forecast(workdays(0.0, today=NEAR_MISS), TODAY + timedelta(hours=10))
    assert found is not None
    assert found.ratio == float("inf")
    assert found.departs


def test_a_saturday_reads_the_past_weekend_days_not_the_working_days() -> None:
    saturday = TODAY + timedelta(days=5, hours=10)
    found = forecast(workdays(NEAR_MISS), saturday)
    assert found is not None
    assert found.kind == "weekend days"
    assert found.empties_at is None
    assert found.left_percent == pytest.approx(100.0)


def test_without_enough_past_days_there_is_no_profile() -> None:
    at = TODAY + timedelta(hours=10)
    assert forecast(workdays(NEAR_MISS), at, start=at - timedelta(days=2, hours=12)) is None


def test_a_past_day_that_ran_empty_is_taken_to_drain_on_as_before() -> None:
    past = np.array([[10.0, 6.0, 2.0, 0.5, 0.5, 0.5], [10.0, 7.0, 4.0, 1.0, 0.5, 0.5]])
    changes = _changes(past)
    assert changes[2:] == pytest.approx([-3.5, -3.5, -3.5])


def test_a_grid_averages_the_minutes_of_each_period_and_reads_between_their_middles() -> None:
    start = MONDAY
    minutes = Series.of([(start + timedelta(minutes=m), float(m)) for m in range(10)], 60)
    grid = Grid.of(minutes, start, start + timedelta(minutes=15), 300)
    assert list(grid.values[:2]) == [2.0, 7.0]
    assert np.isnan(grid.values[2])
    middle = start.timestamp() + 300
    found = grid.at(np.array([middle, start.timestamp() + 150, start.timestamp() - 1]))
    assert found[0] == pytest.approx(4.5)
    assert found[1] == pytest.approx(2.0)
    assert np.isnan(found[2])
    assert grid.end == start + timedelta(minutes=15)


def test_days_already_empty_at_the_start_drain_on_as_over_the_compared_window() -> None:
    """Two of three past days were empty from the first step: they drain on at their pace
    before it (`first`), not out of the median; a step rising out of empty is a refill."""
    past = np.array([[0.5, 0.5, 0.5, 8.0, 20.0]] * 2 + [[30.0, 29.8, 29.6, 29.4, 29.2]])
    changes = _changes(past, first=np.array([-3.0, -3.0, -0.2]))
    assert changes == pytest.approx([-3.0, -3.0, 7.5, 12.0])


def test_working_days_share_a_pattern_and_bursts_at_other_hours_each_day_do_not() -> None:
    daily = forecast(workdays(NEAR_MISS), TODAY + timedelta(hours=11))
    assert daily is not None and daily.patterned
    assert daily.swing > 50 and daily.spread < 10

    def bursts(at: datetime) -> float:
        """Half an hour at 400 points an hour, at an hour that moves on by 5 h each day."""
        start = (at.day * 5) % 24
        return 400.0 if start <= at.hour + at.minute / 60 < start + 0.5 else 0.0

    scattered = forecast(bursts, TODAY + timedelta(hours=11))
    assert scattered is not None and not scattered.patterned


def test_whole_days_alike_are_told_from_bursts_at_other_hours() -> None:
    def scattered(at: datetime) -> float:
        start = (at.day * 5) % 24
        return 400.0 if start <= at.hour + at.minute / 60 < start + 0.5 else 0.0

    # Weekdays alike (the weekend days, flat at 100 %, are not compared with them).
    for charge, alike in ((workdays(NEAR_MISS), True), (scattered, False)):
        history = balances(charge, TODAY)
        grid = Grid.of(history, MONDAY, TODAY, 300)
        friday = TODAY - timedelta(days=3)
        assert days_alike(grid, friday) is alike
    one_day = Grid.of(balances(workdays(NEAR_MISS), MONDAY + timedelta(days=1)), MONDAY, TODAY, 300)
    assert days_alike(one_day, MONDAY) is None


def test_a_grid_s_answer_for_a_day_is_worked_out_once_and_the_next_day_anew() -> None:
    """A fetched grid serves every cycle until the next fetch: what it says of a day is kept
    (every minute of a replay asks it again), and a later day is asked of it afresh."""
    history = balances(workdays(NEAR_MISS), TODAY)
    grid = Grid.of(history, MONDAY, TODAY, 300)
    friday = TODAY - timedelta(days=3)
    assert days_alike(grid, friday) is True
    profile._ALIKE[grid][("days", math.floor(friday.timestamp() / 86_400), profile.DAYS)] = False
    # Kept: the same UTC day, any hour of it, gets what was kept (here, planted).
    assert days_alike(grid, friday + timedelta(hours=7)) is False
    # Monday alone has no whole day of its kind before it: worked out, None.
    assert days_alike(grid, MONDAY) is None
    assert {key[1] for key in profile._ALIKE[grid]} == {
        math.floor(friday.timestamp() / 86_400),
        math.floor(MONDAY.timestamp() / 86_400),
    }
