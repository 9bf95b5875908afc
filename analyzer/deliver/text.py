"""The report as a terminal shows it: the findings, then a table of the resources."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import Any

from analyzer.deliver.rows import to_dict
from analyzer.model import units
from analyzer.model.findings import Finding
from analyzer.model.resources import ResourceType
from analyzer.model.state import Snapshot
from analyzer.model.units import Unit, format_rate


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
