"""A way past a volume type's own ceiling: io2, or a set of volumes striped together."""

from __future__ import annotations

import math
from dataclasses import replace

from analyzer.analyze.advice.facts import MODIFY_NOTE
from analyzer.analyze.advice.modification import priced, volume_change
from analyzer.analyze.advice.sizing import Need, nice_up
from analyzer.analyze.prices import PriceList
from analyzer.model import units
from analyzer.model.findings import Remedy, RemedyKind
from analyzer.model.limits import (
    GP3_INCLUDED_IOPS,
    GP3_INCLUDED_MIBPS,
    GP3_IOPS_PER_GIB,
    GP3_MIBPS_PER_IOPS,
    IO2_IOPS_PER_GIB,
    IO2_MAX_IOPS,
    IO2_MAX_MIBPS,
    IO2_MIBPS_PER_IOPS,
    XEN_MAX_IOPS,
)
from analyzer.model.resources import Volume
from analyzer.model.state import ResourceState


def to_io2(
    volume: Volume, need: Need, prices: PriceList, now: float | None, nitro: bool | None
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
    return priced(
        f"Move to io2 with {target:,} IOPS ({mibps:,.0f} MiB/s){grow}{nitro_note}, {MODIFY_NOTE}",
        prices,
        now,
        volume,
        "io2",
        size,
        target,
        kind=RemedyKind.PAST_CEILING,
    )


STRIPES_AT_MOST = 8
"""More volumes than this in one RAID 0 set is a storage design, not a fix."""


def stripe(
    volume: Volume,
    need: Need,
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
        change=volume_change(volume, each_volume, n),
        kind=RemedyKind.STRIPE,
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
