"""The next bottleneck: which limit binds once the one a finding names is lifted.

The workload is assumed to grow at its present I/O size and mix. Every other limit on its I/O
path (the resource's other dimension, the instance behind a volume, each volume behind an
instance) is compared with what it carries now; the one with the least headroom binds next.
A limit of the resource's own that binds already (`BINDS_WITHIN`) binds together with the
finding's: both are lifted, and the next bottleneck is the first limit beyond them.
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
    named: str | None = None

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
    iops = recent(state.in_force(Measure.IOPS), at, window_s).mean()
    bps = recent(state.in_force(Measure.THROUGHPUT), at, window_s).mean()
    out = []
    named = _named(state)
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
                    _Candidate(
                        layer.bottleneck(unit), state.ref.resource_id, limit, observed, unit, named
                    )
                )
    return out


BINDS_WITHIN = 1.05
"""Another limit of the resource's own with less headroom than this binds already: a cap
finding's rule holds its own limit at or near 100 % (the cap rules' default threshold is
95 %), so a second limit within the same 5 % is at it too."""


@dataclass(frozen=True, slots=True)
class Ahead:
    """The limits in a finding's way besides its own."""

    together: tuple[NextBottleneck, ...]
    """The resource's own limits that bind already, with the finding's: a fix lifts them all."""
    next: NextBottleneck | None
    """The limit the workload meets once those are lifted."""


def _named(state: ResourceState) -> str | None:
    """A claim's volume by its claim, a cluster node by what launched it; None: the id."""
    ref = state.ref
    if ref.claim is not None:
        return ref.named
    node = getattr(state.resource, "node", None)
    return f"{node.text()} ({ref.resource_id})" if node is not None else None


def _as_next(c: _Candidate) -> NextBottleneck:
    return NextBottleneck(
        c.bottleneck, c.limit, c.unit, c.resource_id, round(c.headroom, 3), c.named
    )


def ahead(
    state: ResourceState, snapshot: Snapshot, at: datetime, window_s: float, lifted: Bottleneck
) -> Ahead:
    credits_lifted = lifted.is_credits
    own = [
        c
        for c in _candidates(state, at, window_s, burst_level=credits_lifted)
        if c.bottleneck is not lifted
    ]
    together = [] if credits_lifted else [c for c in own if c.headroom <= BINDS_WITHIN]
    behind = [
        c
        for other in snapshot.related(state)
        for c in _candidates(other, at, window_s, burst_level=False)
    ]
    candidates = [c for c in own if c not in together] + behind
    best = min(candidates, key=lambda c: c.headroom, default=None)
    return Ahead(tuple(_as_next(c) for c in together), _as_next(best) if best is not None else None)
