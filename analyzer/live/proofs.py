"""What the fixes' past showed, kept between cycles: the figures, not the minutes behind them.

A fix is weighed on its resource's last fourteen days when its finding is there to be told:
each run of `once`, and in the daemon when its alert is about to be sent. The daemon reads
the past of at most `reads_per_cycle` resources a cycle, for at most `budget_s`, those of
alerts not yet sent first, and keeps what it showed (`Proof`, `Peaks`: a few figures a fix)
for `keep_s`, or until the resource has no finding left. A fix sized anew since is weighed
again once its figures are an hour old; meanwhile it says nothing of the past rather than
another fix's figures.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from analyzer.analyze.advice import proof
from analyzer.analyze.advice.proof import ChangeKey, Peak
from analyzer.analyze.analysis import conclude, refitted
from analyzer.analyze.catalog import Catalog
from analyzer.collect import demand
from analyzer.collect.regions import Region
from analyzer.errors import AnalyzerError
from analyzer.model.demand import Demand
from analyzer.model.findings import Finding, PastFit
from analyzer.model.metrics import Namespace
from analyzer.model.resources import DbInstance, Instance, ResourceType
from analyzer.model.state import FetchStats, Snapshot
from analyzer.model.units import GIB

Key = tuple[str, str]
"""(scope, resource id)."""

READS_PER_CYCLE = 20
"""Resources whose past the daemon reads in one cycle: at most 80 metrics, four a volume or
RDS instance."""
BUDGET_S = 2.0
"""At most this long a cycle is spent reading the past, whatever the count (at least one
resource is read): a fortnight of one resource takes about half a second to parse and
replay, and a busy fleet's cycle takes a few seconds without it."""
KEEP_S = 7 * 86_400.0
"""How long what a read showed stands while its alert fires: half the fortnight it read is
still in the fortnight a week on, and a long-firing alert's evidence need not be read again
every day (a fix sized anew is, within the hour)."""
REWEIGH_AFTER_S = 3600.0
"""A fix sized anew is weighed again once the figures kept are this old."""


@dataclass(frozen=True, slots=True)
class Proof:
    """What one read of a volume's or RDS instance's past showed: each weighed fix's figures,
    by its change, and the rate its empty bucket ran at before it ran out, where the finding
    did not know it."""

    read_at: datetime
    fits: Mapping[ChangeKey, PastFit]
    before_empty: float | None = None
    asked: frozenset[ChangeKey] = frozenset()
    """The changes the findings' fixes made when it was read, before an empty bucket's were
    sized anew: what tells a fix sized anew since from one weighed then."""


@dataclass(frozen=True, slots=True)
class Peaks:
    """What one read of an instance's or DB instance's past showed: its peak CPU and the most
    memory it used, each with the days read over; None where unknown."""

    read_at: datetime
    cpu: Peak | None
    memory: Peak | None


@dataclass(frozen=True, slots=True)
class Due:
    """What a cycle reads: the resources whose own fixes it weighs, and by scope the
    instances and DB instances whose type or class it chooses."""

    storage: list[Key] = field(default_factory=list)
    """(scope, id), the most wanted first."""
    peaks: dict[str, list[Chosen]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.storage or self.peaks)


Fit = tuple[Peak | None, Peak | None]
"""An instance's peak CPU and memory, None where unknown."""

Chosen = tuple[ResourceType, str]
"""An instance or DB instance whose type or class a finding's fixes choose."""


def chosen(findings: Iterable[Finding]) -> dict[Key, Chosen]:
    """By finding's resource, the instance or DB instance whose type or class its fixes
    choose, where they choose one."""
    out: dict[Key, Chosen] = {}
    for f in findings:
        change = next((c for r in f.remedies if (c := proof.type_change(r)) is not None), None)
        if change is not None:
            out[(f.resource.scope, f.resource.resource_id)] = (
                change.resource_type,
                change.resource_id,
            )
    return out


@dataclass
class Proofs:
    reads_per_cycle: int | None = READS_PER_CYCLE
    """None: every resource with a fix to weigh (`once`)."""
    keep_s: float = KEEP_S
    budget_s: float | None = BUDGET_S
    """Seconds of reading a cycle, past which the rest waits for the next. None: no bound
    (`once`)."""
    agent_namespace: str | None = None
    """Where the CloudWatch agent publishes an instance's memory (`CWAgent` unless set)."""
    storage: dict[Key, Proof] = field(default_factory=dict)
    peaks: dict[Key, Peaks] = field(default_factory=dict)

    def due(
        self,
        findings: Iterable[Finding],
        snapshot: Snapshot,
        now: datetime,
        alerted: Collection[Key] = (),
        choosing: Mapping[Key, Chosen] | None = None,
    ) -> Due:
        """The resources to read now: a volume or RDS instance with fixes and nothing kept (or
        kept too long, or kept before its fixes were sized anew, or when its read failed), an
        instance or DB instance with a type or class to choose and nothing kept; those of
        alerts not yet raised (not in `alerted`) first, then the most severe. `choosing`:
        `chosen`."""
        wanted: dict[tuple[str, str, Chosen], tuple[bool, int]] = {}

        def want(what: tuple[str, str, Chosen], rank: tuple[bool, int]) -> None:
            wanted[what] = min(wanted.get(what, rank), rank)

        for finding in findings:
            scope, rid = key = (finding.resource.scope, finding.resource.resource_id)
            rank = (key in alerted, -finding.severity.rank)
            replayed = snapshot.get(scope, rid) is not None and bool(proof.own_changes(finding))
            if replayed and self._stale(finding, self.storage.get(key), now):
                want(("storage", scope, (finding.resource.resource_type, rid)), rank)
            other = (choosing or {}).get(key)
            if other is not None and self._peaks_stale(self.peaks.get((scope, other[1])), now):
                want(("peaks", scope, other), rank)
        ordered = sorted(wanted, key=lambda w: wanted[w])
        if self.reads_per_cycle is not None:
            ordered = ordered[: self.reads_per_cycle]
        due = Due()
        for what, scope, (kind, rid) in ordered:
            if what == "storage":
                due.storage.append((scope, rid))
            else:
                due.peaks.setdefault(scope, []).append((kind, rid))
        return due

    def read(
        self,
        due: Due,
        findings: Iterable[Finding],
        snapshot: Snapshot,
        region_at: Callable[[str], Region],
        now: datetime,
        settle_s: float,
        stats: FetchStats,
        catalog: Catalog,
    ) -> None:
        """Read what is due and keep what it shows. A scope CloudWatch does not answer costs
        its resources their past (for an hour), nothing else: one error counted in `stats`."""
        by_key: dict[Key, list[Finding]] = {}
        for f in findings:
            by_key.setdefault((f.resource.scope, f.resource.resource_id), []).append(f)
        choosing = chosen(f for found in by_key.values() for f in found)
        failed: set[str] = set()
        # The peaks first: one small metric each, and they keep types out or in.
        for scope, peaks in due.peaks.items():
            try:
                self._read_peaks(scope, peaks, snapshot, region_at(scope), now, settle_s, stats)
            except AnalyzerError as exc:
                failed.add(scope)
                _lost(stats, exc)
                # Not answered: unknown, asked again later.
                self.peaks |= {(scope, rid): Peaks(now, None, None) for _, rid in peaks}
        # Then each resource's fortnight, most wanted first, until the time is spent: the
        # rest stay due, read first next cycle.
        started, tried = time.monotonic(), 0
        for scope, rid in due.storage:
            state = snapshot.get(scope, rid)
            if state is None:
                continue
            if scope not in failed:
                spent = time.monotonic() - started
                if tried and self.budget_s is not None and spent > self.budget_s:
                    break  # one at least each cycle, however slow
                tried += 1
                try:
                    for _, seen in demand.fetch_demand(
                        region_at(scope).metrics, [state.resource], now, settle_s, stats
                    ):
                        found = by_key.get((scope, rid), [])
                        fit = self._peaks_of((scope, rid), choosing)
                        self.storage[(scope, rid)] = _proof(
                            found, snapshot, seen, now, catalog, fit
                        )
                except AnalyzerError as exc:
                    failed.add(scope)
                    _lost(stats, exc)
            # Asked and not answered (failed, or no counts): nothing to say, asked again later.
            kept = self.storage.get((scope, rid))
            if kept is None or kept.read_at != now:
                self.storage[(scope, rid)] = Proof(now, {})

    def applied(
        self,
        finding: Finding,
        snapshot: Snapshot,
        catalog: Catalog,
        choosing: Mapping[Key, Chosen],
    ) -> Finding:
        """`finding` with what its resource's past showed: an empty bucket's fixes sized for
        the rate before it ran out, the types and classes fitted on its instance's peaks,
        and each fix's figures."""
        key = (finding.resource.scope, finding.resource.resource_id)
        state, kept = snapshot.get(*key), self.storage.get(key)
        sized = self._sized(finding, snapshot, catalog, choosing, kept)
        return proof.with_past(sized, kept.fits) if kept is not None and state else sized

    def _sized(
        self,
        finding: Finding,
        snapshot: Snapshot,
        catalog: Catalog,
        choosing: Mapping[Key, Chosen],
        kept: Proof | None,
    ) -> Finding:
        """`finding` with its fixes sized anew where its past says more than the cycle knew:
        an empty bucket's rate before it ran out (`kept`), its instance's peaks."""
        key = (finding.resource.scope, finding.resource.resource_id)
        cpu, memory = self._peaks_of(key, choosing)
        state = snapshot.get(*key)
        if kept is not None and kept.before_empty is not None and state is not None:
            recalled = proof.recalled(finding, state, kept.before_empty)
            if recalled is not None:
                return conclude(recalled, snapshot, catalog, cpu, memory)
        if cpu is None and memory is None:
            return finding  # fitted on unknown peaks already, when concluded
        return refitted(finding, snapshot, catalog, cpu, memory)

    def _peaks_of(self, key: Key, choosing: Mapping[Key, Chosen]) -> Fit:
        """The peak CPU and memory of the instance or DB instance whose type or class the
        findings of `key` choose: (None, None) where unknown."""
        other = choosing.get(key)
        peaks = self.peaks.get((key[0], other[1])) if other is not None else None
        return (peaks.cpu, peaks.memory) if peaks is not None else (None, None)

    def keep_only(
        self, findings: Iterable[Finding], choosing: Mapping[Key, Chosen], now: datetime
    ) -> None:
        """Forget the resources no finding names any more, once what was read of them is an
        hour old: a finding missing for a cycle or two (a region not read, a rate wavering
        about a rule's threshold) does not cost its resource a read when it comes back."""
        named = {(f.resource.scope, f.resource.resource_id) for f in findings}
        others = {(k[0], choosing[k][1]) for k in named if k in choosing}

        def recent(read_at: datetime) -> bool:
            return (now - read_at).total_seconds() < REWEIGH_AFTER_S

        self.storage = {k: v for k, v in self.storage.items() if k in named or recent(v.read_at)}
        self.peaks = {k: v for k, v in self.peaks.items() if k in others or recent(v.read_at)}

    def _read_peaks(
        self,
        scope: str,
        asked: list[Chosen],
        snapshot: Snapshot,
        where: Region,
        now: datetime,
        settle_s: float,
        stats: FetchStats,
    ) -> None:
        metrics = where.metrics
        ec2 = [rid for kind, rid in asked if kind is ResourceType.INSTANCE]
        rds = [rid for kind, rid in asked if kind is ResourceType.DB_INSTANCE]
        cpu = demand.fetch_cpu_peaks(metrics, ec2, now, settle_s, stats)
        cpu |= demand.fetch_cpu_peaks(metrics, rds, now, settle_s, stats, Namespace.RDS)
        used: dict[str, Peak] = {}
        for rid, (free, days) in demand.fetch_least_free_memory(
            metrics, rds, now, settle_s, stats
        ).items():
            db = snapshot.get(scope, rid)
            info = db.resource.class_info if db and isinstance(db.resource, DbInstance) else None
            if info is not None and info.memory_bytes:
                used[rid] = (max(info.memory_bytes - free, 0.0) / GIB, days)
        agent = self.agent_namespace or Namespace.AGENT.value
        try:
            memory = demand.fetch_most_memory_used(
                metrics, where.listing, agent, ec2, now, settle_s, stats
            )
        except AnalyzerError as exc:
            # ListMetrics refused: the memory is unknown, the CPU read above stands.
            _lost(stats, exc)
            memory = {}
        for rid, (percent, days) in memory.items():
            state = snapshot.get(scope, rid)
            info = (
                state.resource.type_info if state and isinstance(state.resource, Instance) else None
            )
            if info is not None and info.memory_bytes:
                used[rid] = (percent / 100 * info.memory_bytes / GIB, days)
        for _, rid in asked:
            self.peaks[(scope, rid)] = Peaks(now, cpu.get(rid), used.get(rid))

    def _stale(self, finding: Finding, kept: Proof | None, now: datetime) -> bool:
        if kept is None:
            return True
        age = (now - kept.read_at).total_seconds()
        known = kept.asked | kept.fits.keys()
        anew = age >= REWEIGH_AFTER_S and not proof.own_changes(finding) <= known
        return age >= self.keep_s or anew

    def _peaks_stale(self, kept: Peaks | None, now: datetime) -> bool:
        if kept is None:
            return True
        age = (now - kept.read_at).total_seconds()
        return age >= self.keep_s or (kept.cpu is None and age >= REWEIGH_AFTER_S)


def _lost(stats: FetchStats, exc: AnalyzerError) -> None:
    """A read of the past that failed: counted, and its reason kept for the log line."""
    stats.metrics_failed += 1
    stats.errors.append(str(exc))


def _proof(
    findings: Iterable[Finding],
    snapshot: Snapshot,
    seen: Demand,
    now: datetime,
    catalog: Catalog,
    peaks: Fit = (None, None),
) -> Proof:
    """What a resource's past shows of its findings' fixes: each weighed over it, an empty
    bucket's sized first for the rate before it ran out where the finding did not know it,
    the types and classes fitted first on `peaks` (its instance's CPU and memory)."""
    fits: dict[ChangeKey, PastFit] = {}
    before = None
    asked: frozenset[ChangeKey] = frozenset()
    for finding in findings:
        asked |= proof.own_changes(finding)
        state = snapshot.get(finding.resource.scope, finding.resource.resource_id)
        if state is None:
            continue
        rate = proof.before_empty(finding, state, seen)
        recalled = proof.recalled(finding, state, rate) if rate is not None else None
        sized = finding
        if recalled is not None:
            before, sized = rate, conclude(recalled, snapshot, catalog, *peaks)
        elif any(p is not None for p in peaks):
            sized = refitted(finding, snapshot, catalog, *peaks)
        types = None
        if isinstance(state.resource, Instance):
            types = {t.name: t for t in catalog.instance_types(state.ref.region)}
        fits |= proof.weighed(sized, state, seen, types)
    return Proof(now, fits, before, asked)
