"""An exhausted gp2 volume is sized for the demand seen before it ran out, not for the burst:
gp2 80 GiB read at 1,200 IOPS empties its bucket in about 94 minutes and then crawls at its
240 IOPS baseline. A daemon that watched it drain still sizes the fix for 1,200 IOPS hours
later, when its history no longer reaches back to the drain."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from analyzer import settings
from analyzer.analyze import rules
from analyzer.live.cycle import Analyzer
from analyzer.model.findings import RATE_BEFORE_EMPTY
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.workloads import Demand, constant
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def test_an_empty_bucket_is_sized_for_its_demand_long_after_it_emptied(aws: None) -> None:
    account = Account()
    instance = account.instance("m5.large", detailed=True)
    volume = account.volume("gp2", 80, instance)
    sim = Simulation(
        SimInstance(
            instance,
            account.instance_type("m5.large"),
            [SimVolume(account.described_volume(volume), Demand(constant(1_200)))],
            detailed_monitoring=True,
        ),
        START,
    )
    account.put(sim.run(240))
    config = settings.load({"region": [account.region], "pricing_api": False})
    daemon = Analyzer(config, rules.load())
    for minute in range(90, 241, 10):
        result = daemon.run(START + timedelta(minutes=minute, seconds=130))
    [finding] = [f for f in result.findings if f.resource.resource_id == volume]
    assert finding.rule == "volume-burst-credits-exhausted"
    assert finding.evidence[RATE_BEFORE_EMPTY] == 1_200
    grow = [r.action for r in finding.remedies if r.action.startswith("Grow to")]
    assert grow == [grow[0]] and grow[0].startswith("Grow to 480 GiB (1,440 IOPS baseline")

    # Asked once, with an hour of history that no longer shows the drain: no demand is claimed,
    # and the fix is sized for the burst the volume had.
    once = Analyzer(config, rules.load()).run(START + timedelta(minutes=240, seconds=130))
    [alone] = [f for f in once.findings if f.resource.resource_id == volume]
    assert alone.evidence[RATE_BEFORE_EMPTY] is None
    assert "down from" not in alone.summary
