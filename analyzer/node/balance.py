"""A volume's BurstBalance between CloudWatch's readings, from the bucket model and the I/O the
node counted: the page has no balance, and CloudWatch publishes it once a minute, minutes late.

The balance is carried forward from the latest reading CloudWatch gave (the anchor), second by
second: the bucket earns its baseline and is charged what the volume did, as AWS counts it
(`CreditBucket.consumption`). Each new reading re-anchors it, so the model's error never
outlives the interval between readings.

CloudWatch publishes a minute's balance minutes late, so the latest reading stands for a moment
before the node's first page: the seconds between are not on any page. The balance is carried
across them unchanged, and said to be at most `Carried.bound` points lower (the most the volume
could have drained in them, at its burst rate), until a reading lands among the pages. A stretch
longer than `CARRY_S` is not carried: its bound would say little.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from analyzer.collect.logpage import Stats
from analyzer.model.limits import CreditBucket
from analyzer.model.series import Series
from analyzer.node.counters import Counters

CARRY_S = 300.0
"""The longest stretch between CloudWatch's reading and the node's first page that the balance
is carried across: a few minutes of publishing delay. An older reading (CloudWatch publishes
none while a volume is idle) leaves the balance unknown until the next."""


@dataclass(frozen=True, slots=True)
class Anchor:
    t: float
    """Epoch seconds the reading stands for: the middle of the minute CloudWatch averaged."""
    percent: float


@dataclass(frozen=True, slots=True)
class Carried:
    """A balance carried from a reading taken before the node's first page."""

    anchor: Anchor
    seconds: float
    """Between the reading and the first page: I/O no page counted."""
    bound: float
    """Percent points: the most the volume could have drained in those seconds, at its burst
    rate. The balance may be this much lower than said (and higher by what it earned)."""

    def text(self) -> str:
        at = datetime.fromtimestamp(self.anchor.t, UTC).strftime("%H:%M:%S")
        return (
            f"BurstBalance carried from CloudWatch's {self.anchor.percent:.0f}% of {at} UTC "
            f"across the {self.seconds:.0f} s before the node's first page: up to "
            f"{self.bound:.1f} points lower"
        )


def carried(
    bucket: CreditBucket, counters: Counters, anchors: Sequence[Anchor], end: float
) -> Carried | None:
    """Where the balance at `end` stands on a reading taken before the node's first page,
    what it was carried across; None where a reading lies among the pages (or none is)."""
    first = counters.samples[0].t if counters.samples else None
    before = [a for a in anchors if a.t < end]
    if first is None or not before:
        return None
    anchor = before[-1]
    seconds = first - anchor.t
    if not _carries(seconds):
        return None
    bound = bucket.drain(bucket.burst) * seconds / bucket.capacity * 100.0
    return Carried(anchor, seconds, min(max(bound, 0.0), anchor.percent))


def _carries(seconds: float) -> bool:
    """Whether a reading this many seconds before the node's first page is carried to it."""
    return 0 < seconds <= CARRY_S


def _ops(stats: Stats) -> float:
    return float(stats.read_ops + stats.write_ops)


def _bytes(stats: Stats) -> float:
    return float(stats.read_bytes + stats.write_bytes)


def modelled(
    bucket: CreditBucket,
    counters: Counters,
    anchors: Sequence[Anchor],
    start: float,
    end: float,
    period_s: int,
) -> Series:
    """The balance at the end of each period in [start, end), carried from the latest anchor
    before it (`anchors` oldest first), across the stretch before the node's first page where
    that is at most `CARRY_S`; no data before the first anchor, or without one: a balance the
    node cannot know is never guessed."""
    if not anchors or anchors[0].t >= end:
        return Series(period_s=period_s)
    # From the latest anchor before the window, or the first one.
    times = [a.t for a in anchors]
    i = max(bisect.bisect_right(times, start) - 1, 0)
    first = math.floor(anchors[i].t / period_s) * period_s
    ops = dict(counters.sums(_ops, first, end, period_s).points())
    moved = dict(counters.sums(_bytes, first, end, period_s).points())
    balance: float | None = anchors[i].percent
    since = anchors[i].t
    paged = counters.samples[0].t if counters.samples else math.inf
    pages_from = min((t.timestamp() for t in ops), default=math.inf)
    points = []
    at = first
    while at + period_s <= end:
        while i + 1 < len(anchors) and anchors[i + 1].t < at + period_s:
            i += 1
            balance, since = anchors[i].percent, anchors[i].t
        stamp = datetime.fromtimestamp(at, UTC)
        if stamp not in ops:
            if at < pages_from and _carries(paged - since):
                # Before the node's first page, a reading minutes late: carried (`carried`).
                at += period_s
                continue
            # No sample covers it (the node stopped, a read failed): what the volume did is
            # not known, so neither is the balance, until CloudWatch's next reading.
            balance = None
        elif balance is not None:
            # The share of this period after the anchor (all of it, but for the anchor's own).
            seconds = min(period_s, at + period_s - since)
            iops, bps = ops[stamp] / period_s, moved.get(stamp, 0.0) / period_s
            drain = bucket.drain(bucket.consumption(iops, bps))
            balance = min(max(balance - drain * seconds / bucket.capacity * 100.0, 0.0), 100.0)
            if at >= start:
                points.append((stamp, balance))
        at += period_s
    return Series.of(points, period_s)
