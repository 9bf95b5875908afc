"""The report of a cycle: JSON as the contract gives it, and a table for a terminal."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from analyzer.model import units
from analyzer.model.findings import Finding, NextBottleneck
from analyzer.model.limits import rds_stripes
from analyzer.model.metrics import Measure
from analyzer.model.resources import DbInstance, Instance, ResourceType, Volume
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import Unit, format_rate


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
        "avg_io_size_bytes": _latest(state, Measure.AVG_IO_SIZE, at),
        "status": state.status.value,
        "iops_utilization": _ratio(iops, iops_limit),
        "throughput_utilization": _ratio(bps, bps_limit),
        "state": resource.state,
    }
    if isinstance(resource, Volume):
        row.update(
            volume_type=resource.volume_type,
            size_gib=resource.size_gib,
            latency_seconds=_latest(state, Measure.LATENCY, at),
        )
    elif isinstance(resource, Instance):
        row.update(
            instance_type=resource.instance_type,
            volume_ids=list(resource.volume_ids),
            detailed_monitoring=resource.detailed_monitoring,
        )
    elif isinstance(resource, DbInstance):
        info = resource.class_info
        row.update(
            engine=resource.engine,
            instance_class=resource.instance_class,
            storage_type=resource.storage_type,
            allocated_gib=resource.allocated_gib,
            stripes=rds_stripes(resource.engine, resource.allocated_gib),
            storage_iops_limit=state.iops_limit(at),
            storage_throughput_limit_bytes_per_second=state.throughput_limit(at),
            class_iops_limit=state.class_iops_limit(at),
            class_throughput_limit_bytes_per_second=state.class_throughput_limit(at),
            class_burst_balance_percent=_class_balance(state, at),
            freeable_memory_bytes=_latest(state, Measure.FREEABLE_MEMORY, at),
            memory_bytes=info.memory_bytes if info else None,
            latency_seconds=_latest(state, Measure.LATENCY, at),
        )
    if state.envelope is not None and state.envelope.approximate:
        row["limits_approximate"] = True
    if state.error:
        row["error"] = state.error
    if state.notes:
        row["notes"] = list(state.notes)
    return row


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


def to_json(snap: Snapshot, findings: Sequence[Finding]) -> str:
    return json.dumps(to_dict(snap, findings), indent=2, allow_nan=False)


def _pair(value: float | None, limit: float | None, unit: Unit, kind: ResourceType) -> str:
    if value is None and limit is None:
        return "-"
    shown = format_rate(value, unit, kind) if value is not None else "-"
    if limit is None:
        return shown
    cap = format_rate(limit, unit, kind)
    if value is None:
        return f"- / {cap}"
    return f"{shown.split(' ')[0]} / {cap}"


def _describe(row: dict[str, Any]) -> str:
    if row["resource_type"] == "volume":
        return f"{row['volume_type']} {row['size_gib']:,} GiB"
    if row["resource_type"] == "instance":
        return str(row["instance_type"])
    return f"{row['instance_class']} {row['storage_type']} {row['allocated_gib']:,} GiB"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]


def to_text(snap: Snapshot, findings: Sequence[Finding]) -> str:
    data = to_dict(snap, findings)
    volumes = sum(1 for r in data["resources"] if r["resource_type"] == "volume")
    instances = sum(1 for r in data["resources"] if r["resource_type"] == "instance")
    dbs = sum(1 for r in data["resources"] if r["resource_type"] == "db_instance")
    rds = f", {dbs} RDS instance(s)" if dbs else ""
    regions = sorted({r["region"] for r in data["resources"]})
    lines = [
        f"EBS bottleneck report · {snap.generated_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC · "
        f"{volumes} volume(s), {instances} instance(s){rds} in "
        f"{', '.join(regions) or 'no region'}",
        "",
    ]
    if findings:
        lines.append(f"FINDINGS ({len(findings)})")
        for f in findings:
            lines.append(f"  {f.severity.value.upper():<8}  {f.rule}")
            lines.append(f"            {f.summary}")
            if f.next_bottleneck is not None:
                lines.append(f"            next: {f.next_bottleneck.text()}")
            lines += [f"            fix: {remedy.text()}" for remedy in f.remedies]
        lines.append("")
    else:
        lines += ["No findings: no storage limit is holding a workload back.", ""]
    header = [
        "RESOURCE",
        "KIND",
        "ATTACHED",
        "IOPS / LIMIT",
        "THROUGHPUT / LIMIT",
        "I/O SIZE",
        "BURST",
        "EMPTY IN",
        "STATUS",
    ]
    named = any(r["name"] for r in data["resources"])
    if named:
        header.insert(1, "NAME")
    rows = [header]
    for r in data["resources"]:
        kind = ResourceType(r["resource_type"])
        if kind is ResourceType.DB_INSTANCE:
            kind = ResourceType.VOLUME  # storage units: MiB/s
        attached = r.get("attached_to") or (
            f"{len(r['volume_ids'])} volume(s)" if kind is ResourceType.INSTANCE else "-"
        )
        io = r["avg_io_size_bytes"]
        balance = r["burst_balance_percent"]
        empty = r["seconds_to_empty"]
        rows.append(
            [
                r["resource_id"],
                _describe(r),
                attached,
                _pair(r["iops"], r["iops_limit"], Unit.IOPS, kind),
                _pair(
                    r["throughput_bytes_per_second"],
                    r["throughput_limit_bytes_per_second"],
                    Unit.BYTES_PER_SECOND,
                    kind,
                ),
                units.size(io) if io else "-",
                f"{balance:.0f}%" if balance is not None else "-",
                units.duration(empty) if empty is not None else "-",
                r["status"]
                if r["state"] in ("in-use", "running", "available") and r["status"] != "no_data"
                else f"{r['status']} ({r['state']})",
            ]
        )
        if named:
            rows[-1].insert(1, r["name"] or "-")
    lines.append("RESOURCES")
    lines += ["  " + line for line in _table(rows)]
    errors = [r for r in data["resources"] if r.get("error")]
    for r in errors:
        lines.append(f"  ! {r['resource_id']}: {r['error']}")
    return "\n".join(lines) + "\n"


def render(snap: Snapshot, findings: Sequence[Finding], fmt: str) -> str:
    """The report as `once` and `demo --once` print it: `text` or `json`, newline-terminated."""
    if fmt == "json":
        return to_json(snap, findings) + "\n"
    return to_text(snap, findings)
