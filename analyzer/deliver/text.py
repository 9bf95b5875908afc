"""The report as a terminal shows it: the findings, then a table of the resources."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import Any

from analyzer.deliver.rows import to_dict
from analyzer.model import units
from analyzer.model.findings import Finding
from analyzer.model.resources import ResourceType
from analyzer.model.series import Status
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


def table(rows: list[list[str]]) -> list[str]:
    """Rows of cells as aligned columns, two spaces apart."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]


HEADER = (
    "RESOURCE",
    "KIND",
    "ATTACHED",
    "IOPS / LIMIT",
    "THROUGHPUT / LIMIT",
    "I/O SIZE",
    "BURST",
    "EMPTY / FULL IN",
    "STATUS",
)


def to_text(snap: Snapshot, findings: Sequence[Finding]) -> str:
    data = to_dict(snap, findings)
    rows = data["resources"]
    lines = [_title(snap, rows), "", *_findings(findings, rows), "RESOURCES"]
    lines += ["  " + line for line in table(_resource_table(rows))]
    lines += [f"  ! {r['resource_id']}: {r['error']}" for r in rows if r.get("error")]
    lines += [
        f"  ~ {r['resource_id']}: {_initializing(r['initialization'])}"
        for r in rows
        if r.get("initialization")
    ]
    return "\n".join(lines) + "\n"


def _initializing(found: dict[str, Any]) -> str:
    progress, left = found["progress_percent"], found["seconds_left"]
    done = f"{progress}% done" if progress is not None else "progress unknown"
    remaining = f", about {units.duration(left)} left" if left is not None else ""
    return (
        f"still initializing from its snapshot ({done}{remaining}): its first reads are slow "
        "whatever its type or size, and no volume cap is judged until it completes"
    )


def _title(snap: Snapshot, rows: list[dict[str, Any]]) -> str:
    def count(kind: str) -> int:
        return sum(1 for r in rows if r["resource_type"] == kind)

    dbs = count("db_instance")
    rds = f", {dbs} RDS instance(s)" if dbs else ""
    regions = sorted({r["region"] for r in rows})
    return (
        f"EBS bottleneck report · {snap.generated_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC · "
        f"{count('volume')} volume(s), {count('instance')} instance(s){rds} in "
        f"{', '.join(regions) or 'no region'}"
    )


def _findings(findings: Sequence[Finding], rows: list[dict[str, Any]]) -> list[str]:
    if not findings:
        return [_no_findings(rows), ""]
    lines = [f"FINDINGS ({len(findings)})"]
    by_id = {(r["region"], r["resource_id"]): r for r in rows}
    for f in findings:
        lines.append(f"  {f.severity.value.upper():<8}  {f.rule}")
        lines.append(f"            {f.summary}")
        row = by_id.get((f.resource.region, f.resource.resource_id), {})
        if f.is_credits and row.get("seconds_to_full") is not None:
            full = units.duration(row["seconds_to_full"])
            lines.append(f"            refilling: credits full again in {full} at the present rate")
        if f.next_bottleneck is not None:
            lines.append(f"            next: {f.next_bottleneck.text()}")
        lines += [f"            fix: {remedy.text()}" for remedy in f.remedies]
    return [*lines, ""]


def _no_findings(rows: list[dict[str, Any]]) -> str:
    """No findings is a verdict only about the resources that had data."""
    if not rows:
        return "No findings: no resources to watch (check the region and the tag filters)."
    judged = sum(1 for r in rows if r["status"] == Status.OK.value)
    missing = sum(1 for r in rows if r["status"] == Status.NO_DATA.value)
    failed = sum(1 for r in rows if r["status"] == Status.ERROR.value)
    stale = sum(1 for r in rows if r["status"] == "stale")
    contradicted = sum(1 for r in rows if r["status"] == "model_mismatch")
    unread = []
    if contradicted:
        unread.append(f"{contradicted} showed more than their modelled limits (model_mismatch)")
    if missing:
        unread.append(f"{missing} had no data (detached, stopped or not reporting)")
    if failed:
        unread.append(f"{failed} could not be read (see below)")
    if stale:
        unread.append(f"{stale} had only stale data (CloudWatch had nothing recent)")
    others = " and ".join(unread)
    if not judged:
        return f"No verdict: none of the {len(rows)} resource(s) could be judged: {others}."
    verdict = f"No findings: no storage limit is holding back the {judged} resource(s) with data."
    if unread:
        verdict += f" Nothing is said about the others: {others}."
    return verdict


def _resource_table(rows: list[dict[str, Any]]) -> list[list[str]]:
    named = any(r["name"] for r in rows)
    header = list(HEADER)
    if named:
        header.insert(1, "NAME")
    table = [header]
    for r in rows:
        cells = _cells(r)
        if named:
            cells.insert(1, r["name"] or "-")
        table.append(cells)
    return table


def _cells(r: dict[str, Any]) -> list[str]:
    kind = ResourceType(r["resource_type"])
    if kind is ResourceType.DB_INSTANCE:
        kind = ResourceType.VOLUME  # storage units: MiB/s
    attached = r.get("attached_to") or (
        f"{len(r['volume_ids'])} volume(s)" if kind is ResourceType.INSTANCE else "-"
    )
    io, balance, empty = r["avg_io_size_bytes"], r["burst_balance_percent"], r["seconds_to_empty"]
    running = r["state"] in ("in-use", "running", "available") and r["status"] != "no_data"
    return [
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
        _empty_or_full(empty, r.get("seconds_to_full")),
        r["status"] if running else f"{r['status']} ({r['state']})",
    ]


def _empty_or_full(empty: float | None, full: float | None) -> str:
    if empty is not None:
        return units.duration(empty)
    return f"full in {units.duration(full)}" if full is not None else "-"
