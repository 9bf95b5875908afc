"""Ways past a volume type's own ceiling, priced from the shipped us-east-1 list: io2, or a
set of volumes striped together."""

from __future__ import annotations

import pytest

from analyzer.analyze import prices
from analyzer.analyze.advice.past_ceiling import STRIPES_AT_MOST, stripe, to_io2
from analyzer.analyze.advice.sizing import Need
from analyzer.model.findings import RemedyKind
from analyzer.model.resources import InstanceType, Volume
from analyzer.model.units import MB
from tests.helpers import instance_state

PRICES = prices.load()
IO1 = Volume("vol-1", "us-east-1", "io1", 500, "in-use", iops=10_000, attached_to="i-1")
GP3_AT_CEILING = Volume(
    "vol-2",
    "us-east-1",
    "gp3",
    1_000,
    "in-use",
    iops=80_000,
    throughput_mibps=2_000,
    attached_to="i-1",
)
GP3 = (80_000, 2_000)
IO2 = (256_000, 4_000)


def test_io1_to_io2_keeps_its_iops_for_eight_times_the_throughput_at_the_same_price():
    now = PRICES.monthly("io1", 500, 10_000)
    fix = to_io2(IO1, Need(5_000, 100), PRICES, now, nitro=None)
    assert fix is not None
    assert fix.action == (
        "Move to io2 with 10,000 IOPS (2,560 MiB/s), online (ModifyVolume, at most 4 per "
        "volume in 24 h)"
    )
    assert fix.kind is RemedyKind.PAST_CEILING
    assert (fix.monthly_cost, fix.monthly_delta) == (712.5, 0.0)
    assert fix.change is not None and fix.change.after["volume_type"] == "io2"


def test_io2_iops_are_sized_for_the_throughput_needed():
    # 3,000 MiB/s at 0.256 MiB/s per IOPS: 11,719, up to 12,000.
    fix = to_io2(IO1, Need(1_000, 3_000), PRICES, None, nitro=True)
    assert fix is not None
    assert fix.action.startswith("Move to io2 with 12,000 IOPS (3,072 MiB/s), online")


def test_a_small_volume_grows_to_carry_its_io2_iops():
    # io2 gives at most 1,000 IOPS a GiB: 40,000 IOPS need 40 GiB.
    small = Volume("vol-3", "us-east-1", "gp3", 20, "in-use", attached_to="i-1")
    fix = to_io2(small, Need(40_000, 500), PRICES, None, nitro=True)
    assert fix is not None
    assert ", grown to 40 GiB; above 32,000 IOPS it needs a Nitro instance, online" in fix.action
    assert fix.change is not None and fix.change.after["size_gib"] == 40


@pytest.mark.parametrize(
    ("need", "nitro"),
    [
        (Need(40_000, 500), False),  # beyond 32,000 IOPS on an instance not built on Nitro
        (Need(260_000, 500), True),  # beyond io2's 256,000 IOPS
        (Need(10_000, 4_100), True),  # beyond io2's 4,000 MiB/s
    ],
)
def test_io2_is_not_offered_where_it_cannot_carry_the_need(need, nitro):
    assert to_io2(IO1, need, PRICES, None, nitro) is None


def test_io2_beyond_32000_iops_is_offered_where_the_instance_is_not_known():
    fix = to_io2(IO1, Need(40_000, 500), PRICES, None, nitro=None)
    assert fix is not None and "above 32,000 IOPS it needs a Nitro instance" in fix.action


def test_gp3_past_its_ceiling_stripes_over_two_volumes_each_with_half():
    now = PRICES.monthly("gp3", 1_000, 80_000, 2_000)
    fix = stripe(GP3_AT_CEILING, Need(120_000, 3_000), PRICES, now, GP3)
    assert fix is not None
    assert fix.action == (
        "Stripe over 2 gp3 volumes of 500 GiB with 60,000 IOPS and 1,500 MiB/s each (RAID 0 "
        "on i-1; a new set, the data copied over): gp3 stops at 80,000 IOPS and 2,000 MiB/s "
        "a volume"
    )
    assert fix.kind is RemedyKind.STRIPE
    # Each: 500 GiB at $0.08, 57,000 IOPS at $0.005, 1,375 MiB/s at $0.04 = $380.
    assert (fix.monthly_cost, fix.monthly_delta) == (760.0, 220.0)
    assert fix.change is not None
    assert fix.change.after["volumes"] == 2
    assert fix.change.after["iops_limit"] == 120_000


def test_each_striped_gp3_volume_keeps_at_least_what_gp3_includes():
    # 100,000 IOPS and 200 MiB/s over two: 100 MiB/s each is below gp3's included 125.
    fix = stripe(GP3_AT_CEILING, Need(100_000, 200), PRICES, None, GP3)
    assert fix is not None
    assert "with 50,000 IOPS and 125 MiB/s each" in fix.action
    assert fix.monthly_delta is None


def test_io2_stripes_are_sized_by_their_iops_alone():
    io2 = Volume("vol-4", "us-east-1", "io2", 200, "in-use", iops=200_000, attached_to="i-1")
    fix = stripe(io2, Need(300_000, 1_000), PRICES, None, IO2)
    assert fix is not None
    # 150,000 IOPS each need 150 GiB at io2's 1,000 IOPS a GiB, more than half of 200.
    assert fix.action.startswith("Stripe over 2 io2 volumes of 150 GiB with 150,000 IOPS each")
    assert "io2 stops at 256,000 IOPS and 4,000 MiB/s a volume" in fix.action


@pytest.mark.parametrize(
    "need",
    [
        Need(70_000, 1_500),  # one volume carries it
        Need(80_000 * STRIPES_AT_MOST + 1, 1_000),  # more than eight volumes
        Need(10_000, 2_000 * STRIPES_AT_MOST + 1),
    ],
)
def test_no_stripe_where_one_volume_suffices_or_eight_do_not(need):
    assert stripe(GP3_AT_CEILING, need, PRICES, None, GP3) is None


def test_a_stripe_names_the_instance_limits_it_meets_next():
    r6in = InstanceType("r6in.8xlarge", 100_000, 100_000, 3_125 * MB, 3_125 * MB, nitro=True)
    instance = instance_state(r6in, volume_ids=("vol-2",))
    fix = stripe(GP3_AT_CEILING, Need(120_000, 3_000), PRICES, None, GP3, instance)
    assert fix is not None
    assert fix.action.endswith("; then i-1's EBS limits bind: 100,000 IOPS, 3,125 MB/s")
