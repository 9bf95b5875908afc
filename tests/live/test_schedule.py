"""Jobs on the monotonic clock, and a wall-clock step told and logged once."""

from __future__ import annotations

import itertools
import threading
import time
from datetime import UTC, datetime, timedelta

from structlog.testing import capture_logs

from analyzer.live.schedule import StepWatch, every

PERIOD_S = 0.05


def runs_of(job_time_s: float, first_slow_s: float = 0.0) -> list[float]:
    """Five runs of a job every `PERIOD_S`, the first taking `first_slow_s`: their starts."""
    stop, runs, done = threading.Event(), [], threading.Event()

    def job() -> None:
        runs.append(time.monotonic())
        if len(runs) == 1:
            time.sleep(first_slow_s)
        if len(runs) >= 5:
            done.set()

    thread = every("tick", PERIOD_S, job, 0.0, stop)
    assert done.wait(timeout=10)
    stop.set()
    thread.join(timeout=2)
    assert not thread.is_alive()  # stopped when told
    return runs


def test_a_job_runs_once_a_period_never_bunched():
    gaps = [b - a for a, b in itertools.pairwise(runs_of(0.0))]
    assert all(g >= PERIOD_S * 0.9 for g in gaps)


def test_runs_missed_while_one_overran_are_skipped_not_bunched():
    runs = runs_of(0.0, first_slow_s=5 * PERIOD_S)
    gaps = [b - a for a, b in itertools.pairwise(runs[1:])]
    assert all(g >= PERIOD_S * 0.9 for g in gaps)


def test_a_wall_clock_step_back_is_told_and_logged_once():
    wall = [datetime(2026, 11, 25, 15, 0, tzinfo=UTC)]
    watch = StepWatch(lambda: wall[0])
    assert watch.check() == 0.0
    wall[0] -= timedelta(hours=1)  # an NTP correction, a VM restored from a snapshot
    with capture_logs() as logs:
        step = watch.check()
        assert watch.check() == 0.0  # the same clock since: no step
    assert -3_601 < step < -3_599
    assert [e["event"] for e in logs] == ["clock.stepped"]
    assert logs[0]["direction"] == "back"
