"""The report of a cycle: JSON as the contract gives it, or a table for a terminal."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from analyzer.analyze.savings import Saving
from analyzer.deliver import savings as savings_report
from analyzer.deliver.rows import to_dict
from analyzer.deliver.text import APPLY, table, to_text
from analyzer.model.costs import Projection
from analyzer.model.findings import Finding
from analyzer.model.metrics import Tier
from analyzer.model.reading import Reading
from analyzer.model.state import Snapshot


def to_json(
    snap: Snapshot,
    readings: Sequence[Reading],
    findings: Sequence[Finding],
    projection: Projection | None = None,
    savings: Sequence[Saving] | None = None,
) -> str:
    document = to_dict(snap.generated_at, readings, findings)
    if savings is not None:
        document |= savings_report.listed(savings)
    if projection is not None:
        document["watch_cost"] = watch_cost(snap, projection)
    return json.dumps(document, indent=2, allow_nan=False)


def render(
    snap: Snapshot,
    readings: Sequence[Reading],
    findings: Sequence[Finding],
    fmt: str,
    projection: Projection | None = None,
    apply: str = APPLY,
    savings: Sequence[Saving] | None = None,
    currency: str = "USD",
) -> str:
    """The report as `once` and `demo --once` print it: `text` or `json`, newline-terminated;
    with a projection, what watching these resources with the daemon would cost. `apply`: the
    command that applies a fix_id where these resources are, said under each such fix.
    `savings`: the savings weighed (`once --savings`), findings of their own kind that never
    page, after the findings, in the price list's `currency`."""
    if fmt == "json":
        return to_json(snap, readings, findings, projection, savings) + "\n"
    text = to_text(snap.generated_at, readings, findings, apply)
    if savings is not None:
        text += f"\nSAVINGS ({len(savings)})\n" + _indented(
            savings_report.table(savings, currency, apply)
        )
    if projection is not None:
        text += "\n" + cost_text(snap, projection) + "\n"
    return text


def _indented(text: str) -> str:
    return "".join(f"  {line}" if line.strip() else line for line in text.splitlines(True))


def watch_cost(snap: Snapshot, projection: Projection) -> dict[str, Any]:
    return {
        "this_run_metrics_requested": snap.stats.billed,
        "this_run_dollars": round(snap.stats.billed * projection.price_per_metric, 4),
        "this_run_metrics_from_nvme": snap.stats.free,
        "daemon_dollars_per_month": round(projection.dollars(), 2),
        "daemon_dollars_per_month_by_tier": {
            tier.value: round(projection.dollars(tier), 2) for tier in Tier
        },
    }


COST_COLUMNS = ("idle", "active", "hot", "full")
SAMPLED = "sampled"
"""`cost --sample`'s column: the bill in the tiers the load read now places resources in."""


def _columns(rows: Iterable[Mapping[str, Projection]]) -> tuple[str, ...]:
    return (SAMPLED, *COST_COLUMNS) if any(SAMPLED in row for row in rows) else COST_COLUMNS


def _dollars(row: Mapping[str, Projection]) -> dict[str, float]:
    return {kind: round(p.dollars(), 2) for kind, p in row.items()}


def _by_account(
    bills: Mapping[str, Mapping[str, Projection]],
) -> dict[str, dict[str, Mapping[str, Projection]]]:
    """Scope (`111111111111/us-east-1`) → bill, as account id → region → bill."""
    out: dict[str, dict[str, Mapping[str, Projection]]] = {}
    for where, row in bills.items():
        account_id, _, region = where.rpartition("/")
        out.setdefault(account_id, {})[region] = row
    return out


def _total(rows: Iterable[Mapping[str, Projection]]) -> dict[str, float]:
    rows = list(rows)
    columns = _columns(rows)
    total = dict.fromkeys(columns, 0.0)
    for row in rows:
        for kind in columns:
            total[kind] += row[kind].dollars() if kind in row else 0.0
    return {kind: round(dollars, 2) for kind, dollars in total.items()}


def cost_document(
    bills: Mapping[str, Mapping[str, Projection]], names: Mapping[str, str]
) -> dict[str, Any]:
    """`ebs-analyzer cost --format json`: dollars a month by region under each assumption;
    where there are accounts, by account, then region, each account with its total, and the
    total of all."""
    if not names:
        return {region: _dollars(row) for region, row in bills.items()}
    accounts = {
        account_id: {
            "name": names.get(account_id) or None,
            "regions": {region: _dollars(row) for region, row in regions.items()},
            "total": _total(regions.values()),
        }
        for account_id, regions in _by_account(bills).items()
    }
    return {"accounts": accounts, "total": _total(bills.values())}


def cost_table(
    bills: Mapping[str, Mapping[str, Projection]],
    interval_s: float,
    active_s: float,
    idle_s: float,
    names: Mapping[str, str] | None = None,
    shard: tuple[int, int] | None = None,
    coverage: tuple[int, str | None] | None = None,
) -> str:
    """`ebs-analyzer cost`: per region (per account and region, where there are accounts,
    with each account's total and the total of all), the month's bill under each
    assumption; of one shard's resources where `shard` (index, total) is given. `coverage`:
    where node agents are asked about, how many volumes they read, and why Prometheus did not
    say where it failed."""
    columns = _columns(bills.values())
    sampled = columns[0] == SAMPLED
    header = ["REGION", *(["AT TODAY'S LOAD"] if sampled else []), "ALL IDLE", "ALL ACTIVE"]
    header += ["ALL HOT", "POLLING FULL"]

    def cells(totals: Mapping[str, float]) -> list[str]:
        return [f"${totals[c]:,.2f}" if c in totals else "-" for c in columns]

    if not names:
        rows = [header] + [[region, *cells(_dollars(row))] for region, row in bills.items()]
    else:
        rows = [["ACCOUNT", *header]]
        for account_id, regions in _by_account(bills).items():
            name = names.get(account_id)
            label = f"{name} ({account_id})" if name else account_id
            rows += [[label, r, *cells(_dollars(row))] for r, row in regions.items()]
            if len(regions) > 1:
                rows.append([label, "total", *cells(_total(regions.values()))])
        rows.append(["all accounts", "total", *cells(_total(bills.values()))])
    lines = table(rows)
    whose = (
        "this inventory" if shard is None else f"the resources of shard {shard[0]} of {shard[1]}"
    )
    return (
        f"GetMetricData a month for {whose}, polled every {interval_s:g} s when hot, "
        f"{active_s / 60:g} min when active, at most {idle_s / 60:g} min when idle (sooner "
        "where a full bucket could drain to 20 % sooner):\n\n"
        + "\n".join(lines)
        + "\n\n"
        + (_SAMPLED_TEXT if sampled else _BRACKET_TEXT)
        + _coverage_text(coverage)
    )


_BRACKET_TEXT = (
    "The daemon's bill lies between the all-idle and the all-hot figures, by how many "
    "resources are busy; it logs and exports the projection for the tiers it sees "
    "(ebs_analyzer_cloudwatch_projected_cost_dollars_per_month), and `once` prints it. "
    "`--sample` reads the load once and adds it here.\n"
)
_SAMPLED_TEXT = (
    "AT TODAY'S LOAD is what the daemon projects from a read just now, once the alerts it "
    "finds fire: each resource in the tier its load puts it in. A job that runs at another "
    "hour moves resources up while it runs; the bill then lies above it, below the all-hot "
    "figure. "
    "The daemon logs and exports its projection as it goes "
    "(ebs_analyzer_cloudwatch_projected_cost_dollars_per_month).\n"
)


def _coverage_text(coverage: tuple[int, str | None] | None) -> str:
    if coverage is None:
        return ""
    count, failing = coverage
    if failing is not None:
        return (
            f"\nThe node agents' Prometheus did not answer ({failing}): every volume is counted "
            "as read from CloudWatch, as the daemon would read it.\n"
        )
    return (
        f"\nNode agents read {count:,} volume(s) of this inventory: their rates cost $0 here; "
        "CloudWatch is still asked for their stalled-I/O check and their instances' status "
        "check and EBS balances.\n"
    )


def cost_text(snap: Snapshot, projection: Projection) -> str:
    cost = watch_cost(snap, projection)
    if cost["this_run_metrics_from_nvme"]:
        return (
            f"CLOUDWATCH  this run read {cost['this_run_metrics_from_nvme']:,} metrics from the "
            "volumes' NVMe statistics, free; a node agent asks CloudWatch only for the "
            "BurstBalance of its gp2, st1 and sc1 volumes, every ten minutes (about $0.04 a "
            "volume a month)."
        )
    tiers = ", ".join(
        f"{tier} ${dollars:,.2f}"
        for tier, dollars in cost["daemon_dollars_per_month_by_tier"].items()
    )
    return (
        f"CLOUDWATCH  this run requested {cost['this_run_metrics_requested']:,} metrics "
        f"(${cost['this_run_dollars']:,.4f}); watching these resources with `ebs-analyzer run` "
        f"in the tiers they are in now would cost about "
        f"${cost['daemon_dollars_per_month']:,.2f} a month ({tiers})."
    )
