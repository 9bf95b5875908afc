"""A resource's credit outlook: its windows' defaults, and a value no reader can change."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from analyzer.model.layers import Bucket
from analyzer.model.metrics import Measure
from analyzer.model.outlook import ForecastWindows, Outlook


def test_the_windows_default_to_five_minutes_of_rate_and_half_an_hour_of_trend():
    assert ForecastWindows() == ForecastWindows(rate_s=300.0, trend_s=1_800.0)


def test_an_outlook_keeps_its_own_evidence_and_is_frozen(bucket: Bucket):
    evidence = {"forecast": "physics"}
    outlook = Outlook(1_450.0, bucket, 1_500.0, 40.0, evidence)
    evidence["forecast"] = "trend"
    assert outlook.evidence == {"forecast": "physics"}
    with pytest.raises(TypeError):
        outlook.evidence["forecast"] = "profile"  # type: ignore[index]
    with pytest.raises(FrozenInstanceError):
        outlook.seconds_to_empty = 0.0  # type: ignore[misc]


@pytest.fixture
def bucket() -> Bucket:
    from tests.helpers import shop_volume

    [found] = [b for b in shop_volume().buckets() if b.balance is Measure.BURST_BALANCE]
    return found
