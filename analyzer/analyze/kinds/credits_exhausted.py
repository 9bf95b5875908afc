"""Rule kind `credits_exhausted`: a bucket that is empty, with I/O pinned at its baseline.

Storage buckets count I/O as AWS charges it (gp2: an I/O above 256 KiB counts as several;
st1/sc1: any I/O up to 1 MiB as 1 MiB); instance EBS buckets count their plain rate.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import ClassVar, Literal

from pydantic import Field

from analyzer.analyze.kinds.base import RuleBase
from analyzer.model.findings import (
    HOLDS_BALANCE,
    HOLDS_UNTIL,
    RATE_BEFORE_EMPTY,
    Credit,
    Finding,
)
from analyzer.model.layers import Bucket
from analyzer.model.metrics import Measure
from analyzer.model.resources import ResourceType
from analyzer.model.series import Series, recent, window_evidence
from analyzer.model.state import EMPTY_BALANCE_PERCENT, ResourceState, Snapshot
from analyzer.model.units import PositiveDuration, format_rate


def _charged(
    state: ResourceState, bucket: Bucket, rates: Series, at: datetime, window_s: float
) -> list[tuple[datetime, float]]:
    """The rate a bucket is charged at each datapoint; storage buckets count I/O sizes."""
    model = bucket.model
    if model is None:
        return rates.points()
    iops = dict(recent(state.in_force(Measure.IOPS), at, window_s).points())
    bps = dict(recent(state.in_force(Measure.THROUGHPUT), at, window_s).points())
    return [(t, model.consumption(iops.get(t, 0.0), bps.get(t, 0.0))) for t in rates.timestamps]


BEFORE_WINDOW = timedelta(minutes=10)
BEFORE_ABOVE = 1.1
"""A rate before the bucket ran out is said only where it was clearly above the baseline."""


def down_from(before: float | None, bucket: Bucket) -> str:
    """The summary's clause on the rate before the bucket ran out, where it was clearly above
    the baseline."""
    if before is None or before <= BEFORE_ABOVE * bucket.baseline:
        return ""
    return f", down from {format_rate(before, bucket.unit, bucket.owner)} while credits lasted"


class CreditsExhausted(RuleBase):
    """Fires when a bucket is empty and I/O is pinned at the baseline it leaves."""

    kind: Literal["credits_exhausted"] = "credits_exhausted"
    empty_percent: float = Field(default=EMPTY_BALANCE_PERCENT, ge=0, lt=100)
    pinned: float = Field(default=0.9, gt=0, le=1.5)
    """A datapoint at or above this share of the baseline counts as pinned."""
    window: PositiveDuration = 600.0
    min_fraction: float = Field(default=0.8, gt=0, le=1)
    min_datapoints: int = Field(default=2, ge=1)
    clear_balance: float = Field(default=20.0, gt=0, le=100)
    """Percent. The alert holds until the bucket refills past this: a bucket that earns a few
    credits and spends them at once is still exhausted, one alert until it refills."""

    supported: ClassVar[frozenset[ResourceType]] = frozenset(ResourceType)

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        for bucket in state.buckets():
            finding = self._check(state, bucket, at)
            if finding is not None:
                return finding
        return None

    def _check(self, state: ResourceState, bucket: Bucket, at: datetime) -> Finding | None:
        current = state.balance(bucket.balance, at)
        if current is None or current > self.empty_percent:
            return None
        rates = recent(state.in_force(bucket.rate), at, self.window)
        points = _charged(state, bucket, rates, at, self.window)
        if len(points) < self.min_datapoints:
            return None
        pinned = [t for t, v in points if v >= self.pinned * bucket.baseline]
        if len(pinned) < self.min_fraction * len(points):
            return None
        observed = rates.mean() or 0.0
        kind = bucket.owner
        minutes = len(points) * rates.period_s / 60
        before = self._before_empty(state, bucket, at)
        summary = (
            f"{state.label}: burst credits exhausted ({bucket.name} {current:.0f}%); "
            f"throttled at baseline {format_rate(bucket.baseline, bucket.unit, kind)} "
            f"for the last {minutes:.0f} min{down_from(before, bucket)}."
        )
        return self.finding(
            state,
            bucket.bottleneck,
            self.window,
            summary=summary,
            observed=observed,
            limit=bucket.baseline,
            unit=bucket.unit,
            seconds_to_empty=0.0,
            evidence={
                **window_evidence(rates, self.window),
                "balance_percent": current,
                "baseline": bucket.baseline,
                "burst": bucket.burst,
                "pinned_datapoints": len(pinned),
                RATE_BEFORE_EMPTY: before,
                HOLDS_UNTIL: self.clear_balance,
                HOLDS_BALANCE: bucket.balance.value,
            },
            credit=Credit(
                bucket.balance,
                balance_percent=current,
                holds_until_percent=self.clear_balance,
                empty=True,
                rate_before_empty=before,
            ),
        )

    def _before_empty(self, state: ResourceState, bucket: Bucket, at: datetime) -> float | None:
        """The mean rate over the last ten minutes the history shows with credits left; None
        where it shows none (then nothing is claimed about the past)."""
        balance = state.in_force(bucket.balance).until(at)
        values = balance.values
        # From the newest back: the bucket has usually been empty for minutes, not days.
        found = next(
            (i for i in range(len(values) - 1, -1, -1) if values[i] > self.empty_percent), None
        )
        if found is None:
            return None
        last = balance.timestamps[found]
        rates = state.in_force(bucket.rate).between(
            last - BEFORE_WINDOW, last + timedelta(minutes=1)
        )
        return rates.mean()
