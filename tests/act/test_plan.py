"""A plan: the resource today and the target, priced, and the target replayed over its past."""

from __future__ import annotations

import pytest

from analyzer.act.plan import plan_of, with_past
from analyzer.analyze import prices
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.sold import Asked
from analyzer.model.resources import DbInstance, Volume
from tests.offline.test_what_if import nightly_drain

CATALOG = Catalog(prices.load())
GP2 = Volume("vol-1", "us-east-1", "gp2", 80, "in-use", iops=240, attached_to="i-1")


def test_a_plan_says_today_the_target_its_cost_and_its_past() -> None:
    plan = plan_of(Asked.parse("vol-1:type=gp3", "apply"), "us-east-1", GP2, CATALOG)
    assert plan.fix_id == "vol-1:type=gp3" and not plan.already_so
    assert plan.monthly_delta == -1.6  # 80 GiB at $0.08 against $0.10
    held = with_past(plan, nightly_drain())
    assert held.past is not None and held.past.held
    assert held.lines() == [
        "apply vol-1:type=gp3",
        "  volume vol-1 on i-1 in us-east-1",
        "  today:  gp2 80 GiB, 240 IOPS",
        "  target: gp3 80 GiB",
        "  cost:   −$1.60/month",
        "  past:   would have limited 0 min of the last 14 days (held-back demand counted at "
        "its rate before)",
    ]
    assert with_past(plan, None, "throttled").lines()[-1] == "  past:   not read: throttled"


def test_a_target_the_resource_has_is_already_so() -> None:
    plan = plan_of(Asked.parse("vol-1:type=gp2,size=80", "apply"), "us-east-1", GP2, CATALOG)
    assert plan.already_so


def test_rds_storage_is_named_as_the_analyzer_names_it() -> None:
    db = DbInstance("orders", "us-east-1", "mysql", "db.m5.2xlarge", "gp2", 200, "available")
    plan = plan_of(Asked.parse("orders:size=400", "apply"), "us-east-1", db, CATALOG)
    assert plan.fix_id == "orders:type=gp2,size=400"
    assert (plan.before, plan.after) == (
        {"storage_type": "gp2", "allocated_gib": 200},
        {"storage_type": "gp2", "allocated_gib": 400},
    )
    # The default price file holds no RDS storage: unknown, said so, never a guess.
    assert plan.monthly_delta is None and plan.cost_text() == "price unknown"


IO2 = Volume("vol-2", "us-east-1", "io2", 500, "in-use", 20_000, None, "i-1")
GP3 = Volume("vol-3", "us-east-1", "gp3", 500, "in-use", 6_000, 500, "i-1")
BIG_GP2 = Volume("vol-4", "us-east-1", "gp2", 500, "in-use", 1_500, None, "i-1")
HUGE_GP2 = Volume("vol-5", "us-east-1", "gp2", 2_000, "in-use", 6_000, None, "i-1")


@pytest.mark.parametrize(
    ("volume", "fix", "cuts"),
    [
        (IO2, "vol-2:iops=3600", True),
        (IO2, "vol-2:type=gp3,iops=3600,throughput=125", True),
        (GP3, "vol-3:iops=3000", True),
        (GP3, "vol-3:throughput=125", True),
        (GP3, "vol-3:iops=8000", False),
        (GP3, "vol-3:size=600", False),
        (GP2, "vol-1:type=gp3", False),
        (GP2, "vol-1:type=gp3,iops=3000,throughput=125", False),
        # gp2 500 GiB bursts at 250 MiB/s; gp2 2,000 GiB has a 6,000 IOPS baseline.
        (BIG_GP2, "vol-4:type=gp3,iops=3000,throughput=125", True),
        (BIG_GP2, "vol-4:type=gp3,iops=3000,throughput=250", False),
        (HUGE_GP2, "vol-5:type=gp3,iops=3000,throughput=250", True),
        (HUGE_GP2, "vol-5:type=gp3,iops=6000,throughput=250", False),
    ],
)
def test_a_cut_is_a_target_that_provisions_less(volume: Volume, fix: str, cuts: bool) -> None:
    plan = plan_of(Asked.parse(fix, "apply"), "us-east-1", volume, CATALOG)
    assert plan.cuts is cuts


def test_the_past_read_afresh_names_its_busiest_period_against_the_targets_limits() -> None:
    plan = plan_of(Asked.parse("vol-2:iops=3600", "apply"), "us-east-1", IO2, CATALOG)
    seen = nightly_drain()
    held = with_past(plan, seen)
    assert held.busiest is not None
    assert held.busiest.iops_limit == 3_600
    assert held.busiest.iops == pytest.approx(float(seen.iops.max()), rel=0.01)
