"""The report as a terminal shows it: the findings, then a table of the resources."""

from __future__ import annotations

import io
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from typing import TextIO

from rich.cells import cell_len
from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

from analyzer.deliver.rows import report_order
from analyzer.model import units
from analyzer.model.findings import Finding
from analyzer.model.kubernetes import own_name
from analyzer.model.reading import Condition, InstanceDetails, Reading, VolumeDetails
from analyzer.model.resources import Initialization, ResourceType
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


def _describe(r: Reading) -> str:
    d = r.details
    if isinstance(d, VolumeDetails):
        return f"{d.volume_type} {d.size_gib:,} GiB"
    if isinstance(d, InstanceDetails):
        return d.instance_type
    return f"{d.instance_class} {d.storage_type} {d.allocated_gib:,} GiB"


def _rich_table(rows: Sequence[Sequence[str]], right: Collection[int], wrap: bool) -> Table:
    """The first row is the header. Cells are plain text: "[x]" is never markup."""
    grid = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for i, name in enumerate(rows[0]):
        justify: JustifyMethod = "right" if i in right else "left"
        # On a narrow terminal a long cell folds within its column rather than being cut.
        grid.add_column(Text(name), justify=justify, no_wrap=not wrap, overflow="fold")
    for row in rows[1:]:
        grid.add_row(*(Text(cell) for cell in row))
    return grid


def table(rows: Sequence[Sequence[str]], right: Collection[int] = ()) -> list[str]:
    """Rows of cells as aligned columns, two spaces apart, one line a row; the first row is
    the header, the columns numbered in `right` are justified right."""
    # As wide as the widest cells: never a row broken in two, whatever their length.
    width = sum(max(cell_len(r[i]) for r in rows) + 2 for i in range(len(rows[0])))
    screen = io.StringIO()
    console = Console(file=screen, width=width, color_system=None, highlight=False)
    console.print(_rich_table(rows, right, wrap=False), crop=False)
    return [line.rstrip() for line in screen.getvalue().splitlines()]


def print_table(rows: Sequence[Sequence[str]], out: TextIO, right: Collection[int] = ()) -> None:
    """`table` written to `out`: on a terminal, fitted to its width with a bold header."""
    if not out.isatty():
        out.write("".join(f"{line}\n" for line in table(rows, right)))
        return
    Console(file=out, highlight=False).print(_rich_table(rows, right, wrap=True))


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


APPLY = "ebs-analyzer apply"
"""The command that applies a fix_id to the account the report reads."""


def to_text(
    generated_at: datetime,
    readings: Sequence[Reading],
    findings: Sequence[Finding],
    apply: str = APPLY,
) -> str:
    """The report; each fix with a fix_id says `apply: {apply} FIX_ID`, the command that applies
    it where these resources are (the demo's simulated account is changed by the demo)."""
    rows = sorted(readings, key=report_order)
    lines = [_title(generated_at, rows), "", *_findings(findings, rows, apply), "RESOURCES"]
    groups = _by_account(rows)
    if not any(r.ref.account_id for r in rows):
        lines += ["  " + line for line in table(_resource_table(rows))]
    else:
        # One table, its columns aligned across accounts, cut into a section per account.
        grid = table(_resource_table(rows))
        at = 1
        for account, group in groups:
            lines += [f"  ACCOUNT {account}", "  " + grid[0]]
            lines += ["  " + line for line in grid[at : at + len(group)]]
            at += len(group)
    lines += [f"  ! {r.ref.resource_id}: {r.error}" for r in rows if r.error]
    lines += [
        f"  ~ {r.ref.resource_id}: {_initializing(r.details.initialization)}"
        for r in rows
        if isinstance(r.details, VolumeDetails) and r.details.initialization is not None
    ]
    lines += [
        f"  * {r.ref.resource_id}: {r.details.modified}"
        for r in rows
        if isinstance(r.details, VolumeDetails) and r.details.modified is not None
    ]
    return "\n".join(lines) + "\n"


def _initializing(found: Initialization) -> str:
    progress, left = found.progress, found.seconds_left
    done = f"{progress}% done" if progress is not None else "progress unknown"
    remaining = f", about {units.duration(left)} left" if left is not None else ""
    return (
        f"still initializing from its snapshot ({done}{remaining}): its first reads are slow "
        "whatever its type or size, and no volume cap is judged until it completes"
    )


def _by_account(rows: Sequence[Reading]) -> list[tuple[str, list[Reading]]]:
    """Rows in report order, cut where the account changes."""
    groups: list[tuple[str, list[Reading]]] = []
    for r in rows:
        if not groups or groups[-1][1][0].ref.account_id != r.ref.account_id:
            groups.append((r.ref.account, []))
        groups[-1][1].append(r)
    return groups


def _title(generated_at: datetime, rows: Sequence[Reading]) -> str:
    def count(kind: ResourceType) -> int:
        return sum(1 for r in rows if r.ref.resource_type is kind)

    dbs = count(ResourceType.DB_INSTANCE)
    rds = f", {dbs} RDS instance(s)" if dbs else ""
    regions = sorted({r.ref.region for r in rows})
    accounts = len({r.ref.account_id for r in rows if r.ref.account_id})
    across = f" across {accounts} account(s)" if accounts else ""
    volumes, instances = count(ResourceType.VOLUME), count(ResourceType.INSTANCE)
    return (
        f"EBS bottleneck report · {generated_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC · "
        f"{volumes} volume(s), {instances} instance(s){rds} in "
        f"{', '.join(regions) or 'no region'}{across}"
    )


def _findings(findings: Sequence[Finding], rows: Sequence[Reading], apply: str) -> list[str]:
    if not findings:
        return [_no_findings(rows), ""]
    lines = [f"FINDINGS ({len(findings)})"]
    by_id = {(r.ref.scope, r.ref.resource_id): r for r in rows}
    for f in findings:
        account = f"  · account {f.resource.account}" if f.resource.account_id else ""
        lines.append(f"  {f.severity.value.upper():<8}  {f.rule}{account}")
        lines.append(f"            {f.summary}")
        row = by_id.get((f.resource.scope, f.resource.resource_id))
        if f.is_credits and row is not None and row.seconds_to_full is not None:
            full = units.duration(row.seconds_to_full)
            lines.append(f"            refilling: credits full again in {full} at the present rate")
        if f.next_bottleneck is not None:
            lines.append(f"            next: {f.next_bottleneck.text()}")
        for remedy in f.remedies:
            lines.append(f"            fix: {remedy.text()}")
            if remedy.fix_id is not None:
                lines.append(f"                 apply: {apply} {remedy.fix_id}")
    return [*lines, ""]


def _no_findings(rows: Sequence[Reading]) -> str:
    """No findings is a verdict only about the resources that had data."""
    if not rows:
        return "No findings: no resources to watch (check the region and the tag filters)."

    def count(status: Condition) -> int:
        return sum(1 for r in rows if r.status is status)

    judged = count(Condition.OK)
    missing, failed = count(Condition.NO_DATA), count(Condition.ERROR)
    stale, contradicted = count(Condition.STALE), count(Condition.MODEL_MISMATCH)
    nodes = count(Condition.NODE_AGENT)
    unread = []
    if contradicted:
        unread.append(f"{contradicted} showed more than their modelled limits (model_mismatch)")
    if missing:
        unread.append(f"{missing} had no data (detached, stopped or not reporting)")
    if failed:
        unread.append(f"{failed} could not be read (see below)")
    if stale:
        unread.append(f"{stale} had only stale data (CloudWatch had nothing recent)")
    if nodes:
        unread.append(f"{nodes} have their rates read by node agents (see their /metrics)")
    others = " and ".join(unread)
    if not judged:
        return f"No verdict: none of the {len(rows)} resource(s) could be judged: {others}."
    verdict = f"No findings: no storage limit is holding back the {judged} resource(s) with data."
    if unread:
        verdict += f" Nothing is said about the others: {others}."
    return verdict


def _resource_table(rows: Sequence[Reading]) -> list[list[str]]:
    names = [own_name(r.name, r.ref.claim) for r in rows]
    named = any(names)
    claimed = any(r.ref.claim is not None for r in rows)
    header = list(HEADER)
    if named:
        header.insert(1, "NAME")
    if claimed:
        # A claim's volume is known in its cluster by its claim: named first.
        header.insert(0, "CLAIM")
    table = [header]
    for r, name in zip(rows, names, strict=True):
        cells = _cells(r)
        if named:
            cells.insert(1, name or "-")
        if claimed:
            cells.insert(0, r.ref.claim.ref if r.ref.claim is not None else "-")
        table.append(cells)
    return table


def _cells(r: Reading) -> list[str]:
    kind = r.ref.resource_type
    if kind is ResourceType.DB_INSTANCE:
        kind = ResourceType.VOLUME  # storage units: MiB/s
    attached = r.attached_to or (
        f"{len(r.details.volume_ids)} volume(s)" if isinstance(r.details, InstanceDetails) else "-"
    )
    io, balance = r.avg_io_size_bytes, r.burst_balance_percent
    status = r.status.value
    running = r.state in ("in-use", "running", "available") and r.status is not Condition.NO_DATA
    return [
        r.ref.resource_id,
        _describe(r),
        attached,
        _pair(r.iops, r.iops_limit, Unit.IOPS, kind),
        _pair(
            r.throughput_bytes_per_second,
            r.throughput_limit_bytes_per_second,
            Unit.BYTES_PER_SECOND,
            kind,
        ),
        units.size(io) if io else "-",
        f"{balance:.0f}%" if balance is not None else "-",
        _empty_or_full(r.seconds_to_empty, r.seconds_to_full),
        status if running else f"{status} ({r.state})",
    ]


def _empty_or_full(empty: float | None, full: float | None) -> str:
    if empty is not None:
        return units.duration(empty)
    return f"full in {units.duration(full)}" if full is not None else "-"
