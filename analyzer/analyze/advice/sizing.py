"""What a fix is sized for: the rates it must carry, grown up to the next bottleneck and no
further, in figures an operator can type."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from analyzer.model.findings import Bottleneck, Finding
from analyzer.model.metrics import Measure
from analyzer.model.resources import Volume
from analyzer.model.series import recent
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import KIB, MIB, Unit

GROWTH_CAP = 2.0
"""Without a next bottleneck in sight, size a fix for twice the present rate."""


def _round_up(value: float, step: int) -> int:
    return int(math.ceil(value / step) * step)


def nice_up(value: float) -> int:
    """Up to two significant figures (half steps from 10 to 19): a figure an operator can
    type, at most about 5 % above the need, which does not move with every wobble of the
    rate. 3,560 → 3,600; 19,050 → 19,500; 1,192 → 1,200; 64,000 → 64,000; 573 → 580."""
    if value <= 0:
        return 0
    step = 10 ** (math.floor(math.log10(value)) - 1)
    if value < 20 * step:
        step /= 2
    return _round_up(value, max(int(step), 1))


@dataclass(frozen=True, slots=True)
class Need:
    iops: float
    mibps: float
    charge_mibps: float = 0.0
    """st1/sc1: what the bucket is charged, where unmerged I/O pays more than its bytes."""

    @property
    def hdd_mibps(self) -> float:
        return max(self.mibps, self.charge_mibps)


def needed(finding: Finding, state: ResourceState, at: datetime) -> Need:
    """The rates a fix must carry.

    A draining bucket: today's rate with a fifth more room. An empty one: the rate the
    history shows before it ran out, with a fifth more room; where it shows none, the burst
    level it had while credits lasted; at today's I/O size either way. A cap: today's rate
    grown to where the next limit binds, at most twice.
    """
    iops = recent(state.in_force(Measure.IOPS), at, state.windows.rate_s).mean() or 0.0
    bps = recent(state.in_force(Measure.THROUGHPUT), at, state.windows.rate_s).mean() or 0.0
    mibps = bps / MIB
    if finding.bottleneck is Bottleneck.BURST_CREDITS:
        envelope = state.envelope
        if finding.seconds_to_empty == 0 and envelope is not None:
            io_size = bps / iops if iops else 16 * KIB
            before = finding.rate_before_empty
            if before is not None and before > 0:
                wanted = before * 1.2
                if finding.unit is Unit.IOPS:
                    return Need(max(iops, wanted), max(mibps, wanted * io_size / MIB))
                return Need(max(iops, wanted / io_size), max(mibps, wanted / MIB))
            burst_iops = min(envelope.iops, envelope.throughput_bps / io_size)
            return Need(max(iops, burst_iops), max(mibps, burst_iops * io_size / MIB))
        charged = finding.credit.charged_rate if finding.credit is not None else None
        charge_mibps = charged / MIB if charged is not None else 0.0
        if finding.unit is not Unit.BYTES_PER_SECOND:
            charge_mibps = 0.0
        return Need(iops * 1.2, mibps * 1.2, charge_mibps * 1.2)
    nxt = finding.next_bottleneck
    # Rounded down: a fix sized up to the next limit stays within it.
    factor = (
        min(math.floor(nxt.headroom * 100) / 100, GROWTH_CAP)
        if nxt and nxt.headroom
        else GROWTH_CAP
    )
    return Need(iops * factor, mibps * factor)


def sized_for(finding: Finding, snapshot: Snapshot) -> dict[str, float] | None:
    """The rates a volume finding's fixes were sized for (`Finding.sized_for`): what
    tells a fix that must change from one that only wobbled. None where no fix is sized."""
    state = snapshot.get(finding.resource.scope, finding.resource.resource_id)
    if state is None or not isinstance(state.resource, Volume) or not finding.remedies:
        return None
    need = needed(finding, state, snapshot.data_end)
    return {"iops": round(need.iops, 1), "mib_per_second": round(need.hdd_mibps, 2)}


def bounded_by(finding: Finding) -> str:
    """Name the limit that caps what a fix can buy, when the fix was sized up to it."""
    nxt = finding.next_bottleneck
    if finding.bottleneck is Bottleneck.BURST_CREDITS or nxt is None or nxt.headroom is None:
        return ""
    if nxt.headroom >= GROWTH_CAP:
        return ""
    what = nxt.bottleneck.value.replace("_", " ")
    return f"; beyond that the {what} limit of {nxt.resource_id} binds"
