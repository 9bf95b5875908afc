"""The report of a cycle: JSON as the contract gives it, or a table for a terminal."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from analyzer.deliver.rows import to_dict
from analyzer.deliver.text import table, to_text
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
) -> str:
    document = to_dict(snap.generated_at, readings, findings)
    if projection is not None:
        document["watch_cost"] = watch_cost(snap, projection)
    return json.dumps(document, indent=2, allow_nan=False)


def render(
    snap: Snapshot,
    readings: Sequence[Reading],
    findings: Sequence[Finding],
    fmt: str,
    projection: Projection | None = None,
) -> str:
    """The report as `once` and `demo --once` print it: `text` or `json`, newline-terminated;
    with a projection, what watching these resources with the daemon would cost."""
    if fmt == "json":
        return to_json(snap, readings, findings, projection) + "\n"
    text = to_text(snap.generated_at, readings, findings)
    if projection is not None:
        text += "\n" + cost_text(snap, projection) + "\n"
    return text


def watch_cost(snap: Snapshot, projection: Projection) -> dict[str, Any]:
    return {
        "this_run_metrics_requested": snap.stats.metrics_requested,
        "this_run_dollars": round(snap.stats.metrics_requested * projection.price_per_metric, 4),
        "daemon_dollars_per_month": round(projection.dollars(), 2),
        "daemon_dollars_per_month_by_tier": {
            tier.value: round(projection.dollars(tier), 2) for tier in Tier
        },
    }


def cost_table(
    bills: dict[str, dict[str, Projection]], interval_s: float, active_s: float, idle_s: float
) -> str:
    """`ebs-analyzer cost`: per region, the month's bill under each assumption."""
    columns = ("idle", "active", "hot", "full")
    header = ["REGION", "ALL IDLE", "ALL ACTIVE", "ALL HOT", "POLLING FULL"]
    rows = [header] + [
        [region, *(f"${row[c].dollars():,.2f}" for c in columns)] for region, row in bills.items()
    ]
    lines = table(rows)
    return (
        f"GetMetricData a month for this inventory, polled every {interval_s:g} s when hot, "
        f"{active_s / 60:g} min when active, {idle_s / 60:g} min when idle:\n\n"
        + "\n".join(lines)
        + "\n\nThe daemon's bill lies between the all-idle and the all-hot figures, by how many "
        "resources are busy; it logs and exports the projection for the tiers it sees "
        "(ebs_analyzer_cloudwatch_projected_cost_dollars_per_month), and `once` prints it.\n"
    )


def cost_text(snap: Snapshot, projection: Projection) -> str:
    cost = watch_cost(snap, projection)
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
