"""What to change about an RDS instance's finding: its storage or its instance class."""

from __future__ import annotations

from analyzer.model.findings import Bottleneck, Finding, Remedy
from analyzer.model.rds_storage import STRIPED_FROM_GIB, family
from analyzer.model.resources import DbInstance
from analyzer.model.state import ResourceState

NEXT_SIZE = (
    "large",
    "xlarge",
    "2xlarge",
    "4xlarge",
    "8xlarge",
    "12xlarge",
    "16xlarge",
    "24xlarge",
    "32xlarge",
    "48xlarge",
)

RDS_MODIFY = "with ModifyDBInstance (storage changes: at most one per 6 h)"
RDS_CLASS = "with ModifyDBInstance (the instance restarts, or fails over where Multi-AZ)"


def _larger_class(instance_class: str) -> str | None:
    """db.r5.xlarge → db.r5.2xlarge: the next size of the same family, where there is one."""
    family, _, size = instance_class.rpartition(".")
    if size not in NEXT_SIZE or size == NEXT_SIZE[-1]:
        return None
    return f"{family}.{NEXT_SIZE[NEXT_SIZE.index(size) + 1]}"


def _restripes(db: DbInstance) -> str:
    """Growing across the striping threshold restripes the storage (DOMAIN.md)."""
    threshold = STRIPED_FROM_GIB.get(family(db.engine))
    if threshold is None or db.allocated_gib >= threshold:
        return ""
    return (
        f"; from {threshold:,} GiB RDS spreads {db.engine} storage over four volumes, a long, "
        "I/O-heavy copy while the instance runs"
    )


def _gp3_included(engine: str) -> str:
    """What gp3 includes without credits for this engine (RDS's striping table)."""
    threshold = STRIPED_FROM_GIB.get(family(engine))
    if threshold is None:
        return "3,000 IOPS without credits"
    return f"3,000 IOPS without credits (12,000 from {threshold} GiB on {engine})"


def for_db(finding: Finding, state: ResourceState) -> list[Remedy]:
    """RDS: what to change, without a price (RDS storage is priced apart from EBS)."""
    db = state.resource
    if not isinstance(db, DbInstance):
        return []
    larger = _larger_class(db.instance_class)
    bigger = f" such as {larger}" if larger else ""
    match finding.bottleneck:
        case Bottleneck.MEMORY:
            return [
                Remedy(
                    f"Move to a class with more memory{bigger} {RDS_CLASS}: reads the "
                    f"working set serves from memory never reach storage"
                )
            ]
        case (
            Bottleneck.INSTANCE_IOPS
            | Bottleneck.INSTANCE_THROUGHPUT
            | Bottleneck.INSTANCE_BURST_CREDITS
        ):
            return [
                Remedy(
                    f"Move to a class with more EBS bandwidth{bigger} {RDS_CLASS}; "
                    f"{db.instance_class} caps all its storage I/O"
                )
            ]
        case Bottleneck.BURST_CREDITS if db.storage_type == "gp2":
            return [
                Remedy(f"Move the storage to gp3 {RDS_MODIFY}: {_gp3_included(db.engine)}"),
                Remedy(
                    f"Grow the allocated storage {RDS_MODIFY}: 3 IOPS per GiB of baseline"
                    f"{_restripes(db)}"
                ),
            ]
    return [
        Remedy(
            f"Provision more IOPS and throughput on the {db.storage_type} storage "
            f"(gp3, io1 or io2) {RDS_MODIFY}"
        )
    ]
