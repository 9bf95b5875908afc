"""The analysis stage across cycles: a resource judged quiet on the same data is not judged
again; anything found, pending or counting down is judged every cycle."""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from analyzer.analyze import prices
from analyzer.analyze import rules as rule_files
from analyzer.analyze.analysis import Judgements, analyze
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.rules import LoadedRule, RuleSet
from analyzer.analyze.states import build
from analyzer.model.findings import Finding
from analyzer.model.metrics import Measure
from analyzer.model.state import ResourceState, Snapshot
from tests.helpers import T0, series, shop_volume, volume_state


def quiet_volume(volume_id="vol-quiet"):
    """A gp3 volume at 100 IOPS: far from every limit, no bucket."""
    return volume_state(
        "gp3",
        100,
        {Measure.IOPS: series([100] * 30), Measure.THROUGHPUT: series([100 * 16384] * 30)},
        iops=3_000,
        throughput=125,
        volume_id=volume_id,
    )


@dataclass
class Judge:
    """A rule that applies to everything and finds nothing: it notes the id of each resource
    it judges, and raises instead while `broken`."""

    id: str = "judge"
    for_: float = 0.0
    enabled: bool = True
    broken: bool = False
    judged: list[str] = field(default_factory=list)

    def applies_to(self, state: ResourceState) -> bool:
        return True

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        self.judged.append(state.ref.resource_id)
        if self.broken:
            raise RuntimeError("boom")
        return None


def with_judge(judge: Judge) -> RuleSet:
    """The shipped rules, and `judge` after them."""
    shipped = rule_files.load()
    return RuleSet((*shipped.loaded, LoadedRule(judge, Path("judge.yaml"))))


@pytest.fixture
def judge():
    return Judge()


def cycle(states, minute, memo, ruleset):
    data_end = T0 + timedelta(minutes=30 + minute)
    snap = build(data_end + timedelta(seconds=120), data_end, states)
    return analyze(snap, ruleset, Catalog(prices.load()), memo)


def test_a_quiet_resource_is_judged_once_per_new_data(judge):
    ruleset, memo, judged = with_judge(judge), Judgements(), judge.judged
    quiet = quiet_volume()
    first = cycle([quiet], 0, memo, ruleset)
    assert "vol-quiet" in judged and first.firing == []
    judged.clear()
    again = cycle([quiet], 1, memo, ruleset)
    assert judged == []
    assert again.snapshot.resources[0] is first.snapshot.resources[0]
    # New data (a new state object): judged again.
    cycle([quiet_volume()], 2, memo, ruleset)
    assert "vol-quiet" in judged


def test_what_fires_or_counts_down_is_judged_every_cycle(judge):
    ruleset, memo, judged = with_judge(judge), Judgements(), judge.judged
    shop = shop_volume()
    first = cycle([shop], 0, memo, ruleset)
    assert [f.rule for f in first.firing] == ["gp2-burst-exhaustion"]
    judged.clear()
    later = cycle([shop], 1, memo, ruleset)
    assert "vol-1" in judged
    assert [f.rule for f in later.firing] == ["gp2-burst-exhaustion"]
    before = first.snapshot.resources[0].outlook
    after = later.snapshot.resources[0].outlook
    assert before is not None and after is not None
    assert after.seconds_to_empty == pytest.approx(before.seconds_to_empty - 60)


def test_other_rules_judge_everything_again(judge):
    memo, judged = Judgements(), judge.judged
    quiet = quiet_volume()
    cycle([quiet], 0, memo, with_judge(judge))
    judged.clear()
    cycle([quiet], 1, memo, with_judge(judge))
    assert "vol-quiet" in judged


def test_a_resource_a_rule_failed_on_is_not_taken_as_quiet():
    judge = Judge(broken=True)
    ruleset, memo = with_judge(judge), Judgements()
    quiet = quiet_volume()
    cycle([quiet], 0, memo, ruleset)
    assert memo.unchanged(quiet) is None
    judge.broken = False
    cycle([quiet], 1, memo, ruleset)
    assert memo.unchanged(quiet) is not None


def test_what_cannot_be_judged_on_current_data_is_unknown_not_clear():
    """Failed or stale data, or an instance type DescribeInstanceTypes does not know (no
    limits): an alert on it must hold, so the analysis names it unknown."""
    from analyzer.model.resources import InstanceType
    from analyzer.model.series import Series
    from tests.helpers import instance_state

    ruleset = rule_files.load()
    fine = quiet_volume("vol-fine")
    failed = volume_state(
        "gp2",
        100,
        {Measure.IOPS: series([100] * 30), Measure.BURST_BALANCE: Series.failed("boom", 60)},
        volume_id="vol-failed",
    )
    stale = volume_state("gp3", 100, {Measure.IOPS: series([100] * 10)}, volume_id="vol-stale")
    unknown_type = instance_state(
        InstanceType("x99.large"), {Measure.IOPS: series([100] * 30)}, instance_id="i-unknown"
    )
    analysis = cycle([fine, failed, stale, unknown_type], 0, Judgements(), ruleset)
    assert ("us-east-1", "vol-fine") not in analysis.unknown
    for rid in ("vol-failed", "vol-stale", "i-unknown"):
        assert ("us-east-1", rid) in analysis.unknown
