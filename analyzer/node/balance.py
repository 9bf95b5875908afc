"""A volume's BurstBalance between CloudWatch's readings, from the bucket model and the I/O the
node counted: the page has no balance, and CloudWatch publishes it once a minute, minutes late.

The balance is carried forward from the latest reading CloudWatch gave (the anchor), second by
second: the bucket earns its baseline and is charged what the volume did, as AWS counts it
(`CreditBucket.consumption`). Each new reading re-anchors it, so the model's error never
outlives the interval between readings.
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


@dataclass(frozen=True, slots=True)
class Anchor:
    t: float
    """Epoch seconds the reading stands for: the middle of the minute CloudWatch averaged."""
    percent: float


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
    before it (`anchors` oldest first); no data before the first anchor, or without one: a
    balance the node cannot know is never guessed."""
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
    points = []
    at = first
    while at + period_s <= end:
        while i + 1 < len(anchors) and anchors[i + 1].t < at + period_s:
            i += 1
            balance, since = anchors[i].percent, anchors[i].t
        stamp = datetime.fromtimestamp(at, UTC)
        if stamp not in ops:
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
