"""What to change about a finding, and what it costs a month.

Each option is a volume modification with its new monthly price. Options are sized for what
the workload needs now, and never beyond the next bottleneck: paying for IOPS that the next
limit will not let through buys nothing. Volume changes apply online (ModifyVolume), one at a
time and at most four per volume in 24 hours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime

from analyzer.analyze.advice_rds import for_db
from analyzer.analyze.prices import PriceList
from analyzer.model import units
from analyzer.model.findings import Bottleneck, Finding, Remedy
from analyzer.model.limits import SSD_IO_BYTES, XEN_MAX_IOPS
from analyzer.model.metrics import Measure
from analyzer.model.resources import Instance, Volume
from analyzer.model.series import recent
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import KIB, MIB, Unit

MODIFY_NOTE = "online (ModifyVolume, at most 4 per volume in 24 h)"
GROWTH_CAP = 2.0
"""Without a next bottleneck in sight, size a fix for twice the present rate."""

GP3_MAX_IOPS, GP3_IOPS_PER_GIB = 80_000, 500
GP3_MAX_MIBPS, GP3_MIBPS_PER_IOPS = 2_000, 0.25
IO1_MAX_IOPS, IO1_IOPS_PER_GIB = 64_000, 50
IO2_MAX_IOPS, IO2_IOPS_PER_GIB, IO2_MAX_MIBPS = 256_000, 1_000, 4_000
GP2_MAX_GIB = 16_384


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
class _Need:
    iops: float
    mibps: float
    charge_mibps: float = 0.0
    """st1/sc1: what the bucket is charged, where unmerged I/O pays more than its bytes."""

    @property
    def hdd_mibps(self) -> float:
        return max(self.mibps, self.charge_mibps)


def _need(finding: Finding, state: ResourceState, at: datetime) -> _Need:
    """The rates a fix must carry.

    A draining bucket: today's rate with a fifth more room. An empty one: the rate the
    history shows before it ran out, with a fifth more room; where it shows none, the burst
    level it had while credits lasted; at today's I/O size either way. A cap: today's rate
    grown to where the next limit binds, at most twice.
    """
    iops = recent(state.measure(Measure.IOPS), at, state.windows.rate_s).mean() or 0.0
    bps = recent(state.measure(Measure.THROUGHPUT), at, state.windows.rate_s).mean() or 0.0
    mibps = bps / MIB
    if finding.bottleneck is Bottleneck.BURST_CREDITS:
        envelope = state.envelope
        if finding.seconds_to_empty == 0 and envelope is not None:
            io_size = bps / iops if iops else 16 * KIB
            before = finding.evidence.get("rate_before_empty")
            if isinstance(before, int | float) and before > 0:
                wanted = before * 1.2
                if finding.unit is Unit.IOPS:
                    return _Need(max(iops, wanted), max(mibps, wanted * io_size / MIB))
                return _Need(max(iops, wanted / io_size), max(mibps, wanted / MIB))
            burst_iops = min(envelope.iops, envelope.throughput_bps / io_size)
            return _Need(max(iops, burst_iops), max(mibps, burst_iops * io_size / MIB))
        charged = finding.evidence.get("charged_rate")
        charge_mibps = charged / MIB if isinstance(charged, int | float) else 0.0
        if finding.unit is not Unit.BYTES_PER_SECOND:
            charge_mibps = 0.0
        return _Need(iops * 1.2, mibps * 1.2, charge_mibps * 1.2)
    nxt = finding.next_bottleneck
    factor = min(nxt.headroom, GROWTH_CAP) if nxt and nxt.headroom else GROWTH_CAP
    return _Need(iops * factor, mibps * factor)


def _priced(
    action: str,
    prices: PriceList,
    now: float | None,
    volume_type: str,
    size: int,
    iops: float | None = None,
    mibps: float | None = None,
) -> Remedy:
    cost = prices.monthly(volume_type, size, iops, mibps)
    delta = round(cost - now, 2) if cost is not None and now is not None else None
    return Remedy(action, cost, delta)


def _gp3(volume: Volume, need: _Need, prices: PriceList, now: float | None) -> Remedy | None:
    # Never below what a gp3 volume already has, nor below what gp3 includes.
    has_iops = volume.iops or 0 if volume.volume_type == "gp3" else 0
    has_mibps = volume.throughput_mibps or 0 if volume.volume_type == "gp3" else 0
    iops = max(3_000, has_iops, nice_up(need.iops))
    mibps = max(125, has_mibps, nice_up(need.mibps))
    iops = max(iops, nice_up(mibps / GP3_MIBPS_PER_IOPS))
    if iops > min(GP3_MAX_IOPS, GP3_IOPS_PER_GIB * volume.size_gib) or mibps > GP3_MAX_MIBPS:
        return None
    what = (
        "3,000 IOPS and 125 MiB/s included"
        if (iops, mibps) == (3_000, 125)
        else f"{iops:,} IOPS, {mibps:,} MiB/s"
    )
    verb = "Provision" if volume.volume_type == "gp3" else "Move to gp3 with"
    return _priced(
        f"{verb} {what}, {MODIFY_NOTE}", prices, now, "gp3", volume.size_gib, iops, mibps
    )


def _grow_gp2(volume: Volume, need: _Need, prices: PriceList, now: float | None) -> Remedy | None:
    size = max(
        volume.size_gib + 1,
        nice_up(need.iops / 3),
        nice_up(need.mibps * MIB / SSD_IO_BYTES / 3),
    )
    if size > GP2_MAX_GIB:
        return None
    baseline = min(3 * size, 16_000)
    return _priced(
        f"Grow to {size:,} GiB ({baseline:,} IOPS baseline, no credits needed), {MODIFY_NOTE}",
        prices,
        now,
        "gp2",
        size,
    )


def _to_nitro(volume: Volume, state: ResourceState) -> Remedy | None:
    """io1/io2 provisioned above what a non-Nitro instance delivers: the instance is the fix."""
    envelope = state.envelope
    if envelope is None or not volume.iops or envelope.iops >= volume.iops:
        return None
    return Remedy(
        f"Move {volume.attached_to} to an instance type built on Nitro: off Nitro "
        f"{volume.volume_type} delivers at most {units.iops(XEN_MAX_IOPS)}, on Nitro the "
        f"{units.iops(volume.iops)} provisioned (and already paid for)"
    )


def _provisioned(
    volume: Volume, need: _Need, prices: PriceList, now: float | None
) -> Remedy | None:
    if volume.volume_type == "io2":
        per_gib, ceiling = IO2_IOPS_PER_GIB, IO2_MAX_IOPS
        iops = max(need.iops, need.mibps / 0.256)
    else:
        per_gib, ceiling = IO1_IOPS_PER_GIB, IO1_MAX_IOPS
        iops = max(need.iops, need.mibps * MIB / SSD_IO_BYTES)
    target = nice_up(iops)
    current = volume.iops or 0
    if target <= current:
        return None
    size = max(volume.size_gib, math.ceil(target / per_gib))
    if target > ceiling:
        return None
    grow = f" and grow to {size:,} GiB" if size > volume.size_gib else ""
    return _priced(
        f"Provision {target:,} IOPS{grow}, {MODIFY_NOTE}",
        prices,
        now,
        volume.volume_type,
        size,
        target,
    )


def _hdd(volume: Volume, need: _Need, prices: PriceList, now: float | None) -> list[Remedy]:
    out = []
    mibps = need.hdd_mibps
    st1_size = max(volume.size_gib, 125, nice_up(mibps / 40 * 1024))
    same = volume.volume_type == "st1" and st1_size == volume.size_gib
    if mibps <= 500 and st1_size <= 16_384 and not same:
        verb = "Grow to" if volume.volume_type == "st1" else "Move to st1 and grow to"
        if st1_size == volume.size_gib:
            verb = "Move to st1 at"
        out.append(
            _priced(
                f"{verb} {st1_size:,} GiB ({min(40 * st1_size / 1024, 500):,.0f} "
                f"MiB/s baseline), {MODIFY_NOTE}",
                prices,
                now,
                "st1",
                st1_size,
            )
        )
    gp3 = _gp3(volume, need, prices, now)
    if gp3 is not None:
        out.append(gp3)
    return out


def for_volume(
    finding: Finding, state: ResourceState, prices: PriceList, at: datetime
) -> list[Remedy]:
    volume = state.resource
    if not isinstance(volume, Volume):
        return []
    need = _need(finding, state, at)
    now = prices.monthly(volume.volume_type, volume.size_gib, volume.iops, volume.throughput_mibps)
    options: list[Remedy | None] = []
    match volume.volume_type:
        case "gp2":
            options += [_gp3(volume, need, prices, now)]
            if finding.bottleneck is Bottleneck.BURST_CREDITS:
                options += [_grow_gp2(volume, need, prices, now)]
        case "gp3":
            options += [_gp3(volume, need, prices, now)]
        case "io1" | "io2":
            options += [_provisioned(volume, need, prices, now), _to_nitro(volume, state)]
        case "st1" | "sc1":
            options += _hdd(volume, need, prices, now)
    found = [o for o in options if o is not None]
    return sorted(found, key=lambda o: (o.monthly_cost is None, o.monthly_cost or 0.0))


def for_instance(finding: Finding, state: ResourceState) -> list[Remedy]:
    instance = state.resource
    if not isinstance(instance, Instance):
        return []
    what = "IOPS" if finding.bottleneck is Bottleneck.INSTANCE_IOPS else "throughput"
    if finding.bottleneck is Bottleneck.INSTANCE_BURST_CREDITS:
        return [
            Remedy(
                f"Move to an instance type whose EBS baseline covers the load: "
                f"{instance.instance_type} sustains only its baseline once its EBS "
                f"burst is spent"
            )
        ]
    limit = units.iops(finding.limit) if what == "IOPS" else units.mbps(finding.limit)
    family = instance.instance_type.split(".")[0]
    return [
        Remedy(
            f"Move to an instance type with more than {limit} of EBS {what} "
            f"(larger {family} sizes, or an EBS-optimized family such as the *n/*bn "
            f"types); the instance cap is shared by all its volumes"
        )
    ]


def remedies(finding: Finding, snapshot: Snapshot, prices: PriceList) -> tuple[Remedy, ...]:
    state = snapshot.get(finding.resource.region, finding.resource.resource_id)
    if state is None:
        return ()
    if state.is_db:
        return tuple(for_db(finding, state))
    if finding.bottleneck in (
        Bottleneck.INSTANCE_IOPS,
        Bottleneck.INSTANCE_THROUGHPUT,
        Bottleneck.INSTANCE_BURST_CREDITS,
    ):
        return tuple(for_instance(finding, state))
    options = for_volume(finding, state, prices, snapshot.data_end)
    suffix = _bounded_by(finding)
    return tuple(replace(o, action=o.action + suffix, currency=prices.currency) for o in options)


def sized_for(finding: Finding, snapshot: Snapshot) -> dict[str, float] | None:
    """The rates a volume finding's fixes were sized for (its `fix_sized_for` evidence): what
    tells a fix that must change from one that only wobbled. None where no fix is sized."""
    state = snapshot.get(finding.resource.region, finding.resource.resource_id)
    if state is None or not isinstance(state.resource, Volume) or not finding.remedies:
        return None
    need = _need(finding, state, snapshot.data_end)
    return {"iops": round(need.iops, 1), "mib_per_second": round(need.hdd_mibps, 2)}


def _bounded_by(finding: Finding) -> str:
    """Name the limit that caps what a fix can buy, when the fix was sized up to it."""
    nxt = finding.next_bottleneck
    if finding.bottleneck is Bottleneck.BURST_CREDITS or nxt is None or nxt.headroom is None:
        return ""
    if nxt.headroom >= GROWTH_CAP:
        return ""
    what = nxt.bottleneck.value.replace("_", " ")
    return f"; beyond that the {what} limit of {nxt.resource_id} binds"
