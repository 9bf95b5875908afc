"""A fix that holds still, replayed through moto: a gp2 volume draining at a rate that wobbles
between 1,400 and 1,650 IOPS is sized for 1,680 or 1,980 IOPS from one cycle to the next. The
alert keeps the fix it was sent with; a need that moves for real changes it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from analyzer import settings
from analyzer.analyze import rules
from analyzer.analyze.alerts import AlertBook
from analyzer.live.cycle import Analyzer
from analyzer.sim.workloads import Demand, steps
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def test_a_wobbling_drain_keeps_one_fix_and_a_real_change_moves_it(aws: None) -> None:
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp2", 100, instance)
    wobble = [(m * 60, 1_400 if (m // 5) % 2 else 1_650) for m in range(20)]
    demand = Demand(steps((0, 100), *[(1_800 + t, v) for t, v in wobble], (3_000, 2_600)))
    simulation = account.simulation(instance, {volume: demand}, START, balances={volume: 80.0})
    account.put(simulation.run(60))
    analyzer = Analyzer(settings.load({"region": [account.region]}), rules.load())
    book = AlertBook(repeat_s=4 * 3600, resolve_after_s=300)

    def fixes_at(minute: int) -> tuple[list[str], list[str]]:
        now = START + timedelta(minutes=minute, seconds=130)
        result = analyzer.run(now)
        book.update(now, result.findings, result.pending)
        book.delivered(book.owed(), now)
        fresh = [f for f in result.findings if f.resource.resource_id == volume]
        [alert] = [a for a in book if a.resource_id == volume]
        return [r.action for f in fresh for r in f.remedies], [
            r.action for r in alert.finding.remedies
        ]

    # (Each cycle reads up to the newest minute published: its balance at 06:36 by 06:36:10.)
    sent = fixes_at(34)[1]
    moved = False
    for minute in range(35, 50):
        fresh, said = fixes_at(minute)
        moved |= fresh != sent
        assert said == sent, f"minute {minute}"
    assert moved, "the rate never moved enough to change a fresh fix: the test proves nothing"
    # From minute 50 the load is 2,600 IOPS: the need moved for real, and so does the fix.
    assert fixes_at(56)[1] != sent
