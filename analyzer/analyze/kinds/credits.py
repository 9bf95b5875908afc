"""Rule kinds for burst credits: a bucket that will be empty soon, and one that is empty.

Volume buckets (gp2, st1, sc1) follow the bucket model; instance EBS buckets (EBSIOBalance%,
EBSByteBalance%) follow the trend of their balance. A missing balance never fires a rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import Field

from analyzer.analyze.forecast import bucket_forecast, trend_forecast
from analyzer.analyze.kinds.base import RuleBase
from analyzer.model import units
from analyzer.model.findings import Bottleneck, Finding
from analyzer.model.limits import CreditBucket, Envelope
from analyzer.model.metrics import Measure
from analyzer.model.resources import ResourceType
from analyzer.model.series import Series, recent, window_evidence
from analyzer.model.state import EMPTY_BALANCE_PERCENT, ResourceState, Snapshot
from analyzer.model.units import PositiveDuration, Unit, format_rate


@dataclass(frozen=True, slots=True)
class _Bucket:
    """One credit bucket of a resource, described the same way for every kind of resource."""

    balance: Measure
    rate: Measure
    unit: Unit
    baseline: float
    burst: float
    name: str
    bottleneck: Bottleneck
    model: CreditBucket | None
    """Storage buckets follow the bucket model; instance EBS buckets (None) their trend."""

    @property
    def owner(self) -> ResourceType:
        """Whose unit the rates read in: storage in MiB/s, an instance's EBS in MB/s."""
        storage = self.bottleneck is Bottleneck.BURST_CREDITS
        return ResourceType.VOLUME if storage else ResourceType.INSTANCE


def _storage_bucket(envelope: Envelope | None) -> list[_Bucket]:
    bucket = envelope.bucket if envelope is not None else None
    if bucket is None:
        return []
    rate = Measure.IOPS if bucket.unit is Unit.IOPS else Measure.THROUGHPUT
    return [
        _Bucket(
            Measure.BURST_BALANCE,
            rate,
            bucket.unit,
            bucket.baseline,
            bucket.burst,
            "BurstBalance",
            Bottleneck.BURST_CREDITS,
            bucket,
        )
    ]


def _instance_buckets(envelope: Envelope | None) -> list[_Bucket]:
    if envelope is None:
        return []
    out = []
    if envelope.iops > envelope.baseline_iops:
        out.append(
            _Bucket(
                Measure.IO_BALANCE,
                Measure.IOPS,
                Unit.IOPS,
                envelope.baseline_iops,
                envelope.iops,
                "EBSIOBalance%",
                Bottleneck.INSTANCE_BURST_CREDITS,
                None,
            )
        )
    if envelope.throughput_bps > envelope.baseline_throughput_bps:
        out.append(
            _Bucket(
                Measure.BYTE_BALANCE,
                Measure.THROUGHPUT,
                Unit.BYTES_PER_SECOND,
                envelope.baseline_throughput_bps,
                envelope.throughput_bps,
                "EBSByteBalance%",
                Bottleneck.INSTANCE_BURST_CREDITS,
                None,
            )
        )
    return out


def _buckets(state: ResourceState) -> list[_Bucket]:
    """A volume's bucket, an instance's EBS buckets, or both for a DB instance (its storage
    and its class)."""
    match state.ref.resource_type:
        case ResourceType.VOLUME:
            return _storage_bucket(state.envelope)
        case ResourceType.INSTANCE:
            return _instance_buckets(state.envelope)
    return _storage_bucket(state.envelope) + _instance_buckets(state.class_envelope)


def _charged(
    state: ResourceState, bucket: _Bucket, rates: Series, at: datetime, window_s: float
) -> list[tuple[datetime, float]]:
    """The rate a bucket is charged at each datapoint; storage buckets count I/O sizes."""
    model = bucket.model
    if model is None:
        return rates.points()
    iops = dict(recent(state.measure(Measure.IOPS), at, window_s).points())
    bps = dict(recent(state.measure(Measure.THROUGHPUT), at, window_s).points())
    return [(t, model.consumption(iops.get(t, 0.0), bps.get(t, 0.0))) for t in rates.timestamps]


@dataclass(frozen=True, slots=True)
class Outlook:
    """The bucket of a resource that empties first, and when."""

    seconds_to_empty: float
    bucket: _Bucket
    rate: float
    balance_percent: float
    evidence: dict[str, Any]


def outlook(
    state: ResourceState,
    reference: datetime,
    at: datetime,
    rate_window_s: float,
    trend_window_s: float,
) -> Outlook | None:
    """Seconds from `reference` until the first of the resource's buckets is empty.

    None when no bucket is draining, when a balance is missing, or when it is already empty
    (then the exhausted rule speaks).
    """
    found = [
        o
        for b in _buckets(state)
        if (o := _bucket_outlook(state, b, reference, at, rate_window_s, trend_window_s))
    ]
    return min(found, key=lambda o: o.seconds_to_empty, default=None)


def _bucket_outlook(
    state: ResourceState,
    bucket: _Bucket,
    reference: datetime,
    at: datetime,
    rate_window_s: float,
    trend_window_s: float,
) -> Outlook | None:
    balance = state.measure(bucket.balance)
    current = state.balance(bucket.balance, at)
    if current is None or current <= EMPTY_BALANCE_PERCENT:
        return None
    rates = recent(state.measure(bucket.rate), at, rate_window_s)
    rate = rates.mean()
    if rate is None:
        return None
    evidence: dict[str, Any] = {
        **window_evidence(rates, rate_window_s),
        "balance_percent": current,
        "baseline": bucket.baseline,
        "burst": bucket.burst,
    }
    model = bucket.model
    if model is not None:
        forecast = bucket_forecast(
            model,
            balance,
            state.measure(Measure.IOPS),
            state.measure(Measure.THROUGHPUT),
            at,
            reference,
            rate_window_s,
        )
        if forecast is None or forecast.seconds_to_empty is None:
            return None
        evidence.update(
            model="bucket",
            capacity=model.capacity,
            credits=model.credits(current),
            charged_rate=forecast.consumption,
            drain_per_second=forecast.drain,
        )
        seconds = forecast.seconds_to_empty
    else:
        trend = trend_forecast(balance, at, reference, trend_window_s)
        if trend is None or trend.seconds_to_empty is None:
            return None
        evidence.update(model="trend", slope_percent_per_minute=trend.slope_percent_per_s * 60)
        seconds = trend.seconds_to_empty
    return Outlook(seconds, bucket, rate, current, evidence)


class CreditForecast(RuleBase):
    """Fires when a draining bucket will be empty within `horizon`."""

    kind: Literal["credit_forecast"] = "credit_forecast"
    horizon: PositiveDuration = 3600.0
    rate_window: PositiveDuration = 300.0
    """The drain is the mean rate over this window, so one noisy minute does not decide."""
    trend_window: PositiveDuration = 1800.0
    """Instance balances: the slope is fitted over this window."""

    supported: ClassVar[frozenset[ResourceType]] = frozenset(ResourceType)

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        found = outlook(state, snapshot.generated_at, at, self.rate_window, self.trend_window)
        if found is None or found.seconds_to_empty > self.horizon:
            return None
        bucket = found.bucket
        kind = bucket.owner
        summary = (
            f"{state.label}: {bucket.name} {found.balance_percent:.0f}% → 0 in "
            f"{units.duration(found.seconds_to_empty)} at "
            f"{format_rate(found.rate, bucket.unit, kind)}; then throttled to "
            f"{format_rate(bucket.baseline, bucket.unit, kind)}."
        )
        return self.finding(
            state,
            snapshot,
            at,
            bucket.bottleneck,
            self.rate_window,
            summary=summary,
            observed=found.rate,
            limit=bucket.baseline,
            unit=bucket.unit,
            seconds_to_empty=found.seconds_to_empty,
            evidence=found.evidence,
        )


class CreditsExhausted(RuleBase):
    """Fires when a bucket is empty and I/O is pinned at the baseline it leaves."""

    kind: Literal["credits_exhausted"] = "credits_exhausted"
    empty_percent: float = Field(default=EMPTY_BALANCE_PERCENT, ge=0, lt=100)
    pinned: float = Field(default=0.9, gt=0, le=1.5)
    """A datapoint at or above this share of the baseline counts as pinned."""
    window: PositiveDuration = 600.0
    min_fraction: float = Field(default=0.8, gt=0, le=1)
    min_datapoints: int = Field(default=2, ge=1)

    supported: ClassVar[frozenset[ResourceType]] = frozenset(ResourceType)

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        for bucket in _buckets(state):
            finding = self._check(state, bucket, snapshot, at)
            if finding is not None:
                return finding
        return None

    def _check(
        self, state: ResourceState, bucket: _Bucket, snapshot: Snapshot, at: datetime
    ) -> Finding | None:
        current = state.balance(bucket.balance, at)
        if current is None or current > self.empty_percent:
            return None
        rates = recent(state.measure(bucket.rate), at, self.window)
        points = _charged(state, bucket, rates, at, self.window)
        if len(points) < self.min_datapoints:
            return None
        pinned = [t for t, v in points if v >= self.pinned * bucket.baseline]
        if len(pinned) < self.min_fraction * len(points):
            return None
        observed = rates.mean() or 0.0
        kind = bucket.owner
        minutes = len(points) * rates.period_s / 60
        summary = (
            f"{state.label}: burst credits exhausted ({bucket.name} {current:.0f}%); "
            f"throttled at baseline {format_rate(bucket.baseline, bucket.unit, kind)} "
            f"for the last {minutes:.0f} min, down from "
            f"{format_rate(bucket.burst, bucket.unit, kind)} while credits lasted."
        )
        return self.finding(
            state,
            snapshot,
            at,
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
            },
        )
