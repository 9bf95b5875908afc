"""`credit_forecast` above the floor where the record does not vouch for the drain: the burn
over a long and a short window both empty the bucket within the pair's `within`, for each kind
of bucket (gp2, st1, an RDS instance's gp2 storage, an instance's EBS burst)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from pydantic import ValidationError

from analyzer.analyze.kinds.credit_forecast import BurnWindows, CreditForecast
from analyzer.model.findings import Bottleneck, Finding, Severity
from analyzer.model.metrics import Measure
from analyzer.model.past import Past
from analyzer.model.resources import DbInstance, InstanceType
from analyzer.model.state import ResourceState
from analyzer.model.units import KIB, MB, MIB
from tests.helpers import (
    db_state,
    instance_state,
    record_grid,
    series,
    snapshot_of,
    volume_state,
)

RULE = CreditForecast(
    id="forecast",
    resource_types=["volume", "db_instance", "instance"],
    severity="warning",
    burn=[BurnWindows(long=900, short=300, within=1800)],
)
SILENT = RULE.model_copy(update={"burn": ()})
MINUTES = 60
NEAR_MISSES = record_grid([20.0] * 40)
"""Forty drains of 20 points, none deeper: the record gives a deeper drain the prior's chance
(spent / peak), well below `warn_chance`."""


def _judge(state: ResourceState, rule: CreditForecast = RULE) -> Finding | None:
    state = replace(state, past=Past(days=dict.fromkeys(_balances(state), NEAR_MISSES)))
    snap = snapshot_of(state, rules=(rule,), minutes_of_data=MINUTES)
    return rule.evaluate(snap.resources[0], snap, snap.data_end)


def _balances(state: ResourceState) -> list[Measure]:
    return [m for m in (Measure.BURST_BALANCE, Measure.IO_BALANCE) if m in state.measures]


def _gp2(balance: list[float], iops: list[float]) -> ResourceState:
    return volume_state(
        "gp2",
        100,
        {
            Measure.BURST_BALANCE: series(balance),
            Measure.IOPS: series(iops),
            Measure.THROUGHPUT: series([v * 16 * KIB for v in iops]),
        },
    )


LASTED = ([100.0] * 45 + [100.0 - 3 * m for m in range(1, 16)], [0.0] * 45 + [3_000.0] * 15)
"""Fifteen minutes at 3,000 IOPS on gp2 100 GiB: 45 points spent, 55 % left, 3 points a
minute: empty in about 18 minutes by both windows."""
BEGUN = ([100.0] * 50 + [100.0 - 3 * m for m in range(1, 11)], [0.0] * 50 + [3_000.0] * 10)
"""Ten minutes of the same: by the last five minutes empty in 23, by the last quarter hour
(two thirds of it draining) in 35."""


def test_a_drain_that_lasted_warns_by_its_burn_where_the_record_has_none_like_it() -> None:
    found = _judge(_gp2(*LASTED))
    assert found is not None and found.severity is Severity.WARNING
    assert found.evidence["forecast"] == "burn"
    burn = found.evidence["burn"]
    assert (burn["long_window_s"], burn["short_window_s"], burn["within_s"]) == (900, 300, 1800)
    assert burn["long_seconds_to_empty"] <= 1800 and burn["short_seconds_to_empty"] <= 1800
    assert burn["short_seconds_to_empty"] == pytest.approx(55 / 3 * 60, rel=0.1)
    # The record spoke, and did not vouch for it: it says so beside the burn.
    assert found.evidence["record"]["chance"] < RULE.warn_chance
    assert "its burn over the last 15 min and the last 5 min both empty it within 30 min" in (
        found.summary
    )
    # The hold and the floor's level are the physics forecast's.
    assert found.evidence["holds_until_percent"] == RULE.clear_balance


def test_without_burn_windows_the_record_alone_decides_and_says_nothing() -> None:
    assert _judge(_gp2(*LASTED), SILENT) is None


def test_a_burst_just_begun_does_not_burn_over_the_long_window() -> None:
    assert _judge(_gp2(*BEGUN)) is None
    # A longer `within` lets the same burst speak: the windows are what held it back.
    hasty = RULE.model_copy(update={"burn": (BurnWindows(long=900, short=300, within=2400),)})
    found = _judge(_gp2(*BEGUN), hasty)
    assert found is not None and found.evidence["forecast"] == "burn"


def test_a_drain_that_has_slowed_does_not_burn_over_the_short_window() -> None:
    slowed = RULE.model_copy(update={"horizon": 6 * 3600.0})
    balance = LASTED[0][:-5] + [LASTED[0][-6] - 0.4 * m for m in range(1, 6)]
    iops = LASTED[1][:-5] + [700.0] * 5
    assert _judge(_gp2(balance, iops), slowed) is None


def test_the_first_pair_that_speaks_is_named() -> None:
    pairs = (
        BurnWindows(long=3600, short=900, within=1200),  # too short a `within` for this drain
        BurnWindows(long=600, short=120, within=1500),
    )
    found = _judge(_gp2(*LASTED), RULE.model_copy(update={"burn": pairs}))
    assert found is not None
    assert found.evidence["burn"]["long_window_s"] == 600


def test_st1_throughput_credits_burn_over_the_rules_windows() -> None:
    tib = 1_024  # 40 MiB/s baseline, 250 burst; a drain at 250 MiB/s spends 1.2 % a minute
    minutes = [100.0] * 20 + [100.0 - 1.2 * m for m in range(1, 41)]
    rate = [0.0] * 20 + [250.0 * MIB] * 40
    state = volume_state(
        "st1",
        tib,
        {
            Measure.BURST_BALANCE: series(minutes),
            Measure.THROUGHPUT: series(rate),
            Measure.IOPS: series([r / MIB for r in rate]),
        },
    )
    hdd = RULE.model_copy(
        update={"horizon": 7200.0, "burn": (BurnWindows(long=1800, short=600, within=3600),)}
    )
    found = _judge(state, hdd)
    assert found is not None and found.evidence["forecast"] == "burn"
    assert found.bottleneck is Bottleneck.BURST_CREDITS
    assert _judge(state, hdd.model_copy(update={"burn": ()})) is None


def test_an_rds_instances_gp2_storage_burns_as_one_bucket() -> None:
    db = DbInstance(
        "db-1", "us-east-1", "postgres", "db.r5.xlarge", "gp2", 100, "available", None, None
    )
    measures = {
        Measure.BURST_BALANCE: series(LASTED[0]),
        Measure.IOPS: series(LASTED[1]),
        Measure.READ_IOPS: series(LASTED[1]),
        Measure.WRITE_IOPS: series([0.0] * MINUTES),
        Measure.THROUGHPUT: series([v * 16 * KIB for v in LASTED[1]]),
    }
    found = _judge(db_state(db, measures))
    assert found is not None and found.evidence["forecast"] == "burn"
    assert _judge(db_state(db, measures), SILENT) is None


M5 = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)


def test_an_instances_ebs_burst_burns_by_its_own_balance() -> None:
    falling = [100.0] * 30 + [100.0 - 2 * m for m in range(1, 31)]
    state = instance_state(
        M5,
        {
            Measure.IOPS: series([0.0] * 30 + [18_750.0] * 30),
            Measure.THROUGHPUT: series([50 * MB] * MINUTES),
            Measure.IO_BALANCE: series(falling),
            Measure.BYTE_BALANCE: series([100.0] * MINUTES),
        },
    )
    found = _judge(state)
    assert found is not None and found.evidence["forecast"] == "burn"
    assert found.bottleneck is Bottleneck.INSTANCE_BURST_CREDITS
    assert _judge(state, SILENT) is None


def test_a_short_window_as_long_as_the_long_one_is_refused() -> None:
    with pytest.raises(ValidationError, match="short 15 min is not shorter than long 15 min"):
        BurnWindows(long=900, short=900, within=1800)


def test_the_kinds_own_pair_speaks_ten_minutes_from_empty() -> None:
    """The kind's default (and the shipped gp2 rule's): 15 and 5 minutes, within 10. A drain
    at 3 points a minute with 55 % left is 18 minutes from empty: not yet; with 25 % left,
    8 minutes: it speaks, above the 20 % floor."""
    kind = CreditForecast(id="f", resource_types=["volume"], severity="warning")
    assert kind.burn == (BurnWindows(long=900, short=300, within=600),)
    assert _judge(_gp2(*LASTED), kind) is None
    deeper = [100.0] * 35 + [100.0 - 3 * m for m in range(1, 26)]
    found = _judge(_gp2(deeper, [0.0] * 35 + [3_000.0] * 25), kind)
    assert found is not None and found.evidence["forecast"] == "burn"
    assert found.credit is not None and found.credit.balance_percent == pytest.approx(25, abs=1)
