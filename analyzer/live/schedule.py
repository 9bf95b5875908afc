"""Jobs every so many seconds on the monotonic clock, and the wall clock watched for steps.

The wall clock steps: an NTP correction, a VM restored from a snapshot, a host whose clock was
set by hand. A schedule on wall-clock times stalls for as long as the clock stepped back (and
runs a burst of late jobs after a step forward), so the daemon schedules on `time.monotonic`,
which never steps. What the data windows ask CloudWatch still follows the wall clock, as
CloudWatch does; a step is logged once, with its size.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime

import structlog

log = structlog.get_logger(__name__)

STEP_S = 60.0
"""A wall clock that moved this much more or less than the monotonic clock has stepped."""


def every(
    name: str, period_s: float, job: Callable[[], object], first_s: float, stop: threading.Event
) -> threading.Thread:
    """A thread that runs `job` `first_s` seconds from now, then every `period_s`, until `stop`
    is set. One run at a time; runs missed while one overran are skipped, not bunched."""

    def loop() -> None:
        due = time.monotonic() + first_s
        while not stop.wait(max(due - time.monotonic(), 0.0)):
            job()
            due += period_s
            behind = time.monotonic() - due
            if behind > 0:
                due += period_s * (behind // period_s + 1)

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    return thread


class StepWatch:
    """Tells a step of the wall clock from the time that passed: each `check` compares how
    far the wall clock moved since the last one with how far the monotonic clock did."""

    def __init__(self, wall: Callable[[], datetime], scale: float = 1.0) -> None:
        self._wall = wall
        self._scale = scale
        """Wall seconds per monotonic second (a simulated clock runs faster)."""
        self._last: tuple[datetime, float] | None = None

    def check(self) -> float:
        """The step since the last check, in seconds (0 when there was none); logged once."""
        now, mono = self._wall(), time.monotonic()
        last, self._last = self._last, (now, mono)
        if last is None:
            return 0.0
        moved = (now - last[0]).total_seconds()
        passed = (mono - last[1]) * self._scale
        step = moved - passed
        if abs(step) < STEP_S:
            return 0.0
        log.warning(
            "clock.stepped",
            seconds=round(step),
            direction="forward" if step > 0 else "back",
            note="schedules and health ages run on the monotonic clock; data windows follow "
            "the wall clock",
        )
        return step
