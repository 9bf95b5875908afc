"""Which polling tier a resource belongs in, from what its data showed."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from analyzer.analyze.outlook import with_outlook
from analyzer.analyze.tiers import TierPolicy, classify
from analyzer.model.metrics import Measure, Tier
from analyzer.model.outlook import ForecastWindows
from analyzer.model.series import Status
from analyzer.model.units import KIB
from tests.helpers import T0, series, shop_volume, volume_state

AT = T0 + timedelta(minutes=30)
ONLY_THE_OUTLOOK = TierPolicy(low_balance_percent=10.0, hot_utilization=2.0)
"""A policy where neither a low balance nor a rate near a limit makes a resource hot."""


def quiet():
    return volume_state(
        "gp3",
        100,
        {
            Measure.IOPS: series([10] * 30),
            Measure.THROUGHPUT: series([10 * 16 * KIB] * 30),
        },
        iops=3_000,
        throughput=125,
    )


@pytest.mark.parametrize(
    ("state", "previous", "alerted", "tier"),
    [
        (quiet(), None, False, Tier.IDLE),
        (quiet(), Tier.IDLE, True, Tier.HOT),
        (replace(quiet(), status=Status.ERROR), Tier.ACTIVE, False, Tier.ACTIVE),
        (replace(quiet(), status=Status.ERROR), None, False, Tier.ACTIVE),
    ],
)
def test_tiers_of_quiet_alerted_and_failed_resources(state, previous, alerted, tier) -> None:
    judged = with_outlook(state, ForecastWindows(), AT, AT)
    assert classify(judged, previous, alerted, TierPolicy(), AT) is tier


def test_the_tier_reads_the_outlook_the_rules_read() -> None:
    """The shop's volume empties in about 25 minutes by its outlook: hot. The same data
    without an outlook is only draining: active. The classifier works out no outlook of its
    own, over windows of its own."""
    judged = with_outlook(shop_volume(), ForecastWindows(rate_s=900.0), AT, AT)
    assert judged.outlook is not None and judged.outlook.seconds_to_empty < 3600
    assert classify(judged, Tier.ACTIVE, False, ONLY_THE_OUTLOOK, AT) is Tier.HOT
    unjudged = replace(judged, outlook=None)
    assert classify(unjudged, Tier.ACTIVE, False, ONLY_THE_OUTLOOK, AT) is Tier.ACTIVE


def test_an_outlook_beyond_the_hot_horizon_is_active_not_hot() -> None:
    judged = with_outlook(shop_volume(), ForecastWindows(), AT, AT)
    assert judged.outlook is not None
    far = replace(ONLY_THE_OUTLOOK, hot_empty_within_s=judged.outlook.seconds_to_empty - 1)
    assert classify(judged, Tier.ACTIVE, False, far, AT) is Tier.ACTIVE
