"""A volume's NVMe statistics, sampled every few seconds → what CloudWatch would publish for it,
period by period, at a period of a few seconds instead of a minute.

The page's counters are cumulative since the volume was attached (AWS EBS User Guide, "Amazon
EBS detailed performance statistics"): what a period holds is the difference between the
samples around it, shared out by time where a sample interval straddles two periods. A counter
that goes back means the volume was detached and attached again, or the instance stopped and
started: no difference is taken across that reset, and the periods it falls in have no data,
as CloudWatch has none while a volume is not attached.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from datetime import UTC, datetime

from analyzer.collect.logpage import Stats
from analyzer.model.series import Series

COUNTERS = tuple(
    f.name for f in fields(Stats) if f.name not in ("queue_length", "read_latency", "write_latency")
)
"""The cumulative counters of the page; `queue_length` is a reading of the moment."""
MAX_GAP_S = 60.0
"""Samples further apart than this (the node agent stopped, the device unreadable for a while)
say how much happened between them but not when: the periods between have no data."""
COVERED = 0.5
"""A period is reported where samples cover at least this share of it, its sums scaled up to
the whole period (the first period after a start, a reset or a gap)."""


@dataclass(frozen=True, slots=True)
class Sample:
    t: float
    """Epoch seconds when the page was read."""
    stats: Stats
    reset: bool = False
    """Its counters went back since the sample before: nothing is taken between the two."""


def went_back(before: Stats, after: Stats) -> bool:
    return any(getattr(after, name) < getattr(before, name) for name in COUNTERS)


class Counters:
    """The samples of one volume, oldest first, the last `keep_s` of them."""

    def __init__(self, keep_s: float) -> None:
        self.keep_s = keep_s
        self.samples: deque[Sample] = deque()
        self.resets = 0
        """How many times its counters went back."""

    def add(self, t: float, stats: Stats) -> bool:
        """Take a sample; True where its counters went back (a reset). A sample no later than
        the last is a repeat and is dropped."""
        last = self.samples[-1] if self.samples else None
        if last is not None and t <= last.t:
            return False
        reset = last is not None and went_back(last.stats, stats)
        self.resets += reset
        self.samples.append(Sample(t, stats, reset))
        while self.samples and self.samples[0].t < t - self.keep_s:
            self.samples.popleft()
        return reset

    @property
    def last(self) -> Sample | None:
        return self.samples[-1] if self.samples else None

    def _pairs(self, start: float, end: float) -> Iterator[tuple[Sample, Sample]]:
        """Consecutive samples whose interval overlaps [start, end), none across a reset or a
        gap."""
        samples = self.samples
        # The first sample after `start` ends the first pair that reaches into the window.
        first = bisect.bisect_right(_Times(samples), start)
        for i in range(max(first, 1), len(samples)):
            a, b = samples[i - 1], samples[i]
            if a.t >= end:
                break
            if b.reset or b.t - a.t > MAX_GAP_S:
                continue
            yield a, b

    def sums(
        self, value: Callable[[Stats], float], start: float, end: float, period_s: int
    ) -> Series:
        """Per period in [start, end): what `value` (of a counter) grew by, as a Sum."""
        totals: dict[int, float] = {}
        covered: dict[int, float] = {}
        for a, b in self._pairs(start, end):
            grew = value(b.stats) - value(a.stats)
            span = b.t - a.t
            for index, share in _shares(a.t, b.t, period_s):
                totals[index] = totals.get(index, 0.0) + grew * share / span
                covered[index] = covered.get(index, 0.0) + share
        return _series(totals, covered, start, end, period_s)

    def flags(
        self, value: Callable[[Stats], float], start: float, end: float, period_s: int
    ) -> Series:
        """Per period: 1 where `value` (of a counter) grew, else 0, as CloudWatch's exceeded
        checks give 1 for a minute in which the limit was exceeded."""
        grown = self.sums(value, start, end, period_s)
        return grown.map(lambda v: 1.0 if v > 0 else 0.0)

    def averages(
        self, value: Callable[[Stats], float], start: float, end: float, period_s: int
    ) -> Series:
        """Per period: the mean of `value` (a reading of the moment) over the samples in it."""
        sums: dict[int, float] = {}
        counts: dict[int, int] = {}
        for sample in self.samples:
            if start <= sample.t < end:
                index = math.floor(sample.t / period_s)
                sums[index] = sums.get(index, 0.0) + value(sample.stats)
                counts[index] = counts.get(index, 0) + 1
        points = [(_at(i * period_s), sums[i] / counts[i]) for i in sorted(sums)]
        return Series.of(points, period_s)


class _Times:
    """The sample times of a deque, indexable for `bisect` without a copy."""

    def __init__(self, samples: deque[Sample]) -> None:
        self.samples = samples

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, i: int) -> float:
        return self.samples[i].t


def _shares(a: float, b: float, period_s: int) -> Iterator[tuple[int, float]]:
    """The periods (epoch-aligned, by index from the epoch) that (a, b] overlaps, and by how
    many seconds."""
    first = math.floor(a / period_s)
    last = math.ceil(b / period_s)
    for index in range(first, last):
        lo = max(a, index * period_s)
        hi = min(b, (index + 1) * period_s)
        if hi > lo:
            yield index, hi - lo


def _series(
    totals: dict[int, float], covered: dict[int, float], start: float, end: float, period_s: int
) -> Series:
    points = []
    for index in sorted(totals):
        at = index * period_s
        share = covered[index] / period_s
        if start <= at and at + period_s <= end and share >= COVERED:
            points.append((_at(at), totals[index] / min(share, 1.0)))
    return Series.of(points, period_s)


def _at(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)
