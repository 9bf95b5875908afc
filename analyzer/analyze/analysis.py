"""The analysis stage: a snapshot and the rules in force → the findings of a cycle.

In order: each resource's credit outlook is worked out once (with its rule's windows); the
rules turn resource states into findings (the engine, with `for`); then, in this one place,
each finding that fires gets its next bottleneck and its priced fixes.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from analyzer.analyze import engine
from analyzer.analyze.advice.fixes import remedies
from analyzer.analyze.advice.proof import Peak, fitted
from analyzer.analyze.advice.sizing import sized_for
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.headroom import ahead
from analyzer.analyze.mismatch import mismatches
from analyzer.analyze.outlook import with_outlook
from analyzer.analyze.reading import MODIFIED_WITHIN_S, Readings
from analyzer.analyze.rules import RuleSet
from analyzer.model.findings import (
    RATE_BEFORE_EMPTY,
    Bottleneck,
    Finding,
    NextBottleneck,
    Severity,
)
from analyzer.model.resources import Volume
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import format_rate


@dataclass(frozen=True, slots=True)
class Analysis:
    snapshot: Snapshot
    """The snapshot with each resource's outlook: what the report and the exporter read."""
    firing: list[Finding]
    """The condition holds now and has held for the rule's `for`; next bottleneck and fixes
    attached."""
    pending: list[Finding]
    """The condition holds now but not yet for the rule's `for`."""
    unknown: Container[tuple[str, str]]
    """(scope, id) of the resources whose condition is unknown this cycle: data missing,
    stale or failed, no model of its limits, or a rule that failed on it. An alert on one
    keeps its state."""
    readings: Readings
    """Each resource's reading, worked out when first asked: what every output shows."""


SEEN_WITHIN_S = 86_400.0
"""The longest the inventory may go unread (`inventory_interval`): a volume's modification is
known to the analysis at most this long after it took effect."""


@dataclass(frozen=True, slots=True)
class Unjudged:
    """The resources whose condition is unknown this cycle, by (scope, id), as `Analysis`
    says. Asked only of the few resources with an alert, not worked out for the whole fleet
    every cycle."""

    snapshot: Snapshot
    failed: frozenset[tuple[str, str]] = frozenset()
    """Those a rule raised on."""

    def __contains__(self, key: object) -> bool:
        if key in self.failed:
            return True
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        state = self.snapshot.get(*key)
        return state is not None and not state.known_at(self.snapshot.data_end)

    def attachment(self, scope: str, resource_id: str) -> str | None:
        """The instance a volume is attached to now (its first, if Multi-Attach)."""
        state = self.snapshot.get(scope, resource_id)
        if state is None or not isinstance(state.resource, Volume):
            return None
        return state.resource.attached_to

    def ended(self, scope: str, resource_id: str, attached_to: str | None) -> str | None:
        """What the inventory says ended whatever was found of a resource: deleted,
        detached, moved from `attached_to` to another instance, stopped; None where it is
        there as it was. Said only of a scope (an account's region) whose inventory this cycle
        holds: one that could not be described says nothing of what is gone from it."""
        state = self.snapshot.get(scope, resource_id)
        if state is None:
            if scope not in self._scopes():
                return None
            return f"{resource_id} is gone from the inventory (deleted)"
        resource = state.resource
        if isinstance(resource, Volume):
            if resource.attached_to is None:
                was = f" from {attached_to}" if attached_to else ""
                return f"{resource_id} was detached{was}"
            if attached_to is not None and attached_to not in resource.instance_ids:
                return f"{resource_id} was moved from {attached_to} to {resource.attached_to}"
            return None
        if not resource.active:
            return f"{resource_id} is {resource.state}"
        return None

    def reconfigured(
        self, scope: str, resource_id: str, judged_since: datetime | None, since: datetime
    ) -> str | None:
        """What ended an alert on a volume modified since its finding was judged: the
        configuration it was about is gone, and its limits with it. `judged_since`: the
        `limits_since` its finding was judged under (None: the volume as first described);
        `since`: when its condition first held. A modification that took effect
        more than a day (the longest inventory interval) before that was known when it was
        judged; an alert older than this evidence is not ended by it."""
        state = self.snapshot.get(scope, resource_id)
        if state is None or not isinstance(state.resource, Volume):
            return None
        now = state.limits_since
        if now is None or now <= since - timedelta(seconds=SEEN_WITHIN_S):
            return None
        if judged_since is not None and judged_since >= now:
            return None
        made = state.resource.modification_in_effect
        what = made.text() if made is not None else f"at {now.astimezone(UTC):%H:%M} UTC"
        return (
            f"{resource_id} was modified {what}, in effect: the configuration this alert was "
            "about is gone, and its limits with it"
        )

    def node_reads(self, scope: str, resource_id: str) -> bool:
        """Whether a node agent reads the resource's rates (`node_coverage_url`)."""
        state = self.snapshot.get(scope, resource_id)
        return state is not None and state.node_agent

    def _scopes(self) -> frozenset[str]:
        return frozenset(s.ref.scope for s in self.snapshot.resources) | frozenset(
            self.snapshot.asked_until
        )


def analyze(
    snapshot: Snapshot,
    ruleset: RuleSet,
    catalog: Catalog,
    memo: Judgements | None = None,
) -> Analysis:
    """With `memo` (kept across cycles), a resource judged quiet last cycle on the very state
    it has now is not judged again: see `Judgements`."""
    memo = memo if memo is not None else Judgements()
    memo.use(ruleset)
    states: list[ResourceState] = []
    fresh: list[ResourceState] = []
    for bare in snapshot.resources:
        kept = memo.unchanged(bare)
        if kept is None:
            windows = ruleset.forecast_windows(bare)
            kept = with_outlook(bare, windows, snapshot.data_end, snapshot.generated_at)
            if found := mismatches(kept, snapshot.data_end):
                kept = replace(kept, mismatches=found)
            fresh.append(kept)
        states.append(kept)
    bares = snapshot.resources
    snapshot = replace(snapshot, resources=tuple(states))
    evaluation = initializing(
        impaired(
            floored(engine.evaluate_all(ruleset.rules, snapshot, fresh), snapshot, ruleset, fresh),
            snapshot,
        ),
        snapshot,
    )
    evaluation = memo.recall_before_empty(evaluation)
    memo.remember(zip(bares, states, strict=True), evaluation)
    firing = [conclude(f, snapshot, catalog) for f in evaluation.firing]
    unknown = Unjudged(snapshot, frozenset(evaluation.failed))
    return Analysis(snapshot, firing, evaluation.pending, unknown, Readings(snapshot))


def floored(
    evaluation: engine.Evaluation,
    snapshot: Snapshot,
    ruleset: RuleSet,
    states: Iterable[ResourceState],
) -> engine.Evaluation:
    """The floor of the credit policy, in one place: a resource with a bucket below its
    `credit_forecast` rule's `low_balance` (the alarm operators run) that no credit warning
    speaks of gets that rule's floor warning, in place of whatever milder word the rule had.
    A trend warning of the same resource already speaks of it."""
    warned = {
        (f.resource.scope, f.resource.resource_id)
        for f in evaluation.firing
        if f.is_credits and f.severity.rank >= Severity.WARNING.rank
    }
    floors: list[Finding] = []
    for state in states:
        if (state.ref.scope, state.ref.resource_id) in warned:
            continue
        rule = ruleset.forecast_rule(state)
        if rule is None or not state.has_recent_data(snapshot.data_end):
            continue
        found = rule.floor(state, snapshot, snapshot.data_end)
        if found is not None:
            floors.append(found)
    if not floors:
        return evaluation
    keys = {f.key for f in floors}
    return replace(
        evaluation,
        firing=engine.ordered([*(f for f in evaluation.firing if f.key not in keys), *floors]),
        pending=[f for f in evaluation.pending if f.key not in keys],
    )


def _where(f: Finding) -> tuple[str, str]:
    return f.resource.scope, f.resource.resource_id


def _held_back(
    evaluation: engine.Evaluation,
    held: set[tuple[str, str]],
    dropped: Callable[[Finding], bool],
) -> engine.Evaluation:
    """The findings `dropped` names left out, and the resources `held` names unknown this
    cycle: their alerts keep their state, neither fired anew nor resolved."""
    if not held:
        return evaluation
    return replace(
        evaluation,
        firing=[f for f in evaluation.firing if not dropped(f)],
        pending=[f for f in evaluation.pending if not dropped(f)],
        failed=evaluation.failed | held,
    )


def impaired(evaluation: engine.Evaluation, snapshot: Snapshot) -> engine.Evaluation:
    """While AWS says a resource's I/O has stopped, nothing else is said of it: no cap, credit
    or sizing finding is built on the numbers of a stalled volume, of an instance whose
    attached-EBS check fails, or of that instance's volumes. Their other alerts are unknown
    meanwhile (they keep their state), not resolved."""
    silenced: set[tuple[str, str]] = set()
    for finding in evaluation.firing:
        if finding.bottleneck is not Bottleneck.IMPAIRED:
            continue
        silenced.add(_where(finding))
        state = snapshot.get(*_where(finding))
        if state is not None and not state.is_volume:
            silenced.update((state.ref.scope, volume) for volume in state.related)
    return _held_back(
        evaluation,
        silenced,
        lambda f: f.bottleneck is not Bottleneck.IMPAIRED and _where(f) in silenced,
    )


CAPS = frozenset({Bottleneck.VOLUME_IOPS, Bottleneck.VOLUME_THROUGHPUT})


def initializing(evaluation: engine.Evaluation, snapshot: Snapshot) -> engine.Evaluation:
    """A volume still initializing from its snapshot reads its first blocks slowly, whatever
    its type or size: no volume cap is judged on it until AWS reports it done (its row says
    how far along it is), and a cap alert it had keeps its state meanwhile."""

    def initializes(f: Finding) -> bool:
        state = snapshot.get(*_where(f))
        return (
            f.bottleneck in CAPS
            and state is not None
            and isinstance(state.resource, Volume)
            and state.resource.initialization is not None
        )

    held = {_where(f) for f in (*evaluation.firing, *evaluation.pending) if initializes(f)}
    return _held_back(evaluation, held, lambda f: f.bottleneck in CAPS and _where(f) in held)


@dataclass(frozen=True, slots=True)
class _Judged:
    bare: ResourceState
    """The state as the poll built it."""
    judged: ResourceState
    """With its windows and its outlook."""


@dataclass
class Judgements:
    """The resources judged quiet last cycle, with the state they were judged on.

    A rule reads a resource's own data, over windows that end with its newest datapoint, so
    the same data gives the same verdict at a later moment, with two exceptions: data that
    has grown stale (then nothing is found), and a forecast, which counts down from the report
    time. A resource whose state is the very object of last cycle (the history and the state
    cache keep both until new data arrives), with no finding, nothing pending, no outlook and
    no rule that failed on it, is therefore quiet again and is not judged anew.
    """

    _quiet: dict[tuple[str, str], _Judged] = field(default_factory=dict)
    _ruleset: RuleSet | None = None
    _before_empty: dict[tuple[str, str, str], float] = field(default_factory=dict)
    """(scope, id, rule) of an empty bucket → its rate before it ran out, as a cycle saw it."""

    def use(self, ruleset: RuleSet) -> None:
        if ruleset is not self._ruleset:
            self._quiet.clear()
            self._ruleset = ruleset

    def unchanged(self, bare: ResourceState) -> ResourceState | None:
        known = self._quiet.get((bare.ref.scope, bare.ref.resource_id))
        return known.judged if known is not None and known.bare is bare else None

    def recall_before_empty(self, evaluation: engine.Evaluation) -> engine.Evaluation:
        """An empty bucket's rate before it ran out, as an earlier cycle saw it, for the
        findings of later cycles whose history no longer reaches back to it: the fix is sized
        for the demand the daemon saw, not for the burst. Kept while the bucket stays empty
        (its finding fires), forgotten once it does not."""
        seen: dict[tuple[str, str, str], float] = {}
        firing: list[Finding] = []
        for found in evaluation.firing:
            finding = found
            key = (finding.resource.scope, finding.resource.resource_id, finding.rule)
            credit = finding.credit
            if credit is not None and credit.empty:
                rate = credit.rate_before_empty
                if rate is None and key in self._before_empty:
                    rate = self._before_empty[key]
                    finding = replace(
                        finding,
                        evidence={**finding.evidence, RATE_BEFORE_EMPTY: rate},
                        credit=replace(credit, rate_before_empty=rate),
                    )
                if rate is not None:
                    seen[key] = rate
            firing.append(finding)
        self._before_empty = seen
        return replace(evaluation, firing=firing) if seen else evaluation

    def remember(
        self, judged: Iterable[tuple[ResourceState, ResourceState]], evaluation: engine.Evaluation
    ) -> None:
        """Keep this cycle's quiet resources, each as (bare, judged); forget the others."""
        loud = {(f.resource.scope, f.resource.resource_id) for f in evaluation.firing}
        loud |= {(f.resource.scope, f.resource.resource_id) for f in evaluation.pending}
        loud |= evaluation.failed
        self._quiet = {}
        for bare, state in judged:
            key = (state.ref.scope, state.ref.resource_id)
            if state.outlook is None and key not in loud:
                self._quiet[key] = _Judged(bare, state)


def conclude(
    finding: Finding,
    snapshot: Snapshot,
    catalog: Catalog,
    cpu: Peak | None = None,
    memory: Peak | None = None,
) -> Finding:
    """The finding with the limit that binds once its own is lifted, and the fixes sized up to
    that limit; the types and classes among them fitted on the peaks of its instance's past
    (`proof.fitted`; None: unknown)."""
    state = snapshot.get(finding.resource.scope, finding.resource.resource_id)
    if state is None or finding.bottleneck is Bottleneck.IMPAIRED:
        return finding  # impaired: no limit lies beyond, and no fix is a size or a type
    if isinstance(state.resource, Volume):
        # Judged under the limits in force since its latest modification: it says so.
        note = state.resource.modification_note(snapshot.data_end, MODIFIED_WITHIN_S)
        if note is not None:
            finding = replace(finding, evidence={**finding.evidence, "modification": note})
    if state.balance_note is not None and finding.is_credits:
        summary = f"{finding.summary.removesuffix('.')}; {state.balance_note}."
        finding = replace(finding, summary=summary)
    found = ahead(state, snapshot, snapshot.data_end, finding.window_s, finding.bottleneck)
    finding = replace(finding, next_bottleneck=found.next)
    if found.together:
        finding = _binding_together(finding, found.together)
    finding = refitted(finding, snapshot, catalog, cpu, memory)
    sized = sized_for(finding, snapshot)
    if sized is None:
        return finding
    evidence = {**finding.evidence, "fix_sized_for": sized}
    return replace(finding, evidence=evidence, sized_for=sized)


def refitted(
    finding: Finding,
    snapshot: Snapshot,
    catalog: Catalog,
    cpu: Peak | None = None,
    memory: Peak | None = None,
) -> Finding:
    """A concluded finding's fixes advised again, the types and classes among them fitted on
    these peaks: what the past, once read, changes of them."""
    return fitted(replace(finding, remedies=remedies(finding, snapshot, catalog)), cpu, memory)


def _binding_together(finding: Finding, together: tuple[NextBottleneck, ...]) -> Finding:
    """The finding, saying which of the resource's other limits bind with its own."""
    others = " and ".join(
        f"{format_rate(n.limit, n.unit, n.bottleneck.owner)} {_name(n.bottleneck)} cap"
        for n in together
    )
    summary = finding.summary.rstrip(".")
    lift = "both" if len(together) == 1 else "all of them"
    return replace(
        finding,
        summary=f"{summary}; it binds together with its {others}: a fix must lift {lift}.",
        evidence={**finding.evidence, "binds_with": [n.bottleneck.value for n in together]},
    )


def _name(bottleneck: Bottleneck) -> str:
    return bottleneck.value.replace("_", " ").replace("iops", "IOPS")
