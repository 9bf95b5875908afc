"""An RDS instance's storage as RDS documents it, per engine, storage type and size.

Source: the Amazon RDS User Guide, "Amazon RDS DB instance storage" (the General Purpose SSD
and Provisioned IOPS SSD tables), and DOMAIN.md. RDS stripes Db2, MariaDB, MySQL and
PostgreSQL storage over four EBS volumes from 400 GiB, Oracle's from 200 GiB; SQL Server
keeps one volume (up to 16 TiB). RDS's ranges are not one EBS volume's rules: Provisioned
IOPS storage reaches 256,000 IOPS and 4,000 MiB/s on the striped sizes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from analyzer.model.limits import (
    SSD_IO_BYTES,
    CreditBucket,
    Envelope,
    gp2,
    io1,
    io2,
    standard,
)
from analyzer.model.resources import DbInstance
from analyzer.model.units import MIB

STRIPED_FROM_GIB = {"db2": 400, "mariadb": 400, "mysql": 400, "postgres": 400, "oracle": 200}
"""RDS spreads storage over four volumes from these sizes (by engine family)."""

RDS_STRIPES = 4


@dataclass(frozen=True, slots=True)
class Ceiling:
    """The most RDS publishes for one engine family, storage type and size band."""

    iops: float
    throughput_mibps: float


PROVISIONED_STRIPED = Ceiling(256_000, 4_000)
"""io1/io2 on the striped sizes of Db2, MariaDB, MySQL, PostgreSQL and Oracle."""
PROVISIONED_SINGLE = Ceiling(64_000, 500)
"""io1/io2 below the striping threshold: 500 MiB/s (the IOPS are bounded by the 50 IOPS per
GiB ratio first: 19,950 at 399 GiB)."""
PROVISIONED_SQLSERVER = Ceiling(64_000, 1_000)
"""io1/io2 on SQL Server: one volume, up to 64,000 IOPS and 1,000 MiB/s."""
PROVISIONED_LEAST_IOPS = 1_000
"""The fewest IOPS RDS provisions on io1 and io2 (Amazon RDS User Guide, "Provisioned IOPS SSD
storage": 1,000 to 256,000)."""
IOPS_PER_GIB = {"sqlserver": (1.0, 50.0)}
IOPS_PER_GIB_OTHERS = (0.5, 50.0)
"""Provisioned IOPS as a multiple of the storage: 0.5 to 50 for Db2, MariaDB, MySQL, Oracle and
PostgreSQL, 1 to 50 for SQL Server (Amazon RDS API Reference, CreateDBInstance, `Iops`)."""
GP2_STRIPED_MIBPS = (500, 1_000)
"""gp2 on the striped sizes: 500 to 1,000 MiB/s of throughput, 1,200 to 64,000 IOPS of
baseline. Not the product of the baseline IOPS and 256 KiB: the IOPS limit bounds large I/O
on its own."""
GP3_STRIPED = Ceiling(64_000, 4_000)
GP3_SQLSERVER = Ceiling(16_000, 1_000)


def provisioned_range(db: DbInstance) -> tuple[int, int]:
    """The fewest and the most IOPS RDS provisions on this instance's io1 or io2 storage, at
    its size: RDS's least, its ratios to the storage, its ceiling for the engine and size."""
    low_ratio, high_ratio = IOPS_PER_GIB.get(family(db.engine), IOPS_PER_GIB_OTHERS)
    if family(db.engine) == "sqlserver":
        ceiling = PROVISIONED_SQLSERVER
    elif rds_stripes(db.engine, db.allocated_gib) > 1:
        ceiling = PROVISIONED_STRIPED
    else:
        ceiling = PROVISIONED_SINGLE
    low = max(PROVISIONED_LEAST_IOPS, math.ceil(low_ratio * db.allocated_gib))
    high = int(min(ceiling.iops, high_ratio * db.allocated_gib))
    return low, high


def gp3_included(db: DbInstance) -> tuple[int, int]:
    """What gp3 includes on this instance: 3,000 IOPS and 125 MiB/s a volume, four volumes on
    the striped sizes (`_gp3`)."""
    stripes = rds_stripes(db.engine, db.allocated_gib)
    return 3_000 * stripes, 125 * stripes


def gp3_provisioned(db: DbInstance) -> bool:
    """Whether RDS lets gp3 performance be provisioned above what it includes: on the striped
    sizes, and on SQL Server."""
    return family(db.engine) == "sqlserver" or rds_stripes(db.engine, db.allocated_gib) > 1


def gp3_ceiling(db: DbInstance) -> Ceiling:
    """The most gp3 provisions on this engine."""
    return GP3_SQLSERVER if family(db.engine) == "sqlserver" else GP3_STRIPED


def family(engine: str) -> str:
    """mysql, mariadb, postgres, oracle, sqlserver or db2: RDS's tables go by engine family."""
    for name in ("oracle", "sqlserver", "db2"):
        if engine.startswith(name) or engine.startswith(f"custom-{name}"):
            return name
    return engine


def rds_stripes(engine: str, allocated_gib: int) -> int:
    threshold = STRIPED_FROM_GIB.get(family(engine))
    return RDS_STRIPES if threshold is not None and allocated_gib >= threshold else 1


def _times(envelope: Envelope, n: int) -> Envelope:
    """n identical volumes striped together: n times every rate and every bucket."""
    bucket = envelope.bucket
    if bucket is not None:
        bucket = CreditBucket(
            bucket.capacity * n,
            bucket.baseline * n,
            bucket.burst * n,
            bucket.unit,
            None if bucket.io_cap is None else bucket.io_cap * n,
        )
    return Envelope(
        envelope.iops * n,
        envelope.throughput_bps * n,
        envelope.baseline_iops * n,
        envelope.baseline_throughput_bps * n,
        bucket,
        envelope.approximate,
        envelope.io_unit_bytes,
        envelope.merges,
    )


def _within(envelope: Envelope, ceiling: Ceiling) -> Envelope:
    iops = min(envelope.iops, ceiling.iops)
    throughput = min(envelope.throughput_bps, ceiling.throughput_mibps * MIB)
    return Envelope(iops, throughput, iops, throughput, io_unit_bytes=SSD_IO_BYTES)


def _gp2(db: DbInstance, stripes: int) -> Envelope:
    if stripes == 1:
        return gp2(db.allocated_gib)
    striped = _times(gp2(db.allocated_gib // stripes), stripes)
    low, high = GP2_STRIPED_MIBPS
    throughput = min(max(striped.throughput_bps, low * MIB), high * MIB)
    return Envelope(
        striped.iops,
        throughput,
        striped.baseline_iops,
        throughput,
        striped.bucket,
        io_unit_bytes=SSD_IO_BYTES,
    )


def _gp3(db: DbInstance, stripes: int) -> Envelope:
    """gp3 includes 3,000 IOPS and 125 MiB/s, four times that on the striped sizes, and
    performance provisioned above it."""
    included_iops, included_mibps = 3_000 * stripes, 125 * stripes
    iops = float(max(db.iops or 0, included_iops))
    throughput = float(max(db.throughput_mibps or 0, included_mibps)) * MIB
    ceiling = gp3_ceiling(db)
    return _within(Envelope(iops, throughput, iops, throughput), ceiling)


def _provisioned(db: DbInstance, iops: int, stripes: int) -> Envelope:
    """io1/io2: the provisioned IOPS spread over the stripes, each volume with its type's
    throughput per IOPS, within RDS's published ceiling for the engine and size."""
    volume = io1 if db.storage_type == "io1" else io2
    if family(db.engine) == "sqlserver":
        ceiling = PROVISIONED_SQLSERVER
    elif stripes > 1:
        ceiling = PROVISIONED_STRIPED
    else:
        ceiling = PROVISIONED_SINGLE
    return _within(_times(volume(max(iops // stripes, 1)), stripes), ceiling)


LOG_VOLUME_GIB = 1_024
LOG_VOLUME_IOPS = 3_000
"""A Dedicated Log Volume: 1,024 GiB and 3,000 Provisioned IOPS, whatever the storage (Amazon
RDS User Guide, "Using a dedicated log volume (DLV)")."""


def log_volume_envelope(db: DbInstance) -> Envelope | None:
    """An RDS instance's Dedicated Log Volume, where it has one: 3,000 IOPS. Its throughput is
    not published: that of a 3,000 IOPS Provisioned IOPS volume is taken (500 MiB/s; not
    confirmed), far above what 3,000 IOPS of log writes carry."""
    if not db.dedicated_log_volume:
        return None
    return io1(LOG_VOLUME_IOPS)


def db_storage_envelope(db: DbInstance) -> Envelope | None:
    """An RDS instance's storage: its primary volume, and the additional volumes beside it
    (Oracle, SQL Server), whose limits add to it. Striped over four volumes, gp2 bursts to
    12,000 IOPS with four buckets, gp3 includes 12,000 IOPS and 500 MiB/s, and io1/io2 reach
    256,000 IOPS and 4,000 MiB/s."""
    primary = _primary(db)
    if primary is None or not db.additional_volumes:
        return primary
    total = primary
    for volume in db.additional_volumes:
        each = _primary(
            replace(
                db,
                storage_type=volume.storage_type,
                allocated_gib=volume.allocated_gib,
                iops=volume.iops,
                throughput_mibps=volume.throughput_mibps,
                additional_volumes=(),
            )
        )
        if each is None:
            return None  # a volume without a model: the sum is not known
        total = _plus(total, each)
    return total


def _plus(a: Envelope, b: Envelope) -> Envelope:
    """Two volumes side by side: their rates add. A bucket cannot be told apart in the
    instance's metrics, which count every volume (RDS publishes no split): the sum keeps the
    primary's bucket for its balance, and is marked approximate, so no cap is judged on it."""
    return Envelope(
        a.iops + b.iops,
        a.throughput_bps + b.throughput_bps,
        a.baseline_iops + b.baseline_iops,
        a.baseline_throughput_bps + b.baseline_throughput_bps,
        a.bucket or b.bucket,
        a.approximate or b.approximate or a.bucket is not None or b.bucket is not None,
        a.io_unit_bytes,
        a.merges,
    )


def _primary(db: DbInstance) -> Envelope | None:
    stripes = rds_stripes(db.engine, db.allocated_gib)
    match db.storage_type:
        case "gp2":
            return _gp2(db, stripes)
        case "gp3":
            return _gp3(db, stripes)
        case "io1" | "io2" if db.iops:
            return _provisioned(db, db.iops, stripes)
        case "standard":
            return standard()
    return None
