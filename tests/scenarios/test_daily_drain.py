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


def test_a_falling_daily_minimum_warns_days_ahead(aws: None) -> None:
    account = Account()
    create_replica()
    past = [
        p
        for i, low in enumerate((34.0, 21.0, 8.0))
        for p in balance(MONDAY + timedelta(days=i), low)
    ]
    morning = [THURSDAY_MORNING - timedelta(minutes=m) for m in range(120, 0, -1)]
    account.put(
        {
            ("orders-replica", "BurstBalance"): past + [(t, 100.0) for t in morning],
            ("orders-replica", "ReadIOPS"): [(t, 80.0) for t in morning],
            ("orders-replica", "WriteIOPS"): [(t, 50.0) for t in morning],
        }
    )
    config = settings.load({"region": [account.region]})
    result = Analyzer(config, rules.load()).run(THURSDAY_MORNING + timedelta(minutes=2))
    found = {f.rule: f for f in result.findings if f.resource.resource_id == "orders-replica"}
    assert set(found) == {"burst-daily-minimum-falling"}
    trend = found["burst-daily-minimum-falling"]
    assert trend.evidence["forecast"] == "trend"
    assert [d["percent"] for d in trend.evidence["daily_minima"]] == [34.0, 21.0, 8.0]
    assert "falling about 13 points a day" in trend.summary
    assert "empty within 1 day" in trend.summary
