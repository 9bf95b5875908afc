"""Each fix replayed over the resource's own past: the fixes that would have held go first,
a fix to buy time says what it would have bought."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np

from analyzer.analyze.advice.proof import fitted, option_limits, proven
from analyzer.analyze.kinds.credit_forecast import CreditForecast
from analyzer.model.demand import Demand
from analyzer.model.findings import Change, Finding, Remedy, RemedyKind
from analyzer.model.resources import ResourceType
from tests.analyze.advice.test_instance import cap
from tests.helpers import fixes_of, steady_gp2

START = datetime(2026, 11, 7, tzinfo=UTC)
IO_BYTES = 4096


def nightly(iops: float, minutes: int, days: int = 14) -> Demand:
    """`iops` for `minutes` from 02:00 every night, 20 IOPS otherwise, as CloudWatch shows a
    gp2 50 GiB volume doing it: at its 150 IOPS baseline once the bucket is empty."""
    demand = np.full(days * 1440, 20.0)
    for day in range(days):
        first = day * 1440 + 120
        demand[first : first + minutes] = iops
    shown, credits = [], 5_400_000.0
    for want in demand.tolist():
        got = min(want, 3_000.0 if credits > 54_000 else 150.0)
        shown.append(got)
        credits = min(max(credits - (got - 150.0) * 60, 0.0), 5_400_000.0)
    rates = np.array(shown)
    return Demand.seen(START, 60, rates, rates * IO_BYTES)


def draining_gp2_finding():
    rule = CreditForecast(id="f", resource_types=["volume"], severity="warning")
    state = steady_gp2(1_500, 40.0)
    finding, options = fixes_of(rule, state)
    assert [o.kind for o in options] == [RemedyKind.MODIFY, RemedyKind.STOPGAP, RemedyKind.MODIFY]
    return finding, state


def test_every_fix_carries_its_past_and_the_one_that_would_have_throttled_goes_last() -> None:
    finding, state = draining_gp2_finding()
    # 1,500 IOPS for two hours a night: 5.4 M credits last 5,400,000 / 1,350 s, 67 min.
    proved = proven(finding, state, nightly(1_500, 120))
    gp3, grow, stopgap = proved.remedies
    assert gp3.action.startswith("Move to gp3") and gp3.past is not None and gp3.past.held
    assert grow.action.startswith("Grow to 600 GiB") and grow.past is not None and grow.past.held
    # Grown to 51 GiB the bucket lasts a minute longer: the batch is throttled every night.
    assert stopgap.kind is RemedyKind.STOPGAP and stopgap.past is not None
    assert stopgap.past.limited_days == 14 and stopgap.past.floor
    assert stopgap.past.minutes_limited >= 14 * 50
    assert stopgap.past.bought_s is not None and 0 < stopgap.past.bought_s <= 120
    assert stopgap.text().endswith("on the worst day")
    assert gp3.past.days == 14.0 and grow.past.bought_s is None


def test_where_every_fix_would_have_held_the_order_is_the_advice_s() -> None:
    finding, state = draining_gp2_finding()
    proved = proven(finding, state, nightly(1_000, 30))
    assert [r.action for r in proved.remedies] == [r.action for r in finding.remedies]
    assert all(r.past is not None and r.past.held for r in proved.remedies)


def test_a_change_of_another_resource_is_not_replayed_here() -> None:
    _, state = draining_gp2_finding()
    other = Change(ResourceType.INSTANCE, "i-1", {"instance_type": "m5.large"}, {})
    assert option_limits(other, state.resource) is None
    assert option_limits(None, state.resource) is None
    elsewhere = Change(ResourceType.VOLUME, "vol-2", {}, {"volume_type": "gp3"})
    assert option_limits(elsewhere, state.resource) is None


def test_a_striped_set_has_every_limit_of_its_volumes_together() -> None:
    _, state = draining_gp2_finding()
    after = {"volume_type": "gp3", "size_gib": 500, "iops": 16_000, "throughput_mibps": 1_000}
    one = option_limits(Change(ResourceType.VOLUME, "vol-1", {}, after), state.resource)
    four = option_limits(
        Change(ResourceType.VOLUME, "vol-1", {}, after | {"volumes": 4}), state.resource
    )
    assert one is not None and four is not None
    assert (four.iops, four.throughput_bps) == (4 * one.iops, 4 * one.throughput_bps)
    grown = option_limits(
        Change(ResourceType.VOLUME, "vol-1", {}, {"size_gib": 600}), state.resource
    )
    assert grown is not None and grown.baseline_iops == 1_800


def test_a_fix_without_a_change_keeps_no_past() -> None:
    finding, state = draining_gp2_finding()
    words = replace(finding.remedies[0], change=None)
    proved = proven(replace(finding, remedies=(words,)), state, nightly(1_500, 120))
    assert proved.remedies[0].past is None


def instance_fix(
    vcpus: int, memory_gib: float, name: str = "r6in.2xlarge", monthly: float = 100.0
) -> Remedy:
    before = {"instance_type": "m5.4xlarge", "vcpus": 16, "memory_gib": 64.0}
    after = {"instance_type": name, "vcpus": vcpus, "memory_gib": memory_gib}
    change = Change(ResourceType.INSTANCE, "i-1", before, after)
    return Remedy(f"Move i-1 to {name}", monthly, -50.0, change=change, kind=RemedyKind.INSTANCE)


def capped(*fixes: Remedy) -> Finding:
    return replace(cap(None), remedies=fixes)


def names(finding: Finding) -> list[str]:
    return [r.action.split(";")[0].removeprefix("Move i-1 to ") for r in finding.remedies]


def test_half_the_vcpus_are_offered_at_a_peak_of_10_percent_with_the_figure() -> None:
    finding = capped(instance_fix(8, 64.0), instance_fix(32, 128.0, "m5.8xlarge"))
    [half, double] = fitted(finding, (10.0, 14.0)).remedies
    assert half.action == (
        "Move i-1 to r6in.2xlarge; its peak CPU over the last 14 days, 10 % of 16 vCPUs, "
        "would be 20 % of 8"
    )
    assert double.action == "Move i-1 to m5.8xlarge"  # more of both: nothing to say


def test_half_the_vcpus_are_not_offered_at_a_peak_of_70_percent() -> None:
    finding = capped(instance_fix(8, 64.0), instance_fix(32, 128.0, "m5.8xlarge"))
    assert names(fitted(finding, (70.0, 14.0))) == ["m5.8xlarge"]
    # 40 % of 16 is 80 % of 8: a fifth left, offered.
    assert len(fitted(finding, (40.0, 14.0)).remedies) == 2


def test_where_the_cpu_is_unknown_a_cheaper_type_with_fewer_vcpus_is_offered_after_the_rest():
    finding = capped(
        instance_fix(8, 64.0, "r6in.2xlarge", 50.0), instance_fix(32, 128.0, "m5.8xlarge")
    )
    sure, unsure = fitted(finding, None).remedies
    assert sure.action == "Move i-1 to m5.8xlarge"
    assert unsure.action == (
        "Move i-1 to r6in.2xlarge; peak CPU unknown: check that its CPUUtilization fits 8 vCPUs"
    )
    # Dearer than one that needs no check: nothing to gain by the gamble.
    dearer = capped(
        instance_fix(8, 64.0, "r6in.2xlarge", 150.0), instance_fix(32, 128.0, "m5.8xlarge")
    )
    assert names(fitted(dearer, None)) == ["m5.8xlarge"]


def test_where_the_memory_in_use_is_unknown_less_memory_is_offered_and_says_how_to_know() -> None:
    finding = capped(
        instance_fix(16, 32.0, "c6in.4xlarge", 60.0), instance_fix(32, 128.0, "m5.8xlarge")
    )
    [sure, unsure] = fitted(finding, (5.0, 14.0)).remedies
    assert sure.action == "Move i-1 to m5.8xlarge"
    assert unsure.action == (
        "Move i-1 to c6in.4xlarge; memory in use unknown: publish mem_used_percent with the "
        "CloudWatch agent to check"
    )
    # Known: 40 GiB used would be 125 % of 32: left out.
    assert names(fitted(finding, (5.0, 14.0), (40.0, 14.0))) == ["m5.8xlarge"]


def test_the_types_are_cut_to_three_only_once_fitted() -> None:
    """The three cheapest need fewer vCPUs than a peak of 60 % leaves room for; the fourth
    and fifth fit: they are the ones offered, not nothing."""
    unfit = [instance_fix(8, 64.0, f"c{n}.2xlarge", 10.0 * n) for n in range(5, 8)]
    fit = [instance_fix(16, 64.0, f"m{n}.4xlarge", 100.0 + n) for n in range(5, 9)]
    assert len(capped(*unfit, *fit).remedies) == 7
    assert names(fitted(capped(*unfit, *fit), (60.0, 14.0))) == [
        "m5.4xlarge",
        "m6.4xlarge",
        "m7.4xlarge",
    ]


def test_one_type_a_family_unless_the_larger_one_is_the_only_one_that_fits() -> None:
    small = instance_fix(8, 64.0, "r6in.2xlarge", 50.0)
    large = instance_fix(16, 128.0, "r6in.4xlarge", 90.0)
    other = instance_fix(16, 64.0, "m6in.4xlarge", 95.0)
    finding = capped(small, large, other)
    # Its small size fits a peak of 10 %: the family's larger size says nothing more.
    assert names(fitted(finding, (10.0, 14.0))) == ["r6in.2xlarge", "m6in.4xlarge"]
    # At 70 % only the larger size of the family fits.
    assert names(fitted(finding, (70.0, 14.0))) == ["r6in.4xlarge", "m6in.4xlarge"]


def test_todays_family_is_offered_beside_the_three_where_it_fits() -> None:
    others = [instance_fix(16, 64.0, f"c{n}.4xlarge", 10.0 * n) for n in range(5, 8)]
    own = instance_fix(32, 128.0, "m5.8xlarge", 500.0)
    assert names(fitted(capped(*others, own), (10.0, 14.0)))[-1] == "m5.8xlarge"
    # A joint fix keeps its place: second, after the cheapest single one.
    both = replace(others[1], kind=RemedyKind.BOTH, action="Both at once")
    assert names(fitted(capped(others[0], both, *others[1:], own), (10.0, 14.0)))[:2] == [
        "c5.4xlarge",
        "Both at once",
    ]


def test_a_volume_fix_is_not_weighed_on_the_cpu() -> None:
    finding, _ = draining_gp2_finding()
    assert fitted(finding, None) == finding


def class_fix(vcpus: int, memory_gib: float, name: str) -> Remedy:
    before = {"instance_type": "db.r5.2xlarge", "vcpus": 8, "memory_gib": 64.0}
    after = {"instance_type": name, "vcpus": vcpus, "memory_gib": memory_gib}
    change = Change(ResourceType.DB_INSTANCE, "orders", before, after)
    return Remedy(f"Move orders to {name}", 500.0, 100.0, change=change, kind=RemedyKind.INSTANCE)


def test_a_db_class_with_less_memory_is_offered_where_the_memory_used_fits_it() -> None:
    finding = replace(
        capped(),
        remedies=(class_fix(8, 32.0, "db.m6i.2xlarge"), class_fix(8, 64.0, "db.r6i.2xlarge")),
    )
    # 20 GiB used at most (64 GiB less its lowest FreeableMemory): 62.5 % of 32 GiB.
    [smaller, same] = fitted(finding, (30.0, 14.0), (20.0, 14.0)).remedies
    assert smaller.action == (
        "Move orders to db.m6i.2xlarge; the most memory it used over the last 14 days, "
        "20.0 GiB, would be 62 % of 32 GiB"
    )
    assert same.action == "Move orders to db.r6i.2xlarge"
    # 30 GiB used would be 94 % of 32: left out.
    assert len(fitted(finding, (30.0, 14.0), (30.0, 14.0)).remedies) == 1
    # Unknown (FreeableMemory not read) and no cheaper: left out; cheaper: offered, marked.
    assert len(fitted(finding, (30.0, 14.0), None).remedies) == 1
    cheaper = replace(
        finding, remedies=(replace(finding.remedies[0], monthly_cost=400.0), finding.remedies[1])
    )
    [same, smaller] = fitted(cheaper, (30.0, 14.0), None).remedies
    assert same.action == "Move orders to db.r6i.2xlarge"
    assert smaller.action == (
        "Move orders to db.m6i.2xlarge; memory in use unknown: check that its FreeableMemory "
        "leaves room in 32 GiB"
    )


def test_an_rds_instance_s_storage_fixes_are_replayed_through_rds_s_storage_model() -> None:
    from analyzer.model.resources import DbInstance
    from tests.helpers import db_state

    db = DbInstance("orders", "us-east-1", "mysql", "db.m5.2xlarge", "gp2", 200, "available")
    state = db_state(db, {})
    # RDS gp2 200 GiB: one volume, 600 IOPS baseline, a 3,000 IOPS burst (RDS User Guide,
    # "Amazon RDS DB instance storage"); mysql stripes over four volumes from 400 GiB, where
    # gp3 includes 12,000 IOPS and 500 MiB/s.
    grown = Change(
        ResourceType.DB_INSTANCE,
        "orders",
        {"storage_type": "gp2", "allocated_gib": 200},
        {"storage_type": "gp3", "allocated_gib": 400},
    )
    limits = option_limits(grown, state.resource)
    assert limits is not None and limits.iops == 12_000 and limits.bucket is None
    # A class change is not the storage's: not replayed here.
    bigger = Change(ResourceType.DB_INSTANCE, "orders", {}, {"vcpus": 16, "memory_gib": 64})
    assert option_limits(bigger, state.resource) is None
    # 2,550 IOPS for three hours a day: gp2 200 GiB's bucket empties; gp3 400 GiB holds.
    day = np.full(1440, 100.0)
    day[600:780] = 2_550.0
    rates = np.tile(day, 14)
    demand = Demand.seen(START, 60, rates, rates * 16_384)
    from analyzer.analyze.held import replay

    assert replay(demand, limits).held
    assert state.envelope is not None and not replay(demand, state.envelope).held


def test_an_instance_s_type_changes_are_replayed_through_the_types_ebs_limits() -> None:
    from analyzer.model.resources import InstanceType
    from tests.fakes import M5
    from tests.helpers import instance_state

    # m5.large at 10,000 IOPS for 90 min a night (its EBS bucket lasts 71 min at that rate).
    # m5.xlarge: 6,000 IOPS of baseline, 18,750 at most: its buckets hold 30 min at the
    # maximum and last 95 min at 10,000, past the 90. m5.2xlarge: 12,000 IOPS of baseline: no
    # bucket is drained (DescribeInstanceTypes).
    xlarge = InstanceType("m5.xlarge", 6_000, 18_750, 143.75e6, 593.75e6, 16 * 1024**3, True, 4)
    big = InstanceType("m5.2xlarge", 12_000, 18_750, 287.5e6, 593.75e6, 32 * 1024**3, True, 8)
    types = {t.name: t for t in (xlarge, big)}
    state = instance_state(M5)
    day = np.full(1440, 100.0)
    day[120:210] = 10_000.0
    rates = np.tile(day, 14)
    seen = Demand.seen(START, 60, rates, rates * 16_384)

    def moved(info: InstanceType) -> Remedy:
        before = {"instance_type": "m5.large", "vcpus": 2, "memory_gib": 8.0}
        after = {"instance_type": info.name, "vcpus": info.vcpus, "memory_gib": 16.0}
        change = Change(ResourceType.INSTANCE, "i-1", before, after)
        return Remedy(f"Move i-1 to {info.name}", 1.0, 1.0, change=change, kind=RemedyKind.INSTANCE)

    finding = replace(cap(None), remedies=(moved(xlarge), moved(big)))
    proved = proven(finding, state, seen, types)
    assert [r.past is not None and r.past.held for r in proved.remedies] == [True, True]
    assert proved.remedies[0].past is not None and proved.remedies[0].past.days == 14.0
    # A type the catalogue does not know: no figure, never a guess.
    unknown = proven(finding, state, seen, {})
    assert all(r.past is None for r in unknown.remedies)
    # m5.large itself, as it is: 19 minutes of each night past its bucket.
    assert option_limits(moved(M5).change, state.resource, {"m5.large": M5}) is not None
    from analyzer.analyze.held import replay

    as_is = option_limits(moved(M5).change, state.resource, {"m5.large": M5})
    assert as_is is not None and replay(seen, as_is).minutes_limited == 14 * 19
