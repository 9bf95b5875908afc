"""evaluate(rules, snapshot) → findings.

A rule with `for` fires only if its condition also held at each step back through that
duration; the backfilled history lets even the first cycle know this. A rule that fails on one
resource is logged and skipped: the others still run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import structlog

from analyzer.analyze.rules import Rule
from analyzer.model.findings import Finding
from analyzer.model.state import ResourceState, Snapshot

STEP_S = 60
log = structlog.get_logger(__name__)


def _held(rule: Rule, state: ResourceState, snapshot: Snapshot, at: datetime) -> bool:
    steps = math.ceil(rule.for_ / STEP_S)
    for k in range(1, steps + 1):
        earlier = at - timedelta(seconds=k * STEP_S)
        if rule.evaluate(state, snapshot, earlier) is None:
            return False
    return True


@dataclass(frozen=True, slots=True)
class Evaluation:
    firing: list[Finding]
    pending: list[Finding]
    failed: set[tuple[str, str]] = field(default_factory=set)
    """(scope, id) of the resources a rule raised on."""


def _evaluate_one(
    rule: Rule, state: ResourceState, snapshot: Snapshot
) -> tuple[Finding, bool] | None:
    """The finding, and whether it has held for the rule's `for`."""
    at = snapshot.data_end
    finding = rule.evaluate(state, snapshot, at)
    if finding is None or rule.for_ <= 0:
        return (finding, True) if finding is not None else None
    if not _held(rule, state, snapshot, at):
        return finding, False
    return replace(finding, evidence={**finding.evidence, "held_for_seconds": rule.for_}), True


def ordered(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (-f.severity.rank, f.rule, f.resource.resource_id))


def evaluate_all(
    rules: Iterable[Rule], snapshot: Snapshot, states: Sequence[ResourceState] | None = None
) -> Evaluation:
    """Every rule over the snapshot's resources (or only `states`, taken from it)."""
    firing: list[Finding] = []
    pending: list[Finding] = []
    failed: set[tuple[str, str]] = set()
    chosen = snapshot.resources if states is None else states
    current = [s for s in chosen if s.has_recent_data(snapshot.data_end)]
    for rule in rules:
        for state in current:
            if not rule.applies_to(state):
                continue
            try:
                outcome = _evaluate_one(rule, state, snapshot)
            except Exception:
                log.exception("rule.failed", rule=rule.id, resource=state.ref.resource_id)
                failed.add((state.ref.scope, state.ref.resource_id))
                continue
            if outcome is not None:
                (firing if outcome[1] else pending).append(outcome[0])
    return Evaluation(ordered(firing), ordered(pending), failed)


def evaluate(rules: Iterable[Rule], snapshot: Snapshot) -> list[Finding]:
    """The findings that fire: their condition holds and has held for the rule's `for`."""
    return evaluate_all(rules, snapshot).firing
