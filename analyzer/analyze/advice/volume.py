"""What to change about a finding, and what it costs a month.

Each option is a volume modification with its new monthly price. Options are sized for what
the workload needs now, and never beyond the next bottleneck: paying for IOPS that the next
limit will not let through buys nothing. Volume changes apply online (ModifyVolume), one at a
time and at most four per volume in 24 hours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from analyzer.analyze.advice.instance import for_instance, to_nitro
from analyzer.analyze.advice.joint import joint
from analyzer.analyze.advice.rds import for_db
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.prices import PriceList
from analyzer.model import limits, units
from analyzer.model.findings import RATE_BEFORE_EMPTY, Bottleneck, Change, Finding, Remedy
from analyzer.model.limits import (
    GP3_INCLUDED_IOPS,
    GP3_INCLUDED_MIBPS,
    GP3_IOPS_PER_GIB,
    GP3_MAX_IOPS,
    GP3_MAX_MIBPS,
    GP3_MIBPS_PER_IOPS,
    IO1_IOPS_PER_GIB,
    IO1_MAX_IOPS,
    IO1_MAX_MIBPS,
    IO2_IOPS_PER_GIB,
    IO2_MAX_IOPS,
    IO2_MAX_MIBPS,
    IO2_MIBPS_PER_IOPS,
    MAX_VOLUME_GIB,
    SSD_IO_BYTES,
    ST1_MAX_MIBPS,
    ST1_MIBPS_PER_TIB,
    ST1_MIN_GIB,
    XEN_MAX_IOPS,
    volume_envelope,
)
from analyzer.model.metrics import Measure
from analyzer.model.resources import Instance, ResourceType, Volume
from analyzer.model.series import recent
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import KIB, MIB, Unit

MODIFY_NOTE = "online (ModifyVolume, at most 4 per volume in 24 h)"
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
            before = finding.evidence.get(RATE_BEFORE_EMPTY)
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
    # Rounded down: a fix sized up to the next limit stays within it.
    factor = (
        min(math.floor(nxt.headroom * 100) / 100, GROWTH_CAP)
        if nxt and nxt.headroom
        else GROWTH_CAP
    )
    return _Need(iops * factor, mibps * factor)


def _priced(
    action: str,
    prices: PriceList,
    now: float | None,
    volume: Volume,
    volume_type: str,
    size: int,
    iops: float | None = None,
    mibps: float | None = None,
) -> Remedy:
    """A volume modification, priced, with the change it makes in fields a program reads."""
    cost = prices.monthly(volume_type, size, iops, mibps)
    delta = round(cost - now, 2) if cost is not None and now is not None else None
    after = replace(
        volume,
        volume_type=volume_type,
        size_gib=size,
        iops=int(iops) if iops is not None else None,
        throughput_mibps=int(mibps) if mibps is not None else None,
    )
    return Remedy(action, cost, delta, change=_change(volume, after))


def _config(volume: Volume) -> dict[str, Any]:
    return {
        "volume_type": volume.volume_type,
        "size_gib": volume.size_gib,
        "iops": volume.iops,
        "throughput_mibps": volume.throughput_mibps,
    }


def _change(volume: Volume, after: Volume, volumes: int = 1) -> Change:
    """From the volume as it is to `after` (`volumes` of them, striped), with the limits the
    result has: its IOPS and MiB/s with credits, and its baseline where it bursts."""
    to: dict[str, Any] = _config(after)
    envelope = volume_envelope(after)
    if volumes > 1:
        to["volumes"] = volumes
    if envelope is not None:
        to["iops_limit"] = envelope.iops * volumes
        to["throughput_limit_mibps"] = round(envelope.throughput_bps * volumes / MIB, 1)
        if envelope.bursts:
            to["baseline_iops_limit"] = envelope.baseline_iops * volumes
    return Change(ResourceType.VOLUME, volume.volume_id, _config(volume), to)


def _gp3(volume: Volume, need: _Need, prices: PriceList, now: float | None) -> Remedy | None:
    # Never below what a gp3 volume already has, nor below what gp3 includes.
    has_iops = volume.iops or 0 if volume.volume_type == "gp3" else 0
    has_mibps = volume.throughput_mibps or 0 if volume.volume_type == "gp3" else 0
    iops = max(GP3_INCLUDED_IOPS, has_iops, nice_up(need.iops))
    mibps = max(GP3_INCLUDED_MIBPS, has_mibps, nice_up(need.mibps))
    iops = max(iops, nice_up(mibps / GP3_MIBPS_PER_IOPS))
    if iops > min(GP3_MAX_IOPS, GP3_IOPS_PER_GIB * volume.size_gib) or mibps > GP3_MAX_MIBPS:
        return None
    if volume.volume_type == "gp3" and (iops, mibps) == (
        volume.iops or GP3_INCLUDED_IOPS,
        volume.throughput_mibps or GP3_INCLUDED_MIBPS,
    ):
        return None  # what it has already: no fix
    what = (
        f"{iops:,} IOPS and {mibps:,} MiB/s included"
        if (iops, mibps) == (GP3_INCLUDED_IOPS, GP3_INCLUDED_MIBPS)
        else f"{iops:,} IOPS, {mibps:,} MiB/s"
    )
    verb = "Provision" if volume.volume_type == "gp3" else "Move to gp3 with"
    return _priced(
        f"{verb} {what}, {MODIFY_NOTE}", prices, now, volume, "gp3", volume.size_gib, iops, mibps
    )


def _grow_gp2(volume: Volume, need: _Need, prices: PriceList, now: float | None) -> Remedy | None:
    size = max(
        volume.size_gib + 1,
        nice_up(limits.gp2_size_for(need.iops)),
        nice_up(limits.gp2_size_for(need.mibps * MIB / SSD_IO_BYTES)),
    )
    if size > MAX_VOLUME_GIB:
        return None
    baseline = limits.gp2_baseline(size)
    return _priced(
        f"Grow to {size:,} GiB ({baseline:,.0f} IOPS baseline, no credits needed), {MODIFY_NOTE}",
        prices,
        now,
        volume,
        "gp2",
        size,
    )


def _refill_now(
    volume: Volume, finding: Finding, prices: PriceList, now: float | None
) -> Remedy | None:
    """The emergency step for a gp2 bucket running out: grown online, even by one GiB, a gp2
    volume comes back with a full bucket (as observed; incident 2 of SPEC.md), which buys a
    full burst while the lasting fix is planned. It is one of the volume's four modifications
    in 24 hours, and the lasting fix must wait until it has completed (DOMAIN.md)."""
    size = volume.size_gib + 1
    if size > MAX_VOLUME_GIB:
        return None
    bucket = limits.gp2(size).bucket
    if bucket is None:
        return None
    before = finding.evidence.get(RATE_BEFORE_EMPTY)
    if isinstance(before, int | float):
        rate = float(before)
    elif "pinned_datapoints" in finding.evidence:
        rate = bucket.burst  # throttled, its demand unseen: at most a full burst
    else:
        rate = finding.observed
    if rate <= bucket.baseline:
        return None
    lasts = (
        f"{units.duration(bucket.capacity / (rate - bucket.baseline))} of burst at "
        f"{units.iops(rate)}"
    )
    return _priced(
        f"Now, to buy time: grow to {size:,} GiB; a grown gp2 volume's bucket comes back "
        f"full (as observed), {lasts}; one of the volume's 4 modifications in 24 h, and the "
        "lasting fix waits until it has completed",
        prices,
        now,
        volume,
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


CEILINGS = {
    "gp3": (GP3_MAX_IOPS, GP3_MAX_MIBPS),
    "io1": (IO1_MAX_IOPS, IO1_MAX_MIBPS),
    "io2": (IO2_MAX_IOPS, IO2_MAX_MIBPS),
}
"""The most IOPS and MiB/s one volume of a type carries, where a modification can get it
there (gp2 and the HDD types are moved to gp3 or st1 instead)."""
IO1_SMALL_IO_FROM_IOPS = 32_001


def _io1_iops_for(mibps: float) -> float:
    """The io1 IOPS that carry `mibps`: 256 KiB a second per IOPS up to 500 MiB/s; beyond
    that only above 32,000 IOPS (Nitro), at 16 KiB per IOPS, up to 1,000 MiB/s at 64,000."""
    if mibps <= 500:
        return mibps * MIB / SSD_IO_BYTES
    return max(float(IO1_SMALL_IO_FROM_IOPS), mibps * MIB / (16 * KIB))


def _to_io2(
    volume: Volume, need: _Need, prices: PriceList, now: float | None, nitro: bool | None
) -> Remedy | None:
    """io2 carries 0.256 MiB/s per IOPS up to 4,000 MiB/s and 256,000 IOPS, at io1's price
    per IOPS up to 32,000 (tiered cheaper above): from io1, the same IOPS buy eight times the
    throughput; from gp3, the way past gp3's 80,000 IOPS and 2,000 MiB/s."""
    kept = volume.iops or 0 if volume.volume_type == "io1" else 0
    target = nice_up(max(need.iops, need.mibps / IO2_MIBPS_PER_IOPS, kept, 100))
    if target > IO2_MAX_IOPS or need.mibps > IO2_MAX_MIBPS:
        return None
    if target > XEN_MAX_IOPS and nitro is False:
        return None  # io2 beyond 32,000 IOPS needs an instance built on Nitro
    size = max(volume.size_gib, math.ceil(target / IO2_IOPS_PER_GIB))
    mibps = min(IO2_MIBPS_PER_IOPS * target, IO2_MAX_MIBPS)
    grow = f", grown to {size:,} GiB" if size > volume.size_gib else ""
    nitro_note = "; above 32,000 IOPS it needs a Nitro instance" if target > XEN_MAX_IOPS else ""
    return _priced(
        f"Move to io2 with {target:,} IOPS ({mibps:,.0f} MiB/s){grow}{nitro_note}, {MODIFY_NOTE}",
        prices,
        now,
        volume,
        "io2",
        size,
        target,
    )


STRIPES_AT_MOST = 8
"""More volumes than this in one RAID 0 set is a storage design, not a fix."""


def _stripe(
    volume: Volume,
    need: _Need,
    prices: PriceList,
    now: float | None,
    per_volume: tuple[float, float],
    instance: ResourceState | None = None,
) -> Remedy | None:
    """Past one volume's own ceiling (`per_volume`: its most IOPS and MiB/s): N volumes of
    the same type striped together (RAID 0 on the instance), each carrying an Nth; then the
    instance's EBS limits are the ceiling, and the fix says what they are."""
    max_iops, max_mibps = per_volume
    n = math.ceil(max(need.iops / max_iops, need.mibps / max_mibps))
    if n < 2 or n > STRIPES_AT_MOST:
        return None
    iops, mibps = nice_up(need.iops / n), nice_up(need.mibps / n)
    size = math.ceil(volume.size_gib / n)
    kind = volume.volume_type
    if kind == "gp3":
        iops = max(iops, GP3_INCLUDED_IOPS, math.ceil(mibps / GP3_MIBPS_PER_IOPS))
        mibps = max(mibps, GP3_INCLUDED_MIBPS)
        size = max(size, math.ceil(iops / GP3_IOPS_PER_GIB))
        one = prices.monthly(kind, size, iops, mibps)
        each = f"{iops:,} IOPS and {mibps:,} MiB/s"
    else:
        iops = max(iops, math.ceil(mibps / IO2_MIBPS_PER_IOPS))
        size = max(size, math.ceil(iops / IO2_IOPS_PER_GIB))
        one = prices.monthly(kind, size, iops)
        each = f"{iops:,} IOPS"
    cost = None if one is None else round(one * n, 2)
    delta = round(cost - now, 2) if cost is not None and now is not None else None
    each_volume = replace(
        volume,
        size_gib=size,
        iops=iops,
        throughput_mibps=mibps if kind == "gp3" else volume.throughput_mibps,
    )
    return Remedy(
        f"Stripe over {n} {kind} volumes of {size:,} GiB with {each} each (RAID 0 on "
        f"{volume.attached_to}; a new set, the data copied over): {kind} stops at "
        f"{units.iops(max_iops)} and {max_mibps:,.0f} MiB/s a volume{_then(instance)}",
        cost,
        delta,
        change=_change(volume, each_volume, n),
    )


def _then(instance: ResourceState | None) -> str:
    """The instance limits a striped set meets next."""
    if instance is None or instance.envelope is None:
        return ""
    envelope = instance.envelope
    return (
        f"; then {instance.ref.resource_id}'s EBS limits bind: "
        f"{units.iops(envelope.iops)}, {units.mbps(envelope.throughput_bps)}"
    )


def _provisioned(
    volume: Volume, need: _Need, prices: PriceList, now: float | None
) -> Remedy | None:
    if volume.volume_type == "io2":
        per_gib, ceiling = IO2_IOPS_PER_GIB, IO2_MAX_IOPS
        if need.mibps > IO2_MAX_MIBPS:
            return None  # more IOPS do not lift io2's 4,000 MiB/s
        iops = max(need.iops, need.mibps / IO2_MIBPS_PER_IOPS)
    else:
        per_gib, ceiling = IO1_IOPS_PER_GIB, IO1_MAX_IOPS
        if need.mibps > IO1_MAX_MIBPS:
            return None
        iops = max(need.iops, _io1_iops_for(need.mibps))
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
        volume,
        volume.volume_type,
        size,
        target,
    )


def _hdd(volume: Volume, need: _Need, prices: PriceList, now: float | None) -> list[Remedy]:
    out = []
    mibps = need.hdd_mibps
    st1_size = max(volume.size_gib, ST1_MIN_GIB, nice_up(mibps / ST1_MIBPS_PER_TIB * 1024))
    same = volume.volume_type == "st1" and st1_size == volume.size_gib
    if mibps <= ST1_MAX_MIBPS and st1_size <= MAX_VOLUME_GIB and not same:
        verb = "Grow to" if volume.volume_type == "st1" else "Move to st1 and grow to"
        if st1_size == volume.size_gib:
            verb = "Move to st1 at"
        out.append(
            _priced(
                f"{verb} {st1_size:,} GiB "
                f"({min(ST1_MIBPS_PER_TIB * st1_size / 1024, ST1_MAX_MIBPS):,.0f} "
                f"MiB/s baseline), {MODIFY_NOTE}",
                prices,
                now,
                volume,
                "st1",
                st1_size,
            )
        )
    gp3 = _gp3(volume, need, prices, now)
    if gp3 is not None:
        out.append(gp3)
    return out


def for_volume(
    finding: Finding,
    state: ResourceState,
    prices: PriceList,
    at: datetime,
    instance: ResourceState | None = None,
) -> list[Remedy]:
    """`instance`: the state of the instance the volume is attached to, where known."""
    info = (
        instance.resource.type_info
        if instance and isinstance(instance.resource, Instance)
        else None
    )
    nitro = info.nitro if info is not None else None
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
                options += [
                    _grow_gp2(volume, need, prices, now),
                    _refill_now(volume, finding, prices, now),
                ]
        case "gp3":
            options += [_gp3(volume, need, prices, now)]
            if need.iops > GP3_MAX_IOPS or need.mibps > GP3_MAX_MIBPS:
                options += [
                    _to_io2(volume, need, prices, now, nitro),
                    _stripe(volume, need, prices, now, (GP3_MAX_IOPS, GP3_MAX_MIBPS), instance),
                ]
        case "io1":
            options += [
                _provisioned(volume, need, prices, now),
                _to_io2(volume, need, prices, now, nitro),
                _to_nitro(volume, state),
            ]
        case "io2":
            options += [_provisioned(volume, need, prices, now), _to_nitro(volume, state)]
            if need.iops > IO2_MAX_IOPS or need.mibps > IO2_MAX_MIBPS:
                options += [
                    _stripe(volume, need, prices, now, (IO2_MAX_IOPS, IO2_MAX_MIBPS), instance)
                ]
        case "st1" | "sc1":
            options += _hdd(volume, need, prices, now)
    found = [o for o in options if o is not None]
    return sorted(found, key=lambda o: (o.monthly_cost is None, o.monthly_cost or 0.0))


def remedies(finding: Finding, snapshot: Snapshot, catalog: Catalog) -> tuple[Remedy, ...]:
    state = snapshot.get(finding.resource.region, finding.resource.resource_id)
    if state is None:
        return ()
    if state.is_db:
        found = for_db(finding, state, snapshot, catalog)
    elif finding.bottleneck.owner is ResourceType.INSTANCE:
        found = for_instance(finding, state, snapshot, catalog)
        nxt = finding.next_bottleneck
        volume = snapshot.get(state.ref.region, nxt.resource_id) if nxt is not None else None
        if volume is not None:
            found = _with_joint(found, finding, volume, state, snapshot, catalog)
    else:
        found = _for_volume(finding, state, snapshot, catalog)
    return tuple(replace(o, currency=catalog.currency) for o in found)


def _with_joint(
    found: list[Remedy],
    finding: Finding,
    volume: ResourceState,
    instance: ResourceState,
    snapshot: Snapshot,
    catalog: Catalog,
) -> list[Remedy]:
    """The options, with the joint fix second where one limit follows the other closely: the
    cheapest single fix stays first, the change that moves both walls right after it."""

    def volume_fixes(f: Finding, v: ResourceState, i: ResourceState) -> list[Remedy]:
        return for_volume(f, v, catalog.prices, snapshot.data_end, i)

    kind = volume.resource.volume_type if isinstance(volume.resource, Volume) else ""
    both = joint(finding, volume, instance, snapshot, catalog, volume_fixes, CEILINGS.get(kind))
    if both is None:
        return found
    return [*found[:1], both, *found[1:]]


def _for_volume(
    finding: Finding, state: ResourceState, snapshot: Snapshot, catalog: Catalog
) -> list[Remedy]:
    instances = [s for s in snapshot.related(state) if isinstance(s.resource, Instance)]
    instance = instances[0] if instances else None
    options = for_volume(finding, state, catalog.prices, snapshot.data_end, instance)
    suffix = _bounded_by(finding)
    volume = state.resource
    context = (
        _modification_context(volume, snapshot.generated_at) if isinstance(volume, Volume) else ""
    )
    own = finding.next_bottleneck is not None and (
        finding.next_bottleneck.resource_id == finding.resource.resource_id
    )
    found = [
        replace(
            o,
            # A limit of the volume as it is does not bind a volume of another type or a set.
            action=(o.action if own and o.action.startswith(NEW_VOLUME) else o.action + suffix)
            + ("" if o.action.startswith(NOT_A_MODIFICATION) else context),
        )
        for o in options
    ]
    if instance is None:
        return found
    unnamed = _to_nitro(volume, state) if isinstance(volume, Volume) else None
    if isinstance(volume, Volume) and unnamed is not None:
        # The instance is the fix: name the Nitro types, first, where the region's are known,
        # in place of the sentence that names none.
        named = to_nitro(volume, instance, snapshot, catalog)
        if named:
            found = named + [o for o in found if not o.action.startswith(unnamed.action)]
    return _with_joint(found, finding, state, instance, snapshot, catalog)


NEW_VOLUME = ("Move to io2", "Stripe over")
"""Fixes that replace the volume's type or the volume itself."""
NOT_A_MODIFICATION = ("Stripe over", "Move i-")
"""Fixes that do not modify the volume: a new set of volumes, another instance."""
MODIFICATIONS_PER_DAY = 4
"""AWS: at most four modifications of a volume in any 24 hours, each after the previous one
has completed (DOMAIN.md)."""


def _modification_context(volume: Volume, at: datetime) -> str:
    """What a fix that modifies the volume must wait for: one under way, or the day's four."""
    under_way = next((m for m in volume.modifications if m.under_way), None)
    if under_way is not None:
        progress = f", {under_way.progress} %" if under_way.progress is not None else ""
        return (
            f"; a modification is under way ({under_way.state}{progress}, to "
            f"{under_way.target or 'new values'}, since "
            f"{under_way.started.astimezone(UTC):%H:%M} UTC): until it completes the volume's "
            "limits lie between the old and the new, and the next must wait for it"
        )
    day = [m for m in volume.modifications if at - timedelta(hours=24) < m.started <= at]
    if not day:
        return ""
    left = MODIFICATIONS_PER_DAY - len(day)
    if left > 0:
        return f"; {left} of its {MODIFICATIONS_PER_DAY} modifications in 24 h left"
    oldest = min(m.started for m in day)
    return (
        f"; its {MODIFICATIONS_PER_DAY} modifications in 24 h are spent: the next is possible "
        f"from {(oldest + timedelta(hours=24)).astimezone(UTC):%a %H:%M} UTC"
    )


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
