"""A metric's datapoints over time, and the three states a fetch can end in."""

from __future__ import annotations

import bisect
import math
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from functools import reduce
from itertools import pairwise
from typing import Any


class Status(StrEnum):
    """What a fetch produced: data, nothing at all, or a failure (never confused)."""

    OK = "ok"
    NO_DATA = "no_data"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Series:
    """Datapoints oldest first; each timestamp starts a period of `period_s` seconds.

    `status` tells data (OK) from a metric that returned nothing (NO_DATA) and from a fetch
    that failed (ERROR, with `error` saying why); an empty series is never "zero".
    """

    timestamps: tuple[datetime, ...] = ()
    values: Sequence[float] = ()
    """Stored as an `array('d')`: eight bytes a value, not a Python float each."""
    period_s: int = 60
    status: Status = Status.NO_DATA
    error: str | None = None

    def __post_init__(self) -> None:
        if len(self.timestamps) != len(self.values):
            raise ValueError("timestamps and values differ in length")

    @classmethod
    def of(
        cls, points: Iterable[tuple[datetime, float]], period_s: int, status: Status | None = None
    ) -> Series:
        ordered = sorted(points)
        stamps = tuple(t for t, _ in ordered)
        values = array("d", [v for _, v in ordered])
        if status is None:
            status = Status.OK if stamps else Status.NO_DATA
        return cls(stamps, values, period_s, status)

    @classmethod
    def failed(cls, error: str, period_s: int = 60) -> Series:
        return cls((), (), period_s, Status.ERROR, error)

    def __len__(self) -> int:
        return len(self.values)

    def points(self) -> list[tuple[datetime, float]]:
        return list(zip(self.timestamps, self.values, strict=True))

    def until(self, end: datetime) -> Series:
        """Only the periods that are complete by `end`."""
        stamps = self.timestamps
        last_start = end - span(self.period_s)
        if not stamps or stamps[-1] <= last_start:
            return self  # the common case, where the series was cut there already
        cut = bisect.bisect_right(stamps, last_start)
        return Series(
            self.timestamps[:cut], self.values[:cut], self.period_s, self.status, self.error
        )

    def between(self, start: datetime, end: datetime) -> Series:
        """The periods that start at or after `start` and are complete by `end`."""
        stamps = self.timestamps
        hi = bisect.bisect_right(stamps, end - span(self.period_s))
        lo = bisect.bisect_left(stamps, start, 0, hi)
        return Series(stamps[lo:hi], self.values[lo:hi], self.period_s, self.status, self.error)

    def since(self, start: datetime) -> Series:
        """The periods that start at or after `start`."""
        lo = bisect.bisect_left(self.timestamps, start)
        if lo == 0:
            return self
        return Series(
            self.timestamps[lo:], self.values[lo:], self.period_s, self.status, self.error
        )

    def last(self) -> tuple[datetime, float] | None:
        if not self.values:
            return None
        return self.timestamps[-1], self.values[-1]

    def mean(self) -> float | None:
        if not self.values:
            return None
        return sum(self.values) / len(self.values)

    def map(self, fn: Callable[[float], float]) -> Series:
        return Series(
            self.timestamps,
            array("d", [fn(v) for v in self.values]),
            self.period_s,
            self.status,
            self.error,
        )


_SPANS: dict[int, timedelta] = {}


def span(period_s: int) -> timedelta:
    """A period as a timedelta, made once per length (every cut of every series asks)."""
    found = _SPANS.get(period_s)
    if found is None:
        found = _SPANS[period_s] = timedelta(seconds=period_s)
    return found


def spacing(series: Series) -> int:
    """The seconds between a series' datapoints as they fall: the greatest common divisor of
    the gaps, never below its period. For a source that publishes every interval, zeros
    included (the CloudWatch agent), that is its interval."""
    stamps = series.timestamps
    gaps = [int((b - a).total_seconds()) for a, b in pairwise(stamps)]
    return max(reduce(math.gcd, gaps, 0), series.period_s)


def combine_status(*series: Series) -> tuple[Status, str | None]:
    """An error anywhere is an error; data anywhere is data; otherwise no data."""
    data = False
    for s in series:
        if s.status is Status.ERROR:
            return Status.ERROR, s.error
        data = data or s.status is Status.OK
    return (Status.OK, None) if data else (Status.NO_DATA, None)


STALE_PERIODS = 2
"""Data whose newest period ended longer ago than this many periods is not recent."""


def recent(series: Series, at: datetime, window_s: float) -> Series:
    """The last `window_s` seconds of data complete by `at`.

    The window ends with the newest complete period rather than at `at`: 5-minute EC2 points
    are complete minutes after 1-minute volume points, and a window ending at `at` would hold
    one point fewer. Data older than two periods is not recent at all.
    """
    complete = series.until(at)
    newest = complete.last()
    if newest is None:
        return complete
    end = newest[0] + timedelta(seconds=series.period_s)
    if (at - end).total_seconds() > STALE_PERIODS * series.period_s:
        return complete.between(at, at)
    return complete.between(end - timedelta(seconds=window_s), end)


def is_recent(series: Series, at: datetime) -> bool:
    """Whether `recent` would find anything in the series at `at`, whatever the window."""
    period = timedelta(seconds=series.period_s)
    cut = bisect.bisect_right(series.timestamps, at - period)
    if cut == 0:
        return False
    return at - (series.timestamps[cut - 1] + period) <= STALE_PERIODS * period


def window_evidence(series: Series, window_s: float) -> dict[str, Any]:
    """Which data a finding rests on: the window, the resolution and the datapoints used."""
    return {
        "window_start": series.timestamps[0].isoformat() if series.timestamps else None,
        "window_end": (series.timestamps[-1] + timedelta(seconds=series.period_s)).isoformat()
        if series.timestamps
        else None,
        "window_seconds": window_s,
        "period_seconds": series.period_s,
        "datapoints": len(series),
    }


def latest_balance(balance: Series, at: datetime) -> tuple[datetime, float] | None:
    """The newest complete reading by `at`, stamped at the middle of the period it averages."""
    newest = balance.until(at).last()
    if newest is None:
        return None
    stamp, value = newest
    return stamp + timedelta(seconds=balance.period_s / 2), value
