"""st1 and sc1 merge contiguous I/O into 1 MiB operations before counting it, replayed
through moto.

A 2 TiB st1 volume streams 100 MiB/s in sequential 128 KiB I/O: CloudWatch shows 800
operations a second, which AWS merges into about 100. Counted one MiB per operation, the
bucket looked 41 minutes from empty and the 500 IOPS cap pinned at 160 %; it drains only the
20 MiB/s above the baseline (about a day) and is far below the cap. Small random I/O does
pay a MiB per operation, and then the bucket does empty fast.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.deliver.rows import resource_row
from analyzer.live.cycle import Analyzer, CycleResult
from analyzer.model.units import GIB, KIB, MIB
from analyzer.sim.workloads import Demand, constant
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
MINUTES = 40
ST1_BASELINE_PER_TIB = 40 * MIB
"""st1 earns 40 MiB/s of throughput credits per TiB (AWS's st1 documentation; DOMAIN.md)."""


def _replay(demand: Demand, size_gib: int, balance: float) -> tuple[Account, str, CycleResult]:
    account = Account()
    instance = account.instance("m5.4xlarge")  # 593.75 MB/s sustained: the volume decides
    volume = account.volume("st1", size_gib, instance)
    simulation = account.simulation(instance, {volume: demand}, START, balances={volume: balance})
    account.put(simulation.run(MINUTES))
    now = START + timedelta(minutes=MINUTES, seconds=130)
    config = settings.load({"region": [account.region]})
    return account, volume, Analyzer(config, rules.load()).run(now)


@pytest.mark.usefixtures("aws")
def test_a_sequential_stream_on_st1_is_no_finding_and_lasts_about_a_day() -> None:
    rate = 100 * MIB
    demand = Demand(constant(rate / (128 * KIB)), io_size_bytes=128 * KIB, sequential=True)
    _, volume, result = _replay(demand, 2048, 90.0)
    assert [f for f in result.findings if f.resource.resource_id == volume] == []
    [state] = [s for s in result.snapshot.resources if s.ref.resource_id == volume]
    assert state.outlook is not None
    baseline = 2 * ST1_BASELINE_PER_TIB
    credits_now = 2048 * GIB * 0.9 - (rate - baseline) * (MINUTES * 60 + 130)
    assert state.outlook.seconds_to_empty == pytest.approx(credits_now / (rate - baseline), rel=0.1)
    assert state.outlook.seconds_to_empty > 20 * 3600


@pytest.mark.usefixtures("aws")
def test_small_random_io_on_st1_pays_a_mib_each_and_is_warned() -> None:
    """300 random 16 KiB operations a second move under 5 MiB/s, but charge 300 MiB/s."""
    demand = Demand(constant(300), io_size_bytes=16 * KIB)
    _, volume, result = _replay(demand, 1024, 100.0)
    [finding] = [f for f in result.findings if f.resource.resource_id == volume]
    assert finding.rule == "hdd-burst-exhaustion"
    drain = 300 * MIB - ST1_BASELINE_PER_TIB
    credits_now = 1024 * GIB - drain * (MINUTES * 60 + 130)
    assert finding.seconds_to_empty == pytest.approx(credits_now / drain, rel=0.1)
    assert "at 4.7 MiB/s, charged as 300 MiB/s (each small random I/O counts as 1 MiB)" in (
        finding.summary
    )
    assert "if the I/O is random" not in finding.summary


@pytest.mark.usefixtures("aws")
def test_sequential_io_above_the_iops_cap_counts_by_its_bytes_against_the_cap() -> None:
    """3,200 sequential 128 KiB operations a second on a 16 TiB st1 (500 MiB/s, 500 IOPS)
    are 400 merged ones: 80 % of the cap, not 640 %."""
    demand = Demand(constant(3_200), io_size_bytes=128 * KIB, sequential=True)
    _, volume, result = _replay(demand, 16_384, 100.0)
    assert [f for f in result.findings if f.resource.resource_id == volume] == []
    row = resource_row(result.reading("us-east-1", volume))
    assert row["status"] == "ok"


@pytest.mark.usefixtures("aws")
def test_random_io_on_st1_is_advised_on_its_charge_not_its_bytes() -> None:
    """Sized on its 4.7 MiB/s, st1 "needs" the 1 TiB it has; it is charged 300 MiB/s."""
    demand = Demand(constant(300), io_size_bytes=16 * KIB)
    _, volume, result = _replay(demand, 1024, 100.0)
    [finding] = [f for f in result.findings if f.resource.resource_id == volume]
    actions = [r.action for r in finding.remedies]
    assert actions[0].startswith("Move to gp3 with 3,000 IOPS")
    assert actions[1].startswith("Grow to 9,300 GiB (363 MiB/s baseline)")
