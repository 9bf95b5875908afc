"""Rule kinds for IOPS and throughput caps: a volume's, an instance's EBS, an RDS instance's
storage and its instance class.

A cap finding needs sustained saturation: most datapoints of the window at or above a share
of the limit (or flagged by CloudWatch's own "exceeded" check), never one noisy minute.
Where the cap in force is a baseline because burst credits ran out, the credit rules speak.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import ClassVar, Literal

from pydantic import Field

from analyzer.analyze.kinds.base import RuleBase
from analyzer.collect.window import MINUTE_S, floor_to
from analyzer.model import units
from analyzer.model.findings import Finding
from analyzer.model.layers import Layer
from analyzer.model.metrics import Measure
from analyzer.model.series import Series, recent, window_evidence
from analyzer.model.state import EMPTY_BALANCE_PERCENT, ResourceState, Snapshot
from analyzer.model.units import PositiveDuration, Unit, format_rate


class _CapRule(RuleBase):
    utilization: float = Field(default=0.95, gt=0, le=2)
    """A datapoint at or above this share of the limit counts as saturated."""
    window: PositiveDuration = 900.0
    min_fraction: float = Field(default=0.8, gt=0, le=1)
    """The share of the window's datapoints that must be saturated."""
    min_datapoints: int = Field(default=3, ge=1)
    use_exceeded_check: bool = True
    """Count a datapoint as saturated when CloudWatch's *ExceededCheck flags it."""
    log_volume: bool = False
    """RDS: check the instance's Dedicated Log Volume instead of its storage and class."""

    unit: ClassVar[Unit]
    exceeded: ClassVar[Measure]
    held: ClassVar[Measure]
    """Seconds of each minute at the cap, where the CloudWatch agent's exceeded time gives
    them (`exceeded` then says only whether)."""
    active: ClassVar[Measure | None] = None
    """The rate per busy second (from VolumeIdleTime), read where the exceeded checks are
    absent: a cap reached for 20 s of every minute averages to a third of it."""

    def _rates(self, state: ResourceState, layer: Layer, at: datetime) -> Series:
        """The window's rates, as the limit counts them."""
        raise NotImplementedError

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        """The layer whose limit is the most saturated, if any is (with `log_volume`, the
        Dedicated Log Volume, which a rule of its own watches)."""
        layers = state.log_layers() if self.log_volume else state.layers()
        found = [f for layer in layers if (f := self._check(state, at, layer))]
        return max(found, key=lambda f: f.observed / f.limit, default=None)

    def _limit(self, state: ResourceState, layer: Layer, at: datetime) -> float | None:
        """The limit this rule checks: none where it is approximate, or where it is a
        baseline because credits ran out (then the credit rules speak). Where there is one, it
        is the limit with credits left."""
        envelope = layer.envelope
        if envelope.approximate:
            return None
        if envelope.bursts and not state.credits_left(layer.balance(self.unit), at):
            return None
        return layer.limit(self.unit, credits_left=True) or None

    def _flagged(self, state: ResourceState, layer: Layer, at: datetime) -> dict[datetime, float]:
        """CloudWatch's exceeded checks over the window, left out while the bucket was empty:
        exceeded then is the credit rules' finding, not this one."""
        flagged = dict(recent(state.in_force(self.exceeded), at, self.window).points())
        if not layer.envelope.bursts:
            return flagged
        balance = layer.balance(self.unit)
        balances = dict(recent(state.in_force(balance), at, self.window).points())
        return {t: v for t, v in flagged.items() if balances.get(t, 100.0) > EMPTY_BALANCE_PERCENT}

    def _peak(self, state: ResourceState, layer: Layer, at: datetime) -> float:
        """No rate of the window is above this (0 without data)."""
        raise NotImplementedError

    def _busy_rates(
        self, state: ResourceState, layer: Layer, at: datetime
    ) -> dict[datetime, float]:
        """The rates per busy second over the window, where a volume has them and CloudWatch's
        exceeded checks (Nitro only) do not say whether the cap was reached."""
        if self.active is None or not layer.storage or self.active not in state.measures:
            return {}
        if recent(state.in_force(self.exceeded), at, self.window):
            return {}
        return dict(recent(state.in_force(self.active), at, self.window).points())

    def _never_saturated(
        self,
        state: ResourceState,
        layer: Layer,
        at: datetime,
        limit: float,
        busy: dict[datetime, float],
    ) -> bool:
        """Cheap first: no datapoint at the threshold and none flagged, as most are."""
        if self._peak(state, layer, at) >= self.utilization * limit:
            return False
        if busy and max(busy.values()) >= self.utilization * limit:
            return False
        if not self.use_exceeded_check:
            return True
        flags = recent(state.in_force(self.exceeded), at, self.window).values
        return not flags or max(flags) < 1

    def _check(self, state: ResourceState, at: datetime, layer: Layer) -> Finding | None:
        if state.contradicts(layer.bottleneck(self.unit)):
            return None  # the data contradicts this limit: nothing is built on it
        # The limit, if any, is the one with credits left: test the window against it first,
        # which rules out most resources before their balance is read.
        ceiling = layer.limit(self.unit, credits_left=True)
        busy = self._busy_rates(state, layer, at)
        if not ceiling or self._never_saturated(state, layer, at, ceiling, busy):
            return None
        limit = self._limit(state, layer, at)
        if limit is None:
            return None
        rates = self._rates(state, layer, at)
        flagged = self._flagged(state, layer, at)
        if rates.period_s < MINUTE_S:
            # Seconds apart (a node's NVMe statistics): judged by the minute, as CloudWatch's
            # exceeded check flags a minute in which the cap was reached at all.
            rates, flagged = _by_minute(rates), _highest_by_minute(flagged)
        if len(rates) < self.min_datapoints:
            return None
        threshold = self.utilization * limit
        saturated = [
            t
            for t, v in rates.points()
            if v >= threshold
            or (self.use_exceeded_check and flagged.get(t, 0) >= 1)
            or busy.get(t, 0.0) >= threshold
        ]
        if len(saturated) < self.min_fraction * len(rates):
            return None
        observed = rates.mean() or 0.0
        # Seconds of each saturated minute spent at the cap, where only the busy rate shows it,
        # or where the CloudWatch agent timed it.
        at_cap = [
            rates.period_s * v / busy[t]
            for t, v in rates.points()
            if v < threshold and busy.get(t, 0.0) >= threshold
        ]
        held = {
            t: v
            for t, v in recent(state.in_force(self.held), at, self.window).points()
            if flagged.get(t, 0) >= 1
        }
        timed = not at_cap and bool(held)
        if timed:
            at_cap = [held[t] for t, v in rates.points() if v < threshold and t in held]
        other = _other_dimension(state, layer, at, self.window, self.unit)
        nearer = next(iter(other.values()))
        if not at_cap and observed < threshold and nearer is not None and nearer > observed / limit:
            # Only the exceeded checks point here, and the other limit is nearer: that one binds.
            return None
        io_size = (
            None
            if layer.log
            else recent(state.in_force(Measure.AVG_IO_SIZE), at, self.window).mean()
        )
        evidence = {
            **window_evidence(rates, self.window),
            "saturated_datapoints": len(saturated),
            "utilization": round(observed / limit, 4),
            "peak": max(rates.values),
            "exceeded_check_datapoints": sum(1 for v in flagged.values() if v >= 1),
            "busy_rate_datapoints": 0 if timed else len(at_cap),
            # The CloudWatch agent's time at the cap, in each flagged minute on average.
            "seconds_at_cap_per_minute": (
                round(sum(held.values()) / len(held), 1) if held else None
            ),
            "avg_io_size_bytes": io_size,
            **other,
        }
        return self.finding(
            state,
            layer.bottleneck(self.unit),
            self.window,
            summary=self._summary(state, layer, limit, observed, len(saturated), rates, io_size)
            if len(at_cap) < len(saturated) / 2
            else self._burst_summary(state, layer, limit, observed, at_cap, rates, io_size, timed),
            observed=observed,
            limit=limit,
            unit=self.unit,
            evidence=evidence,
        )

    def _burst_summary(
        self,
        state: ResourceState,
        layer: Layer,
        limit: float,
        observed: float,
        at_cap: list[float],
        rates: Series,
        io_size: float | None,
        timed: bool = False,
    ) -> str:
        """`timed`: the seconds are the CloudWatch agent's exceeded time, not worked out from
        the busy rate."""
        minutes = len(rates) * rates.period_s / 60
        seconds = sum(at_cap) / len(at_cap)
        io = f"; average I/O {units.size(io_size)}" if io_size else ""
        what = "IOPS" if self.unit is Unit.IOPS else "throughput"
        how = "timed by the CloudWatch agent" if timed else "no exceeded checks on this instance"
        return (
            f"{state.label}: {what} at its {format_rate(limit, self.unit, layer.owner)} "
            f"{layer.describe()} cap for about {seconds:.0f} s of each minute in "
            f"{len(at_cap)} of {len(rates)} minutes over {minutes:.0f} min (minute averages "
            f"show {observed / limit:.0%} of it; {how}){io}."
        )

    def _summary(
        self,
        state: ResourceState,
        layer: Layer,
        limit: float,
        observed: float,
        saturated: int,
        rates: Series,
        io_size: float | None,
    ) -> str:
        what = "IOPS" if self.unit is Unit.IOPS else "throughput"
        minutes = len(rates) * rates.period_s / 60
        io = f"; average I/O {units.size(io_size)}" if io_size else ""
        return (
            f"{state.label}: {what} pinned at its "
            f"{format_rate(limit, self.unit, layer.owner)} {layer.describe()} cap "
            f"({observed / limit:.0%} of it on average; saturated in "
            f"{saturated} of {len(rates)} datapoints over {minutes:.0f} min{io})."
        )


def _by_minute(rates: Series) -> Series:
    """Rates of periods shorter than a minute → each whole minute's mean rate."""
    grouped: dict[datetime, list[float]] = {}
    for t, v in rates.points():
        grouped.setdefault(floor_to(t, MINUTE_S), []).append(v)
    per_minute = MINUTE_S // rates.period_s
    whole = [(t, sum(vs) / len(vs)) for t, vs in grouped.items() if len(vs) >= per_minute]
    return Series.of(whole, MINUTE_S, rates.status)


def _highest_by_minute(flags: dict[datetime, float]) -> dict[datetime, float]:
    out: dict[datetime, float] = {}
    for t, v in flags.items():
        minute = floor_to(t, MINUTE_S)
        out[minute] = max(out.get(minute, 0.0), v)
    return out


def _other_dimension(
    state: ResourceState, layer: Layer, at: datetime, window_s: float, unit: Unit
) -> dict[str, float | None]:
    """How close the layer's other limit is: tells IOPS-bound from throughput-bound work."""
    other = Unit.BYTES_PER_SECOND if unit is Unit.IOPS else Unit.IOPS
    limit = state.limit(layer, other, at)
    series = state.in_force(layer.rate(other))
    name = "iops_utilization" if other is Unit.IOPS else "throughput_utilization"
    mean = recent(series, at, window_s).mean()
    return {name: round(mean / limit, 4) if mean is not None and limit else None}


def _peak(series: Series) -> float:
    return max(series.values, default=0.0)


class IopsCap(_CapRule):
    kind: Literal["iops_cap"] = "iops_cap"
    unit: ClassVar[Unit] = Unit.IOPS
    exceeded: ClassVar[Measure] = Measure.IOPS_EXCEEDED
    held: ClassVar[Measure] = Measure.IOPS_AT_CAP
    active: ClassVar[Measure | None] = Measure.ACTIVE_IOPS

    def _peak(self, state: ResourceState, layer: Layer, at: datetime) -> float:
        """Counted IOPS are at most the higher of the operations and the bytes in units."""
        envelope = layer.envelope
        iops = _peak(recent(state.in_force(layer.rate(Unit.IOPS)), at, self.window))
        if envelope.io_unit_bytes is None:
            return iops
        bps = _peak(recent(state.in_force(layer.rate(Unit.BYTES_PER_SECOND)), at, self.window))
        return envelope.counted_iops(iops, bps)

    def _rates(self, state: ResourceState, layer: Layer, at: datetime) -> Series:
        """IOPS as the limit counts them: on storage, an I/O above 256 KiB counts as several."""
        envelope = layer.envelope
        iops = recent(state.in_force(layer.rate(Unit.IOPS)), at, self.window)
        if envelope.io_unit_bytes is None or not iops.timestamps:
            return iops
        end = iops.timestamps[-1] + timedelta(seconds=iops.period_s)
        throughput = state.in_force(layer.rate(Unit.BYTES_PER_SECOND))
        bps = dict(throughput.between(iops.timestamps[0], end).points())
        counted = [(t, envelope.counted_iops(v, bps.get(t, 0.0))) for t, v in iops.points()]
        return Series.of(counted, iops.period_s, iops.status)


class ThroughputCap(_CapRule):
    kind: Literal["throughput_cap"] = "throughput_cap"
    unit: ClassVar[Unit] = Unit.BYTES_PER_SECOND
    exceeded: ClassVar[Measure] = Measure.THROUGHPUT_EXCEEDED
    held: ClassVar[Measure] = Measure.THROUGHPUT_AT_CAP

    def _peak(self, state: ResourceState, layer: Layer, at: datetime) -> float:
        return _peak(recent(state.in_force(layer.rate(self.unit)), at, self.window))

    def _rates(self, state: ResourceState, layer: Layer, at: datetime) -> Series:
        return recent(state.in_force(layer.rate(self.unit)), at, self.window)
