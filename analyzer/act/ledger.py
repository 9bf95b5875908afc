"""The attempts this process knows of, newest last: what a double click, a replayed request
or a restart reads before anything is asked of AWS. Kept in the state file for a week.

What AWS was asked to change (applied, failed, unknown) is kept apart from refusals and
denials, and never evicted by them within its week: a flood of clicks by someone who is not
an approver can neither flush the record of a modification nor grow the state file. Repeated
denials of one user are counted on one record."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta

from analyzer.model.applied import Attempt

KEPT = timedelta(days=7)
MOST = 500
"""Refusals, denials and the like kept at most: a bound on the state file."""
MOST_ACTED = 2_000
"""Attempts that asked AWS for a change kept at most: a week of the daily modifications AWS
allows a large fleet's alerting volumes; refusals never take their place."""
DENIALS_FOLDED = timedelta(hours=1)
"""A user's denials within this of their first are counted on it, not each kept and posted."""


class Ledger:
    def __init__(self, attempts: Iterable[Attempt] = ()) -> None:
        self._attempts: list[Attempt] = sorted(attempts, key=lambda a: a.at)
        if self._attempts:
            self._trim(self._attempts[-1].at)
        self._lock = threading.Lock()
        self._busy: set[str] = set()

    def __iter__(self) -> Iterator[Attempt]:
        with self._lock:
            return iter(list(self._attempts))

    def record(self, attempt: Attempt) -> None:
        with self._lock:
            self._keep(attempt)

    def _keep(self, attempt: Attempt) -> None:
        self._attempts.append(attempt)
        self._trim(attempt.at)

    def _trim(self, now: datetime) -> None:
        """Those past their week dropped, then the oldest of each kind beyond its bound."""
        kept = [a for a in self._attempts if a.at >= now - KEPT]
        acted = sum(a.acted for a in kept)
        over = {True: max(acted - MOST_ACTED, 0), False: max(len(kept) - acted - MOST, 0)}
        self._attempts = []
        for a in kept:
            if over[a.acted]:
                over[a.acted] -= 1
                continue
            self._attempts.append(a)

    def settle(self, accepted: Attempt, final: Attempt) -> None:
        """The record written when AWS accepted a change, replaced in its place by how it
        ended."""
        with self._lock:
            if accepted in self._attempts:
                self._attempts[self._attempts.index(accepted)] = final
            else:
                self._keep(final)

    def denied(self, attempt: Attempt) -> bool:
        """A denial recorded: True where it is the user's first within `DENIALS_FOLDED`
        (kept, and worth saying), False where it was counted on that first one."""
        with self._lock:
            first = next(
                (
                    n
                    for n in range(len(self._attempts) - 1, -1, -1)
                    if (a := self._attempts[n]).outcome == "denied"
                    and a.who == attempt.who
                    and attempt.at - a.at < DENIALS_FOLDED
                ),
                None,
            )
            if first is None:
                self._keep(attempt)
                return True
            folded = self._attempts[first]
            self._attempts[first] = replace(folded, count=folded.count + 1)
            return False

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
        """When this process's modifications of the resource started (as AWS reported, else
        when they were asked): applied ones, and those whose outcome is unknown."""
        with self._lock:
            return [
                a.started or a.at
                for a in self._attempts
                if a.outcome in ("applied", "unknown") and a.resource_id == resource_id
            ]

    def unsettled(self) -> list[Attempt]:
        """Changes AWS accepted whose read-back never ended (a kill, a crash)."""
        with self._lock:
            return [a for a in self._attempts if a.acted and not a.settled]

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
