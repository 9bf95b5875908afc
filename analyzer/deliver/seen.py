"""The signed Slack requests already taken, kept long enough that one sent again is known.

A valid signature does not stop a request recorded and sent again while its timestamp is
within Slack's five minutes. Remembering each signature in memory stops it in one process;
a restart forgets them. This record can be written to the state file and read back, so
that a restart still knows them. It keeps a SHA-256 of each signature, never the signature,
and the time it was seen; an entry is let go of once no request bearing it could be valid.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from typing import Any

import structlog

log = structlog.get_logger(__name__)

WINDOW_S = 300
"""Slack's five minutes: an older (or later) timestamp is refused, a signature seen within
them is a replay."""
KEPT_S = 2 * WINDOW_S
"""How long a signature is kept from when it was seen: its timestamp may be up to five
minutes ahead of the clock, and stays valid five minutes past it."""
MAX_RECORDS = 10_000
"""The most entries read back from a record: far more than Slack sends in ten minutes."""
_DIGEST = re.compile(r"[0-9a-f]{64}")


def digest(signature: str) -> str:
    """What is kept of a signature: its SHA-256, in hex."""
    return hashlib.sha256(signature.encode("utf-8", "surrogateescape")).hexdigest()


class Seen:
    """Signatures seen, by digest, with the time each was seen (the clock's seconds since
    the epoch); safe to share between threads."""

    def __init__(self, entries: dict[str, float] | None = None) -> None:
        self._at: dict[str, float] = dict(entries or {})
        self._lock = threading.Lock()

    def add(self, signature: str, now: float) -> bool:
        """Record `signature` as seen at `now`: True if it is new, False if it was seen
        within the window (a replay). Entries past the window are let go of."""
        key = digest(signature)
        with self._lock:
            self._prune(now)
            if key in self._at:
                return False
            self._at[key] = now
            return True

    def __len__(self) -> int:
        with self._lock:
            return len(self._at)

    def _prune(self, now: float) -> None:
        self._at = {k: t for k, t in self._at.items() if now - t <= KEPT_S}

    def records(self) -> list[dict[str, Any]]:
        """The record to persist: `{"sha256": hex, "at": seconds}` each, oldest first."""
        with self._lock:
            entries = sorted(self._at.items(), key=lambda item: item[1])
        return [{"sha256": key, "at": at} for key, at in entries]

    @classmethod
    def from_records(cls, records: Any, now: float) -> Seen:
        """The record read back: entries past the window are let go of, and entries that
        are not one (a state file is bad input like any other) are skipped, with one log
        line saying which and why."""
        if records is None:
            return cls()
        if not isinstance(records, list):
            log.warning(
                "slack.seen_skipped", skipped="all", reason=f"not a list: {type(records).__name__}"
            )
            return cls()
        entries: dict[str, float] = {}
        reasons: list[str] = []
        skipped = 0
        for index, record in enumerate(records):
            reason = _unreadable(record, now)
            if reason is not None:
                skipped += 1
                reasons.append(f"{index}: {reason}")
            elif now - record["at"] <= KEPT_S:
                key = record["sha256"]
                entries[key] = max(float(record["at"]), entries.get(key, -math.inf))
        if len(entries) > MAX_RECORDS:
            skipped += len(entries) - MAX_RECORDS
            reasons.append(f"{len(entries) - MAX_RECORDS} beyond the {MAX_RECORDS} newest")
            entries = dict(sorted(entries.items(), key=lambda item: item[1])[-MAX_RECORDS:])
        if skipped:
            log.warning("slack.seen_skipped", skipped=skipped, reasons=reasons[:5])
        return cls(entries)


def _unreadable(record: Any, now: float) -> str | None:
    """Why a record's entry is not one, or None."""
    if not isinstance(record, dict):
        return f"not an object: {type(record).__name__}"
    key, at = record.get("sha256"), record.get("at")
    if not isinstance(key, str) or _DIGEST.fullmatch(key) is None:
        return "sha256 is not 64 lowercase hex digits"
    if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at):
        return "at is not a number of seconds"
    if at > now + WINDOW_S:
        return "at is later than the clock"
    return None
