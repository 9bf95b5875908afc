"""What AWS allows a volume modification: online, one at a time, at most four in 24 hours;
how far one volume of a type goes; what io1's IOPS carry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from analyzer.model.limits import (
    GP3_MAX_IOPS,
    GP3_MAX_MIBPS,
    IO1_MAX_IOPS,
    IO1_MAX_MIBPS,
    IO2_MAX_IOPS,
    IO2_MAX_MIBPS,
    SSD_IO_BYTES,
)
from analyzer.model.resources import Volume
from analyzer.model.units import KIB, MIB

MODIFY_NOTE = "online (ModifyVolume, at most 4 per volume in 24 h)"
CEILINGS = {
    "gp3": (GP3_MAX_IOPS, GP3_MAX_MIBPS),
    "io1": (IO1_MAX_IOPS, IO1_MAX_MIBPS),
    "io2": (IO2_MAX_IOPS, IO2_MAX_MIBPS),
}
"""The most IOPS and MiB/s one volume of a type carries, where a modification can get it
there (gp2 and the HDD types are moved to gp3 or st1 instead)."""
IO1_SMALL_IO_FROM_IOPS = 32_001


def io1_iops_for(mibps: float) -> float:
    """The io1 IOPS that carry `mibps`: 256 KiB a second per IOPS up to 500 MiB/s; beyond
    that only above 32,000 IOPS (Nitro), at 16 KiB per IOPS, up to 1,000 MiB/s at 64,000."""
    if mibps <= 500:
        return mibps * MIB / SSD_IO_BYTES
    return max(float(IO1_SMALL_IO_FROM_IOPS), mibps * MIB / (16 * KIB))


MODIFICATIONS_PER_DAY = 4
"""AWS: at most four modifications of a volume in any 24 hours, each after the previous one
has completed (DOMAIN.md)."""


def modification_context(volume: Volume, at: datetime) -> str:
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
