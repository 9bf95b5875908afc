"""The month's GetMetricData bill by tier, and the cadences a budget allows."""

from __future__ import annotations

import pytest

from analyzer.analyze.billing import MAX_STRETCH_S, project, within
from analyzer.collect import queries
from analyzer.model.costs import SECONDS_PER_MONTH, Cadence
from analyzer.model.metrics import Tier
from analyzer.model.resources import Instance, InstanceType, Volume

PRICE = 0.01 / 1000  # us-east-1: $0.01 per 1,000 metrics requested
MONTH = 30 * 86400
CADENCE = Cadence(60.0, 300.0, 600.0)
M5 = InstanceType("m5.large", 3_600, 18_750, 81.25e6, 593.75e6, nitro=True)


def gp2(vid: str = "vol-1") -> Volume:
    return Volume(vid, "us-east-1", "gp2", 50, "in-use", attached_to="i-1")


@pytest.mark.parametrize(
    ("tier", "metrics", "every_s", "per_month"),
    # Active: four rates every 5 minutes, and its balance every minute between (`_watched`).
    [
        (Tier.IDLE, 2, 600, 2 * MONTH / 600),
        (Tier.ACTIVE, 5, 300, 4 * MONTH / 300 + MONTH / 60),
        (Tier.HOT, 8, 60, 8 * MONTH / 60),
    ],
)
def test_a_gp2_volume_costs_its_tiers_metrics_at_its_tiers_cadence(
    tier, metrics, every_s, per_month
):
    wanted = {"vol-1": queries.for_volume(gp2(), nitro=True, tier=tier)}
    assert len(wanted["vol-1"]) == metrics
    bill = project(wanted, {"vol-1": tier}, CADENCE, PRICE)
    assert bill.metrics[tier] == pytest.approx(per_month)
    assert bill.dollars() == pytest.approx(per_month * PRICE)


def test_a_hot_volume_whose_alerts_fire_steadily_costs_a_half():
    """Read every second minute (`Cadence.of`): 8 metrics, 480 an hour become 240."""
    wanted = {"vol-1": queries.for_volume(gp2(), nitro=True, tier=Tier.HOT)}
    every_minute = project(wanted, {"vol-1": Tier.HOT}, CADENCE, PRICE)
    steady = project(wanted, {"vol-1": Tier.HOT}, CADENCE, PRICE, steady={"vol-1"})
    assert steady.metrics[Tier.HOT] == pytest.approx(8 * MONTH / 120)
    assert steady.dollars() == pytest.approx(every_minute.dollars() / 2)


def test_every_metric_every_minute_is_what_polling_full_costs():
    """The first version asked for 11 metrics a volume every minute ($4.75 a month). Every
    metric now is 11 on Nitro (idle time only where no exceeded check exists; the stalled-I/O
    check) and 9 on Xen."""
    for nitro, count in ((True, 11), (False, 9)):
        wanted = {"vol-1": queries.for_volume(gp2(), nitro=nitro)}
        bill = project(wanted, {"vol-1": Tier.HOT}, CADENCE, PRICE)
        assert bill.dollars() == pytest.approx(count * MONTH / 60 * PRICE)


def test_five_minute_ec2_metrics_are_asked_for_once_per_point():
    instance = Instance("i-1", "us-east-1", "m5.large", "running", type_info=M5)
    wanted = {"i-1": queries.for_instance(instance, Tier.HOT)}
    bill = project(wanted, {"i-1": Tier.HOT}, CADENCE, PRICE)
    # The attached-EBS status check comes every minute whatever the monitoring.
    every_minute = [q for q in wanted["i-1"] if q.period_s == 60]
    assert [q.metric for q in every_minute] == ["StatusCheckFailed_AttachedEBS"]
    fives = len(wanted["i-1"]) - len(every_minute)
    assert bill.metrics[Tier.HOT] == pytest.approx(fives * MONTH / 300 + MONTH / 60)


def fleet_bill():
    wanted = {
        "hot": queries.for_volume(gp2("hot"), nitro=True, tier=Tier.HOT),
        **{f"idle-{n}": queries.for_volume(gp2(), nitro=True, tier=Tier.IDLE) for n in range(50)},
    }
    tiers = {rid: Tier.HOT if rid == "hot" else Tier.IDLE for rid in wanted}
    return wanted, tiers, project(wanted, tiers, CADENCE, PRICE)


def test_a_budget_stretches_the_quiet_cadences_and_never_the_hot_one():
    wanted, tiers, bill = fleet_bill()
    budget = bill.dollars(Tier.HOT) + bill.dollars(Tier.IDLE) / 2
    cadence = within(budget, bill, CADENCE)
    assert cadence.interval_s == 60.0
    assert cadence.idle_s == pytest.approx(1_200.0)
    assert project(wanted, tiers, cadence, PRICE).dollars() == pytest.approx(budget)


def test_a_budget_that_is_not_binding_changes_nothing():
    _, _, bill = fleet_bill()
    assert within(bill.dollars() * 2, bill, CADENCE) == CADENCE


def test_a_budget_below_the_hot_resources_stretches_the_rest_as_far_as_it_goes():
    _, _, bill = fleet_bill()
    cadence = within(bill.dollars(Tier.HOT) / 2, bill, CADENCE)
    assert (cadence.interval_s, cadence.active_s, cadence.idle_s) == (
        60.0,
        MAX_STRETCH_S,
        MAX_STRETCH_S,
    )


def test_the_bill_counts_guards_and_guarded_volumes_at_their_own_cadences():
    gp3 = [
        Volume(f"vol-{n}", "us-east-1", "gp3", 100, "in-use", 3_000, 125, "i-1") for n in range(6)
    ]
    info = InstanceType("m5.large", 3_600, 18_750, 81.25e6, 593.75e6, nitro=True)
    one = Instance(
        "i-1", "us-east-1", "m5.large", "running", True, tuple(v.volume_id for v in gp3), info
    )
    from analyzer.model.resources import Inventory

    inv = Inventory("us-east-1", tuple(gp3), (one,))
    tiers = dict.fromkeys(["i-1", *(v.volume_id for v in gp3)], Tier.IDLE)
    guards = queries.guards_of(inv, tiers, ())
    wanted = queries.for_inventory(inv, tiers, guards=guards)
    cadence = Cadence(60.0, 300.0, 900.0)
    alarms = dict.fromkeys(tiers, 1_440.0)  # the m5.large's bucket: every 10 minutes
    plain = project(wanted, tiers, cadence, 1.0, alarms)
    roles = {"i-1": "guard", **dict.fromkeys((v.volume_id for v in gp3), "guarded")}
    guarded = project(wanted, tiers, cadence, 1.0, alarms, roles=roles)
    hour = 3_600 / SECONDS_PER_MONTH
    # Six volumes' two counts every 10 minutes: 72 an hour; guarded, 12 and the guard's 24.
    assert plain.total_metrics * hour == pytest.approx(72 + 12)
    assert guarded.total_metrics * hour == pytest.approx(12 + 24)
