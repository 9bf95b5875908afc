"""`backtest --tune` as a terminal report: one row a setting, the alarm beside it, what each
setting is, and the recommendation with the figures it was judged by."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from analyzer.deliver.text import table
from analyzer.model import units
from analyzer.offline.backtest import ALARM_PERCENT
from analyzer.offline.tune import Recommendation, Row, said

HEADER = (
    "SETTING",
    "EXHAUSTIONS",
    "WARNED",
    "LATER",
    "LEAD",
    "FALSE",
    "HOURS WARNED",
    "│ ALARM: LEAD",
    "FALSE",
)
NUMBERS = frozenset(range(1, 7)) | {8}


def _lead(seconds: float | None) -> str:
    return units.duration(seconds) if seconds is not None else "-"


def _at(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%m-%d %H:%M")


def rows_table(found: Sequence[Row]) -> list[str]:
    """The settings' rows, from the latest warning to the earliest, the rules in force
    marked `*`."""
    cells = [list(HEADER)] + [
        [
            row.setting.name + (" *" if row.setting.in_force else ""),
            str(row.exhaustions),
            str(row.warned),
            str(row.later_than_alarm),
            _lead(row.median_lead_s),
            str(row.false_warnings),
            f"{row.hours_warned:,.1f}",
            "│ " + _lead(row.alarm_median_lead_s),
            str(row.alarm_false_warnings),
        ]
        for row in found
    ]
    return table(cells, NUMBERS)


def settings_table(found: Sequence[Row]) -> list[str]:
    """What each setting is: by setting, each rule's burn pairs."""
    ids = list(dict.fromkeys(rid for row in found for rid in row.setting.burn))
    cells = [["SETTING", *ids]] + [
        [row.setting.name, *(said(row.setting.burn.get(rid, ())) for rid in ids)] for row in found
    ]
    return ["  " + line for line in table(cells)]


def _figures(row: Row) -> str:
    return (
        f"{row.exhaustions} exhaustions, {row.later_than_alarm} warned later than the alarm, "
        f"median lead {_lead(row.median_lead_s)} (the alarm's {_lead(row.alarm_median_lead_s)}), "
        f"{row.false_warnings} false warnings (the alarm's {row.alarm_false_warnings})"
    )


def recommendation(found: Recommendation, span_s: float) -> list[str]:
    chosen, judged = len(found.chosen_on), len(found.judged_on)
    lines = [
        f"RECOMMENDATION ({found.limit.describe()}; chosen on {chosen} resources, judged on "
        f"the other {judged})"
    ]
    if (
        found.setting is None
        or found.picked is None
        or found.held_out is None
        or found.in_force is None
    ):
        return [*lines, f"  none: {found.reason}"]
    picked, held = found.picked, found.held_out
    allowed = found.limit.allowed(held, span_s)
    lines += [
        f"  {found.setting.name}: on the {chosen} it was chosen on, the fewest exhaustions "
        "warned later than the alarm, then the longest median lead, within the limit "
        f"({_lead(picked.median_lead_s)}, {picked.false_warnings} false warnings where "
        f"{found.limit.allowed(picked, span_s):g} are allowed)",
        f"  on the other {judged}: {_figures(held)}",
    ]
    if held.false_warnings > allowed:
        lines.append(
            f"  there it does not keep to the limit ({held.false_warnings} false warnings where "
            f"{allowed:g} are allowed): on other volumes, expect more than it promised"
        )
    if found.setting != found.in_force.setting:
        lines.append(f"  {found.in_force.setting.name} there: {_figures(found.in_force)}")
    lines.append(
        "  to run with it: `--write-rules DIR` writes its rules file; add `--rules DIR` after "
        "the rules in force"
    )
    return lines


def render(
    found: Sequence[Row], recommended: Recommendation, start: datetime, end: datetime
) -> str:
    span = units.duration((end - start).total_seconds())
    resources = found[0].resources if found else 0
    lines = [
        f"Tune {_at(start)} → {_at(end)} UTC ({span}): the credit rules replayed every minute "
        f"under {len(found)} settings over {resources} resources with a burst bucket",
        "",
        *rows_table(found),
        "  exhaustions: a balance at 1 % or less; warned: with a warning on when it began; "
        "later: the",
        f"  BurstBalance < {ALARM_PERCENT:.0f} % alarm warned first; lead: the median time "
        "ahead; false: warnings no",
        "  exhaustion followed; hours warned: how long a warning was on; * the rules in force",
        "",
        "SETTINGS: each credit_forecast rule's burn (long/short windows, and how soon the "
        "fall over both",
        "  must empty the bucket)",
        *settings_table(found),
        "",
        *recommendation(recommended, (end - start).total_seconds()),
    ]
    return "\n".join(lines) + "\n"
