"""Long steps say how far they have come; short ones say nothing."""

from __future__ import annotations

import io
import itertools
import re

import pytest
from structlog.testing import capture_logs

from analyzer.collect import progress


@pytest.fixture
def clock(monkeypatch):
    """time.monotonic as the test sets it."""
    now = [1_000.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    return now


def frames(screen: io.StringIO) -> list[str]:
    """What a terminal showed, frame by frame: each redraw starts by erasing the line."""
    plain = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", screen.getvalue().replace("\x1b[2K", "\0"))
    return [f.strip("\r") for f in plain.split("\0")]


@pytest.fixture
def terminal():
    screen = io.StringIO()
    progress.configure(screen)
    yield screen
    progress.configure(None)


def test_a_short_step_says_nothing(clock, terminal):
    with capture_logs() as logged, progress.step("CloudWatch metrics", 100, "metrics") as s:
        for _ in range(100):
            clock[0] += 0.01
            s.advance()
    assert terminal.getvalue() == ""
    assert logged == []


def test_a_long_step_is_drawn_on_a_terminal_then_cleared(clock, terminal):
    with capture_logs() as logged, progress.step("CloudWatch metrics", 1_000, "metrics") as s:
        for _ in range(10):
            clock[0] += 1
            s.advance(100)
    shown = frames(terminal)
    assert shown[0].startswith("CloudWatch metrics ━")
    # Drawn once the step outlasts QUIET_S, its clock running from when it began.
    assert shown[0].endswith(" 200/1,000 metrics (20%) 0:00:02")
    assert shown[1].endswith(" 300/1,000 metrics (30%) 0:00:03")
    assert shown[-2].endswith(" 1,000/1,000 metrics (100%) 0:00:10")
    assert shown[-1] == ""  # the line is gone once the step is done
    assert terminal.getvalue().endswith("\x1b[?25h\r")  # and the cursor is back
    assert [e["event"] for e in logged] == ["progress.done"]
    assert logged[0]["duration_s"] == 10


def test_steps_under_way_at_once_each_get_a_line(clock, terminal):
    """Regions are fetched side by side: one live display, a line for each, each gone as it
    ends."""
    with progress.step("metrics in us-east-1", 10, "metrics") as east:
        clock[0] += 3
        east.advance(5)
        with progress.step("metrics in eu-west-1", unit="pages") as west:
            clock[0] += 3
            west.advance(7)
        assert frames(terminal)[-1].startswith("metrics in us-east-1 ")
        clock[0] += 1
        east.advance(1)
    lines = frames(terminal)
    both = [f.splitlines() for f in lines if "\n" in f]
    assert both and all(len(f) == 2 for f in both)
    assert "5/10 metrics (50%)" in both[-1][0] and "7 pages" in both[-1][1]
    # Once the other is done, one line again.
    assert lines[-2].startswith("metrics in us-east-1 ") and "6/10 metrics (60%)" in lines[-2]
    assert lines[-1] == "" and progress._SINK.board is None


def test_off_a_terminal_a_long_step_is_logged_now_and_then(clock):
    progress.configure(None)
    with (
        capture_logs() as logged,
        progress.step("describe_volumes in us-east-1", unit="pages") as s,
    ):
        for _ in range(60):
            clock[0] += 1
            s.advance()
    events = [e for e in logged if e["event"] == "progress"]
    # The first once the step outlasts QUIET_S, then one every LOG_EVERY_S.
    assert [e["elapsed_s"] for e in events] == [2, 17, 32, 47]
    assert events[-1]["done"] == 47 and "total" not in events[-1]
    assert logged[-1]["event"] == "progress.done" and logged[-1]["done"] == 60


def test_the_backfill_reports_its_progress(clock, terminal):
    """The first cycle's GetMetricData calls, batch by batch."""
    from datetime import UTC, datetime, timedelta

    from analyzer.collect.cloudwatch import CloudWatch
    from analyzer.collect.queries import MetricQuery
    from analyzer.collect.window import Window

    class Slow:
        def get_metric_data(self, **kwargs):
            clock[0] += 1.5
            ids = [q["Id"] for q in kwargs["MetricDataQueries"]]
            return {
                "MetricDataResults": [
                    {"Id": i, "Timestamps": [], "Values": [], "StatusCode": "Complete"} for i in ids
                ]
            }

    wanted = [
        MetricQuery(f"vol-{n}", "AWS/EBS", "VolumeReadOps", (("VolumeId", f"vol-{n}"),), "Sum", 60)
        for n in range(1_200)
    ]
    end = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    CloudWatch(Slow(), "us-east-1").fetch(wanted, Window(end - timedelta(hours=1), end, 60))
    assert any(
        f.startswith("CloudWatch metrics in us-east-1 ") and "1,000/1,200 metrics (83%)" in f
        for f in frames(terminal)
    )


def test_a_terminal_line_is_drawn_at_most_four_times_a_second(clock, terminal):
    with progress.step("x", 10_000, "metrics") as s:
        clock[0] += 3
        for _ in itertools.repeat(None, 1_000):
            clock[0] += 0.001
            s.advance()
    # The quiet seconds, then a quarter of a second of advances: two frames, and the clearing.
    assert len(frames(terminal)) <= 6
