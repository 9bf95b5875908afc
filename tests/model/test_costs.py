"""Costs: each tier's polling cadence, and a month's projected bill."""

from __future__ import annotations

import pytest

from analyzer.model.costs import SECONDS_PER_MONTH, STEADY_S, Cadence, Projection
from analyzer.model.metrics import Tier

CADENCE = Cadence(interval_s=60, active_s=300, idle_s=900)


@pytest.mark.parametrize(
    ("tier", "seconds"), [(Tier.HOT, 60), (Tier.ACTIVE, 300), (Tier.IDLE, 900)]
)
def test_each_tier_polls_at_its_own_cadence(tier: Tier, seconds: float) -> None:
    assert CADENCE.of(tier) == seconds


def test_a_steady_hot_resource_is_polled_while_its_data_stays_recent() -> None:
    """One-minute data stays recent for two minutes (`STALE_PERIODS`), and a sum's newest
    minute is read once the next is there: a poll every second minute keeps its rules and
    alerts judged on data every cycle."""
    assert STEADY_S == 120
    assert CADENCE.of(Tier.HOT, steady=True) == 120
    assert Cadence(60, 90, 900).of(Tier.HOT, steady=True) == 90  # never past the active
    assert Cadence(300, 300, 900).of(Tier.HOT, steady=True) == 300  # nor within the interval
    assert CADENCE.of(Tier.ACTIVE, steady=True) == 300  # steady says nothing of other tiers


def test_a_month_is_thirty_days() -> None:
    assert SECONDS_PER_MONTH == 2_592_000


def test_projection_totals_and_prices_by_tier() -> None:
    projection = Projection({Tier.HOT: 43_200, Tier.IDLE: 2_880}, price_per_metric=0.00001)
    assert projection.total_metrics == 46_080
    assert projection.dollars() == pytest.approx(0.4608)
    assert projection.dollars(Tier.HOT) == pytest.approx(0.432)
    assert projection.dollars(Tier.ACTIVE) == 0.0


def test_an_empty_projection_costs_nothing() -> None:
    assert Projection({}, 0.00001).dollars() == 0.0


def test_an_idle_resource_is_polled_within_four_tenths_of_its_soonest_alarm() -> None:
    # A full gp2 bucket of a 1 GiB volume reaches 20 % in 1,490 s: every 10 minutes.
    assert CADENCE.of(Tier.IDLE, 1_490) == 600
    # An HDD bucket, slower: the longest idle cadence bounds it.
    assert CADENCE.of(Tier.IDLE, 3_994) == 900
    # Never more often than an active resource, whatever the bucket.
    assert CADENCE.of(Tier.IDLE, 100) == 300
    # The quiet tiers' own cadences hold whatever the bucket.
    assert CADENCE.of(Tier.ACTIVE, 1_490) == 300
    assert CADENCE.of(Tier.HOT, 1_490) == 60
    # A budget that stretched the cadences stretches this one alike.
    stretched = Cadence(60, 600, 1_800, stretch=2.0)
    assert stretched.of(Tier.IDLE, 1_490) == 1_200


def test_an_instance_s_physics_sets_the_cadence_of_its_resources() -> None:
    from analyzer.model.costs import GUARDED_S

    cadence = Cadence(60.0, 300.0, 900.0)
    assert cadence.of_resource(Tier.ACTIVE, role="minute") == 60.0
    assert cadence.of_resource(Tier.HOT, steady=True, role="minute") == cadence.of(
        Tier.HOT, steady=True
    )
    assert cadence.of_resource(Tier.IDLE, 1_440.0, role="guard") == 300.0
    assert cadence.of_resource(Tier.IDLE, 1_440.0, role="guarded") == GUARDED_S == 3_600.0
    # A budget that stretches the idle cadence past an hour stretches the guarded one too.
    assert Cadence(60.0, 300.0, 7_200.0).of_resource(Tier.IDLE, role="guarded") == 7_200.0
    # Off its role's tier, a resource keeps its tier's cadence.
    assert cadence.of_resource(Tier.ACTIVE, role="guarded") == 300.0
    # Active by its load alone, its buckets full: read as an idle resource is.
    assert cadence.of_resource(Tier.ACTIVE, 1_440.0, role="full") == cadence.of(Tier.IDLE, 1_440.0)
    assert cadence.of_resource(Tier.ACTIVE, role="full") == cadence.idle_s
    assert cadence.of_resource(Tier.IDLE, 1_440.0) == cadence.of(Tier.IDLE, 1_440.0) == 600.0


def test_a_guard_stands_where_it_costs_less_than_reading_its_volumes() -> None:
    cadence = Cadence(60.0, 300.0, 900.0)
    drains = 1_440.0  # a bucket its volumes can drain: each read every 10 minutes
    assert not cadence.guard_pays([drains] * 2)  # 24 metrics an hour read, 28 guarded
    assert cadence.guard_pays([drains] * 3)  # 36 against 30
    assert not cadence.guard_pays([None] * 4)  # every 15 minutes: 32 against 32
    assert cadence.guard_pays([None] * 5)
