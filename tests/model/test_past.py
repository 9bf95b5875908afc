"""A bucket's past days: the balance on a regular grid, read between period middles."""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np
import pytest

from analyzer.model.metrics import Measure
from analyzer.model.past import NO_PAST, Grid, Past
from tests.helpers import T0, minutes, series

TEN_MINUTES = series([float(i) for i in range(10)])
"""One-minute balances 0 to 9 from T0."""


def test_grid_means_the_points_in_each_period_and_leaves_empty_ones_nan() -> None:
    grid = Grid.of(TEN_MINUTES, T0, T0 + minutes(15), 300)
    assert len(grid) == 3
    assert grid.end == T0 + minutes(15)
    assert grid.values.dtype == np.float32
    assert grid.values[:2].tolist() == [2.0, 7.0]
    assert math.isnan(grid.values[2])


def test_grid_leaves_out_points_off_it() -> None:
    grid = Grid.of(TEN_MINUTES, T0 + minutes(5), T0 + minutes(10), 300)
    assert grid.values.tolist() == [7.0]


@pytest.mark.parametrize(
    ("start_offset", "end_offset", "count"), [(0, 0, 0), (0, 4, 0), (0, 9, 1), (5, 0, 0)]
)
def test_grid_holds_whole_periods_only(start_offset: int, end_offset: int, count: int) -> None:
    grid = Grid.of(TEN_MINUTES, T0 + minutes(start_offset), T0 + minutes(end_offset), 300)
    assert len(grid) == count


@pytest.mark.parametrize(
    ("offset_s", "expected"),
    [
        (150, 2.0),  # the middle of the first period
        (300, 4.5),  # halfway between the first two middles
        (450, 7.0),
        (100, None),  # before the first middle: off the grid
        (600, None),  # beside the period without data
        (800, None),  # past the last middle
    ],
)
def test_grid_reads_linearly_between_period_middles(offset_s: int, expected: float | None) -> None:
    grid = Grid.of(TEN_MINUTES, T0, T0 + minutes(15), 300)
    (found,) = grid.at(np.array([(T0 + timedelta(seconds=offset_s)).timestamp()]))
    if expected is None:
        assert math.isnan(found)
    else:
        assert found == pytest.approx(expected)


def test_an_empty_grid_reads_nan_everywhere() -> None:
    grid = Grid.of(series([]), T0, T0, 300)
    assert np.isnan(grid.at(np.array([T0.timestamp(), T0.timestamp() + 60]))).all()


def test_past_is_true_once_anything_was_fetched() -> None:
    assert not NO_PAST
    assert Past(minima={Measure.BURST_BALANCE: series([40.0], period_s=86400)})
    assert Past(days={Measure.BURST_BALANCE: Grid.of(TEN_MINUTES, T0, T0 + minutes(5), 300)})
