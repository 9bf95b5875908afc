"""The model checked against what was observed: a rate that stays clearly above a modelled
limit means the model is wrong for that resource (a volume type's rules misread, striping
unmodelled, an HDD's merged I/O counted one by one), not that the workload beats AWS.

Such a limit gets no cap finding and no advice; the resource's row says `model_mismatch`.
"""

from __future__ import annotations

from datetime import datetime

from analyzer.model.metrics import Measure
from analyzer.model.series import recent
from analyzer.model.state import Mismatch, ResourceState
from analyzer.model.units import Unit

ABOVE = 1.1
"""Clearly above: CloudWatch's per-minute sums can stray a little past a cap, not this far."""
MIN_FRACTION = 0.8
"""...for this share of the window's datapoints..."""
MIN_DATAPOINTS = 5
WINDOW_S = 900.0
"""...over the window the cap rules read."""


def mismatches(state: ResourceState, at: datetime) -> tuple[Mismatch, ...]:
    """The limits of `state` (with credits left: the highest the model allows) that its data
    stays clearly above over the last `WINDOW_S`."""
    iops = recent(state.in_force(Measure.IOPS), at, WINDOW_S)
    if len(iops) < MIN_DATAPOINTS:
        return ()
    throughput = recent(state.in_force(Measure.THROUGHPUT), at, WINDOW_S)
    peak_iops = max(iops.values)
    peak_bps = max(throughput.values, default=0.0)
    bps: dict[datetime, float] | None = None
    found = []
    for layer in state.layers():
        envelope = layer.envelope
        if envelope.approximate:
            continue
        if (
            ABOVE * layer.limit(Unit.IOPS, True) > envelope.counted_iops(peak_iops, peak_bps)
            and ABOVE * layer.limit(Unit.BYTES_PER_SECOND, True) > peak_bps
        ):
            continue  # no datapoint is above either limit: the usual case, and cheap
        bps = bps if bps is not None else dict(throughput.points())
        counted = [envelope.counted_iops(v, bps.get(t, 0.0)) for t, v in iops.points()]
        for unit, rates in ((Unit.IOPS, counted), (Unit.BYTES_PER_SECOND, list(bps.values()))):
            limit = layer.limit(unit, credits_left=True)
            if not limit or len(rates) < MIN_DATAPOINTS:
                continue
            above = sum(1 for r in rates if r >= ABOVE * limit)
            if above >= MIN_FRACTION * len(rates):
                mean = sum(rates) / len(rates)
                found.append(Mismatch(layer.bottleneck(unit), limit, mean, WINDOW_S))
    return tuple(found)
