"""What to change about an RDS instance's finding: its storage or its instance class, priced.

Classes are named from what RDS offers the engine in the region (DescribeOrderableDBInstance-
Options) or, where that is unknown, from the EC2 type data of the families RDS offers (Graviton
only for MySQL, PostgreSQL and MariaDB). RDS runs the engine itself, so the architecture is
not the user's concern: a Graviton class near the price of today's often has twice the memory
(incident 3 of SPEC.md).
"""

from __future__ import annotations

import math
from collections.abc import Container
from dataclasses import replace
from datetime import datetime

from analyzer.analyze.advice.instance import lifted, option, rates
from analyzer.analyze.candidates import Wanted, candidates
from analyzer.analyze.catalog import Catalog
from analyzer.model.findings import (
    Bottleneck,
    Change,
    Finding,
    Remedy,
    RemedyKind,
)
from analyzer.model.limits import GP2_IOPS_PER_GIB, Envelope
from analyzer.model.metrics import Measure
from analyzer.model.rds_storage import (
    LOG_VOLUME_IOPS,
    RDS_STRIPES,
    STRIPED_FROM_GIB,
    db_storage_envelope,
    family,
)
from analyzer.model.resources import DbInstance, ResourceType
from analyzer.model.series import recent
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import Unit

RDS_MODIFY = "with ModifyDBInstance (storage changes: at most one per 6 h)"
RDS_CLASS = "with ModifyDBInstance (the instance restarts, or fails over where Multi-AZ)"

RDS_FAMILIES = frozenset(
    {
        *("m5", "m5d", "m6g", "m6gd", "m6i", "m6id", "m6idn", "m6in", "m7g", "m7i", "m8g"),
        *("r5", "r5b", "r5d", "r6g", "r6gd", "r6i", "r6id", "r6idn", "r6in", "r7g", "r7i"),
        *("r8g", "x2g", "x2idn", "x2iedn", "x2iezn", "z1d", "c6gd", "t3", "t4g"),
    }
)
"""The DB instance class families RDS offers (RDS User Guide, "DB instance class types"):
where the region's own list for the engine is unknown, classes are named from these only."""
MEMORY_OPTIMIZED = ("r", "x", "z")
MORE_MEMORY = 2.0
"""A memory-pressure fix doubles memory at least: the step incident 3 took (32 → 64 GiB)."""


GRAVITON_ENGINES = frozenset({"mysql", "postgres", "mariadb"})
"""Engines RDS runs on Graviton classes; Oracle, SQL Server and Db2 run on x86 only."""


def _graviton(family_name: str) -> bool:
    """m6g, r7g, x2g, c6gd, t4g: AWS names its Graviton families with a g after the number."""
    return family_name.rstrip("d").endswith("g")


def _offered(db: DbInstance, catalog: Catalog, memory_only: bool) -> Wanted:
    classes = catalog.db_classes(db.engine, db.region)
    names: Container[str] | None = (
        {c.removeprefix("db.") for c in classes} if classes is not None else None
    )
    families = {f for f in RDS_FAMILIES if not memory_only or f.startswith(MEMORY_OPTIMIZED)}
    if classes is None and db.engine not in GRAVITON_ENGINES:
        families = {f for f in families if not _graviton(f)}
    return Wanted(families=frozenset(families), names=names)


def _classes(
    finding: Finding, state: ResourceState, snapshot: Snapshot, catalog: Catalog
) -> list[Remedy]:
    """Classes that lift the finding, cheapest first."""
    db = state.resource
    if not isinstance(db, DbInstance) or db.class_info is None:
        return []
    today = db.class_info
    bps, iops = rates(state, snapshot.data_end)
    memory = finding.bottleneck is Bottleneck.MEMORY
    if not memory:
        bps, iops = lifted(finding, today, bps, iops)
    offered = _offered(db, catalog, memory)
    wanted = Wanted(
        throughput_bps=bps,
        iops=iops,
        memory_bytes=int((today.memory_bytes or 0) * MORE_MEMORY) if memory else 0,
        families=offered.families,
        names=offered.names,
    )
    found = candidates(
        today,
        catalog.instance_types(db.region),
        wanted,
        lambda name: catalog.db_monthly(f"db.{name}", db.engine, db.region, db.multi_az),
    )
    now = catalog.db_monthly(db.instance_class, db.engine, db.region, db.multi_az)
    return [
        option(ResourceType.DB_INSTANCE, db.db_instance_id, today, c, now, RDS_CLASS, "db.")
        for c in found
    ]


def _restripes(db: DbInstance, size: int | None = None) -> str:
    """Growing across the striping threshold restripes the storage (DOMAIN.md)."""
    threshold = STRIPED_FROM_GIB.get(family(db.engine))
    if threshold is None or db.allocated_gib >= threshold:
        return ""
    if size is not None and size < threshold:
        return ""
    return (
        f"; from {threshold:,} GiB RDS spreads {db.engine} storage over four volumes, a long, "
        "I/O-heavy copy while the instance runs"
    )


def _gp3_included(db: DbInstance) -> str:
    """What gp3 includes without credits for this engine at this size (RDS's striping
    table)."""
    threshold = STRIPED_FROM_GIB.get(family(db.engine))
    if threshold is None:
        return "3,000 IOPS without credits"
    if db.allocated_gib >= threshold:
        return f"12,000 IOPS without credits ({db.engine} from {threshold:,} GiB)"
    return f"3,000 IOPS without credits (12,000 from {threshold:,} GiB on {db.engine})"


def _storage(db: DbInstance, catalog: Catalog, storage_type: str, size: int) -> float | None:
    return catalog.db_storage_monthly(storage_type, db.engine, db.region, db.multi_az, size)


def _storage_change(db: DbInstance, storage_type: str, size: int) -> Change:
    return Change(
        ResourceType.DB_INSTANCE,
        db.db_instance_id,
        {"storage_type": db.storage_type, "allocated_gib": db.allocated_gib},
        {"storage_type": storage_type, "allocated_gib": size},
    )


def _priced(action: str, db: DbInstance, catalog: Catalog, storage_type: str, size: int) -> Remedy:
    now = _storage(db, catalog, db.storage_type, db.allocated_gib)
    cost = _storage(db, catalog, storage_type, size)
    delta = round(cost - now, 2) if cost is not None and now is not None else None
    return Remedy(
        action, cost, delta, change=_storage_change(db, storage_type, size), kind=RemedyKind.MODIFY
    )


def _gp2_size_for(db: DbInstance, wanted: float) -> tuple[int, Envelope | None]:
    """The smallest gp2 storage larger than today's whose baseline carries `wanted`, read from
    RDS's storage model (striped, each of four volumes takes a quarter of the size: up to three
    GiB more than a third of the IOPS); with its envelope, whose baseline may fall short where
    RDS's maximum does."""
    first = max(db.allocated_gib + 1, math.ceil(wanted / GP2_IOPS_PER_GIB))
    grown = None
    for size in range(first, first + RDS_STRIPES):
        grown = db_storage_envelope(replace(db, storage_type="gp2", allocated_gib=size))
        if grown is None or grown.baseline_iops >= wanted:
            return size, grown
    return first + RDS_STRIPES - 1, grown


def _gp2_fixes(finding: Finding, db: DbInstance, catalog: Catalog) -> list[Remedy]:
    """gp3, and gp2 grown until its baseline carries the demand with a fifth more room. The
    demand is the finding's rate, or the rate before the bucket ran out; a finding that
    measures no rate (a falling daily minimum, in percent) gives none, and storage is not
    sized on it: only gp3, whose included IOPS need no sizing, is offered."""
    before = finding.rate_before_empty
    rates = [r for r in (finding.observed if finding.unit is Unit.IOPS else None, before) if r]
    wanted = max(rates) * 1.2 if rates else None
    threshold = STRIPED_FROM_GIB.get(family(db.engine))
    if (
        wanted is not None
        and wanted > 3_000
        and threshold is not None
        and db.allocated_gib < threshold
    ):
        # Below the threshold RDS gp3 is 3,000 IOPS, no more: from it, 12,000 included.
        gp3 = _priced(
            f"Move the storage to gp3 and grow to {threshold:,} GiB {RDS_MODIFY}: 12,000 IOPS "
            f"without credits (below {threshold:,} GiB {db.engine} gp3 has 3,000){_restripes(db)}",
            db,
            catalog,
            "gp3",
            threshold,
        )
    else:
        gp3 = _priced(
            f"Move the storage to gp3 {RDS_MODIFY}: {_gp3_included(db)}",
            db,
            catalog,
            "gp3",
            db.allocated_gib,
        )
    fixes = [gp3]
    if wanted is None:
        return fixes
    size, grown = _gp2_size_for(db, wanted)
    if grown is not None and grown.baseline_iops >= wanted:
        fixes.append(
            _priced(
                f"Grow the allocated storage to {size:,} GiB {RDS_MODIFY}: "
                f"{grown.baseline_iops:,.0f} IOPS of baseline, no credits needed"
                f"{_restripes(db, size)}",
                db,
                catalog,
                "gp2",
                size,
            )
        )
    return fixes


def _without_log_volume(finding: Finding, state: ResourceState, at: datetime) -> Remedy:
    """A Dedicated Log Volume has fixed limits that RDS does not let one raise: the fix is to
    turn it off, so that the logs share the storage, sized to carry both."""
    storage = state.iops_limit(at)
    log = recent(state.measure(Measure.LOG_IOPS), at, finding.window_s).mean() or 0.0
    data = recent(state.measure(Measure.IOPS), at, finding.window_s).mean() or 0.0
    both = (data + log) * 1.2
    if storage is not None and storage >= both:
        carry = f"the storage's {storage:,.0f} IOPS carry both ({data + log:,.0f} IOPS now)"
    else:
        carry = (
            f"provision the storage for both with it: at least {both:,.0f} IOPS "
            f"({data:,.0f} of data and {log:,.0f} of log now, with a fifth more room)"
        )
    return Remedy(
        f"Turn off the Dedicated Log Volume (fixed at {LOG_VOLUME_IOPS:,} IOPS) with "
        f"ModifyDBInstance --no-dedicated-log-volume, so that the logs share the storage; "
        f"{carry}",
        kind=RemedyKind.MODIFY,
    )


def for_db(
    finding: Finding, state: ResourceState, snapshot: Snapshot, catalog: Catalog
) -> list[Remedy]:
    """RDS: a class with more memory or EBS bandwidth, or storage that carries the load."""
    db = state.resource
    if not isinstance(db, DbInstance):
        return []
    match finding.bottleneck:
        case Bottleneck.MEMORY:
            found = _classes(finding, state, snapshot, catalog)
            return found or [
                Remedy(
                    f"Move to a class with at least {MORE_MEMORY:g}× the memory {RDS_CLASS}: "
                    "reads the working set serves from memory never reach storage",
                    kind=RemedyKind.INSTANCE,
                )
            ]
        case (
            Bottleneck.INSTANCE_IOPS
            | Bottleneck.INSTANCE_THROUGHPUT
            | Bottleneck.INSTANCE_BURST_CREDITS
        ):
            found = _classes(finding, state, snapshot, catalog)
            return found or [
                Remedy(
                    f"Move to a class with more EBS bandwidth {RDS_CLASS}; "
                    f"{db.instance_class} caps all its storage I/O",
                    kind=RemedyKind.INSTANCE,
                )
            ]
        case Bottleneck.BURST_CREDITS if db.storage_type == "gp2":
            return _gp2_fixes(finding, db, catalog)
        case Bottleneck.LOG_VOLUME_IOPS | Bottleneck.LOG_VOLUME_THROUGHPUT:
            return [_without_log_volume(finding, state, snapshot.data_end)]
    return [
        Remedy(
            f"Provision more IOPS and throughput on the {db.storage_type} storage "
            f"(gp3, io1 or io2) {RDS_MODIFY}",
            kind=RemedyKind.MODIFY,
        )
    ]
