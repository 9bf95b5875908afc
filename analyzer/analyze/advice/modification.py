"""A volume modification, priced, with the change it makes in fields a program reads."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from analyzer.analyze.prices import PriceList
from analyzer.analyze.sold import configuration
from analyzer.model.findings import Change, Remedy, RemedyKind
from analyzer.model.limits import volume_envelope
from analyzer.model.resources import ResourceType, Volume
from analyzer.model.units import MIB


def priced(
    action: str,
    prices: PriceList,
    now: float | None,
    volume: Volume,
    volume_type: str,
    size: int,
    iops: float | None = None,
    mibps: float | None = None,
    kind: RemedyKind = RemedyKind.MODIFY,
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
    return Remedy(action, cost, delta, change=volume_change(volume, after), kind=kind)


def volume_change(volume: Volume, after: Volume, volumes: int = 1) -> Change:
    """From the volume as it is to `after` (`volumes` of them, striped), with the limits the
    result has: its IOPS and MiB/s with credits, and its baseline where it bursts."""
    to: dict[str, Any] = configuration(after)
    envelope = volume_envelope(after)
    if volumes > 1:
        to["volumes"] = volumes
    if envelope is not None:
        to["iops_limit"] = envelope.iops * volumes
        to["throughput_limit_mibps"] = round(envelope.throughput_bps * volumes / MIB, 1)
        if envelope.bursts:
            to["baseline_iops_limit"] = envelope.baseline_iops * volumes
    return Change(ResourceType.VOLUME, volume.volume_id, configuration(volume), to)
