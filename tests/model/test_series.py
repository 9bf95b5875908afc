"""Series window math: which periods are complete, which are recent, and the three fetch states."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer.model.series import (
    STALE_PERIODS,
    Series,
    Status,
    combine_status,
    is_recent,
    latest_balance,
    recent,
    window_evidence,
)
from tests.helpers import T0, minutes, series


def stamps(s: Series) -> list[datetime]:
    return list(s.timestamps)


def test_of_sorts_points_and_reads_its_status_from_them() -> None:
    s = Series.of([(T0 + minutes(1), 2.0), (T0, 1.0)], 60)
    assert s.points() == [(T0, 1.0), (T0 + minutes(1), 2.0)]
    assert s.status is Status.OK
    assert Series.of([], 60).status is Status.NO_DATA
    assert Series.of([], 60, Status.ERROR).status is Status.ERROR


def test_an_empty_series_is_no_data_and_a_failed_one_says_why() -> None:
    empty = Series()
    assert (len(empty), empty.status, empty.last(), empty.mean()) == (
        0,
        Status.NO_DATA,
        None,
        None,
    )
    failed = Series.failed("Throttling: rate exceeded", 300)
    assert (failed.status, failed.error, failed.period_s) == (
        Status.ERROR,
        "Throttling: rate exceeded",
        300,
    )


def test_timestamps_and_values_must_match() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        Series((T0,), (1.0, 2.0))


@pytest.mark.parametrize(
    ("end", "kept"),
    [
        (T0, 0),  # the first period ends at T0+1min
        (T0 + minutes(1), 1),
        (T0 + minutes(1) - timedelta(seconds=1), 0),
        (T0 + minutes(3), 3),
        (T0 + minutes(5), 5),
        (T0 + minutes(60), 5),
    ],
)
def test_until_keeps_only_periods_complete_by_end(end: datetime, kept: int) -> None:
    s = series([1, 2, 3, 4, 5])
    cut = s.until(end)
    assert list(cut.values) == [1, 2, 3, 4, 5][:kept]
    assert cut.status is Status.OK


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (T0, T0 + minutes(5), [1, 2, 3, 4, 5]),
        (T0 + minutes(2), T0 + minutes(5), [3, 4, 5]),
        (T0 + minutes(1) + timedelta(seconds=1), T0 + minutes(4), [3, 4]),
        (T0 + minutes(2), T0 + minutes(2), []),
        (T0 + minutes(10), T0 + minutes(20), []),
    ],
)
def test_between_keeps_periods_starting_at_start_complete_by_end(
    start: datetime, end: datetime, expected: list[float]
) -> None:
    assert list(series([1, 2, 3, 4, 5]).between(start, end).values) == expected


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        (T0 - minutes(5), [1, 2, 3]),
        (T0, [1, 2, 3]),
        (T0 + timedelta(seconds=1), [2, 3]),
        (T0 + minutes(2), [3]),
        (T0 + minutes(3), []),
    ],
)
def test_since_keeps_periods_starting_at_or_after_start(
    start: datetime, expected: list[float]
) -> None:
    assert list(series([1, 2, 3]).since(start).values) == expected


def test_cuts_keep_status_error_and_period() -> None:
    s = Series.of([(T0, 1.0), (T0 + minutes(5), 2.0)], 300)
    for cut in (s.until(T0 + minutes(5)), s.between(T0, T0 + minutes(5)), s.since(T0 + minutes(1))):
        assert (cut.period_s, cut.status, cut.error) == (300, Status.OK, None)


def test_last_mean_and_map() -> None:
    s = series([2.0, 4.0, 9.0])
    assert s.last() == (T0 + minutes(2), 9.0)
    assert s.mean() == 5.0
    doubled = s.map(lambda v: v * 2)
    assert doubled.points() == [(T0, 4.0), (T0 + minutes(1), 8.0), (T0 + minutes(2), 18.0)]
    assert doubled.status is Status.OK


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ((), Status.NO_DATA),
        ((Status.NO_DATA,), Status.NO_DATA),
        ((Status.NO_DATA, Status.OK), Status.OK),
        ((Status.OK, Status.ERROR), Status.ERROR),
        ((Status.ERROR, Status.NO_DATA), Status.ERROR),
        ((Status.NO_DATA, Status.NO_DATA), Status.NO_DATA),
    ],
)
def test_combine_status_error_wins_then_data(
    statuses: tuple[Status, ...], expected: Status
) -> None:
    parts = [
        Series.failed("AccessDenied") if s is Status.ERROR else Series((), (), 60, s)
        for s in statuses
    ]
    status, error = combine_status(*parts)
    assert status is expected
    assert error == ("AccessDenied" if expected is Status.ERROR else None)


THIRTY = series([float(i) for i in range(30)])
"""One-minute points from T0 to T0+29min: data complete by T0+30min."""
FIVE_MINUTE = series([float(i) for i in range(6)], period_s=300)
"""Five-minute points from T0 to T0+25min: data complete by T0+30min."""


@pytest.mark.parametrize(
    ("s", "at", "window_s", "expected"),
    [
        (THIRTY, T0 + minutes(30), 600, list(range(20, 30))),
        # up to two periods late is still recent, and the window ends with the data
        (THIRTY, T0 + minutes(32), 600, list(range(20, 30))),
        (THIRTY, T0 + minutes(32) + timedelta(seconds=1), 600, []),
        (THIRTY, T0 + minutes(15), 600, list(range(5, 15))),
        (THIRTY, T0 + minutes(30), 60, [29]),
        (THIRTY, T0 + minutes(30), 3600, list(range(30))),
        # five-minute points: the window ends with the newest complete period, not at `at`
        (FIVE_MINUTE, T0 + minutes(33), 600, [4, 5]),
        (FIVE_MINUTE, T0 + minutes(40), 600, [4, 5]),
        (FIVE_MINUTE, T0 + minutes(41), 600, []),
        (FIVE_MINUTE, T0 + minutes(29), 600, [3, 4]),
        (series([]), T0, 600, []),
    ],
)
def test_recent_window(s: Series, at: datetime, window_s: float, expected: list[float]) -> None:
    assert list(recent(s, at, window_s).values) == expected


@pytest.mark.parametrize(
    ("at", "expected"),
    [
        (T0 + minutes(1) - timedelta(seconds=1), False),  # nothing complete yet
        (T0 + minutes(1), True),
        (T0 + minutes(30), True),
        (T0 + minutes(30 + STALE_PERIODS), True),
        (T0 + minutes(30 + STALE_PERIODS) + timedelta(seconds=1), False),
    ],
)
def test_is_recent(at: datetime, expected: bool) -> None:
    assert is_recent(THIRTY, at) is expected


def test_latest_balance_is_the_newest_complete_reading_at_its_middle() -> None:
    balance = Series.of([(T0, 50.0), (T0 + minutes(5), 40.0)], 300)
    assert latest_balance(balance, T0 + minutes(10)) == (T0 + minutes(7.5), 40.0)
    assert latest_balance(balance, T0 + minutes(9)) == (T0 + minutes(2.5), 50.0)
    assert latest_balance(balance, T0 + minutes(4)) is None


def test_window_evidence_names_the_data_used() -> None:
    assert window_evidence(series([1, 2, 3], period_s=300), 900) == {
        "window_start": T0.isoformat(),
        "window_end": (T0 + minutes(15)).isoformat(),
        "window_seconds": 900,
        "period_seconds": 300,
        "datapoints": 3,
    }
    empty = window_evidence(Series(), 600)
    assert (empty["window_start"], empty["window_end"], empty["datapoints"]) == (None, None, 0)


offsets = st.lists(st.integers(0, 240), unique=True, max_size=40)
periods = st.sampled_from([60, 300])


def _built(offsets: list[int], period_s: int) -> Series:
    return Series.of([(T0 + timedelta(seconds=o * period_s), float(o)) for o in offsets], period_s)


@given(offsets, periods, st.integers(-600, 250 * 300))
def test_until_holds_exactly_the_periods_complete_by_end(
    offsets: list[int], period_s: int, end_s: int
) -> None:
    s = _built(offsets, period_s)
    end = T0 + timedelta(seconds=end_s)
    period = timedelta(seconds=period_s)
    assert stamps(s.until(end)) == [t for t in s.timestamps if t + period <= end]


@given(offsets, periods, st.integers(-600, 250 * 300), st.integers(0, 250 * 300))
def test_between_holds_exactly_the_periods_inside(
    offsets: list[int], period_s: int, start_s: int, length_s: int
) -> None:
    s = _built(offsets, period_s)
    start = T0 + timedelta(seconds=start_s)
    end = start + timedelta(seconds=length_s)
    period = timedelta(seconds=period_s)
    assert stamps(s.between(start, end)) == [
        t for t in s.timestamps if t >= start and t + period <= end
    ]


@given(offsets, periods, st.integers(0, 250 * 300), st.integers(1, 48))
def test_is_recent_says_whether_recent_finds_anything(
    offsets: list[int], period_s: int, at_s: int, window_periods: int
) -> None:
    """For every window of at least one period (a shorter one cannot hold a period)."""
    s = _built(offsets, period_s)
    at = T0 + timedelta(seconds=at_s)
    found = recent(s, at, window_periods * period_s)
    assert is_recent(s, at) == bool(found.values)
    if found.values:
        end = found.timestamps[-1] + timedelta(seconds=period_s)
        assert end <= at
        assert found.timestamps[0] >= end - timedelta(seconds=window_periods * period_s)
