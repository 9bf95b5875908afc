import pytest

from analyzer.analyze import prices
from analyzer.analyze.kinds.caps import IopsCap, ThroughputCap
from analyzer.analyze.kinds.credit_forecast import CreditForecast
from analyzer.analyze.kinds.credits_exhausted import CreditsExhausted
from analyzer.model.findings import RemedyKind
from analyzer.model.metrics import Measure
from analyzer.model.resources import InstanceType
from analyzer.model.units import KIB, MB
from tests.helpers import fixes_of as fixes
from tests.helpers import instance_state, series, volume_state
from tests.helpers import steady_gp2 as gp2

PRICES = prices.load()


def test_the_shop_volume_is_cheaper_on_gp3():
    rule = CreditForecast(id="f", resource_types=["volume"], severity="warning")
    _, [gp3, refill, grow] = fixes(rule, gp2(1_500, 40.0))
    assert gp3.action.startswith("Move to gp3 with 3,000 IOPS and 125 MiB/s included, online")
    # The emergency step: a grown gp2 volume comes back with a full bucket (incident 2).
    assert refill.action.startswith(
        "Now, to buy time: grow to 51 GiB; a grown gp2 volume's bucket comes back full "
        "(as observed), 67 min of burst at 1,500 IOPS; one of the volume's 4 modifications in "
        "24 h, and the lasting fix waits until it has completed"
    )
    assert refill.monthly_delta == pytest.approx(0.10)
    assert refill.change is not None and refill.change.after["size_gib"] == 51
    assert (gp3.monthly_cost, gp3.monthly_delta) == (4.0, -1.0)
    assert gp3.cost_text() == "−$1.00/month"
    # 1,500 IOPS with a fifth more room: 1,800 IOPS of baseline needs 600 GiB.
    assert grow.action.startswith("Grow to 600 GiB (1,800 IOPS baseline")
    assert (grow.monthly_cost, grow.monthly_delta) == (60.0, 55.0)
    assert [o.kind for o in (gp3, refill, grow)] == [
        RemedyKind.MODIFY,
        RemedyKind.STOPGAP,
        RemedyKind.MODIFY,
    ]


def test_an_exhausted_volume_unseen_before_is_sized_for_the_burst_it_lost():
    rule = CreditsExhausted(id="e", resource_types=["volume"], severity="critical")
    _, options = fixes(rule, gp2(150, 0.0))
    assert options[0].action.startswith("Move to gp3 with 3,000 IOPS")
    # Throttled with its demand unseen: at most a full burst, 32 min at 3,000 IOPS.
    assert options[1].action.startswith("Now, to buy time: grow to 51 GiB")
    assert "32 min of burst at 3,000 IOPS" in options[1].action
    assert options[2].action.startswith("Grow to 1,000 GiB (3,000 IOPS baseline")


def test_an_exhausted_volume_is_sized_for_the_demand_seen_before_it_ran_out():
    """1,500 IOPS while credits lasted: a fifth more room is 1,800 IOPS of baseline, 600 GiB,
    not the 1,000 GiB of the burst ceiling."""
    rule = CreditsExhausted(id="e", resource_types=["volume"], severity="critical")
    iops = [1_500] * 12 + [150] * 18
    state = volume_state(
        "gp2",
        50,
        {
            Measure.IOPS: series(iops),
            Measure.THROUGHPUT: series([v * 4 * KIB for v in iops]),
            Measure.BURST_BALANCE: series([5.0] * 12 + [0.0] * 18),
        },
    )
    _, options = fixes(rule, state)
    assert options[0].action.startswith("Move to gp3 with 3,000 IOPS")
    assert options[2].action.startswith("Grow to 600 GiB (1,800 IOPS baseline")


def test_a_capped_gp3_volume_is_raised_only_up_to_the_next_limit():
    r6i = InstanceType("r6i.8xlarge", 40_000, 40_000, 1_250 * MB, 1_250 * MB, nitro=True)
    io = 112 * KIB
    volume = volume_state(
        "gp3",
        2_000,
        {Measure.IOPS: series([9_143] * 30), Measure.THROUGHPUT: series([9_143 * io] * 30)},
        iops=16_000,
        throughput=1_000,
    )
    instance = instance_state(
        r6i,
        {Measure.IOPS: series([9_143] * 30), Measure.THROUGHPUT: series([9_143 * io] * 30)},
        volume_ids=("vol-1",),
    )
    rule = ThroughputCap(id="t", resource_types=["volume"], severity="warning")
    _, [raise_] = fixes(rule, volume, instance)
    # The instance's 1,250 MB/s lets through 1.19x today's 1,000 MiB/s: 1,200 MiB/s, no more.
    assert raise_.action.startswith("Provision 16,000 IOPS, 1,200 MiB/s, online")
    assert "beyond that the instance throughput limit of i-1 binds" in raise_.action
    assert raise_.monthly_delta == pytest.approx(200 * 0.04)


def test_io2_iops_with_tiered_prices():
    volume = volume_state(
        "io2",
        2_000,
        {Measure.IOPS: series([32_000] * 30), Measure.THROUGHPUT: series([32_000 * 16 * KIB] * 30)},
        iops=32_000,
    )
    rule = IopsCap(id="i", resource_types=["volume"], severity="warning")
    _, [raise_] = fixes(rule, volume)
    # No next limit within 2x: room for twice today's rate.
    assert raise_.action.startswith("Provision 64,000 IOPS, online")
    assert raise_.monthly_delta == pytest.approx(32_000 * 0.0455)


def test_instance_caps_name_what_a_new_type_must_carry():
    r6in = InstanceType("r6in.8xlarge", 100_000, 100_000, 3_125 * MB, 3_125 * MB, nitro=True)
    instance = instance_state(
        r6in, {Measure.IOPS: series([27_000] * 30), Measure.THROUGHPUT: series([3_125 * MB] * 30)}
    )
    rule = ThroughputCap(id="t", resource_types=["instance"], severity="warning")
    _, [fix] = fixes(rule, instance)
    assert "more than 3,125 MB/s of EBS throughput" in fix.action
    # Without the region's list of types, none is named, and nothing is priced.
    assert fix.monthly_delta is None and fix.cost_text() == "unpriced"
