"""The backtest as text: what fired, what happened and who warned first, in UTC minutes, and
the quality table per resource and in total."""

from __future__ import annotations

import re
from datetime import timedelta, timezone

import pytest

from analyzer.model.findings import Bottleneck, Severity
from analyzer.offline.backtest import Backtest, Episode, Quality
from analyzer.offline.backtest_text import quality_table, render
from analyzer.offline.replay import Fired
from tests.helpers import T0

PARIS = timezone(timedelta(hours=1))


def section(text: str, title: str) -> list[str]:
    block = text.split(f"\n{title}")[1].split("\n\n", maxsplit=1)[0]
    return block.splitlines()[1:]


def cells(line: str) -> list[str]:
    """A table's row as its cells: columns are two spaces apart or more."""
    return re.split(r"\s{2,}", line.strip())


def test_an_empty_backtest_says_none_in_every_section() -> None:
    text = render(Backtest(T0, T0 + timedelta(hours=6)))
    assert text.startswith(
        "Backtest 11-21 12:00 → 11-21 18:00 UTC (6 h 00 min), the rules replayed every minute\n"
    )
    assert text.endswith("\n")
    for title in ("ALERTS (0)", "EXHAUSTIONS (0)", "SATURATIONS (0)"):
        assert section(text, title) == ["  none"]
    rows = [line.split() for line in text.split("QUALITY")[1].splitlines()[1:2]]
    assert rows == [["total", "0", "0", "-", "0", "-", "0", "│", "0", "-", "0", "-"]]


def test_an_alert_is_listed_in_utc_with_its_rule_and_resource() -> None:
    fired = [
        Fired(
            "gp2-burst-exhaustion",
            Severity.WARNING,
            "vol-a",
            Bottleneck.BURST_CREDITS,
            (T0 + timedelta(minutes=5)).astimezone(PARIS),
            T0 + timedelta(minutes=50),
        ),
        Fired("volume-iops-cap", Severity.CRITICAL, "vol-b", Bottleneck.VOLUME_IOPS, T0),
    ]
    text = render(Backtest(T0, T0 + timedelta(hours=1), fired=fired))
    header, *lines = section(text, "ALERTS (2)")
    assert cells(header) == ["FIRED → RESOLVED", "SEVERITY", "RULE", "RESOURCE"]
    assert [cells(line) for line in lines] == [
        ["11-21 12:05 → 11-21 12:50", "warning", "gp2-burst-exhaustion", "vol-a"],
        ["11-21 12:00 → -", "critical", "volume-iops-cap", "vol-b"],
    ]
    assert header.index("RULE") == lines[0].index("gp2") == lines[1].index("volume-iops-cap")


def test_long_names_keep_the_columns_in_line() -> None:
    rule = "a-rule-id-far-longer-than-any-shipped-one-" * 2
    fired = [
        Fired(rule, Severity.WARNING, "vol-0123456789abcdef0", Bottleneck.VOLUME_IOPS, T0),
        Fired("x", Severity.CRITICAL, "vol-b", Bottleneck.VOLUME_IOPS, T0),
    ]
    long_id = "db-" + "x" * 60
    result = Backtest(
        T0,
        T0 + timedelta(hours=1),
        fired=fired,
        exhaustions=[Episode(long_id, "burst_balance", T0, None), Episode("v", "iops", T0, None)],
        by_resource={long_id: Quality(), "vol-a": Quality()},
    )
    text = render(result)
    header, *alerts = section(text, "ALERTS (2)")
    assert len({line.index("vol-") for line in alerts}) == 1
    assert header.index("RESOURCE") == alerts[0].index("vol-")
    header, *episodes = section(text, "EXHAUSTIONS (2)")
    assert header.index("WHAT") == episodes[0].index("burst") == episodes[1].index("iops")
    quality = quality_table(result)[:4]
    assert len({line.index("│") for line in quality}) == 1


EMPTY_AT = T0 + timedelta(hours=2)


@pytest.mark.parametrize(
    ("episode", "ours", "alarm"),
    [
        (
            Episode(
                "vol-a",
                "burst_balance",
                EMPTY_AT,
                EMPTY_AT + timedelta(minutes=30),
                warned_at=EMPTY_AT - timedelta(minutes=45),
                alarm_at=EMPTY_AT - timedelta(minutes=15),
            ),
            "warned 11-21 13:15 (45 min ahead)",
            "11-21 13:45 (15 min ahead)",
        ),
        (
            Episode("vol-a", "burst_balance", EMPTY_AT, None, detected_at=EMPTY_AT),
            "detected 11-21 14:00",
            "never",
        ),
        (Episode("vol-a", "burst_balance", EMPTY_AT, None), "not warned", "never"),
    ],
)
def test_an_exhaustion_names_our_warning_and_the_alarms(
    episode: Episode, ours: str, alarm: str
) -> None:
    text = render(Backtest(T0, T0 + timedelta(hours=3), exhaustions=[episode]))
    header, line = section(text, "EXHAUSTIONS (1)")
    assert cells(header) == [
        "RESOURCE",
        "WHAT",
        "STARTED → ENDED",
        "RULES",
        "BurstBalance < 20 % ALARM",
    ]
    ended = "11-21 14:30" if episode.ended_at is not None else "-"
    assert cells(line) == ["vol-a", "burst_balance", f"11-21 14:00 → {ended}", ours, alarm]
    assert header.index("RULES") == line.index(ours)
    assert header.index("BurstBalance") == line.index(alarm)


def test_a_saturation_has_no_alarm() -> None:
    held = Episode(
        "vol-b",
        "iops",
        EMPTY_AT,
        EMPTY_AT + timedelta(minutes=10),
        warned_at=EMPTY_AT - timedelta(seconds=60),
    )
    text = render(Backtest(T0, T0 + timedelta(hours=3), saturations=[held]))
    header, line = section(text, "SATURATIONS (1)")
    assert cells(line)[-1] == "warned 11-21 13:59 (60 s ahead)"
    assert "alarm" not in line.lower() and "alarm" not in header.lower()


def test_the_quality_table_has_a_row_per_resource_in_order_then_the_total() -> None:
    result = Backtest(
        T0,
        T0 + timedelta(days=1),
        by_resource={
            "vol-b": Quality(
                exhaustions=3,
                warned=2,
                leads=[600.0, 1_800.0, 3_600.0],
                false_warnings=1,
                warning_seconds=7_200.0,
                later_than_alarm=1,
                alarm_warned=3,
                alarm_leads=[300.0],
                alarm_false_episodes=2,
                alarm_seconds=5_400.0,
            ),
            "vol-a": Quality(),
        },
    )
    table = quality_table(result)
    assert table[0].split()[:3] == ["QUALITY", "resource", "exhaustions"]
    rows = [line.split("│") for line in table[1:4]]
    assert [r[0].split() for r in rows] == [
        ["vol-a", "0", "0", "-", "0", "-", "0"],
        ["vol-b", "3", "2", "30", "min", "1", "2", "h", "00", "min", "1"],
        ["total", "3", "2", "30", "min", "1", "2", "h", "00", "min", "1"],
    ]
    assert [r[1].split() for r in rows] == [
        ["0", "-", "0", "-"],
        ["3", "5", "min", "2", "90", "min"],
        ["3", "5", "min", "2", "90", "min"],
    ]
    # Every row lines its columns up under the header, the figures justified right.
    assert len({line.index("│") for line in table[:4]}) == 1
    assert table[1].index("vol-a") == table[0].index("resource")
    assert len({len(line) for line in table[:4]}) == 1
    assert table[-1].endswith("later: exhaustions the BurstBalance < 20 % alarm warned of first")
