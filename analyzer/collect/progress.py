"""How far a long step has come: a live bar on a terminal, a log event now and then elsewhere.

The first inventory describes every volume and instance, and the first cycle backfills the
history the rules read: minutes on a large account. A step that ends within `QUIET_S` says
nothing, so steady cycles stay silent; a longer one is drawn on stderr (a terminal, with
rich.progress: one line a step under way, gone when it ends) or logged every `LOG_EVERY_S`
(anywhere else), and says when it is done.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import structlog
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

QUIET_S = 2.0
"""Steps shorter than this are not shown."""
LOG_EVERY_S = 15.0
"""Off a terminal: one `progress` event this often while a step lasts."""
DRAW_EVERY_S = 0.25

log = structlog.get_logger(__name__)


class _Sink:
    """Where progress goes: drawn on `terminal`, or with None, logged. While a step is drawn,
    `board` is the live display holding one line a step under way."""

    terminal: TextIO | None = None
    board: Progress | None = None
    lock = threading.Lock()


_SINK = _Sink()


def configure(terminal: TextIO | None) -> None:
    """Draw progress on `terminal` (a TTY's stderr), or with None, log it."""
    with _SINK.lock:
        if _SINK.board is not None:
            _SINK.board.stop()
            _SINK.board = None
        _SINK.terminal = terminal


def _board(terminal: TextIO) -> Progress:
    """The live display, made for the first step drawn; called under the sink's lock."""
    if _SINK.board is None:
        _SINK.board = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TextColumn("{task.fields[count]}", markup=False),
            TimeElapsedColumn(),
            # The terminal was found to be one by `for_stderr`; stdout and stderr stay as
            # they are (a global swap from a fetching thread would reach the report).
            console=Console(file=terminal, force_terminal=True, highlight=False),
            transient=True,
            auto_refresh=False,
            redirect_stdout=False,
            redirect_stderr=False,
            get_time=time.monotonic,
        )
    return _SINK.board


class Step:
    """One long step under way: `advance` as its parts finish."""

    def __init__(self, what: str, total: int | None, unit: str) -> None:
        self.what = what
        self.total = total
        self.unit = unit
        self.done = 0
        self.started = time.monotonic()
        self._shown_at = 0.0
        self._task: TaskID | None = None
        self._drawn = False
        self._logged = False

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        elapsed = now - self.started
        if elapsed < QUIET_S:
            return
        terminal = _SINK.terminal
        if terminal is not None:
            if now - self._shown_at >= DRAW_EVERY_S:
                self._shown_at = now
                self._draw(terminal)
        elif not self._logged or now - self._shown_at >= LOG_EVERY_S:
            self._shown_at = now
            self._logged = True
            log.info("progress", step=self.what, **self._counts(), elapsed_s=round(elapsed))

    def _draw(self, terminal: TextIO) -> None:
        with _SINK.lock:
            board = _board(terminal)
            if self._task is None:
                self._task = board.add_task(
                    self.what, start=False, total=self.total, completed=self.done, count=""
                )
                # Its clock, like the quiet time, runs from the step's start.
                [task] = [t for t in board.tasks if t.id == self._task]
                task.start_time = self.started
            board.update(self._task, completed=self.done, count=self.count())
            if board.live.is_started:
                board.refresh()
            else:
                board.start()  # drawn as it starts
        self._drawn = True

    def count(self) -> str:
        if self.total:
            share = 100 * self.done / self.total
            return f"{self.done:,}/{self.total:,} {self.unit} ({share:.0f}%)"
        return f"{self.done:,} {self.unit}"

    def _counts(self) -> dict[str, int]:
        counts = {"done": self.done}
        if self.total is not None:
            counts["total"] = self.total
        return counts

    def finish(self) -> None:
        elapsed = time.monotonic() - self.started
        if self._task is not None:
            with _SINK.lock:
                board = _SINK.board
                if board is not None:
                    board.remove_task(self._task)
                    if board.tasks:
                        board.refresh()
                    else:  # the last step drawn: the display goes
                        board.stop()
                        _SINK.board = None
        if self._drawn or self._logged:
            log.info(
                "progress.done",
                step=self.what,
                done=self.done,
                unit=self.unit,
                duration_s=round(elapsed, 1),
            )


@contextmanager
def step(what: str, total: int | None = None, unit: str = "") -> Iterator[Step]:
    """A step that reports how far it has come while it lasts longer than `QUIET_S`."""
    current = Step(what, total, unit)
    try:
        yield current
    finally:
        current.finish()


def for_stderr(console: bool) -> TextIO | None:
    """Where to draw: stderr when it is a terminal and the log is for people, else nowhere."""
    return sys.stderr if console and sys.stderr.isatty() else None
