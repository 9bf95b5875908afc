"""How far a long step has come: a line on a terminal, a log event now and then elsewhere.

The first inventory describes every volume and instance, and the first cycle backfills the
history the rules read: minutes on a large account. A step that ends within `QUIET_S` says
nothing, so steady cycles stay silent; a longer one is drawn on stderr (a terminal) or logged
every `LOG_EVERY_S` (anywhere else), and says when it is done.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import structlog

QUIET_S = 2.0
"""Steps shorter than this are not shown."""
LOG_EVERY_S = 15.0
"""Off a terminal: one `progress` event this often while a step lasts."""
DRAW_EVERY_S = 0.25

log = structlog.get_logger(__name__)


class _Sink:
    """Where progress goes: drawn on `terminal`, or with None, logged."""

    terminal: TextIO | None = None
    lock = threading.Lock()


_SINK = _Sink()


def configure(terminal: TextIO | None) -> None:
    """Draw progress on `terminal` (a TTY's stderr), or with None, log it."""
    _SINK.terminal = terminal


class Step:
    """One long step under way: `advance` as its parts finish."""

    def __init__(self, what: str, total: int | None, unit: str) -> None:
        self.what = what
        self.total = total
        self.unit = unit
        self.done = 0
        self.started = time.monotonic()
        self._shown_at = 0.0
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
                with _SINK.lock:
                    terminal.write(f"\r{self.line(elapsed)}\x1b[K")
                    terminal.flush()
                self._drawn = True
        elif not self._logged or now - self._shown_at >= LOG_EVERY_S:
            self._shown_at = now
            self._logged = True
            log.info("progress", step=self.what, **self._counts(), elapsed_s=round(elapsed))

    def line(self, elapsed: float) -> str:
        if self.total:
            share = 100 * self.done / self.total
            count = f"{self.done:,}/{self.total:,} {self.unit} ({share:.0f}%)"
        else:
            count = f"{self.done:,} {self.unit}"
        return f"{self.what}: {count} · {elapsed:.0f} s"

    def _counts(self) -> dict[str, int]:
        counts = {"done": self.done}
        if self.total is not None:
            counts["total"] = self.total
        return counts

    def finish(self) -> None:
        elapsed = time.monotonic() - self.started
        terminal = _SINK.terminal
        if self._drawn and terminal is not None:
            with _SINK.lock:
                terminal.write("\r\x1b[K")
                terminal.flush()
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
