"""`ebs-analyzer savings`: the fleet's cuts as a table sorted by saving, or as JSON (SPEC.md,
Savings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analyzer.analyze.savings import Peak, Saving
from analyzer.deliver.interactions import section
from analyzer.deliver.text import APPLY
from analyzer.model.units import MIB

PERIODS = {300: "five-minute", 3_600: "hourly"}
DIGEST_SHOWN = 10
"""The largest savings a digest names; the total counts them all."""


def document(
    found: Sequence[Saving], metrics_requested: int, unread: Sequence[str], volumes: int
) -> dict[str, Any]:
    """The JSON document: each saving, the total, and what reading them cost."""
    return {
        **listed(found),
        "volumes_read": volumes - len(unread),
        "unread": list(unread),
        "watch_cost": {"this_run_metrics_requested": metrics_requested},
    }


def listed(found: Sequence[Saving]) -> dict[str, Any]:
    """SPEC.md's `savings` (one object a volume) and `total_monthly_saving`."""
    return {"savings": [_row(s) for s in found], "total_monthly_saving": total(found)}


def _row(saving: Saving) -> dict[str, Any]:
    row: dict[str, Any] = {
        "resource_id": saving.resource_id,
        "resource_type": saving.resource_type.value,
        **dict(saving.labels),
        "kind": saving.kind,
        "today": dict(saving.today),
        "target": dict(saving.target) if saving.target is not None else None,
        "fix_id": saving.fix_id,
        "monthly_cost": saving.monthly_today,
        "monthly_saving": saving.monthly_saving,
        "window_days": round(saving.window_days, 1),
        "period_s": saving.period_s,
        "peak": {
            name: peak.as_dict(saving.target_limits.get(name))
            for name, peak in saving.peaks.items()
        },
        "headroom": saving.headroom,
    }
    if saving.gives_up:
        row["gives_up"] = saving.gives_up
    if saving.commands:
        row["commands"] = list(saving.commands)
    if saving.kubernetes is not None:
        row["kubernetes"] = {k: v for k, v in saving.kubernetes.items() if k != "step"}
    if saving.alternative is not None:
        row["alternative"] = _row(saving.alternative)
    return row


def table(found: Sequence[Saving], currency: str = "USD", apply: str = APPLY) -> str:
    """One block a resource, the largest saving first, then the total. Each cut says
    `apply: {apply} FIX_ID`, the command that makes it, as each fix of a finding does."""
    if not found:
        return "No saving found: every volume read uses what it pays for.\n"
    lines = []
    accounts = {
        a for s in found if (a := s.labels.get("account_name") or s.labels.get("account_id"))
    }
    regions = {r for s in found if (r := s.labels.get("region"))}
    for saving in found:
        # Where it is, as far as the fleet needs it said: the claim, and the account and the
        # region where the fleet spans several.
        labels = saving.labels
        where = [f"claim {labels['claim']}"] if labels.get("claim") else []
        account = labels.get("account_name") or labels.get("account_id")
        if len(accounts) > 1 and account:
            where.append(f"account {account}")
        if len(regions) > 1 and labels.get("region"):
            where.append(labels["region"])
        named = f' "{labels["name"]}"' if labels.get("name") else ""
        name = saving.resource_id + named + (f" ({', '.join(where)})" if where else "")
        lines.append(f"{name}  saves {_money(saving.monthly_saving, currency)} a month")
        lines.extend(f"  {line}" for line in _said(saving, currency, apply))
        if saving.alternative is not None:
            other = saving.alternative
            lines.append(f"  or: {_change(other)}, saving {_money(other.monthly_saving, currency)}")
            lines.extend(f"      {line}" for line in _said(other, currency, apply, short=True))
        lines.append("")
    lines.append(
        f"Total: {_money(total(found), currency)} a month over {len(found)} "
        f"volume{'s' if len(found) != 1 else ''}."
    )
    return "\n".join(lines) + "\n"


def _said(saving: Saving, currency: str, apply: str, short: bool = False) -> list[str]:
    if saving.kind == "unattached":
        return [
            f"attached to nothing, no I/O for {saving.window_days:.0f} days: "
            f"{saving.today_text}, "
            f"{_money(saving.monthly_today, currency)} a month",
            "keep a snapshot, then delete it:",
            *(f"  {command}" for command in saving.commands),
        ]
    out = [] if short else [_change(saving)]
    for name, peak in saving.peaks.items():
        limit = saving.target_limits.get(name)
        out.append(_peak(name, peak, limit, saving.window_days))
    if saving.gives_up:
        out.append(f"gives up {saving.gives_up}")
    if saving.kubernetes is not None:
        said = saving.kubernetes.get("step") or saving.kubernetes.get("unheard")
        out.append(f"in the cluster: {said}")
    if saving.fix_id:
        out.append(f"apply: {apply} {saving.fix_id}")
    return out


def _change(saving: Saving) -> str:
    return f"{saving.today_text} → {saving.target_text}"


def _peak(name: str, peak: Peak, limit: float | None, days: float) -> str:
    """ "iops: its busiest minute in 455 days (from hourly data), …: 2,840 IOPS (the
    target's limit 3,600 IOPS)"."""
    value = f"{peak.value:,.0f} IOPS" if name == "iops" else f"{peak.value / MIB:,.0f} MiB/s"
    target = ""
    if limit is not None:
        shown = f"{limit:,.0f} IOPS" if name == "iops" else f"{limit / MIB:,.0f} MiB/s"
        target = f" (the target's limit {shown})"
    floor = "; held back then by its own limit: at least this was asked" if peak.floor else ""
    source = "" if peak.period_s <= 60 else f" (from {PERIODS.get(peak.period_s, 'coarse')} data)"
    return (
        f"{name}: its busiest minute in {days:.0f} days{source}, "
        f"{peak.at:%Y-%m-%d %H:%M} UTC: {value}{target}{floor}"
    )


def total(found: Sequence[Saving]) -> float:
    """The fleet's monthly saving: each volume's cut (an alternative is not added)."""
    return round(sum(s.monthly_saving for s in found), 2)


def _money(amount: float, currency: str) -> str:
    """`$1,066.00`, or `EUR 1,066.00`: as a fix's cost is written (`delta_text`)."""
    return f"${amount:,.2f}" if currency == "USD" else f"{currency} {amount:,.2f}"


def digest(
    found: Sequence[Saving], counts: Mapping[str, int], currency: str = "USD", apply: str = APPLY
) -> dict[str, Any]:
    """The weekly Slack message: the total, the largest savings each with what to run
    (`{apply} FIX_ID`), and how many volumes are weighed. No alert: savings never page."""
    weighed, reading, unread = (counts.get(k, 0) for k in ("weighed", "reading", "unread"))
    head = (
        f"*Savings this week: {_money(total(found), currency)} a month* over {len(found)} "
        f"volume{'s' if len(found) != 1 else ''}, each cut proven on its longest past "
        f"({weighed:,} volumes weighed"
        + (f", {reading:,} still being read" if reading else "")
        + (f", {unread:,} unread" if unread else "")
        + ")."
    )
    lines = [head]
    for saving in found[:DIGEST_SHOWN]:
        claim = saving.labels.get("claim")
        named = f' "{saving.labels["name"]}"' if saving.labels.get("name") else ""
        name = f"`{saving.resource_id}`{named}" + (f" (claim {claim})" if claim else "")
        money = _money(saving.monthly_saving, currency)
        if saving.kind == "unattached":
            lines.append(
                f"• {name}: attached to nothing for {saving.window_days:.0f} days, "
                f"{saving.today_text}: {money} a month"
            )
        else:
            lines.append(
                f"• {name}: {_change(saving)}: {money} a month · `{apply} {saving.fix_id}`"
            )
    if len(found) > DIGEST_SHOWN:
        lines.append(f"…and {len(found) - DIGEST_SHOWN} more: `ebs-analyzer savings`.")
    if not found:
        lines = [
            f"*No saving found this week*: the {weighed:,} volumes weighed use what they pay for."
        ]
    text = "\n".join(lines)
    return {
        "text": text[:3000],
        "blocks": [section(text)],
    }
