"""A metric's datapoints over time, and the three states a fetch can end in."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from analyzer.models import Status


@dataclass(frozen=True, slots=True)
class Series:
    """Datapoints oldest first; each timestamp starts a period of `period_s` seconds.

    `status` tells data (OK) from a metric that returned nothing (NO_DATA) and from a fetch
    that failed (ERROR, with `error` saying why); an empty series is never "zero".
    """

    timestamps: tuple[datetime, ...] = ()
    values: tuple[float, ...] = ()
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
        values = tuple(float(v) for _, v in ordered)
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
        cut = bisect.bisect_right(self.timestamps, end - timedelta(seconds=self.period_s))
        if cut == len(self.timestamps):
            return self
        return Series(
            self.timestamps[:cut], self.values[:cut], self.period_s, self.status, self.error
        )

    def between(self, start: datetime, end: datetime) -> Series:
        """The periods that start at or after `start` and are complete by `end`."""
        trimmed = self.until(end)
        lo = bisect.bisect_left(trimmed.timestamps, start)
        return Series(
            trimmed.timestamps[lo:], trimmed.values[lo:], self.period_s, self.status, self.error
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
            tuple(fn(v) for v in self.values),
            self.period_s,
            self.status,
            self.error,
        )


def combine_status(*series: Series) -> tuple[Status, str | None]:
    """An error anywhere is an error; data anywhere is data; otherwise no data."""
    for s in series:
        if s.status is Status.ERROR:
            return Status.ERROR, s.error
    if any(s.status is Status.OK for s in series):
        return Status.OK, None
    return Status.NO_DATA, None
