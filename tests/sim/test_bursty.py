"""The bursty fortnights: reproducible from their seed, heavy-tailed, and with both real
exhaustions and near misses in the truth the bucket model gives."""

from __future__ import annotations

import itertools
import statistics
from dataclasses import replace

import numpy as np

from analyzer.sim.bursty import SCENARIOS, Bursts, as_raw, simulate

SCENARIO = next(s for s in SCENARIOS if s.name == "gp2-100-spells")


def _bursts(scenario: Bursts) -> list[tuple[float, float]]:
    """(start, length in seconds) of each stretch above the idle floor."""
    starts, levels = scenario.schedule(3_000.0, 300.0)
    out = []
    begun = None
    for moment, level in zip(starts, levels, strict=True):
        busy = level > scenario.idle * 300.0
        if busy and begun is None:
            begun = moment
        elif not busy and begun is not None:
            out.append((begun, moment - begun))
            begun = None
    return out


def test_the_same_seed_draws_the_same_fortnight_and_another_seed_another() -> None:
    assert SCENARIO.schedule(3_000.0, 300.0) == SCENARIO.schedule(3_000.0, 300.0)
    assert replace(SCENARIO, seed=99).schedule(3_000.0, 300.0) != SCENARIO.schedule(3_000.0, 300.0)


def test_burst_lengths_and_gaps_are_heavy_tailed() -> None:
    scenario = replace(SCENARIO, spells=0)
    bursts = _bursts(scenario)
    lengths = [length for _, length in bursts]
    gaps = [b[0] - (a[0] + a[1]) for a, b in itertools.pairwise(bursts)]
    # Most bursts are short; a few last ten times the usual one (and more).
    assert max(lengths) >= 10 * statistics.median(lengths)
    assert max(gaps) >= 10 * statistics.median(gaps)
    assert min(lengths) >= scenario.burst_min_s - 1


def test_nights_are_quieter() -> None:
    starts = [s % 86_400 for s, _ in _bursts(replace(SCENARIO, spells=0))]
    night = sum(1 for s in starts if s < 6 * 3600)
    # A quarter of the day, but well under a quarter of the bursts.
    assert night < 0.15 * len(starts)


def test_a_fortnight_holds_exhaustions_and_near_misses() -> None:
    inventory, data = simulate(SCENARIO)
    balance = np.array([v for _, v in data[(SCENARIO.volume_id, "BurstBalance")]])
    assert len(balance) == 14 * 1440
    empty = balance <= 1.0
    assert 2 <= int(np.sum(empty[1:] & ~empty[:-1])) <= 30
    # Dips below 20 % that turn back before the bucket is empty: the near misses.
    low = balance < 20
    dips = np.flatnonzero(low[1:] & ~low[:-1]) + 1
    misses = [d for d in dips if balance[d : d + 120].min() > 1.0]
    assert misses
    raw = as_raw(data)[SCENARIO.volume_id]
    assert raw["BurstBalance"].period_s == 60 and len(raw["BurstBalance"]) == len(balance)
    assert [v.volume_id for v in inventory.volumes] == [SCENARIO.volume_id]
