"""evaluate(rules, snapshot) → findings.

A rule with `for` fires only if its condition also held at each step back through that
duration; the backfilled history lets even the first cycle know this. A rule that fails on one
resource is logged and skipped: the others still run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timedelta

import structlog

from analyzer.models import Finding
from analyzer.rules import Rule
from analyzer.snapshot import ResourceState, Snapshot

STEP_S = 60

log = structlog.get_logger(__name__)


def _held(rule: Rule, state: ResourceState, snapshot: Snapshot, at: datetime) -> bool:
    steps = math.ceil(rule.for_ / STEP_S)
    for k in range(1, steps + 1):
        earlier = at - timedelta(seconds=k * STEP_S)
        if rule.evaluate(state, snapshot, earlier) is None:
            return False
    return True


def _evaluate_one(rule: Rule, state: ResourceState, snapshot: Snapshot) -> Finding | None:
    at = snapshot.data_end
    finding = rule.evaluate(state, snapshot, at)
    if finding is None or rule.for_ <= 0:
        return finding
    if not _held(rule, state, snapshot, at):
        return None
    return replace(finding, evidence={**finding.evidence, "held_for_seconds": rule.for_})


def evaluate(rules: Iterable[Rule], snapshot: Snapshot) -> list[Finding]:
    findings: list[Finding] = []
    for rule in rules:
        for state in snapshot.resources:
            if not rule.applies_to(state):
                continue
            try:
                finding = _evaluate_one(rule, state, snapshot)
            except Exception:
                log.exception("rule.failed", rule=rule.id, resource=state.ref.resource_id)
                continue
            if finding is not None:
                findings.append(finding)
    return sorted(findings, key=lambda f: (-f.severity.rank, f.rule, f.resource.resource_id))
