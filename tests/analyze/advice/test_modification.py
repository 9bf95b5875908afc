"""A volume modification priced from the shipped us-east-1 list, and the change it makes in
fields a program reads."""

from __future__ import annotations

from dataclasses import replace

import pytest

from analyzer.analyze import prices
from analyzer.analyze.advice.modification import priced, volume_change
from analyzer.model.findings import RemedyKind
from analyzer.model.resources import ResourceType, Volume

PRICES = prices.load()
GP2 = Volume("vol-1", "us-east-1", "gp2", 100, "in-use", attached_to="i-1")
"""$10.00 a month: 100 GiB at $0.10."""


@pytest.mark.parametrize(
    ("volume_type", "size", "iops", "mibps", "cost"),
    [
        ("gp3", 100, 3_000, 125, 8.00),  # 100 GiB at $0.08, IOPS and MiB/s included
        ("gp3", 100, 6_000, 500, 38.00),  # + 3,000 IOPS at $0.005, + 375 MiB/s at $0.04
        ("gp2", 200, None, None, 20.00),
        ("io1", 100, 5_000, None, 337.50),  # 100 GiB at $0.125, 5,000 IOPS at $0.065
        ("io2", 100, 40_000, None, 2_456.50),  # 32,000 at $0.065, 8,000 at $0.0455
    ],
)
def test_a_modification_is_priced_and_compared_with_today(volume_type, size, iops, mibps, cost):
    fix = priced("Move", PRICES, 10.0, GP2, volume_type, size, iops, mibps)
    assert fix.monthly_cost == pytest.approx(cost)
    assert fix.monthly_delta == pytest.approx(round(cost - 10.0, 2))
    assert fix.kind is RemedyKind.MODIFY


def test_without_todays_price_the_difference_is_unknown():
    fix = priced("Move", PRICES, None, GP2, "gp3", 100, 3_000, 125)
    assert (fix.monthly_cost, fix.monthly_delta) == (8.0, None)


def test_a_type_without_a_price_is_unpriced():
    fix = priced("Move", PRICES, 10.0, GP2, "standard", 100)
    assert (fix.monthly_cost, fix.monthly_delta) == (None, None)
    assert fix.cost_text() == "unpriced"


def test_the_change_says_the_configuration_before_and_after():
    fix = priced("Move", PRICES, 10.0, GP2, "gp3", 100, 6_000.0, 500.0, RemedyKind.PAST_CEILING)
    assert fix.kind is RemedyKind.PAST_CEILING
    change = fix.change
    assert change is not None
    assert (change.resource_type, change.resource_id) == (ResourceType.VOLUME, "vol-1")
    assert dict(change.before) == {
        "volume_type": "gp2",
        "size_gib": 100,
        "iops": None,
        "throughput_mibps": None,
    }
    # IOPS and MiB/s are whole numbers in the request a program makes of them.
    assert change.after["iops"] == 6_000 and isinstance(change.after["iops"], int)
    assert change.after["throughput_mibps"] == 500
    assert (change.after["iops_limit"], change.after["throughput_limit_mibps"]) == (6_000, 500)


def test_a_bursting_volume_after_the_change_carries_its_baseline_too():
    # gp2 100 GiB: 3,000 IOPS of burst over 300 of baseline, 128 MiB/s.
    after = dict(volume_change(GP2, GP2).after)
    assert after["iops_limit"] == 3_000
    assert after["baseline_iops_limit"] == 300
    assert after["throughput_limit_mibps"] == 128


def test_a_volume_that_does_not_burst_has_no_baseline_limit():
    gp3 = replace(GP2, volume_type="gp3", iops=6_000, throughput_mibps=500)
    after = dict(volume_change(GP2, gp3).after)
    assert "baseline_iops_limit" not in after
    assert "volumes" not in after


@pytest.mark.parametrize("volumes", [2, 3, 8])
def test_a_striped_set_carries_the_limits_of_all_its_volumes(volumes):
    each = replace(GP2, volume_type="gp3", size_gib=50, iops=6_000, throughput_mibps=500)
    after = dict(volume_change(GP2, each, volumes).after)
    assert after["volumes"] == volumes
    assert after["size_gib"] == 50  # the configuration is each volume's
    assert after["iops_limit"] == 6_000 * volumes
    assert after["throughput_limit_mibps"] == 500 * volumes


def test_a_striped_bursting_set_has_one_baseline_per_volume():
    after = dict(volume_change(GP2, GP2, 2).after)
    assert (after["iops_limit"], after["baseline_iops_limit"]) == (6_000, 600)
