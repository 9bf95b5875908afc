"""Pure: whether an option would have held the workload, replayed over the resource's own past.

A resource's rates over its last days, period by period, are run through an option's limits
and, where it has one, its bucket (which fills at its baseline and drains by what is consumed
above it, as `CreditBucket` models it): a period whose demand the option's limit in force
stays below is a period it would have limited. The bucket starts full: fourteen days back,
a bucket has refilled overnight far more often than not, and a wrong start shows only until
its first refill.

Where the past was itself held back by the resource's limits, the demand in those periods is
unknown: what CloudWatch shows is the limit, not what was asked. Those periods count at the
rate observed just before the limit bound (a bucket's drain ran at its demand until it
emptied), which is a floor, and the figures built on them say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

import numpy as np

from analyzer.analyze.kinds.credits_exhausted import BEFORE_ABOVE
from analyzer.model.demand import DAY_S, Demand, Flags, Floats
from analyzer.model.findings import PastFit
from analyzer.model.limits import (
    HDD_IO_BYTES,
    INSTANCE_BURST_S,
    MERGED_ABOVE,
    SSD_IO_BYTES,
    CreditBucket,
    Envelope,
)
from analyzer.model.state import EMPTY_BALANCE_PERCENT
from analyzer.model.units import Unit

LIMITED_ABOVE = 1.02
"""A demand up to 2 % above a limit is taken as held: rates at a cap waver about it."""
BOUND_AT = 0.95
"""A period at 95 % of the limit in force or more was held there: its demand is unknown."""


def behind(
    seen: Demand,
    limits: Envelope | None,
    empty: Flags | None = None,
    earlier: tuple[datetime, Envelope | None] | None = None,
) -> Demand:
    """The demand behind rates seen under `limits` (the resource's own): where a limit in
    force held them (`BOUND_AT`), the rate of the period before the hold began stands for
    each period of it, where that is more, and those periods are floors. `empty`: the
    periods its bucket was empty, where the data shows them (its balance), instead of the
    bucket modelled from the rates. `earlier`: a volume modified since the rates began, the
    moment its limits became `limits` and its limits before (None: not modelled): a period
    that starts before that moment was held, if at all, by those."""
    iops, bps = seen.iops, seen.bps
    if limits is None:
        return seen
    held = _held(seen, limits, empty)
    if earlier is not None:
        moment, before = earlier
        elapsed = (moment - seen.start).total_seconds()
        cut = min(max(int(np.ceil(elapsed / seen.period_s)), 0), len(iops))
        if cut:
            # Under limits not modelled, whether a period was held is not known: not a floor.
            held[:cut] = _held(seen, before, empty)[:cut] if before is not None else False
    raised_iops, raised_bps = iops.copy(), bps.copy()
    for first, end in _runs(held):
        if first > 0:
            raised_iops[first:end] = np.maximum(iops[first:end], iops[first - 1])
            raised_bps[first:end] = np.maximum(bps[first:end], bps[first - 1])
    return Demand(seen.start, seen.period_s, raised_iops, raised_bps, held)


def _held(seen: Demand, limits: Envelope, empty: Flags | None) -> Flags:
    """The periods whose rates a limit of `limits` in force held (`BOUND_AT`)."""
    iops, bps = seen.iops, seen.bps
    iops_limit, bps_limit = _limits_in_force(limits, iops, bps, seen.period_s, empty)
    counted = counted_iops(limits, iops, bps)
    held: Flags = (counted >= BOUND_AT * iops_limit) | (bps >= BOUND_AT * bps_limit)
    return held


@dataclass(frozen=True, slots=True)
class Held:
    """An option replayed over a demand: the periods it would have limited, by UTC day."""

    days: float
    minutes_limited: int
    limited_days: int
    """Days with at least one period limited."""
    worst_day: date | None
    """The day with the most minutes limited; None where none was."""
    worst_day_minutes: int
    floor: bool
    """The demand counted includes periods held back then: the figures are floors."""
    first_limited: tuple[datetime | None, ...]
    """Each day's first period limited (None: the day was held), oldest day first."""
    days_spanned: int = 0
    """The UTC days the demand touches: `limited_days` is counted among these."""

    @property
    def held(self) -> bool:
        return self.minutes_limited == 0

    def fit(self, bought_s: float | None = None) -> PastFit:
        """What a fix carries of it."""
        return PastFit(
            self.days,
            self.minutes_limited,
            self.limited_days,
            self.worst_day,
            self.floor,
            bought_s,
            self.days_spanned,
        )


def limited(demand: Demand, option: Envelope, empty: Flags | None = None) -> Flags:
    """The periods of `demand` that `option` would have held back: above its limit in force
    (`LIMITED_ABOVE`), its bucket starting full, or empty in the periods of `empty` alone
    (the resource's own, as the data shows it)."""
    counted = counted_iops(option, demand.iops, demand.bps)
    iops_limit, bps_limit = _limits_in_force(
        option, demand.iops, demand.bps, demand.period_s, empty
    )
    found: Flags = (counted > LIMITED_ABOVE * iops_limit) | (demand.bps > LIMITED_ABOVE * bps_limit)
    return found


def replay(demand: Demand, option: Envelope) -> Held:
    """`option` over `demand`, period by period."""
    held_back = limited(demand, option)
    midnight = datetime.combine(demand.start.date(), datetime.min.time(), demand.start.tzinfo)
    offset = (demand.start - midnight).total_seconds()
    day_of = ((offset + np.arange(len(held_back)) * demand.period_s) // DAY_S).astype(np.int64)
    count = int(day_of[-1]) + 1 if len(day_of) else 0
    per_day = np.bincount(day_of[held_back], minlength=count) * demand.period_s / 60
    firsts: list[datetime | None] = [None] * count
    held_at = np.flatnonzero(held_back)
    # Each day's first held-back period: where its day first appears among them, in order.
    days, first = np.unique(day_of[held_at], return_index=True)
    for day, index in zip(days.tolist(), held_at[first].tolist(), strict=True):
        firsts[day] = demand.start + timedelta(seconds=index * demand.period_s)
    worst = int(np.argmax(per_day)) if count and per_day.max() > 0 else None
    return Held(
        days=demand.days,
        minutes_limited=int(per_day.sum()),
        limited_days=int(np.count_nonzero(per_day)),
        worst_day=(midnight + timedelta(days=worst)).date() if worst is not None else None,
        worst_day_minutes=int(per_day[worst]) if worst is not None else 0,
        floor=bool(demand.floor.any()),
        first_limited=tuple(firsts),
        days_spanned=count,
    )


BEFORE_PERIODS = 10
"""The periods whose mean is the rate before a bucket ran out, as the rule reads it (ten
minutes: `credits_exhausted`)."""


def before_emptied(seen: Demand, bucket: CreditBucket) -> float | None:
    """For a bucket empty now: the mean rate, in the bucket's unit (IOPS, or bytes per
    second), of the periods before its charge fell to the baseline and stayed there to the
    end of `seen` (a drain runs at its demand until the bucket is empty). None where the end
    is not at the baseline, or the rate before it was not clearly above it (`BEFORE_ABOVE`,
    as the rule says it)."""
    charge = _charges(bucket, seen.iops, seen.bps)
    # The newest minutes may not be published yet: CloudWatch shows nothing, not zero.
    seen_at = np.flatnonzero((seen.iops > 0) | (seen.bps > 0))
    if len(seen_at) == 0:
        return None
    end = int(seen_at[-1]) + 1
    at_baseline = (charge[:end] >= BOUND_AT * bucket.baseline) & (
        charge[:end] <= LIMITED_ABOVE * bucket.baseline
    )
    runs = _runs(at_baseline)
    if not runs or runs[-1][1] != end or runs[-1][0] == 0:
        return None
    first = runs[-1][0]
    before = slice(max(first - BEFORE_PERIODS, 0), first)
    rate = seen.iops[before] if bucket.unit is Unit.IOPS else seen.bps[before]
    mean = float(rate.mean())
    return mean if float(charge[before].mean()) > BEFORE_ABOVE * bucket.baseline else None


def time_bought(option: Held, today: Held) -> float | None:
    """Seconds later than the resource as it is that `option` would have begun to limit the
    workload, on the day the resource as it is was limited most. None where the resource as
    it is held throughout, or the option held all of that day (its own figures say so)."""
    for mine, theirs in zip(today.first_limited, option.first_limited, strict=False):
        if mine is not None and mine.date() == today.worst_day:
            return None if theirs is None else max((theirs - mine).total_seconds(), 0.0)
    return None


def counted_iops(limits: Envelope, iops: Floats, bps: Floats) -> Floats:
    """IOPS as the limit counts them (an I/O above the unit counts as several)."""
    if limits.io_unit_bytes is None:
        return iops
    by_size = bps / limits.io_unit_bytes
    if limits.merges:
        return np.where(iops > MERGED_ABOVE * limits.iops, by_size, np.maximum(iops, by_size))
    return np.maximum(iops, by_size)


def _limits_in_force(
    limits: Envelope, iops: Floats, bps: Floats, period_s: int, empty: Flags | None = None
) -> tuple[Floats, Floats]:
    """The IOPS and throughput limits in force in each period: the burst levels while the
    bucket has credits, the baselines once it is empty (in the periods of `empty`, where
    given). An instance type whose EBS baseline is below its maximum has two buckets, one
    for each, that hold `INSTANCE_BURST_S` at the maximum and count I/O as submitted."""
    n = len(iops)
    if not limits.bursts:
        return np.full(n, limits.iops), np.full(n, limits.throughput_bps)
    if empty is not None:
        io_left = byte_left = ~empty
    elif limits.bucket is None:
        io = _instance_bucket(limits.iops, limits.baseline_iops, Unit.IOPS)
        io_left = _credits_left(io, iops, period_s)
        byte = _instance_bucket(
            limits.throughput_bps, limits.baseline_throughput_bps, Unit.BYTES_PER_SECOND
        )
        byte_left = _credits_left(byte, bps, period_s)
    else:
        io_left = byte_left = _credits_left(
            limits.bucket, _charges(limits.bucket, iops, bps), period_s
        )
    return (
        np.where(io_left, limits.iops, limits.baseline_iops),
        np.where(byte_left, limits.throughput_bps, limits.baseline_throughput_bps),
    )


def _instance_bucket(maximum: float, baseline: float, unit: Unit) -> CreditBucket:
    return CreditBucket((maximum - baseline) * INSTANCE_BURST_S, baseline, maximum, unit)


MAX_STRETCHES = 64
"""Dry spells worked out as arrays, each over the rest of the fortnight; beyond, a bucket
hovering at empty (stretches a period or two long, each costing a pass over the rest) is
followed period by period, as before."""


def _credits_left(bucket: CreditBucket, charge: Floats, period_s: int) -> Flags:
    """Whether the bucket has credits at the start of each period, starting full: each period
    it earns its baseline and is charged what it serves of `charge` (at most its burst, and
    at most its baseline once empty).

    Worked out a stretch at a time, over arrays: while it has credits, what it lacks of full
    is a walk held at zero (a full bucket earns no more), `walk[m] = S[m] - min(-lacked,
    min S[1..m])` over the sums `S` of what each period spends above the baseline, up to the
    period it runs dry; then, empty, it is served at most its baseline and only earns, up to
    the period it has credits again. A fortnight drains dry a few times a day at most: a few
    dozen stretches, where a loop would take 20,160 steps."""
    n = len(charge)
    left = np.ones(n, dtype=np.bool_)
    draining = np.flatnonzero(charge > bucket.baseline)
    if len(draining) == 0:
        return left
    capacity = bucket.capacity
    dry = capacity - EMPTY_BALANCE_PERCENT / 100 * capacity  # lacking this much, it is dry
    spends = (np.minimum(charge, bucket.burst) - bucket.baseline) * period_s
    earns = (np.minimum(charge, bucket.baseline) - bucket.baseline) * period_s
    # From the first period that drains on; before it the bucket is full.
    index, lacked = int(draining[0]), 0.0
    for _ in range(MAX_STRETCHES):
        if index >= n:
            return left
        size = n  # the rest at once: summed in one pass, as the walk is defined
        while True:
            end = min(index + size, n)
            sums = np.cumsum(spends[index:end])
            walk = sums - np.minimum.accumulate(np.minimum(sums, -lacked))
            ran_dry = np.flatnonzero(walk >= dry)
            if len(ran_dry) or end == n:
                break
            index, lacked, size = end, float(walk[-1]), size * 2
        if len(ran_dry) == 0:
            return left
        empty_from = index + int(ran_dry[0]) + 1
        lacked = min(float(walk[ran_dry[0]]), capacity)
        size = n
        while empty_from < n:
            end = min(empty_from + size, n)
            refilled = lacked + np.cumsum(earns[empty_from:end])
            back = np.flatnonzero(refilled < dry)
            if len(back):
                index = empty_from + int(back[0]) + 1
                left[empty_from:index] = False
                lacked = max(float(refilled[back[0]]), 0.0)
                break
            left[empty_from:end] = False
            empty_from, lacked, size = end, float(refilled[-1]), size * 2
        else:
            return left
    # A bucket that keeps running dry and earning a little back: period by period.
    credits = capacity - lacked
    for at, used in enumerate(charge[index:].tolist(), index):
        has = credits > capacity - dry
        left[at] = has
        served = min(used, bucket.burst if has else bucket.baseline)
        credits = min(max(credits - (served - bucket.baseline) * period_s, 0.0), capacity)
    return left


def _charges(bucket: CreditBucket, iops: Floats, bps: Floats) -> Floats:
    """What each period would charge the bucket, at most (`CreditBucket.charge_range`, the
    same rules over arrays)."""
    if bucket.unit is Unit.IOPS:
        found: Floats = np.maximum(iops, bps / SSD_IO_BYTES)
        return found
    if bucket.io_cap is None:
        return np.maximum(bps, iops * HDD_IO_BYTES)
    return np.where(iops > MERGED_ABOVE * bucket.io_cap, bps, np.maximum(bps, iops * HDD_IO_BYTES))


def _runs(flags: Flags) -> list[tuple[int, int]]:
    """The (first, end) of each run of True."""
    padded = np.concatenate(([False], flags, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True))
