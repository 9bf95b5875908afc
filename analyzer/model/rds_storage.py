"""An RDS instance's storage: the EBS volumes RDS stripes it over, as one envelope."""

from __future__ import annotations

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

STRIPED_FROM_GIB = {"mysql": 400, "mariadb": 400, "postgres": 400, "oracle": 200}
"""RDS spreads storage over four volumes from these sizes (by engine family)."""

RDS_STRIPES = 4


def rds_stripes(engine: str, allocated_gib: int) -> int:
    family = "oracle" if engine.startswith("oracle") else engine
    threshold = STRIPED_FROM_GIB.get(family)
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


def db_storage_envelope(db: DbInstance) -> Envelope | None:
    """An RDS instance's storage. Striped over four volumes, gp2 bursts to 12,000 IOPS with four
    buckets and gp3 includes 12,000 IOPS and 500 MiB/s."""
    stripes = rds_stripes(db.engine, db.allocated_gib)
    match db.storage_type:
        case "gp2":
            return _times(gp2(db.allocated_gib // stripes), stripes)
        case "gp3":
            included_iops, included_mibps = 3_000 * stripes, 125 * stripes
            iops = float(max(db.iops or 0, included_iops))
            throughput = float(max(db.throughput_mibps or 0, included_mibps)) * MIB
            return Envelope(iops, throughput, iops, throughput, io_unit_bytes=SSD_IO_BYTES)
        case "io1" if db.iops:
            return io1(db.iops)
        case "io2" if db.iops:
            return io2(db.iops)
        case "standard":
            return standard()
    return None
