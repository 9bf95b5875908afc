"""An instance's EBS rates derived from its volumes' equal the ones CloudWatch publishes for
it, replayed through moto from the simulator.

The daemon no longer asks an active instance for its EBSReadOps, EBSWriteOps, EBSReadBytes and
EBSWriteBytes where it reads every one of its volumes: on Nitro they are the sums of its
volumes' (Amazon EC2 User Guide, "Instance metrics"). The simulator publishes both, each from
its own second-by-second accounting; the sum must match the instance's own minute by minute.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.analyze.states import instance_state
from analyzer.collect import queries
from analyzer.live.cycle import Analyzer
from analyzer.model.metrics import Measure, Tier
from analyzer.model.resources import Instance
from analyzer.model.units import KIB
from analyzer.sim.workloads import Demand, constant
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


@pytest.mark.slow
def test_an_instance_s_rates_summed_from_its_volumes_equal_its_own(aws: None) -> None:
    account = Account()
    node = account.instance("m5.large", detailed=True)
    data = account.volume("gp3", 500, node)
    logs = account.volume("gp2", 100, node)
    root = account.volume("gp3", 8, node)
    demands = {
        data: Demand(constant(2_000), io_size_bytes=16 * KIB),
        logs: Demand(constant(600), io_size_bytes=64 * KIB, read_fraction=0.1),
        root: Demand(constant(3)),
    }
    account.put(account.simulation(node, demands, START, detailed=True).run(40))
    now = START + timedelta(minutes=40, seconds=130)

    # Read in full: the instance's own counts, and every volume's.
    full = Analyzer(settings.load({"region": [account.region], "polling": "full"}), rules.load())
    states = {s.ref.resource_id: s for s in full.run(now).snapshot.resources}
    own = states[node]
    instance = own.resource
    assert isinstance(instance, Instance)
    assert not own.notes  # its rates are its own here, not summed
    derived = instance_state(instance, {}, [states[v] for v in (data, logs, root)])
    assert any("rates summed from 3 attached volume(s)" in n for n in derived.notes)
    for measure in (Measure.IOPS, Measure.THROUGHPUT):
        read = dict(own.measure(measure).points())
        summed = dict(derived.measure(measure).points())
        assert len(read) >= 30 and read.keys() == summed.keys(), measure
        for stamp, value in read.items():
            assert summed[stamp] == pytest.approx(value, rel=1e-9), (measure, stamp)

    # The daemon, once the instance is active with its volumes read: its own counts not
    # asked, its rates those same sums.
    inventory = next(iter(full.inventories().values()))
    tiers = {node: Tier.ACTIVE, data: Tier.ACTIVE, logs: Tier.ACTIVE, root: Tier.IDLE}
    asked = {q.metric for q in queries.for_inventory(inventory, tiers)[node]}
    assert "EBSIOBalance%" in asked
    assert not asked & {"EBSReadOps", "EBSWriteOps", "EBSReadBytes", "EBSWriteBytes"}
