"""`credit_forecast` with a record of the bucket's drains: a burst like the many before it says
nothing, one whose like went on to empty the bucket warns, and a bucket left low between
bursts holds its warning; a record too thin to say anything leaves the physics forecast."""

from __future__ import annotations

from dataclasses import replace

import pytest
from pydantic import ValidationError

from analyzer.analyze.kinds.credit_forecast import CreditForecast
from analyzer.analyze.record import LEAST_DRAINS
from analyzer.model.findings import Finding, Severity
from analyzer.model.metrics import Measure
from analyzer.model.past import Grid, Past
from analyzer.model.units import KIB
from tests.helpers import record_grid, series, snapshot_of, volume_state

RULE = CreditForecast(id="forecast", resource_types=["volume"], severity="warning")
MINUTES = 60
"""Each state holds an hour of one-minute data, ending here (T0 + 60 min)."""


def _judge(balance: list[float], iops: list[float], grid: Grid | None) -> Finding | None:
    state = volume_state(
        "gp2",
        100,
        {
            Measure.BURST_BALANCE: series(balance),
            Measure.IOPS: series(iops),
            Measure.THROUGHPUT: series([v * 16 * KIB for v in iops]),
        },
    )
    if grid is not None:
        state = replace(state, past=Past(days={Measure.BURST_BALANCE: grid}))
    snap = snapshot_of(state, rules=(RULE,), minutes_of_data=MINUTES)
    return RULE.evaluate(snap.resources[0], snap, snap.data_end)


BURSTING = ([100.0] * 50 + [100.0 - 3 * m for m in range(1, 11)], [0.0] * 50 + [3_000.0] * 10)
"""Ten minutes at 3,000 IOPS on gp2 100 GiB: 30 points spent, 70 % left, empty in 23 min."""
LOW = ([100.0] * 30 + [100.0 - 3 * m for m in range(1, 21)] + [40.0] * 10, [0.0] * 60)
"""A drain from 100 % to 40 %, then idle."""


def test_a_burst_like_the_many_before_it_says_nothing() -> None:
    # Forty drains of 20 points: none spent 30, so the chance is the prior's 30 %.
    assert _judge(*BURSTING, record_grid([20.0] * 40)) is None


def test_a_burst_whose_like_went_on_to_empty_the_bucket_warns() -> None:
    found = _judge(*BURSTING, record_grid([20.0] * 20 + [100.0] * 20))
    assert found is not None and found.severity is Severity.WARNING
    assert found.evidence["forecast"] == "physics"
    record = found.evidence["record"]
    # The two weeks before the last six-hourly fetch: most of the forty.
    assert record["drains"] >= 30 and record["at_risk"] == record["went_on"] >= 15
    assert record["chance"] >= RULE.warn_chance
    assert "→ 0 in" in found.summary
    went_on = record["went_on"]
    assert f"{went_on} of the {went_on} drains in its record that spent 30 points went on" in (
        found.summary
    )


def _floor(balance: list[float], iops: list[float], rule: CreditForecast = RULE) -> Finding | None:
    state = volume_state(
        "gp2",
        100,
        {
            Measure.BURST_BALANCE: series(balance),
            Measure.IOPS: series(iops),
            Measure.THROUGHPUT: series([v * 16 * KIB for v in iops]),
        },
    )
    snap = snapshot_of(state, rules=(rule,), minutes_of_data=MINUTES)
    return rule.floor(snap.resources[0], snap, snap.data_end)


def test_a_low_bucket_warns_at_the_floor_whatever_its_record_says() -> None:
    balance = [100.0] * 20 + [100.0 - 3 * m for m in range(1, 31)] + [10.0] * 10
    found = _floor(balance, [0.0] * 60)
    assert found is not None and found.severity is Severity.WARNING
    assert found.evidence["forecast"] == "floor"
    assert found.seconds_to_empty is None
    assert "BurstBalance 10%, below 20%; the warning holds until it refills past 30%" in (
        found.summary
    )
    assert found.evidence["holds_until_percent"] == RULE.clear_balance == 30.0
    # Above the low level and idle: no floor.
    assert _floor(*LOW) is None


def test_below_the_floor_a_drain_warns_even_where_its_like_ended_with_credits_left() -> None:
    balance = [100.0] * 40 + [100.0 - 4.2 * m for m in range(1, 21)]
    iops = [0.0] * 40 + [3_000.0] * 20
    # Drains of 80 to 90 points, none emptying: this one, 84 points in, is like them, yet the
    # alarm operators run would fire: so does the warning.
    found = _judge(balance, iops, record_grid([80.0, 85.0, 90.0, 88.0] * 10))
    assert found is not None and found.severity is Severity.WARNING
    assert found.evidence["forecast"] == "floor"
    assert "→ 0 in" in found.summary


def test_an_idle_bucket_warns_until_its_baseline_could_have_refilled_it_past_clear() -> None:
    """AWS publishes no BurstBalance while a volume is idle: the bucket then earns at most
    its baseline, 300 IOPS on 100 GiB (0.33 points a minute)."""
    balance = [100.0] * 20 + [100.0 - 3 * m for m in range(1, 31)] + [10.0]
    iops = [0.0] * 20 + [3_000.0] * 31 + [0.0] * 9
    found = _floor(balance, iops)  # nine idle minutes: at most 13 % now
    assert found is not None and found.severity is Severity.WARNING
    assert found.evidence["balance_at_most_percent"] == pytest.approx(10.0 + 9.5 / 3, abs=0.1)
    assert "idle since" in found.summary
    # An hour later, still idle, it may have earned its way past 30 %: no longer.
    measures = {Measure.BURST_BALANCE: series(balance), Measure.IOPS: series(iops + [0.0] * 60)}
    snap = snapshot_of(volume_state("gp2", 100, measures), rules=(RULE,), minutes_of_data=120)
    assert RULE.floor(snap.resources[0], snap, snap.data_end) is None


def test_a_thin_record_leaves_the_physics_forecast() -> None:
    found = _judge(*BURSTING, record_grid([20.0] * (LEAST_DRAINS - 1)))
    assert found is not None and found.severity is Severity.WARNING
    assert "record" not in found.evidence
    assert _judge(*BURSTING, None) == found


def test_warnings_carry_the_level_they_hold_until() -> None:
    """The alert book holds a warning while the bucket stays below `clear_balance`."""
    rule = RULE.model_copy(update={"clear_balance": 35.0})
    balance = [100.0] * 20 + [100.0 - 3 * m for m in range(1, 31)] + [10.0] * 10
    held = _floor(balance, [0.0] * 60, rule)
    assert held is not None and held.evidence["holds_until_percent"] == 35.0
    assert held.evidence["holds_balance"] == "burst_balance"
    assert "the warning holds until it refills past 35%" in held.summary


def test_clear_balance_below_low_balance_is_refused() -> None:
    with pytest.raises(ValidationError, match="clear_balance 10 is below low_balance 20"):
        CreditForecast(id="f", resource_types=["volume"], severity="warning", clear_balance=10)
