"""The rows of the JSON report, as the contract gives them: one per resource, one per finding.

The exporter and the state file read the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from analyzer.analyze.forecast import seconds_to_full
from analyzer.model.findings import Finding, NextBottleneck
from analyzer.model.metrics import Measure
from analyzer.model.rds_storage import rds_stripes
from analyzer.model.resources import DbInstance, Initialization, Instance, ResourceType, Volume
from analyzer.model.series import Status
from analyzer.model.state import ResourceState, Snapshot


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _latest(state: ResourceState, measure: Measure, at: datetime) -> float | None:
    point = state.measure(measure).until(at).last()
    return point[1] if point else None


def _class_balance(state: ResourceState, at: datetime) -> float | None:
    """The lower of an instance's (or a DB class's) EBSIOBalance% and EBSByteBalance%."""
    found = [
        b
        for m in (Measure.IO_BALANCE, Measure.BYTE_BALANCE)
        if (b := state.balance(m, at)) is not None
    ]
    return min(found, default=None)


def _balance(state: ResourceState, at: datetime) -> float | None:
    if state.has_storage:
        return state.balance(Measure.BURST_BALANCE, at)
    return _class_balance(state, at)


def seconds_to_refill(state: ResourceState, at: datetime) -> float | None:
    """Seconds until every bucket that is refilling is full again at the present rate."""
    times = [
        t
        for bucket in state.buckets()
        if bucket.model is not None
        and (
            t := seconds_to_full(
                bucket.model,
                state.measure(bucket.balance),
                state.measure(Measure.IOPS),
                state.measure(Measure.THROUGHPUT),
                at,
                state.windows.rate_s,
            )
        )
        is not None
    ]
    return round(max(times), 1) if times else None


def _lowest(*limits: float | None) -> float | None:
    return min((x for x in limits if x is not None), default=None)


def _ratio(value: float | None, limit: float | None) -> float | None:
    if value is None or not limit:
        return None
    return round(value / limit, 4)


def resource_row(state: ResourceState, snap: Snapshot) -> dict[str, Any]:
    at = snap.data_end
    resource = state.resource
    iops = _latest(state, Measure.IOPS, at)
    bps = _latest(state, Measure.THROUGHPUT, at)
    iops_limit, bps_limit = state.iops_limit(at), state.throughput_limit(at)
    if isinstance(resource, DbInstance):
        # What caps an RDS instance is the lower of its storage's and its class's limits.
        iops_limit = _lowest(iops_limit, state.class_iops_limit(at))
        bps_limit = _lowest(bps_limit, state.class_throughput_limit(at))
    found = state.outlook
    row: dict[str, Any] = {
        "resource_type": state.ref.resource_type.value,
        "resource_id": state.ref.resource_id,
        "name": resource.tags.get("Name"),
        "region": state.ref.region,
        "attached_to": resource.attached_to if isinstance(resource, Volume) else None,
        "iops": iops,
        "throughput_bytes_per_second": bps,
        "iops_limit": iops_limit,
        "throughput_limit_bytes_per_second": bps_limit,
        "burst_balance_percent": _balance(state, at),
        "seconds_to_empty": round(found.seconds_to_empty, 1) if found else None,
        "seconds_to_full": seconds_to_refill(state, at),
        "avg_io_size_bytes": _latest(state, Measure.AVG_IO_SIZE, at),
        "status": _status(state, snap),
        "data_age_seconds": snap.data_age_s(state),
        "iops_utilization": _ratio(iops, iops_limit),
        "throughput_utilization": _ratio(bps, bps_limit),
        "state": resource.state,
        **_details(state, at),
    }
    if row["status"] == STALE:
        # Not current: its age and its limits are said, its values are not.
        row.update(dict.fromkeys(MEASURED, None))
    if state.envelope is not None and state.envelope.approximate:
        row["limits_approximate"] = True
    if state.mismatches:
        row["model_mismatch"] = [m.text() for m in state.mismatches]
    if state.error:
        row["error"] = state.error
    if state.notes:
        row["notes"] = list(state.notes)
    return row


def _details(state: ResourceState, at: datetime) -> dict[str, Any]:
    """What a row says beyond the common columns, by kind of resource."""
    resource = state.resource
    if isinstance(resource, Volume):
        return {
            "volume_type": resource.volume_type,
            "size_gib": resource.size_gib,
            "multi_attach": resource.multi_attach,
            "attachments": list(resource.instance_ids),
            "latency_seconds": _latest(state, Measure.LATENCY, at),
            "initialization": _initialization(resource.initialization),
        }
    if isinstance(resource, Instance):
        return {
            "instance_type": resource.instance_type,
            "volume_ids": list(resource.volume_ids),
            "detailed_monitoring": resource.detailed_monitoring,
        }
    info = resource.class_info
    return {
        "engine": resource.engine,
        "instance_class": resource.instance_class,
        "storage_type": resource.storage_type,
        "allocated_gib": resource.allocated_gib,
        "stripes": rds_stripes(resource.engine, resource.allocated_gib),
        "additional_volumes": [
            {
                "name": v.name,
                "storage_type": v.storage_type,
                "allocated_gib": v.allocated_gib,
                "iops": v.iops,
                "throughput_mibps": v.throughput_mibps,
            }
            for v in resource.additional_volumes
        ],
        "storage_iops_limit": state.iops_limit(at),
        "storage_throughput_limit_bytes_per_second": state.throughput_limit(at),
        "class_iops_limit": state.class_iops_limit(at),
        "class_throughput_limit_bytes_per_second": state.class_throughput_limit(at),
        "class_burst_balance_percent": _class_balance(state, at),
        "dedicated_log_volume": resource.dedicated_log_volume,
        "log_volume_iops": _latest(state, Measure.LOG_IOPS, at),
        "log_volume_iops_limit": state.log_envelope.iops if state.log_envelope else None,
        "freeable_memory_bytes": _latest(state, Measure.FREEABLE_MEMORY, at),
        "memory_bytes": info.memory_bytes if info else None,
        "latency_seconds": _latest(state, Measure.LATENCY, at),
    }


def _initialization(found: Initialization | None) -> dict[str, Any] | None:
    if found is None:
        return None
    return {
        "progress_percent": found.progress,
        "seconds_left": found.seconds_left,
        "type": found.kind,
    }


def _next(nb: NextBottleneck | None) -> dict[str, Any] | None:
    if nb is None:
        return None
    return {
        "bottleneck": nb.bottleneck.value,
        "limit": nb.limit,
        "unit": nb.unit.value,
        "resource_id": nb.resource_id,
        "headroom": nb.headroom,
    }


def finding_row(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "severity": f.severity.value,
        "resource_type": f.resource.resource_type.value,
        "resource_id": f.resource.resource_id,
        "region": f.resource.region,
        "bottleneck": f.bottleneck.value,
        "summary": f.summary,
        "observed": f.observed,
        "limit": f.limit,
        "unit": f.unit.value,
        "seconds_to_empty": round(f.seconds_to_empty, 1)
        if f.seconds_to_empty is not None
        else None,
        "next_bottleneck": _next(f.next_bottleneck),
        "evidence": dict(f.evidence),
        "remedies": [
            {
                "action": r.action,
                "monthly_cost": r.monthly_cost,
                "monthly_cost_delta": r.monthly_delta,
                "currency": r.currency,
                "change": r.change.as_dict() if r.change is not None else None,
                "changes": [c.as_dict() for c in r.changes],
            }
            for r in f.remedies
        ],
    }


def _order(state: ResourceState) -> tuple[str, int, str]:
    order = {ResourceType.VOLUME: 0, ResourceType.INSTANCE: 1, ResourceType.DB_INSTANCE: 2}
    return state.ref.region, order[state.ref.resource_type], state.ref.resource_id


def to_dict(snap: Snapshot, findings: Sequence[Finding]) -> dict[str, Any]:
    return {
        "generated_at": _iso(snap.generated_at),
        "resources": [resource_row(s, snap) for s in sorted(snap.resources, key=_order)],
        "findings": [finding_row(f) for f in findings],
    }


STALE = "stale"
IMPAIRED = "impaired"
INITIALIZING = "initializing"
MEASURED = (
    "iops",
    "throughput_bytes_per_second",
    "burst_balance_percent",
    "seconds_to_empty",
    "seconds_to_full",
    "avg_io_size_bytes",
    "iops_utilization",
    "throughput_utilization",
    "latency_seconds",
    "class_burst_balance_percent",
    "freeable_memory_bytes",
)
"""What a row reads from the data: withheld where the data is stale."""


def _status(state: ResourceState, snap: Snapshot) -> str:
    """The fetch's outcome; `stale` where CloudWatch had no recent data when asked;
    `impaired` where AWS reports its I/O stalled (a volume's stalled-I/O check, an instance's
    attached-EBS status check); `initializing` for a volume still fetching its blocks from a
    snapshot; `model_mismatch` where the data contradicts a modelled limit."""
    if state.status is Status.OK and snap.stale(state):
        return STALE
    if state.status is Status.OK and state.impaired_since(snap.data_end) is not None:
        return IMPAIRED
    if (
        state.status is Status.OK
        and isinstance(state.resource, Volume)
        and state.resource.initialization is not None
    ):
        return INITIALIZING
    if state.status is Status.OK and state.mismatches:
        return "model_mismatch"
    return state.status.value
