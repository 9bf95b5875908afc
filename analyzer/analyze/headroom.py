"""The next bottleneck: which limit binds once the one a finding names is lifted.

The workload is assumed to grow at its present I/O size and mix. Every other limit on its I/O
path (the resource's other dimension, the instance behind a volume, each volume behind an
instance) is compared with what it carries now; the one with the least headroom binds next.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from analyzer.model.findings import Bottleneck, NextBottleneck
from analyzer.model.metrics import Measure
from analyzer.model.series import recent
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import Unit


@dataclass(frozen=True, slots=True)
class _Candidate:
    bottleneck: Bottleneck
    resource_id: str
    limit: float
    observed: float
    unit: Unit

    @property
    def headroom(self) -> float:
        return self.limit / self.observed


def _candidates(
    state: ResourceState, at: datetime, window_s: float, burst_level: bool
) -> list[_Candidate]:
    """The IOPS and throughput limits of each layer of a resource against its mean rates.

    With `burst_level`, the limits are those that hold while credits last (the level a credit
    problem, once solved, gives back); otherwise those in force at `at`.
    """
    iops = recent(state.measure(Measure.IOPS), at, window_s).mean()
    bps = recent(state.measure(Measure.THROUGHPUT), at, window_s).mean()
    out = []
    for layer in state.layers():
        envelope = layer.envelope
        if envelope.approximate:
            continue
        for unit, observed, full in (
            (Unit.IOPS, iops, envelope.iops),
            (Unit.BYTES_PER_SECOND, bps, envelope.throughput_bps),
        ):
            limit = full if burst_level else state.limit(layer, unit, at)
            if observed and limit and not state.contradicts(layer.bottleneck(unit)):
                out.append(
                    _Candidate(layer.bottleneck(unit), state.ref.resource_id, limit, observed, unit)
                )
    return out


def next_bottleneck(
    state: ResourceState, snapshot: Snapshot, at: datetime, window_s: float, lifted: Bottleneck
) -> NextBottleneck | None:
    credits_lifted = lifted in (Bottleneck.BURST_CREDITS, Bottleneck.INSTANCE_BURST_CREDITS)
    own = [
        c
        for c in _candidates(state, at, window_s, burst_level=credits_lifted)
        if c.bottleneck is not lifted
    ]
    behind = [
        c
        for other in snapshot.related(state)
        for c in _candidates(other, at, window_s, burst_level=False)
    ]
    candidates = own + behind
    if not candidates:
        return None
    best = min(candidates, key=lambda c: c.headroom)
    return NextBottleneck(
        best.bottleneck, best.limit, best.unit, best.resource_id, round(best.headroom, 3)
    )
