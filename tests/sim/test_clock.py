"""Simulated time runs `speed` times faster than real time from its start."""

from __future__ import annotations

import time

from analyzer.sim.clock import SimulatedClock
from tests.helpers import T0


def test_simulated_time_starts_at_start_and_runs_faster() -> None:
    clock = SimulatedClock(T0, speed=600)
    first = clock()
    assert first >= T0
    time.sleep(0.05)
    elapsed = (clock() - first).total_seconds()
    assert elapsed >= 0.05 * 600 * 0.9
