"""The analysis stage: a snapshot and the rules in force → the findings of a cycle.

In order: each resource's credit outlook is worked out once (with its rule's windows); the
rules turn resource states into findings (the engine, with `for`); then, in this one place,
each finding that fires gets its next bottleneck and its priced fixes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from analyzer.analyze import advice, engine
from analyzer.analyze.headroom import next_bottleneck
from analyzer.analyze.outlook import with_outlooks
from analyzer.analyze.prices import PriceList
from analyzer.analyze.rules import RuleSet
from analyzer.model.findings import Finding
from analyzer.model.state import Snapshot


@dataclass(frozen=True, slots=True)
class Analysis:
    snapshot: Snapshot
    """The snapshot with each resource's outlook: what the report and the exporter read."""
    firing: list[Finding]
    """The condition holds now and has held for the rule's `for`; next bottleneck and fixes
    attached."""
    pending: list[Finding]
    """The condition holds now but not yet for the rule's `for`."""


def analyze(snapshot: Snapshot, ruleset: RuleSet, prices: PriceList) -> Analysis:
    snapshot = with_outlooks(snapshot, ruleset.forecast_windows)
    evaluation = engine.evaluate_all(ruleset.rules, snapshot)
    firing = [conclude(f, snapshot, prices) for f in evaluation.firing]
    return Analysis(snapshot, firing, evaluation.pending)


def conclude(finding: Finding, snapshot: Snapshot, prices: PriceList) -> Finding:
    """The finding with the limit that binds once its own is lifted, and the fixes sized up to
    that limit."""
    state = snapshot.get(finding.resource.region, finding.resource.resource_id)
    if state is None:
        return finding
    nxt = next_bottleneck(state, snapshot, snapshot.data_end, finding.window_s, finding.bottleneck)
    finding = replace(finding, next_bottleneck=nxt)
    return replace(finding, remedies=advice.remedies(finding, snapshot, prices))
