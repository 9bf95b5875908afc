"""The first minutes of a drain, replayed through moto: the forecast is right from its first
visible minutes, whatever the size of the volume and the second of the minute the burst began.

A gp2 volume's baseline is 3 IOPS a GiB, so on a large volume a 3,000 IOPS burst drains only
the small difference. Averaged with the quiet minutes before it, that difference shrinks or
vanishes: a full 750 GiB volume four minutes into such a burst looked 32,600 s from empty
instead of about 6,900 s, and a 999 GiB volume did not look drained at all.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.live.cycle import Analyzer
from analyzer.sim.workloads import Demand, steps
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
BURST_AT_S = 30 * 60
CAPACITY = 5.4e6
"""A gp2 bucket holds 5.4 million I/O credits (DOMAIN.md; AWS's gp2 documentation)."""


@pytest.mark.parametrize("size_gib", [100, 250, 500, 750, 999])
@pytest.mark.parametrize("phase_s", [0, 20, 40])
def test_a_drain_is_forecast_right_from_its_first_minutes(
    aws: None, size_gib: int, phase_s: int
) -> None:
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp2", size_gib, instance)
    burst_at = BURST_AT_S + phase_s
    demand = Demand(steps((0, 100), (burst_at, 3_000)))
    account.put(account.simulation(instance, {volume: demand}, START).run(40))

    # Four whole minutes of the burst are complete and settled (two minutes) at `now`.
    first_whole = START + timedelta(minutes=math.ceil(burst_at / 60))
    now = first_whole + timedelta(minutes=4 + 2, seconds=10)
    config = settings.load({"region": [account.region]})
    result = Analyzer(config, rules.load()).run(now)
    [state] = [s for s in result.snapshot.resources if s.ref.resource_id == volume]
    assert state.outlook is not None, "the drain is not seen"

    drain = 3_000 - 3 * size_gib  # the bucket fills at its baseline
    drained = drain * (now - START - timedelta(seconds=burst_at)).total_seconds()
    truth = (CAPACITY - drained) / drain
    assert state.outlook.seconds_to_empty == pytest.approx(truth, rel=0.05)


def test_a_steady_drain_is_read_over_the_whole_window(aws: None) -> None:
    """Where the whole window drains, nothing changes: the window's mean speaks."""
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp2", 100, instance)
    demand = Demand(steps((0, 100), (BURST_AT_S, 1_000)))
    account.put(account.simulation(instance, {volume: demand}, START).run(60))
    now = START + timedelta(seconds=BURST_AT_S + 10, minutes=20)
    config = settings.load({"region": [account.region]})
    result = Analyzer(config, rules.load()).run(now)
    [state] = [s for s in result.snapshot.resources if s.ref.resource_id == volume]
    assert state.outlook is not None
    drained = 700 * (now - START - timedelta(seconds=BURST_AT_S)).total_seconds()
    assert state.outlook.seconds_to_empty == pytest.approx((CAPACITY - drained) / 700, rel=0.03)
