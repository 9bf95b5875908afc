"""The month's GetMetricData bill of a cycle's polls, and the budgets that bound it, over the
fakes of the cycle's tests."""

from __future__ import annotations

from datetime import timedelta

import pytest
from structlog.testing import capture_logs

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region
from analyzer.live.cycle import Analyzer
from analyzer.model.resources import Instance
from tests.fakes import FakeDescriber, FakeMetricData
from tests.helpers import T0
from tests.live.test_cycle import SHOP, two_accounts


def test_the_bill_is_projected_again_when_a_tier_moves() -> None:
    load = {"iops": 0.0}

    def metrics_of(query: MetricQuery, _start: object) -> float | None:
        if query.metric == "BurstBalance":
            return 100.0
        return load["iops"] * 60 if query.metric == "VolumeReadOps" else 0.0

    describer = FakeDescriber(
        found_volumes=[SHOP], found_instances=[Instance("i-1", "us-east-1", "m5.large", "running")]
    )
    metrics = FakeMetricData(metrics_of)
    config = settings.load({"region": ["us-east-1"]})
    analyzer = Analyzer(
        config, rules.load(), connect=lambda r: Region(r, describer, metrics), adaptive=True
    )
    quiet = [analyzer.run(T0 + timedelta(minutes=k)).projection for k in range(3)]
    assert quiet[0] is not None and quiet[1] is quiet[2]  # nothing moved: not worked out again
    load["iops"] = 1_500.0  # draining at once: hot at its next poll
    busy = [analyzer.run(T0 + timedelta(minutes=k)).projection for k in range(3, 15)]
    before, after = quiet[-1], busy[-1]
    assert before is not None and after is not None
    assert after.dollars() > before.dollars()


def test_an_accounts_budget_stretches_its_own_cadences_alone() -> None:
    analyzer = two_accounts(budget=0.05)
    with capture_logs() as logs:
        for k in range(3):
            analyzer.run(T0 + timedelta(minutes=k))
    cadences = {where: p.cadence for where, p in analyzer._pollers.items()}
    base = analyzer.bill.cadence()
    assert cadences["222222222222/us-east-1"] == base
    stretched = cadences["111111111111/us-east-1"]
    assert stretched.idle_s > base.idle_s and stretched.interval_s == base.interval_s
    [bound] = [e for e in logs if e["event"] == "budget.binding"]
    assert bound["account_id"] == "111111111111"
    # The projection is each account's bill under its own cadences.
    bills = analyzer.bill.by_scope
    assert bills["111111111111/us-east-1"] < bills["222222222222/us-east-1"]


def test_cost_is_by_account_and_region() -> None:
    from analyzer.deliver.report import cost_document, cost_table

    analyzer = two_accounts()
    bills = analyzer.costs()
    assert set(bills) == {"111111111111/us-east-1", "222222222222/us-east-1"}
    names = analyzer.accounts.named()
    document = cost_document(bills, names)
    prod = document["accounts"]["111111111111"]
    assert prod["name"] == "prod"
    assert set(prod["regions"]) == {"us-east-1"}
    assert prod["total"] == prod["regions"]["us-east-1"]
    assert document["total"]["full"] == pytest.approx(
        sum(a["total"]["full"] for a in document["accounts"].values()), abs=0.011
    )
    text = cost_table(bills, 60, 300, 600, names=names)
    assert "prod (111111111111)" in text and "staging (222222222222)" in text
    assert "all accounts" in text
