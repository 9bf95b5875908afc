"""The performance envelope of each EBS volume type and each instance (DOMAIN.md, "Volumes").

An envelope holds two levels: the cap while burst credits last and the cap once they are gone.
Resources without a bucket have the same value at both levels.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from analyzer.model.resources import Instance, InstanceType, Volume
from analyzer.model.units import GIB, KIB, MIB, TIB, Unit

GP2_BUCKET_CREDITS = 5_400_000.0
GP2_BURST_IOPS = 3_000.0
# The published figures each volume type is modelled and sized from (Amazon EBS User Guide,
# "Amazon EBS volume types": General Purpose SSD, Provisioned IOPS SSD, Throughput Optimized
# HDD), in one place: the envelopes below and the fixes' sizing read them.
GP3_INCLUDED_IOPS, GP3_INCLUDED_MIBPS = 3_000, 125
GP3_MAX_IOPS, GP3_IOPS_PER_GIB = 80_000, 500
GP3_MAX_MIBPS, GP3_MIBPS_PER_IOPS = 2_000, 0.25
IO1_MAX_IOPS, IO1_IOPS_PER_GIB, IO1_MAX_MIBPS = 64_000, 50, 1_000
IO2_MAX_IOPS, IO2_IOPS_PER_GIB, IO2_MAX_MIBPS = 256_000, 1_000, 4_000
IO2_MIBPS_PER_IOPS = 0.256
ST1_MIBPS_PER_TIB, ST1_MAX_MIBPS, ST1_MIN_GIB = 40, 500, 125
MAX_VOLUME_GIB = 16_384
"""gp2, io1, st1 and sc1 (gp3 and io2 reach 64 TiB)."""
SSD_IO_BYTES = 256 * KIB
HDD_IO_BYTES = 1 * MIB
MERGED_ABOVE = 1.1
"""st1 and sc1 merge contiguous I/O into 1 MiB operations before counting them (AWS's st1/sc1
documentation: eight sequential 128 KiB I/Os count as one). CloudWatch counts the operations
the instance submitted, before merging, so it cannot show contiguity. The evidence it can
show: submitted operations clearly above the volume's IOPS cap (this share of it), which only
merging makes possible. Below that the data cannot tell sequential from random I/O."""


@dataclass(frozen=True, slots=True)
class CreditBucket:
    """A token bucket: it fills at `baseline` and drains by whatever is consumed above it.

    gp2 counts I/O credits (unit IOPS); st1 and sc1 count throughput credits in bytes
    (unit bytes/s). `burst` is the rate the resource may run at while credits remain.
    """

    capacity: float
    baseline: float
    burst: float
    unit: Unit
    io_cap: float | None = None
    """st1/sc1: the IOPS cap their merged operations count against."""

    def consumption(self, iops: float, bytes_per_second: float) -> float:
        """The most the bucket can be charged at these rates, with AWS's I/O counting rules:
        the high end of `charge_range`."""
        return self.charge_range(iops, bytes_per_second)[1]

    def charge_range(self, iops: float, bytes_per_second: float) -> tuple[float, float]:
        """The least and the most the bucket can be charged at these rates.

        gp2 counts an I/O above 256 KiB as several: one figure. st1/sc1 charge merged
        sequential I/O by its bytes (the low end) and each small random I/O as a whole MiB
        (the high end); submitted operations above the cap prove merging (`MERGED_ABOVE`).
        """
        if self.unit is Unit.IOPS:
            charge = max(iops, bytes_per_second / SSD_IO_BYTES)
            return charge, charge
        if merged(iops, self.io_cap):
            return bytes_per_second, bytes_per_second
        return bytes_per_second, max(bytes_per_second, iops * HDD_IO_BYTES)

    def drain(self, consumption: float) -> float:
        """Credits lost per second at this consumption (negative: the bucket is filling)."""
        return consumption - self.baseline

    def seconds_to_empty(self, balance_percent: float, consumption: float) -> float | None:
        """Seconds until empty at a steady consumption; None while the bucket is not draining."""
        drain = self.drain(consumption)
        if drain <= 0:
            return None
        return self.credits(balance_percent) / drain

    def credits(self, balance_percent: float) -> float:
        return min(max(balance_percent, 0.0), 100.0) / 100.0 * self.capacity

    @property
    def full_burst_seconds(self) -> float | None:
        """How long a full bucket lasts at the burst rate (AWS's burst duration table)."""
        if self.burst <= self.baseline:
            return None
        return self.capacity / (self.burst - self.baseline)

    @property
    def refill_seconds(self) -> float:
        """From empty to full with no I/O."""
        return self.capacity / self.baseline


@dataclass(frozen=True, slots=True)
class Envelope:
    """What caps a resource's IOPS and throughput, with and without burst credits."""

    iops: float
    throughput_bps: float
    baseline_iops: float
    baseline_throughput_bps: float
    bucket: CreditBucket | None = None
    approximate: bool = False
    """True where AWS publishes no exact figure (magnetic `standard` volumes)."""
    io_unit_bytes: float | None = None
    """The largest I/O counted as one against the IOPS limit (256 KiB SSD, 1 MiB HDD)."""
    merges: bool = False
    """st1/sc1: contiguous I/O is merged into operations of `io_unit_bytes` (`MERGED_ABOVE`)."""

    def counted_iops(self, iops: float, bytes_per_second: float) -> float:
        """IOPS as the limit counts them: an I/O larger than the unit counts as several.

        On st1/sc1, submitted operations clearly above the cap were merged, and count by
        their bytes. At or below it they count as submitted: a rate held at the cap is what
        unmerged I/O does, and merged I/O would not stop there.
        """
        if self.io_unit_bytes is None:
            return iops
        by_size = bytes_per_second / self.io_unit_bytes
        if self.merges and merged(iops, self.iops):
            return by_size
        return max(iops, by_size)

    def iops_limit(self, credits_left: bool = True) -> float:
        return self.iops if credits_left else self.baseline_iops

    def throughput_limit(self, credits_left: bool = True) -> float:
        return self.throughput_bps if credits_left else self.baseline_throughput_bps

    @property
    def bursts(self) -> bool:
        return self.iops > self.baseline_iops or self.throughput_bps > self.baseline_throughput_bps


def merged(iops: float, cap: float | None) -> bool:
    """Whether an HDD's submitted operations prove that its I/O was merged."""
    return cap is not None and iops > MERGED_ABOVE * cap


GP2_IOPS_PER_GIB = 3.0
GP2_MIN_BASELINE_IOPS = 100.0
GP2_MAX_BASELINE_IOPS = 16_000.0


def gp2_baseline(size_gib: int) -> float:
    """3 IOPS per GiB, at least 100 and at most 16,000 (Amazon EBS User Guide, General
    Purpose SSD volumes, gp2)."""
    return min(max(GP2_IOPS_PER_GIB * size_gib, GP2_MIN_BASELINE_IOPS), GP2_MAX_BASELINE_IOPS)


def gp2_size_for(iops: float) -> int:
    """The smallest gp2 size whose baseline carries `iops` (beyond 16,000 none does: the
    largest, 5,334 GiB, is returned, and its baseline says so)."""
    if iops <= GP2_MIN_BASELINE_IOPS:
        return 1
    wanted = min(iops, GP2_MAX_BASELINE_IOPS)
    return math.ceil(wanted / GP2_IOPS_PER_GIB - 1e-9)


def gp2(size_gib: int) -> Envelope:
    baseline = gp2_baseline(size_gib)
    non_burst_cap = 128 * MIB if size_gib < 334 else 250 * MIB
    if baseline >= GP2_BURST_IOPS:
        return Envelope(baseline, 250 * MIB, baseline, 250 * MIB, io_unit_bytes=SSD_IO_BYTES)
    burst_throughput = 128 * MIB if size_gib <= 170 else 250 * MIB
    bucket = CreditBucket(GP2_BUCKET_CREDITS, baseline, GP2_BURST_IOPS, Unit.IOPS)
    return Envelope(
        iops=GP2_BURST_IOPS,
        throughput_bps=burst_throughput,
        baseline_iops=baseline,
        baseline_throughput_bps=min(non_burst_cap, baseline * SSD_IO_BYTES),
        bucket=bucket,
        io_unit_bytes=SSD_IO_BYTES,
    )


def _hdd(
    size_gib: int,
    base_per_tib: float,
    base_max: float,
    burst_per_tib: float,
    burst_max: float,
    max_iops: float,
) -> Envelope:
    tib = size_gib * GIB / TIB
    baseline = min(base_per_tib * tib, base_max) * MIB
    burst = min(burst_per_tib * tib, burst_max) * MIB
    bucket = CreditBucket(size_gib * GIB, baseline, burst, Unit.BYTES_PER_SECOND, max_iops)
    return Envelope(
        max_iops, burst, max_iops, baseline, bucket, io_unit_bytes=HDD_IO_BYTES, merges=True
    )


def st1(size_gib: int) -> Envelope:
    return _hdd(size_gib, ST1_MIBPS_PER_TIB, ST1_MAX_MIBPS, 250, 500, 500)


def sc1(size_gib: int) -> Envelope:
    return _hdd(size_gib, 12, 192, 80, 250, 250)


def gp3(iops: int | None, throughput_mibps: int | None) -> Envelope:
    provisioned_iops = float(iops or GP3_INCLUDED_IOPS)
    throughput = float(throughput_mibps or GP3_INCLUDED_MIBPS) * MIB
    return Envelope(
        provisioned_iops, throughput, provisioned_iops, throughput, io_unit_bytes=SSD_IO_BYTES
    )


XEN_MAX_IOPS = 32_000.0
"""io1 and io2 deliver at most 32,000 IOPS on an instance not built on Nitro, whatever is
provisioned (AWS's Provisioned IOPS SSD documentation; DOMAIN.md)."""


def io1(iops: int, nitro: bool | None = True) -> Envelope:
    effective = float(iops) if nitro is not False else min(float(iops), XEN_MAX_IOPS)
    if effective <= 32_000:
        throughput = min(effective * 256 * KIB, 500 * MIB)
    else:
        throughput = min(effective * 16 * KIB, 1_000 * MIB)
    return Envelope(effective, throughput, effective, throughput, io_unit_bytes=SSD_IO_BYTES)


def io2(iops: int, nitro: bool | None = True) -> Envelope:
    effective = float(iops) if nitro is not False else min(float(iops), XEN_MAX_IOPS)
    throughput = min(IO2_MIBPS_PER_IOPS * MIB * effective, IO2_MAX_MIBPS * MIB)
    return Envelope(effective, throughput, effective, throughput, io_unit_bytes=SSD_IO_BYTES)


def standard() -> Envelope:
    return Envelope(100.0, 90 * MIB, 100.0, 90 * MIB, approximate=True)


def volume_envelope(volume: Volume, instance_type: InstanceType | None = None) -> Envelope | None:
    """The envelope of a volume; io1 and io2 depend on whether its instance is built on
    Nitro (unknown counts as Nitro: every current generation is)."""
    match volume.volume_type:
        case "gp2":
            return gp2(volume.size_gib)
        case "gp3":
            return gp3(volume.iops, volume.throughput_mibps)
        case "io1" if volume.iops:
            return io1(volume.iops, instance_type.nitro if instance_type else None)
        case "io2" if volume.iops:
            return io2(volume.iops, instance_type.nitro if instance_type else None)
        case "st1":
            return st1(volume.size_gib)
        case "sc1":
            return sc1(volume.size_gib)
        case "standard":
            return standard()
    return None


def has_burst_balance(volume: Volume) -> bool:
    """Whether CloudWatch reports BurstBalance for this volume at all: a gp2 being moved to
    gp3 keeps its bucket until the modification is optimizing (`Volume.in_force`)."""
    envelope = volume_envelope(volume.in_force())
    return envelope is not None and envelope.bucket is not None


def instance_envelope(instance: Instance) -> Envelope | None:
    return instance_type_envelope(instance.type_info)


def instance_type_envelope(info: InstanceType | None) -> Envelope | None:
    """Instance limits are quoted in MB/s; a type without EBS-optimized figures has none."""
    if info is None or info.maximum_iops is None or info.maximum_throughput_bps is None:
        return None
    baseline_iops = info.baseline_iops if info.baseline_iops is not None else info.maximum_iops
    baseline_bps = (
        info.baseline_throughput_bps
        if info.baseline_throughput_bps is not None
        else info.maximum_throughput_bps
    )
    return Envelope(info.maximum_iops, info.maximum_throughput_bps, baseline_iops, baseline_bps)


INSTANCE_BURST_S = 30 * 60.0
"""An instance type whose EBS baseline is below its maximum runs at its maximum for at least 30
minutes once every 24 hours (Amazon EC2 User Guide, "Amazon EBS-optimized instance types"): its
buckets hold that long a run above the baseline."""
ALARM_PERCENT = 20.0
"""The `BurstBalance < 20 %` alarm operators run, which a warning must come before."""


def reach(envelopes: Iterable[Envelope | None]) -> tuple[float, float] | None:
    """The most IOPS and bytes per second these volumes can do together: the sum of their
    limits while credits last. None where one's limits are unknown."""
    iops = bps = 0.0
    for envelope in envelopes:
        if envelope is None:
            return None
        iops += envelope.iops
        bps += envelope.throughput_bps
    return iops, bps


def binding_units(instance: Envelope | None, volumes: tuple[float, float] | None) -> set[Unit]:
    """The units in which an instance's EBS limits can bind the I/O of volumes that reach
    `volumes` together: those in which they can do more than its baseline (and so drain its
    bucket, or reach its cap where it has none). An instance's I/O is its volumes' (Amazon EC2
    User Guide, "Instance metrics": EBSReadOps and the others are the sums over every attached
    volume), so a limit that their own limits keep it under cannot bind."""
    if instance is None or volumes is None:
        return {Unit.IOPS, Unit.BYTES_PER_SECOND}
    iops, bps = volumes
    out = set()
    if iops > instance.baseline_iops:
        out.add(Unit.IOPS)
    if bps > instance.baseline_throughput_bps:
        out.add(Unit.BYTES_PER_SECOND)
    return out


def full_to_alarm_s(bucket: CreditBucket) -> float | None:
    """How soon a full bucket falls to the alarm's 20 % at its burst rate: the shortest time
    in which an idle resource can come to need a warning. None for a bucket that cannot
    drain."""
    full = bucket.full_burst_seconds
    return None if full is None else full * (1 - ALARM_PERCENT / 100)


def instance_full_to_alarm_s(
    instance: Envelope | None, volumes: tuple[float, float] | None
) -> float | None:
    """The same for an instance's EBS buckets, drained by volumes that reach `volumes`
    together: each holds `INSTANCE_BURST_S` at the maximum, and drains at what the volumes can
    do above the baseline, the maximum at most. None where no bucket can drain."""
    if instance is None or not instance.bursts:
        return None
    iops, bps = volumes if volumes is not None else (instance.iops, instance.throughput_bps)
    found = []
    for top, base, demand in (
        (instance.iops, instance.baseline_iops, iops),
        (instance.throughput_bps, instance.baseline_throughput_bps, bps),
    ):
        drain = min(demand, top) - base
        if top > base and drain > 0:
            found.append(INSTANCE_BURST_S * (top - base) / drain)
    return min(found) * (1 - ALARM_PERCENT / 100) if found else None
