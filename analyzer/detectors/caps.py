"""Rule kinds for a volume's or an instance's IOPS and throughput caps.

A cap finding needs sustained saturation: most datapoints of the window at or above a share
of the limit (or flagged by CloudWatch's own "exceeded" check), never one noisy minute.
Where the cap in force is a baseline because burst credits ran out, the credit rules speak.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import Field

from analyzer import units
from analyzer.detectors.base import PositiveDuration, RuleBase, recent, window_evidence
from analyzer.models import Bottleneck, Finding, Measure, ResourceType, Unit
from analyzer.series import Series
from analyzer.snapshot import EMPTY_BALANCE_PERCENT, ResourceState, Snapshot


def format_rate(value: float, unit: Unit, resource_type: ResourceType) -> str:
    """Throughput in the unit AWS quotes that limit in: MiB/s for volumes, MB/s for instances."""
    if unit is Unit.IOPS:
        return units.iops(value)
    if unit is Unit.PERCENT:
        return f"{value:.0f}%"
    return units.mibps(value) if resource_type is ResourceType.VOLUME else units.mbps(value)


class _CapRule(RuleBase):
    utilization: float = Field(default=0.95, gt=0, le=2)
    """A datapoint at or above this share of the limit counts as saturated."""
    window: PositiveDuration = 900.0
    min_fraction: float = Field(default=0.8, gt=0, le=1)
    """The share of the window's datapoints that must be saturated."""
    min_datapoints: int = Field(default=3, ge=1)
    use_exceeded_check: bool = True
    """Count a datapoint as saturated when CloudWatch's *ExceededCheck flags it."""

    supported: ClassVar[frozenset[ResourceType]] = frozenset(
        {ResourceType.VOLUME, ResourceType.INSTANCE}
    )
    unit: ClassVar[Unit]
    exceeded: ClassVar[Measure]
    bottlenecks: ClassVar[dict[ResourceType, Bottleneck]]

    def _rates(self, state: ResourceState) -> Series:
        raise NotImplementedError

    def _limit(self, state: ResourceState, at: datetime) -> float | None:
        raise NotImplementedError

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        envelope = state.envelope
        if envelope is None or envelope.approximate:
            return None
        balance = _balance_measure(state, self.unit)
        if envelope.bursts and not state.credits_left(balance, at):
            return None
        limit = self._limit(state, at)
        if not limit:
            return None
        rates = recent(self._rates(state), at, self.window)
        if len(rates) < self.min_datapoints:
            return None
        flagged = dict(recent(state.measure(self.exceeded), at, self.window).points())
        if envelope.bursts:
            # Exceeded while the bucket was empty is the credit rules' finding, not this one.
            balances = dict(recent(state.measure(balance), at, self.window).points())
            flagged = {
                t: v for t, v in flagged.items() if balances.get(t, 100.0) > EMPTY_BALANCE_PERCENT
            }
        threshold = self.utilization * limit
        saturated = [
            t
            for t, v in rates.points()
            if v >= threshold or (self.use_exceeded_check and flagged.get(t, 0) >= 1)
        ]
        if len(saturated) < self.min_fraction * len(rates):
            return None
        observed = rates.mean() or 0.0
        other = _other_dimension(state, at, self.window, self.unit)
        other_utilization = next(iter(other.values()))
        if (
            observed < threshold
            and other_utilization is not None
            and other_utilization > observed / limit
        ):
            # Only the exceeded checks point here, and the other limit is nearer: that one binds.
            return None
        kind = state.ref.resource_type
        bottleneck = self.bottlenecks[kind]
        io_size = recent(state.measure(Measure.AVG_IO_SIZE), at, self.window).mean()
        evidence = {
            **window_evidence(rates, self.window),
            "saturated_datapoints": len(saturated),
            "utilization": round(observed / limit, 4),
            "peak": max(rates.values),
            "exceeded_check_datapoints": sum(1 for v in flagged.values() if v >= 1),
            "avg_io_size_bytes": io_size,
        }
        evidence.update(other)
        what = "IOPS" if self.unit is Unit.IOPS else "throughput"
        minutes = len(rates) * rates.period_s / 60
        summary = (
            f"{state.label}: {what} pinned at its "
            f"{format_rate(limit, self.unit, kind)} {_owner(kind)} cap "
            f"({observed / limit:.0%} of it on average; saturated in "
            f"{len(saturated)} of {len(rates)} datapoints over {minutes:.0f} min"
        )
        if io_size:
            summary += f"; average I/O {units.size(io_size)}"
        summary += ")."
        return self.finding(
            state,
            snapshot,
            at,
            bottleneck,
            self.window,
            summary=summary,
            observed=observed,
            limit=limit,
            unit=self.unit,
            evidence=evidence,
        )


def _owner(kind: ResourceType) -> str:
    return "volume" if kind is ResourceType.VOLUME else "instance EBS"


def _balance_measure(state: ResourceState, unit: Unit) -> Measure:
    if state.is_volume:
        return Measure.BURST_BALANCE
    return Measure.IO_BALANCE if unit is Unit.IOPS else Measure.BYTE_BALANCE


def _other_dimension(
    state: ResourceState, at: datetime, window_s: float, unit: Unit
) -> dict[str, float | None]:
    """How close the other limit is: tells IOPS-bound from throughput-bound workloads."""
    if unit is Unit.IOPS:
        limit, series = state.throughput_limit(at), state.measure(Measure.THROUGHPUT)
        name = "throughput_utilization"
    else:
        limit, series = state.iops_limit(at), state.measure(Measure.IOPS)
        name = "iops_utilization"
    mean = recent(series, at, window_s).mean()
    return {name: round(mean / limit, 4) if mean is not None and limit else None}


class IopsCap(_CapRule):
    kind: Literal["iops_cap"] = "iops_cap"
    unit: ClassVar[Unit] = Unit.IOPS
    exceeded: ClassVar[Measure] = Measure.IOPS_EXCEEDED
    bottlenecks: ClassVar[dict[ResourceType, Bottleneck]] = {
        ResourceType.VOLUME: Bottleneck.VOLUME_IOPS,
        ResourceType.INSTANCE: Bottleneck.INSTANCE_IOPS,
    }

    def _rates(self, state: ResourceState) -> Series:
        """IOPS as the limit counts them: on a volume, an I/O above 256 KiB counts as several."""
        iops = state.measure(Measure.IOPS)
        envelope = state.envelope
        if envelope is None or envelope.io_unit_bytes is None:
            return iops
        bps = dict(state.measure(Measure.THROUGHPUT).points())
        counted = [(t, envelope.counted_iops(v, bps.get(t, 0.0))) for t, v in iops.points()]
        return Series.of(counted, iops.period_s, iops.status)

    def _limit(self, state: ResourceState, at: datetime) -> float | None:
        return state.iops_limit(at)


class ThroughputCap(_CapRule):
    kind: Literal["throughput_cap"] = "throughput_cap"
    unit: ClassVar[Unit] = Unit.BYTES_PER_SECOND
    exceeded: ClassVar[Measure] = Measure.THROUGHPUT_EXCEEDED
    bottlenecks: ClassVar[dict[ResourceType, Bottleneck]] = {
        ResourceType.VOLUME: Bottleneck.VOLUME_THROUGHPUT,
        ResourceType.INSTANCE: Bottleneck.INSTANCE_THROUGHPUT,
    }

    def _rates(self, state: ResourceState) -> Series:
        return state.measure(Measure.THROUGHPUT)

    def _limit(self, state: ResourceState, at: datetime) -> float | None:
        return state.throughput_limit(at)
