"""The rows of the JSON report, as the contract gives them: one per resource, one per finding.

A resource's row is its reading (`model/reading.py`) written out; a finding's, its record
(`records.py`): nothing is worked out here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from analyzer.deliver.records import finding_row
from analyzer.model.findings import Finding
from analyzer.model.reading import DbDetails, Details, InstanceDetails, Reading
from analyzer.model.resources import Initialization, ResourceType


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def resource_row(r: Reading) -> dict[str, Any]:
    row: dict[str, Any] = {
        "resource_type": r.ref.resource_type.value,
        "resource_id": r.ref.resource_id,
        "name": r.name,
        "region": r.ref.region,
        "account_id": r.ref.account_id or None,
        "account_name": r.ref.account_name or None,
        "kubernetes": r.ref.claim.as_dict() if r.ref.claim is not None else None,
        "attached_to": r.attached_to,
        "iops": r.iops,
        "throughput_bytes_per_second": r.throughput_bytes_per_second,
        "iops_limit": r.iops_limit,
        "throughput_limit_bytes_per_second": r.throughput_limit_bytes_per_second,
        "burst_balance_percent": r.burst_balance_percent,
        "seconds_to_empty": r.seconds_to_empty,
        "seconds_to_full": r.seconds_to_full,
        "avg_io_size_bytes": r.avg_io_size_bytes,
        "status": r.status.value,
        "data_age_seconds": r.data_age_seconds,
        "iops_utilization": r.iops_utilization,
        "throughput_utilization": r.throughput_utilization,
        "state": r.state,
        **_details(r.details),
    }
    if r.limits_approximate:
        row["limits_approximate"] = True
    if r.model_mismatch:
        row["model_mismatch"] = list(r.model_mismatch)
    if r.error:
        row["error"] = r.error
    if r.notes:
        row["notes"] = list(r.notes)
    return row


def _details(d: Details) -> dict[str, Any]:
    """What a row says beyond the common columns, by kind of resource."""
    if isinstance(d, InstanceDetails):
        return {
            "instance_type": d.instance_type,
            "volume_ids": list(d.volume_ids),
            "detailed_monitoring": d.detailed_monitoring,
            "node": d.node.as_dict() if d.node is not None else None,
        }
    if isinstance(d, DbDetails):
        return {
            "engine": d.engine,
            "instance_class": d.instance_class,
            "storage_type": d.storage_type,
            "allocated_gib": d.allocated_gib,
            "stripes": d.stripes,
            "additional_volumes": [
                {
                    "name": v.name,
                    "storage_type": v.storage_type,
                    "allocated_gib": v.allocated_gib,
                    "iops": v.iops,
                    "throughput_mibps": v.throughput_mibps,
                }
                for v in d.additional_volumes
            ],
            "storage_iops_limit": d.storage_iops_limit,
            "storage_throughput_limit_bytes_per_second": (
                d.storage_throughput_limit_bytes_per_second
            ),
            "class_iops_limit": d.class_iops_limit,
            "class_throughput_limit_bytes_per_second": d.class_throughput_limit_bytes_per_second,
            "class_burst_balance_percent": d.class_burst_balance_percent,
            "dedicated_log_volume": d.dedicated_log_volume,
            "log_volume_iops": d.log_volume_iops,
            "log_volume_iops_limit": d.log_volume_iops_limit,
            "freeable_memory_bytes": d.freeable_memory_bytes,
            "memory_bytes": d.memory_bytes,
            "latency_seconds": d.latency_seconds,
        }
    return {
        "volume_type": d.volume_type,
        "size_gib": d.size_gib,
        "multi_attach": d.multi_attach,
        "attachments": list(d.attachments),
        "latency_seconds": d.latency_seconds,
        "initialization": _initialization(d.initialization),
    }


def _initialization(found: Initialization | None) -> dict[str, Any] | None:
    if found is None:
        return None
    return {
        "progress_percent": found.progress,
        "seconds_left": found.seconds_left,
        "type": found.kind,
    }


def report_order(r: Reading) -> tuple[str, str, int, str]:
    order = {ResourceType.VOLUME: 0, ResourceType.INSTANCE: 1, ResourceType.DB_INSTANCE: 2}
    return r.ref.account_id, r.ref.region, order[r.ref.resource_type], r.ref.resource_id


def to_dict(
    generated_at: datetime, readings: Sequence[Reading], findings: Sequence[Finding]
) -> dict[str, Any]:
    return {
        "generated_at": _iso(generated_at),
        "resources": [resource_row(r) for r in sorted(readings, key=report_order)],
        "findings": [finding_row(f) for f in findings],
    }
