"""The attempts this process knows of, newest last: what a double click, a replayed request
or a restart reads before anything is asked of AWS. Kept in the state file for a week."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from analyzer.model.applied import Attempt

KEPT = timedelta(days=7)
MOST = 500
"""Attempts kept at most: a week of a busy fleet's clicks, and a bound on the state file."""


class Ledger:
    def __init__(self, attempts: Iterable[Attempt] = ()) -> None:
        self._attempts: list[Attempt] = sorted(attempts, key=lambda a: a.at)[-MOST:]
        self._lock = threading.Lock()
        self._busy: set[str] = set()

    def __iter__(self) -> Iterator[Attempt]:
        with self._lock:
            return iter(list(self._attempts))

    def record(self, attempt: Attempt) -> None:
        with self._lock:
            self._attempts.append(attempt)
            cutoff = attempt.at - KEPT
            self._attempts = [a for a in self._attempts if a.at >= cutoff][-MOST:]

    def applied(self, fix_id: str, since: datetime) -> Attempt | None:
        """The latest attempt that applied this fix since then."""
        with self._lock:
            return next(
                (
                    a
                    for a in reversed(self._attempts)
                    if a.fix_id == fix_id and a.applied and a.at >= since
                ),
                None,
            )

    def made(self, resource_id: str) -> list[datetime]:
        """When this process's attempts modified the resource (applied, or a policy's)."""
        with self._lock:
            return [
                a.at
                for a in self._attempts
                if a.applied and a.fix_id.partition(":")[0] == resource_id
            ]

    def tried(self, fix_id: str, since: datetime, via: str) -> bool:
        """Whether this fix was attempted this way since then, whatever came of it."""
        with self._lock:
            return any(
                a.fix_id == fix_id and a.via == via and a.at >= since for a in self._attempts
            )

    @contextmanager
    def holding(self, fix_id: str) -> Iterator[bool]:
        """Whether this caller holds the fix: a second attempt at the same fix while one is
        under way gets False, and must not go ahead."""
        with self._lock:
            taken = fix_id not in self._busy
            if taken:
                self._busy.add(fix_id)
        try:
            yield taken
        finally:
            if taken:
                with self._lock:
                    self._busy.discard(fix_id)
