"""Simulated time that runs faster than real time."""

from __future__ import annotations

import time
from datetime import datetime, timedelta


class SimulatedClock:
    """Simulated time: starts at `start` and runs `speed` times faster than real time."""

    def __init__(self, start: datetime, speed: float) -> None:
        self.start = start
        self.speed = speed
        self._origin = time.monotonic()

    def __call__(self) -> datetime:
        return self.start + timedelta(seconds=(time.monotonic() - self._origin) * self.speed)
