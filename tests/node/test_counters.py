"""A volume's cumulative NVMe counters → per-period sums, as CloudWatch would publish them.

The counters are cumulative since the volume was attached (Amazon EBS User Guide, "Amazon EBS
detailed performance statistics"); CloudWatch's periods are aligned to the epoch and a volume
that is not attached has no datapoint, not a zero (Amazon CloudWatch User Guide, "Amazon EBS
metrics")."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer.collect.logpage import Stats
from analyzer.model.series import Series, Status
from analyzer.node.counters import COUNTERS, COVERED, MAX_GAP_S, Counters

T = 1_764_150_000.0
"""An epoch second on a whole minute, so on every period's boundary here."""


def _ops(stats: Stats) -> float:
    return float(stats.read_ops)


def _at(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def _fed(samples: list[tuple[float, int]], keep_s: float = 3_600) -> Counters:
    """Counters fed (seconds after T, cumulative read ops)."""
    counters = Counters(keep_s)
    for t, ops in samples:
        counters.add(T + t, Stats(read_ops=ops))
    return counters


def _by_offset(series: Series) -> dict[float, float]:
    return {stamp.timestamp() - T: value for stamp, value in series.points()}


def test_a_repeat_or_an_older_sample_is_dropped() -> None:
    counters = Counters(keep_s=600)
    assert counters.add(T, Stats(read_ops=10)) is False
    assert counters.add(T, Stats(read_ops=20)) is False  # the same time again
    assert counters.add(T - 5, Stats(read_ops=5)) is False  # older, and lower: not a reset
    assert [s.t for s in counters.samples] == [T]
    assert counters.samples[0].stats.read_ops == 10
    assert counters.resets == 0


def test_only_the_last_keep_s_seconds_are_kept() -> None:
    counters = _fed([(t, t) for t in range(0, 70, 10)], keep_s=30)
    assert [s.t - T for s in counters.samples] == [30, 40, 50, 60]
    assert counters.last is not None and counters.last.t == T + 60


def test_an_empty_counters_has_no_last_sample_and_no_data() -> None:
    counters = Counters(keep_s=60)
    assert counters.last is None
    assert counters.sums(_ops, T, T + 60, 5).status is Status.NO_DATA
    assert counters.averages(_ops, T, T + 60, 5).status is Status.NO_DATA


@pytest.mark.parametrize("name", COUNTERS)
def test_any_counter_going_back_is_a_reset(name: str) -> None:
    every: dict[str, Any] = dict.fromkeys(COUNTERS, 10)
    before = Stats(**every)
    after = dataclasses.replace(before, **{**every, name: 9})
    counters = Counters(keep_s=600)
    counters.add(T, before)
    assert counters.add(T + 5, after) is True
    assert counters.resets == 1
    assert counters.last is not None and counters.last.reset


def test_the_queue_length_going_down_is_not_a_reset() -> None:
    """It is a reading of the moment, not a counter."""
    counters = Counters(keep_s=600)
    counters.add(T, Stats(read_ops=1, queue_length=8))
    assert counters.add(T + 5, Stats(read_ops=1, queue_length=0)) is False
    assert counters.resets == 0


def test_counters_that_stay_or_grow_are_no_reset_and_resets_are_counted() -> None:
    counters = _fed([(0, 10), (5, 10), (10, 20), (15, 3), (20, 4), (25, 1)])
    assert [s.reset for s in counters.samples] == [False, False, False, True, False, True]
    assert counters.resets == 2


def test_sums_are_the_counter_growth_in_each_epoch_aligned_period() -> None:
    counters = _fed([(0, 0), (5, 100), (10, 250), (15, 250)])
    sums = counters.sums(_ops, T, T + 15, 5)
    assert sums.status is Status.OK and sums.period_s == 5
    assert sums.points() == [(_at(T), 100.0), (_at(T + 5), 150.0), (_at(T + 10), 0.0)]


def test_an_interval_straddling_two_periods_is_shared_by_time() -> None:
    """3 → 8 s grew 100: 2 s of it (40) fall in the first period, 3 s (60) in the second."""
    counters = _fed([(0, 0), (3, 30), (8, 130), (10, 150)])
    assert _by_offset(counters.sums(_ops, T, T + 10, 5)) == {
        0: pytest.approx(30 + 40),
        5: pytest.approx(60 + 20),
    }


def test_only_periods_whole_inside_the_window_are_answered() -> None:
    counters = _fed([(t, 10 * t) for t in range(0, 31, 5)])
    assert list(_by_offset(counters.sums(_ops, T + 5, T + 20, 5))) == [5, 10, 15]
    # A window edge inside a period leaves that period out.
    assert list(_by_offset(counters.sums(_ops, T + 7, T + 23, 5))) == [10, 15]


@st.composite
def _samples(draw: st.DrawFn) -> tuple[int, list[tuple[float, int]]]:
    """Samples from T to a period boundary, never further apart than MAX_GAP_S, with counters
    that never go back."""
    period = draw(st.sampled_from([1, 5, 10, 60]))
    gaps = draw(st.lists(st.floats(0.05, MAX_GAP_S), min_size=1, max_size=40))
    t = 0.0
    times = [0.0]
    for gap in gaps:
        t += gap
        times.append(t)
    end = -(-times[-1] // period) * period
    if end - times[-1] < 1e-6:  # a rounding error of the sum of the gaps, not a gap
        times[-1] = end
    elif end > times[-1]:
        times.append(end)
    growth = draw(st.lists(st.integers(0, 10**12), min_size=len(times), max_size=len(times)))
    total = 0
    samples = []
    for at, grew in zip(times, growth, strict=True):
        samples.append((at, total))
        total += grew
    return period, samples


@given(_samples())
def test_the_sums_over_a_window_add_up_to_the_counters_growth(
    drawn: tuple[int, list[tuple[float, int]]],
) -> None:
    period, samples = drawn
    counters = _fed(samples, keep_s=10**6)
    end = samples[-1][0]
    sums = counters.sums(_ops, T, T + end, period)
    assert len(sums) == end // period  # every period covered, none left out
    assert all(v >= 0 for v in sums.values)
    assert sum(sums.values) == pytest.approx(samples[-1][1] - samples[0][1], rel=1e-9, abs=1e-6)


@given(
    st.lists(
        st.tuples(st.floats(0.05, 2 * MAX_GAP_S), st.integers(0, 10**9)), min_size=2, max_size=40
    ),
    st.sampled_from([1, 5, 60]),
)
def test_sums_are_never_negative_whatever_the_counters_do(
    steps: list[tuple[float, int]], period: int
) -> None:
    """Counters that go back (resets) and samples far apart (gaps) leave periods out; they
    never make a negative sum."""
    t = 0.0
    samples = []
    for gap, value in steps:
        t += gap
        samples.append((t, value))
    counters = _fed(samples, keep_s=10**6)
    sums = counters.sums(_ops, T, T + t + period, period)
    assert all(v >= 0 for v in sums.values)


def test_nothing_is_taken_across_a_reset_and_its_period_has_no_datapoint() -> None:
    """The volume detached at 21 s and came back at 23 s with its counters from zero: the
    2 s after the reset (40 % of [20, 25)) are too little to say what the period held."""
    counters = _fed([(0, 0), (5, 50), (10, 100), (15, 150), (20, 200), (23, 0), (25, 20)])
    counters.add(T + 30, Stats(read_ops=70))
    sums = _by_offset(counters.sums(_ops, T, T + 30, 5))
    assert sums == {0: 50.0, 5: 50.0, 10: 50.0, 15: 50.0, 25: 50.0}
    assert 20 not in sums  # no datapoint, rather than a zero or a negative growth


def test_a_period_covered_more_than_covered_is_scaled_to_the_whole_period() -> None:
    """Samples from 2 s cover 60 % of [0, 5): the 30 counted in 3 s is 50 over 5 s."""
    assert COVERED == 0.5
    counters = _fed([(2, 0), (5, 30), (10, 80)])
    assert _by_offset(counters.sums(_ops, T, T + 10, 5)) == {
        0: pytest.approx(50.0),
        5: 50.0,
    }


def test_a_period_covered_less_than_covered_is_left_out() -> None:
    counters = _fed([(3, 0), (5, 30), (10, 80)])
    assert _by_offset(counters.sums(_ops, T, T + 10, 5)) == {5: 50.0}


def test_a_period_covered_exactly_half_is_answered() -> None:
    counters = _fed([(2.5, 0), (5, 25), (10, 75)])
    assert _by_offset(counters.sums(_ops, T, T + 10, 5)) == {
        0: pytest.approx(50.0),
        5: 50.0,
    }


def test_no_difference_is_taken_across_a_gap_longer_than_max_gap_s() -> None:
    """The agent stopped from 10 s to 80 s: what grew then happened at no known time."""
    assert MAX_GAP_S == 60.0
    counters = _fed([(0, 0), (5, 50), (10, 100), (80, 5_000), (85, 5_050), (90, 5_100)])
    sums = _by_offset(counters.sums(_ops, T, T + 90, 5))
    assert sums == {0: 50.0, 5: 50.0, 80: 50.0, 85: 50.0}


def test_a_gap_of_max_gap_s_exactly_is_still_shared_out() -> None:
    counters = _fed([(0, 0), (60, 600)])
    sums = counters.sums(_ops, T, T + 60, 5)
    assert len(sums) == 12
    assert all(v == pytest.approx(50.0) for v in sums.values)


def _exceeded(stats: Stats) -> float:
    return float(stats.volume_iops_exceeded_us)


def test_flags_are_one_where_the_counter_grew_and_zero_where_it_did_not() -> None:
    """As CloudWatch's VolumeIOPSExceededCheck: 1 for a period in which the limit held I/O back."""
    counters = Counters(keep_s=600)
    for t, held_us in [(0, 0), (5, 0), (10, 1_500), (15, 1_500), (20, 1_501)]:
        counters.add(T + t, Stats(volume_iops_exceeded_us=held_us))
    flags = counters.flags(_exceeded, T, T + 20, 5)
    assert flags.status is Status.OK
    assert _by_offset(flags) == {0: 0.0, 5: 1.0, 10: 0.0, 15: 1.0}


def test_a_flag_has_no_datapoint_where_the_sums_have_none() -> None:
    counters = Counters(keep_s=600)
    for t, held_us in [(0, 0), (5, 10), (100, 20), (105, 30)]:
        counters.add(T + t, Stats(volume_iops_exceeded_us=held_us))
    assert _by_offset(counters.flags(_exceeded, T, T + 105, 5)) == {0: 1.0, 100: 1.0}


def _queue(stats: Stats) -> float:
    return float(stats.queue_length)


def test_averages_are_the_mean_of_the_readings_in_each_period() -> None:
    counters = Counters(keep_s=600)
    for t, queue in [(0, 2), (2, 4), (4.9, 6), (5, 10), (9, 20), (17, 3)]:
        counters.add(T + t, Stats(queue_length=queue))
    averages = counters.averages(_queue, T, T + 20, 5)
    assert averages.status is Status.OK
    # [10, 15) has no reading: no datapoint, not a zero.
    assert _by_offset(averages) == {0: 4.0, 5: 15.0, 15: 3.0}


def test_averages_leave_out_readings_outside_the_window() -> None:
    counters = Counters(keep_s=600)
    for t, queue in [(0, 100), (5, 2), (7, 4), (10, 100)]:
        counters.add(T + t, Stats(queue_length=queue))
    assert _by_offset(counters.averages(_queue, T + 5, T + 10, 5)) == {5: 3.0}
