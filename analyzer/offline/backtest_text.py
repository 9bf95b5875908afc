"""The backtest as a terminal report: what fired, what happened, and who saw it first."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime

from analyzer.model import units
from analyzer.offline.backtest import ALARM_PERCENT, Backtest, Episode


def _at(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%m-%d %H:%M") if moment is not None else "-"


def _ahead(lead: float | None) -> str:
    return f"{units.duration(lead)} ahead" if lead is not None else "missed"


def _episode(e: Episode, alarm: bool) -> str:
    ours = (
        f"warned {_at(e.warned_at)} ({_ahead(e.lead_seconds)})"
        if e.warned_at is not None
        else (f"detected {_at(e.detected_at)}" if e.detected_at is not None else "not warned")
    )
    line = f"  {e.resource_id:<24} {e.what:<15} {_at(e.started_at)} → {_at(e.ended_at):<11}  {ours}"
    if alarm:
        theirs = (
            f"{_at(e.alarm_at)} ({_ahead(e.alarm_lead_seconds)})"
            if e.alarm_at is not None
            else "never"
        )
        line += f"; BurstBalance < {ALARM_PERCENT:.0f} % alarm: {theirs}"
    return line


def render(result: Backtest) -> str:
    span = units.duration((result.end - result.start).total_seconds())
    lines = [
        f"Backtest {_at(result.start)} → {_at(result.end)} UTC ({span}), the rules replayed "
        "every minute",
        "",
        f"ALERTS ({len(result.fired)})",
    ]
    lines += [
        f"  {_at(f.fired_at)} → {_at(f.resolved_at):<11}  {f.severity.value:<8} "
        f"{f.rule:<34} {f.resource_id}"
        for f in result.fired
    ] or ["  none"]
    lines += ["", f"EXHAUSTIONS ({len(result.exhaustions)}): a balance at 1 % or less"]
    lines += [_episode(e, alarm=True) for e in result.exhaustions] or ["  none"]
    lines += ["", f"SATURATIONS ({len(result.saturations)}): 95 % of a limit for 5 min or more"]
    lines += [_episode(e, alarm=False) for e in result.saturations] or ["  none"]
    lines += ["", *quality_table(result)]
    return "\n".join(lines) + "\n"


def quality_table(result: Backtest) -> list[str]:
    """Per resource and in total: the exhaustions, how many the rules warned of and how far
    ahead (the median), their false warnings, how long they were on, and the same for the
    alarm."""
    header = (
        f"QUALITY  {'':<24} {'exhaustions':>11}  {'warned':>6} {'lead':>8} {'false':>5} "
        f"{'on':>10}  {'later':>5}  │ alarm {'warned':>6} {'lead':>8} {'false':>5} {'on':>10}"
    )
    rows = [(rid, q) for rid, q in sorted(result.by_resource.items())]
    rows.append(("total", result.total()))
    lines = [header]
    for rid, q in rows:
        lines.append(
            f"         {rid:<24} {q.exhaustions:>11}  {q.warned:>6} {_lead(q.leads):>8} "
            f"{q.false_warnings:>5} {_on(q.warning_seconds):>10}  {q.later_than_alarm:>5}  │ "
            f"      {q.alarm_warned:>6} {_lead(q.alarm_leads):>8} {q.alarm_false_episodes:>5} "
            f"{_on(q.alarm_seconds):>10}"
        )
    lines += [
        "         warned: exhaustions with a warning active when they began; lead: the median "
        "time ahead;",
        "         false: warnings no exhaustion followed while active; on: how long a warning "
        "was active;",
        "         later: exhaustions the "
        f"BurstBalance < {ALARM_PERCENT:.0f} % alarm warned of first",
    ]
    return lines


def _on(seconds: float) -> str:
    return units.duration(seconds) if seconds else "-"


def _lead(leads: list[float]) -> str:
    return units.duration(statistics.median(leads)) if leads else "-"
