"""Two of a volume's own limits that bind together, replayed through moto.

A gp3 volume provisioned with 16,000 IOPS and 1,000 MiB/s, asked for more in 64 KiB I/O, is at
both at once (16,000 × 64 KiB = 1,000 MiB/s). The throughput finding used to name "volume IOPS
16,000 (1.00× today's rate)" as the next bottleneck, which binds already, and sized a fix on
it that changed nothing. Lifted together, the workload next meets the instance's 1,250 MB/s
(incident 4).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.live.cycle import Analyzer
from analyzer.model.units import KIB, MB, MIB
from analyzer.sim.workloads import Demand, constant
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def test_a_volume_at_two_of_its_limits_is_fixed_for_both(aws: None) -> None:
    account = Account()
    instance = account.instance("r6i.8xlarge")
    volume = account.volume("gp3", 2_000, instance, Iops=16_000, Throughput=1_000)
    demand = Demand(constant(20_000), io_size_bytes=64 * KIB)
    account.put(account.simulation(instance, {volume: demand}, START).run(40))
    now = START + timedelta(minutes=40, seconds=130)
    config = settings.load({"region": [account.region]})
    result = Analyzer(config, rules.load()).run(now)
    found = {f.rule: f for f in result.findings if f.resource.resource_id == volume}
    assert set(found) == {"volume-iops-cap", "volume-throughput-cap"}

    instance_bps = account.instance_type("r6i.8xlarge").maximum_throughput_bps
    assert instance_bps == 1_250 * MB
    for finding, other in (
        (found["volume-throughput-cap"], "16,000 IOPS volume IOPS cap"),
        (found["volume-iops-cap"], "1,000 MiB/s volume throughput cap"),
    ):
        assert f"binds together with its {other}" in finding.summary
        nxt = finding.next_bottleneck
        assert nxt is not None
        assert (nxt.bottleneck, nxt.resource_id) == ("instance_throughput", instance)
        assert nxt.headroom == pytest.approx(instance_bps / (1_000 * MIB), rel=0.01)
        assert sorted(finding.evidence["binds_with"]) == sorted(
            {"volume_iops", "volume_throughput"} - {finding.bottleneck.value}
        )
        fix = finding.remedies[0]
        # Both lifted to where the instance's 1,250 MB/s (1,192 MiB/s) binds, rounded up.
        assert fix.action.startswith("Provision 19,500 IOPS, 1,200 MiB/s")
