"""The record of a bucket's drains: where a drain begins and ends, what the past says of the
drain under way, and that a record is read only up to the fetch before the moment judged."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from analyzer.analyze.record import LEAST_SPEND, PRIOR_WEIGHT, Record, drains, record_of
from analyzer.model.past import Grid
from tests.helpers import T0

NAN = float("nan")


def _drains(*values: float):  # type: ignore[no-untyped-def]
    return drains(np.array(values, dtype=np.float64))


def test_a_fall_and_a_refill_is_one_drain() -> None:
    done, still = _drains(100, 90, 80, 70, 75, 85, 95, 100)
    assert done == [(100, 70)]
    assert still is not None and still[0] >= 85


def test_a_pause_between_bursts_does_not_part_them_but_a_refill_does() -> None:
    # 100 → 70, back up 4 points (less than 5, and less than half the fall), on to 50.
    done, _ = _drains(100, 70, 74, 50, 60, 100)
    assert done == [(100, 50)]
    # Back up 16 points of a 30-point fall (more than half): two drains.
    done, _ = _drains(100, 70, 86, 60, 100)
    assert done == [(100, 70), (86, 60)]


def test_a_missing_period_ends_a_drain_and_a_dip_is_no_drain() -> None:
    done, still = _drains(100, 80, NAN, 80, 100 - LEAST_SPEND / 2, 100)
    assert done == [(100, 80)]
    assert still == (100, 100)


def test_the_drain_under_way_is_open() -> None:
    done, still = _drains(40, 60, 100, 90, 70)
    assert done == []
    assert still == (100, 70)


def _record(spends: list[float], emptied: list[bool]) -> Record:
    return Record(np.array(spends, dtype=np.float64), np.array(emptied, dtype=np.bool_))


def test_survival_counts_a_drain_that_emptied_the_bucket_as_one_that_would_have_gone_on() -> None:
    # Four drains: 10, 20 and 30 points that ended, and one that emptied the bucket from 25 %.
    record = _record([10, 20, 30, 25], [False, False, False, True])
    assert record.survival(5) == 1.0
    assert record.survival(15) == pytest.approx(3 / 4)
    # The drain that emptied the bucket at 25 points counts as going on past 25, where one
    # that ended there would halve what is left: 3/4 x 2/3, not 3/4 x 2/3 x 1/2.
    assert record.survival(28) == pytest.approx(3 / 4 * 2 / 3)
    ended = _record([10, 20, 30, 25], [False] * 4)
    assert ended.survival(28) == pytest.approx(3 / 4 * 2 / 3 * 1 / 2)
    assert record.survival(35) == pytest.approx(0.0)


def test_the_chance_blends_the_record_with_the_prior_by_how_many_drains_got_this_far() -> None:
    record = _record([10.0] * 8 + [60.0] * 2, [False] * 10)
    # From 60 %, 12 points spent: only the two big drains got this far, both spent 60.
    found = record.chance(60, 12)
    assert (found.at_risk, found.went_on, found.drains) == (2, 2, 10)
    prior = 12 / 60
    assert found.chance == pytest.approx((2 * 1.0 + PRIOR_WEIGHT * prior) / (2 + PRIOR_WEIGHT))
    # Further than any drain went: the prior alone.
    assert record.chance(100, 70).chance == pytest.approx(0.7)
    # A drain that has just begun, from 60 %: most drains stop at 10 points.
    assert record.chance(60, 2).chance < 0.3


def test_a_record_reads_the_two_weeks_before_its_cut_off() -> None:
    values = np.full(16 * 288, 100.0, dtype=np.float32)
    for day in range(16):
        values[day * 288 + 100 : day * 288 + 103] = (80.0, 60.0, 80.0)
    grid = Grid(T0, 300, values)
    assert len(record_of(grid, T0 + timedelta(days=3))) == 3
    assert len(record_of(grid, T0 + timedelta(days=16))) == 14  # the last fourteen days
    assert len(record_of(grid, T0 + timedelta(days=40))) == 14  # no further than the grid
    assert record_of(grid, T0 + timedelta(days=3)) is record_of(grid, T0 + timedelta(days=3))
