"""The backtest as a terminal report: what fired, what happened, and who saw it first; and
with `--approve-within`, what approving each warning's fix would have saved."""

from __future__ import annotations

import statistics
from collections.abc import Collection
from datetime import UTC, datetime

from analyzer.deliver.text import table
from analyzer.model import units
from analyzer.offline.approval import TAKES_EFFECT_S, Approval
from analyzer.offline.backtest import ALARM_PERCENT, Backtest, Episode


def _at(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%m-%d %H:%M") if moment is not None else "-"


def _ahead(lead: float | None) -> str:
    return f"{units.duration(lead)} ahead" if lead is not None else "missed"


def _ours(e: Episode) -> str:
    if e.warned_at is not None:
        return f"warned {_at(e.warned_at)} ({_ahead(e.lead_seconds)})"
    return f"detected {_at(e.detected_at)}" if e.detected_at is not None else "not warned"


def _alarms(e: Episode) -> str:
    return (
        f"{_at(e.alarm_at)} ({_ahead(e.alarm_lead_seconds)})" if e.alarm_at is not None else "never"
    )


def _span(start: datetime | None, end: datetime | None) -> str:
    return f"{_at(start)} → {_at(end)}"


def _indented(rows: list[list[str]], right: Collection[int] = ()) -> list[str]:
    return ["  " + line for line in table(rows, right)]


def _episodes(episodes: list[Episode], alarm: bool) -> list[str]:
    """One row an episode: when it ran, and who warned of it how far ahead."""
    if not episodes:
        return ["  none"]
    header = ["RESOURCE", "WHAT", "STARTED → ENDED", "RULES"]
    if alarm:
        header.append(f"BurstBalance < {ALARM_PERCENT:.0f} % ALARM")
    rows = [header]
    for e in episodes:
        row = [e.resource_id, e.what, _span(e.started_at, e.ended_at), _ours(e)]
        rows.append([*row, _alarms(e)] if alarm else row)
    return _indented(rows)


def render(result: Backtest) -> str:
    span = units.duration((result.end - result.start).total_seconds())
    alerts = [["FIRED → RESOLVED", "SEVERITY", "RULE", "RESOURCE"]] + [
        [_span(f.fired_at, f.resolved_at), f.severity.value, f.rule, f.resource_id]
        for f in result.fired
    ]
    lines = [
        f"Backtest {_at(result.start)} → {_at(result.end)} UTC ({span}), the rules replayed "
        "every minute",
        "",
        f"ALERTS ({len(result.fired)})",
    ]
    lines += _indented(alerts) if result.fired else ["  none"]
    lines += ["", f"EXHAUSTIONS ({len(result.exhaustions)}): a balance at 1 % or less"]
    lines += _episodes(result.exhaustions, alarm=True)
    lines += ["", f"SATURATIONS ({len(result.saturations)}): 95 % of a limit for 5 min or more"]
    lines += _episodes(result.saturations, alarm=False)
    lines += ["", *quality_table(result)]
    return "\n".join(lines) + "\n"


QUALITY_HEADER = (
    "QUALITY",
    "resource",
    "exhaustions",
    "warned",
    "lead",
    "false",
    "on",
    "later",
    "│ alarm",
    "warned",
    "lead",
    "false",
    "on",
)
NUMBERS = frozenset(range(2, 8)) | frozenset(range(9, 13))
"""The columns of QUALITY_HEADER justified right: the counts and durations."""


def quality_table(result: Backtest) -> list[str]:
    """Per resource and in total: the exhaustions, how many the rules warned of and how far
    ahead (the median), their false warnings, how long they were on, and the same for the
    alarm."""
    rows = [(rid, q) for rid, q in sorted(result.by_resource.items())]
    rows.append(("total", result.total()))
    cells = [list(QUALITY_HEADER)] + [
        [
            "",
            rid,
            str(q.exhaustions),
            str(q.warned),
            _lead(q.leads),
            str(q.false_warnings),
            _on(q.warning_seconds),
            str(q.later_than_alarm),
            "│",
            str(q.alarm_warned),
            _lead(q.alarm_leads),
            str(q.alarm_false_episodes),
            _on(q.alarm_seconds),
        ]
        for rid, q in rows
    ]
    notes = " " * (len(QUALITY_HEADER[0]) + 2)
    return [
        *table(cells, NUMBERS),
        f"{notes}warned: exhaustions with a warning active when they began; lead: the median "
        "time ahead;",
        f"{notes}false: warnings no exhaustion followed while active; on: how long a warning "
        "was active;",
        f"{notes}later: exhaustions the BurstBalance < {ALARM_PERCENT:.0f} % alarm warned of first",
    ]


def _on(seconds: float) -> str:
    return units.duration(seconds) if seconds else "-"


def _lead(leads: list[float]) -> str:
    return units.duration(statistics.median(leads)) if leads else "-"


def within(seconds: float) -> str:
    """`5 min`, `90 s`: how long an approval took."""
    return f"{seconds / 60:.0f} min" if seconds % 60 == 0 else f"{seconds:.0f} s"


def headline(approved: Approval) -> str:
    """`Approved within 5 min (taking effect 10 s later): 3 of 4 exhaustions averted, …`."""
    return (
        f"approved within {within(approved.seconds)} (taking effect {TAKES_EFFECT_S:.0f} s "
        f"later): {approved.averted} of {len(approved.approved)} exhaustions averted, "
        f"{approved.minutes_saved:,.0f} of {approved.throttled_minutes:,.0f} throttled minutes "
        "saved"
    )


def unsaved(approved: Approval) -> str:
    """`2 not warned, 1 warned with no fix apply takes`: the exhaustions no approval saves."""
    unwarned = len(approved.approved) - approved.warned
    no_fix = approved.warned - approved.with_fix
    return f"{unwarned} not warned, {no_fix} warned with no fix apply takes"


def approval_text(approved: Approval) -> str:
    """The section after the backtest's report: the figures, then one row an exhaustion."""
    said = headline(approved)
    lines = [said[0].upper() + said[1:], f"  {unsaved(approved)}"]
    if approved.approved:
        header = ["RESOURCE", "STARTED → ENDED", "WARNED", "FIX", "IN FORCE", "THROTTLED", "SAVED"]
        rows = [[*header, "OUTCOME"]]
        for a in approved.approved:
            e = a.episode
            rows.append(
                [
                    e.resource_id,
                    f"{_at(e.started_at)} → {_at(e.ended_at)}",
                    _at(a.warned_at),
                    a.fix or "-",
                    _at(a.in_force_at),
                    f"{a.throttled_minutes:,.0f} min",
                    f"{a.minutes_saved:,.0f} min",
                    a.outcome,
                ]
            )
        lines += ["  " + line for line in table(rows, right=(5, 6))]
    return "\n".join(lines) + "\n"
