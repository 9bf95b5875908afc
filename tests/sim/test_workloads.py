"""Simulated demand: constant, stepped, daily and periodic IOPS over time."""

from __future__ import annotations

import pytest

from analyzer.model.units import KIB
from analyzer.sim.workloads import Demand, constant, daily, periodic, steps

HOUR = 3600.0


def test_constant() -> None:
    demand = constant(1_500)
    assert [demand(t) for t in (0, 60, 86_400)] == [1_500, 1_500, 1_500]


@pytest.mark.parametrize(
    ("t", "iops"), [(-1, 0), (0, 100), (599, 100), (600, 1_500), (1_199, 1_500), (1_200, 50)]
)
def test_steps_change_at_their_second_whatever_the_order_given(t: float, iops: float) -> None:
    assert steps((1_200, 50), (0, 100), (600, 1_500))(t) == iops


@pytest.mark.parametrize(
    ("t", "iops"),
    [
        (0, 80),
        (9 * HOUR - 1, 80),
        (9 * HOUR, 3_000),
        (13 * HOUR - 1, 3_000),
        (13 * HOUR, 80),
        (24 * HOUR + 10 * HOUR, 3_000),  # the next day too
    ],
)
def test_daily_is_high_between_its_hours(t: float, iops: float) -> None:
    assert daily(low=80, high=3_000, busy_from_h=9, busy_to_h=13)(t) == iops


def test_daily_offset_shifts_the_day() -> None:
    shifted = daily(low=80, high=3_000, busy_from_h=9, busy_to_h=13, offset_s=9 * HOUR)
    assert shifted(0) == 3_000
    assert shifted(4 * HOUR) == 80


@pytest.mark.parametrize(
    ("t", "iops"),
    [(0, 10), (299, 10), (300, 5_000), (359, 5_000), (360, 10), (900, 5_000), (-300, 5_000)],
)
def test_periodic_comes_back_every_period(t: float, iops: float) -> None:
    """A job of 60 s every 10 minutes, from 300 s (and every period before)."""
    assert periodic(high=5_000, low=10, period_s=600, busy_s=60, busy_from_s=300)(t) == iops


def test_demand_defaults() -> None:
    demand = Demand(constant(100))
    assert (demand.io_size_bytes, demand.read_fraction, demand.sequential) == (16 * KIB, 0.7, False)


def test_a_held_demand_says_which_spans_ask_one_rate() -> None:
    """Held for 300 s from 180 s: 180-479 is one period, 480 starts the next."""
    demand = Demand(constant(0), held_s=300, held_from_s=180)
    assert demand.held(180, 60) and demand.held(420, 60) and demand.held(-120, 300)
    assert not demand.held(421, 60)
    assert not demand.held(150, 60)
    assert not Demand(constant(0)).held(0, 60)
