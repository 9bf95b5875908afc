from dataclasses import dataclass
from datetime import datetime

import pytest
from structlog.testing import capture_logs

from analyzer.analyze import engine
from analyzer.analyze.kinds.caps import IopsCap
from analyzer.model.metrics import Measure
from tests.helpers import series, snapshot_of, volume_state


def saturated_for(minutes, total=60):
    values = [1_000] * (total - minutes) + [3_000] * minutes
    return volume_state(
        "gp3",
        500,
        {Measure.IOPS: series(values), Measure.THROUGHPUT: series([v * 4096 for v in values])},
        iops=3_000,
    )


def rule(**kw):
    return IopsCap(id="cap", resource_types=["volume"], severity="warning", **kw)


def test_a_rule_without_for_fires_on_its_window():
    snap = snapshot_of(saturated_for(15), minutes_of_data=60)
    assert [f.rule for f in engine.evaluate([rule()], snap)] == ["cap"]


def test_for_needs_the_condition_through_the_whole_duration_of_history():
    with_for = rule(**{"for": "10m"})
    short = snapshot_of(saturated_for(15), minutes_of_data=60)
    assert engine.evaluate([with_for], short) == []
    held = snapshot_of(saturated_for(30), minutes_of_data=60)
    [finding] = engine.evaluate([with_for], held)
    assert finding.evidence["held_for_seconds"] == 600


def test_disabled_rules_are_not_in_force():
    from analyzer.analyze.rules import LoadedRule, RuleSet

    ruleset = RuleSet((LoadedRule(rule(enabled=False), None),))  # type: ignore[arg-type]
    assert ruleset.rules == ()


@dataclass
class Broken:
    id: str = "broken"
    for_: float = 0

    def applies_to(self, state):
        return True

    def evaluate(self, state, snapshot, at: datetime):
        raise RuntimeError("bug in a rule")


def test_a_failing_rule_does_not_stop_the_others():
    snap = snapshot_of(saturated_for(30), minutes_of_data=60)
    with capture_logs() as logs:
        findings = engine.evaluate([Broken(), rule()], snap)
    assert [f.rule for f in findings] == ["cap"]
    [event] = [e for e in logs if e["event"] == "rule.failed"]
    assert (event["rule"], event["resource"], event["log_level"]) == ("broken", "vol-1", "error")


def test_findings_sorted_by_severity_first():
    critical = IopsCap(id="z-critical", resource_types=["volume"], severity="critical")
    snap = snapshot_of(saturated_for(30), minutes_of_data=60)
    assert [f.rule for f in engine.evaluate([rule(), critical], snap)] == ["z-critical", "cap"]


@pytest.mark.parametrize(("data_minutes", "evaluated"), [(60, True), (58, True), (57, False)])
def test_a_resource_without_recent_data_is_not_evaluated(data_minutes, evaluated):
    """Data that ends more than two periods before the snapshot's data end is not recent:
    every rule would find nothing in it, so none is asked (a quiet tier's resource between
    its polls)."""
    state = saturated_for(30, total=data_minutes)
    snap = snapshot_of(state, minutes_of_data=60)
    assert state.has_recent_data(snap.data_end) is evaluated
    with capture_logs() as logs:
        engine.evaluate([Broken()], snap)
    assert any(e["event"] == "rule.failed" for e in logs) is evaluated
