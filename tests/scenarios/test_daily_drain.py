"""Incident 3's daily drain, days ahead: an RDS replica's BurstBalance sinks lower every
working day and refills overnight. On Thursday morning, full again, no forecast of the next
hour can see Thursday's empty afternoon; the falling daily minimum does. Replayed through moto:
three days of 5-minute balances, then this morning's minutes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from analyzer import settings
from analyzer.analyze import rules
from analyzer.live.cycle import Analyzer
from analyzer.sim.fortnight import create_replica
from tests.account import Account

MONDAY = datetime(2026, 11, 16, tzinfo=UTC)
THURSDAY_MORNING = MONDAY + timedelta(days=3, hours=8)


def balance(day: datetime, low: float) -> list[tuple[datetime, float]]:
    """Full overnight, draining from 09:00 to `low` at 17:00, refilled by 21:00."""
    points = []
    for step in range(0, 24 * 12):
        at = day + timedelta(minutes=5 * step)
        hour = step / 12
        if 9 <= hour <= 17:
            value = 100 - (100 - low) * (hour - 9) / 8
        elif 17 < hour <= 21:
            value = low + (100 - low) * (hour - 17) / 4
        else:
            value = 100.0
        points.append((at, value))
    return points


def _put(account: Account, points: list[tuple[datetime, float]], morning: list[datetime]) -> None:
    """The replica's balance through `points`, then full and quiet through `morning`."""
    account.put(
        {
            ("orders-replica", "BurstBalance"): points + [(t, 100.0) for t in morning],
            ("orders-replica", "ReadIOPS"): [(t, 80.0) for t in morning],
            ("orders-replica", "WriteIOPS"): [(t, 50.0) for t in morning],
        }
    )


def _run(account: Account, points: list[tuple[datetime, float]], now: datetime) -> dict:  # type: ignore[type-arg]
    """One cycle at `now`, after the two hours before it full and quiet: the replica's
    findings by rule."""
    _put(account, points, [now - timedelta(minutes=m) for m in range(120, 0, -1)])
    config = settings.load({"region": [account.region]})
    result = Analyzer(config, rules.load()).run(now + timedelta(minutes=2))
    return {f.rule: f for f in result.findings if f.resource.resource_id == "orders-replica"}


def test_a_falling_daily_minimum_warns_days_ahead(aws: None) -> None:
    account = Account(quiet_days=0)
    create_replica()
    past = [
        p
        for i, low in enumerate((34.0, 21.0, 8.0))
        for p in balance(MONDAY + timedelta(days=i), low)
    ]
    found = _run(account, past, THURSDAY_MORNING)
    assert set(found) == {"burst-daily-minimum-falling"}
    trend = found["burst-daily-minimum-falling"]
    assert trend.evidence["forecast"] == "trend"
    assert [d["percent"] for d in trend.evidence["daily_minima"]] == [34.0, 21.0, 8.0]
    assert "falling about 13 points a day" in trend.summary
    assert "empty within 1 day" in trend.summary


def test_a_drain_deeper_every_day_warns_on_the_sixth_morning(aws: None) -> None:
    """90, 75, 60, 45 and 30 % from Monday to Friday, at the same working hours: the days
    drain alike by when, not by how deep, and Saturday morning is warned."""
    account = Account(quiet_days=0)
    create_replica()
    past = [
        p
        for i, low in enumerate((90.0, 75.0, 60.0, 45.0, 30.0))
        for p in balance(MONDAY + timedelta(days=i), low)
    ]
    found = _run(account, past, MONDAY + timedelta(days=5, hours=8))
    assert set(found) == {"burst-daily-minimum-falling"}
    trend = found["burst-daily-minimum-falling"]
    assert [d["percent"] for d in trend.evidence["daily_minima"]] == [60.0, 45.0, 30.0]


def test_near_misses_after_a_partly_covered_first_day_are_not_warned(aws: None) -> None:
    """The history begins at 20:32 on Monday, full; Tuesday and Wednesday drain to 6.6 and
    5.6 % and refill. Monday's 100 % is that of three and a half hours: no day of a trend."""
    account = Account(quiet_days=0)
    create_replica()
    start = MONDAY + timedelta(hours=20, minutes=32)
    first = [
        (start + timedelta(minutes=5 * i), 100.0) for i in range((24 * 60 - 20 * 60 - 32) // 5)
    ]
    past = first + [
        p for i, low in enumerate((6.6, 5.6)) for p in balance(MONDAY + timedelta(days=1 + i), low)
    ]
    assert _run(account, past, THURSDAY_MORNING) == {}


def test_a_backtest_warns_the_sixth_morning_of_a_deepening_drain(aws: None, capsys) -> None:  # type: ignore[no-untyped-def]
    """The same week replayed by `ebs-analyzer backtest`: the trend is on by the Saturday
    morning, from the data the daemon would have read by then."""
    import json

    from analyzer.cli import main

    now = datetime.now(UTC)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    monday = today - timedelta(days=today.weekday() + 7)
    saturday = monday + timedelta(days=5)
    account = Account(quiet_days=0)
    create_replica()
    past = [
        p
        for i, low in enumerate((90.0, 75.0, 60.0, 45.0, 30.0))
        for p in balance(monday + timedelta(days=i), low)
    ]
    _put(account, past, [saturday + timedelta(minutes=m) for m in range(0, 8 * 60)])
    assert main(["backtest", "--since", "14d", "--format", "json", "--region", "us-east-1"]) == 0
    report = json.loads(capsys.readouterr().out)
    morning_of_the_sixth = saturday + timedelta(hours=7, minutes=30)

    def on_then(alert: dict) -> bool:  # type: ignore[type-arg]
        fired = datetime.fromisoformat(alert["fired_at"])
        resolved = alert["resolved_at"]
        ended = datetime.fromisoformat(resolved) if resolved else None
        return fired <= morning_of_the_sixth and (ended is None or ended > morning_of_the_sixth)

    trend = [
        a
        for a in report["alerts"]
        if a["rule"] == "burst-daily-minimum-falling" and a["resource_id"] == "orders-replica"
    ]
    # It speaks once three whole days show the fall (the Thursday), and still on Saturday.
    assert trend and any(on_then(a) for a in trend)


def test_once_warns_the_morning_after_five_deepening_days(aws: None, capsys) -> None:  # type: ignore[no-untyped-def]
    """`ebs-analyzer once` today, after five days that drained to 90, 75, 60, 45 and 30 %,
    full and quiet since midnight: the trend speaks, whatever the day of the week."""
    import json

    from analyzer.cli import main

    now = datetime.now(UTC)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    account = Account(quiet_days=0)
    create_replica()
    past = [
        p
        for i, low in enumerate((90.0, 75.0, 60.0, 45.0, 30.0))
        for p in balance(today - timedelta(days=5 - i), low)
    ]
    since_midnight = int((now - today).total_seconds() // 60)
    _put(account, past, [today + timedelta(minutes=m) for m in range(since_midnight)])
    assert main(["once", "--format", "json", "--region", "us-east-1"]) == 0
    report = json.loads(capsys.readouterr().out)
    trend = [
        f
        for f in report["findings"]
        if f["rule"] == "burst-daily-minimum-falling" and f["resource_id"] == "orders-replica"
    ]
    assert trend and trend[0]["evidence"]["forecast"] == "trend"
