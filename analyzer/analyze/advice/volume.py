"""What to change about a volume's finding: its modifications, each with its new monthly price.

Options are sized for what the workload needs now, and never beyond the next bottleneck: paying
for IOPS that the next limit will not let through buys nothing. Volume changes apply online
(ModifyVolume), one at a time and at most four per volume in 24 hours.
"""

from __future__ import annotations

import math
from datetime import datetime

from analyzer.analyze.advice.facts import MODIFY_NOTE, io1_iops_for
from analyzer.analyze.advice.modification import priced
from analyzer.analyze.advice.past_ceiling import stripe, to_io2
from analyzer.analyze.advice.sizing import Need, needed, nice_up
from analyzer.analyze.prices import PriceList
from analyzer.model import limits, units
from analyzer.model.findings import Bottleneck, Finding, Remedy, RemedyKind
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
)
from analyzer.model.resources import Instance, Volume
from analyzer.model.state import ResourceState
from analyzer.model.units import MIB


def _gp3(volume: Volume, need: Need, prices: PriceList, now: float | None) -> Remedy | None:
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
    return priced(
        f"{verb} {what}, {MODIFY_NOTE}", prices, now, volume, "gp3", volume.size_gib, iops, mibps
    )


def _grow_gp2(volume: Volume, need: Need, prices: PriceList, now: float | None) -> Remedy | None:
    size = max(
        volume.size_gib + 1,
        nice_up(limits.gp2_size_for(need.iops)),
        nice_up(limits.gp2_size_for(need.mibps * MIB / SSD_IO_BYTES)),
    )
    if size > MAX_VOLUME_GIB:
        return None
    baseline = limits.gp2_baseline(size)
    return priced(
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
    before = finding.rate_before_empty
    if before is not None:
        rate = before
    elif finding.credit is not None and finding.credit.empty:
        rate = bucket.burst  # throttled, its demand unseen: at most a full burst
    else:
        rate = finding.observed
    if rate <= bucket.baseline:
        return None
    lasts = (
        f"{units.duration(bucket.capacity / (rate - bucket.baseline))} of burst at "
        f"{units.iops(rate)}"
    )
    return priced(
        f"Now, to buy time: grow to {size:,} GiB; a grown gp2 volume's bucket comes back "
        f"full (as observed), {lasts}; one of the volume's 4 modifications in 24 h, and the "
        "lasting fix waits until it has completed",
        prices,
        now,
        volume,
        "gp2",
        size,
        kind=RemedyKind.STOPGAP,
    )


def to_nitro_in_words(volume: Volume, state: ResourceState) -> Remedy | None:
    """io1/io2 provisioned above what a non-Nitro instance delivers: the instance is the fix."""
    envelope = state.envelope
    if envelope is None or not volume.iops or envelope.iops >= volume.iops:
        return None
    return Remedy(
        f"Move {volume.attached_to} to an instance type built on Nitro: off Nitro "
        f"{volume.volume_type} delivers at most {units.iops(XEN_MAX_IOPS)}, on Nitro the "
        f"{units.iops(volume.iops)} provisioned (and already paid for)",
        kind=RemedyKind.INSTANCE,
    )


def _provisioned(volume: Volume, need: Need, prices: PriceList, now: float | None) -> Remedy | None:
    if volume.volume_type == "io2":
        per_gib, ceiling = IO2_IOPS_PER_GIB, IO2_MAX_IOPS
        if need.mibps > IO2_MAX_MIBPS:
            return None  # more IOPS do not lift io2's 4,000 MiB/s
        iops = max(need.iops, need.mibps / IO2_MIBPS_PER_IOPS)
    else:
        per_gib, ceiling = IO1_IOPS_PER_GIB, IO1_MAX_IOPS
        if need.mibps > IO1_MAX_MIBPS:
            return None
        iops = max(need.iops, io1_iops_for(need.mibps))
    target = nice_up(iops)
    current = volume.iops or 0
    if target <= current:
        return None
    size = max(volume.size_gib, math.ceil(target / per_gib))
    if target > ceiling:
        return None
    grow = f" and grow to {size:,} GiB" if size > volume.size_gib else ""
    return priced(
        f"Provision {target:,} IOPS{grow}, {MODIFY_NOTE}",
        prices,
        now,
        volume,
        volume.volume_type,
        size,
        target,
    )


def _hdd(volume: Volume, need: Need, prices: PriceList, now: float | None) -> list[Remedy]:
    out = []
    mibps = need.hdd_mibps
    st1_size = max(volume.size_gib, ST1_MIN_GIB, nice_up(mibps / ST1_MIBPS_PER_TIB * 1024))
    same = volume.volume_type == "st1" and st1_size == volume.size_gib
    if mibps <= ST1_MAX_MIBPS and st1_size <= MAX_VOLUME_GIB and not same:
        verb = "Grow to" if volume.volume_type == "st1" else "Move to st1 and grow to"
        if st1_size == volume.size_gib:
            verb = "Move to st1 at"
        out.append(
            priced(
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
    need = needed(finding, state, at)
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
                    to_io2(volume, need, prices, now, nitro),
                    stripe(volume, need, prices, now, (GP3_MAX_IOPS, GP3_MAX_MIBPS), instance),
                ]
        case "io1":
            options += [
                _provisioned(volume, need, prices, now),
                to_io2(volume, need, prices, now, nitro),
                to_nitro_in_words(volume, state),
            ]
        case "io2":
            options += [_provisioned(volume, need, prices, now), to_nitro_in_words(volume, state)]
            if need.iops > IO2_MAX_IOPS or need.mibps > IO2_MAX_MIBPS:
                options += [
                    stripe(volume, need, prices, now, (IO2_MAX_IOPS, IO2_MAX_MIBPS), instance)
                ]
        case "st1" | "sc1":
            options += _hdd(volume, need, prices, now)
    found = [o for o in options if o is not None]
    return sorted(found, key=lambda o: (o.monthly_cost is None, o.monthly_cost or 0.0))
