"""Costs: each tier's polling cadence, and a month's projected bill."""

from __future__ import annotations

import pytest

from analyzer.model.costs import SECONDS_PER_MONTH, Cadence, Projection
from analyzer.model.metrics import Tier

CADENCE = Cadence(interval_s=60, active_s=300, idle_s=900)


@pytest.mark.parametrize(
    ("tier", "seconds"), [(Tier.HOT, 60), (Tier.ACTIVE, 300), (Tier.IDLE, 900)]
)
def test_each_tier_polls_at_its_own_cadence(tier: Tier, seconds: float) -> None:
    assert CADENCE.of(tier) == seconds


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
