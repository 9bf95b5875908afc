"""One analysis cycle: inventory → poll → normalize → snapshot → findings."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Container, Iterable, Mapping
from dataclasses import InitVar, dataclass, field, replace
from datetime import UTC, datetime

import structlog

from analyzer.analyze import prices, states
from analyzer.analyze.analysis import Judgements, analyze
from analyzer.analyze.catalog import NO_OFFERS, Catalog, Offers
from analyzer.analyze.prices import PriceList
from analyzer.analyze.rules import RuleSet
from analyzer.analyze.tiers import TierPolicy
from analyzer.collect import queries
from analyzer.collect.accounts import Account
from analyzer.collect.fetch import fetch
from analyzer.collect.history import History
from analyzer.collect.offers import AwsOffers
from analyzer.collect.past import PastDays
from analyzer.collect.pricing import OnDemandPrices
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region, connect
from analyzer.collect.window import MINUTE_S, aligned, data_end
from analyzer.live import heap, proofs
from analyzer.live.bill import Bill
from analyzer.live.coverage import Coverage
from analyzer.live.polling import RegionPoller
from analyzer.live.proofs import Proofs
from analyzer.live.scopes import Scopes
from analyzer.live.watched import Watched
from analyzer.model.costs import Projection
from analyzer.model.findings import Bottleneck, Finding
from analyzer.model.metrics import Tier
from analyzer.model.reading import Reading
from analyzer.model.resources import Inventory
from analyzer.model.series import Series
from analyzer.model.state import FetchStats, ResourceState, Snapshot
from analyzer.settings import Settings

log = structlog.get_logger(__name__)

LOOKBACK_MARGIN_S = 600.0
"""History kept beyond what the rules read: late datapoints and a few missed cycles."""


@dataclass(frozen=True, slots=True)
class CycleResult:
    snapshot: Snapshot
    findings: list[Finding]
    """Firing: the condition holds now and has held for the rule's `for`."""
    pending: list[Finding]
    """The condition holds now but not yet for the rule's `for`."""
    duration_s: float
    projection: Projection | None = None
    """The month's GetMetricData bill of watching these resources in the tiers they are in
    now, under the cadence in force (the budget's, where it binds)."""
    unknown: Container[tuple[str, str]] = frozenset()
    """(scope, id) of the resources whose condition is unknown this cycle (`Analysis`), and
    every resource of a scope that could not be described (`Dark`)."""
    readings: tuple[Reading, ...] = ()
    """Each resource's reading: what the report, `/metrics` and the alert book show."""

    _by_id: dict[tuple[str, str], Reading] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_id = {(r.ref.scope, r.ref.resource_id): r for r in self.readings}
        object.__setattr__(self, "_by_id", by_id)

    def reading(self, scope: str, resource_id: str) -> Reading | None:
        return self._by_id.get((scope, resource_id))


@dataclass(frozen=True, slots=True)
class Dark:
    """What a cycle cannot tell: the analysis's unknown resources, and every resource of the
    scopes (an account's regions) never described since the account stopped answering. An
    alert there keeps its state: an account that stops answering resolves nothing."""

    unknown: Container[tuple[str, str]]
    scopes: frozenset[str]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, tuple) and key and key[0] in self.scopes:
            return True
        return key in self.unknown


@dataclass
class Analyzer:
    """Runs cycles; between them it keeps the inventory, the instance types and the history,
    so that a long-running process fetches only what is new."""

    settings: Settings
    rules: RuleSet
    connect: InitVar[Callable[[str], Region]] = connect
    """How a region is read (`Scopes.connect`): boto3's standard chain unless a test or the
    demo says else."""
    connect_account: InitVar[Callable[[Account, str], Region] | None] = None
    """How an account's region is read (`Scopes.connect_account`): through its role
    (`Watched.session`) unless a test or the demo says else."""
    watched: InitVar[Watched | None] = None
    """The accounts of the settings and their health; made from the settings unless given."""
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC), repr=False)
    """What an account's retry schedule runs on: the daemon's clock."""
    price_list: PriceList | None = None
    offers: Offers = NO_OFFERS
    """What else AWS offers, and its prices: what turns a finding into priced options."""
    adaptive: bool = False
    """Poll each resource on the cadence and with the metrics of its tier (the daemon);
    otherwise every metric of every resource (`once`)."""
    resolution_s: int = MINUTE_S
    """The finest period asked for: CloudWatch's minute, or a few seconds where the regions'
    metrics come from a node's NVMe statistics."""
    billed: Callable[[MetricQuery], bool] = lambda _: True
    """Whether CloudWatch bills a query: not where a node's NVMe statistics answer it. The
    projected bill and the budget count only those it bills."""
    qualified: Callable[[ResourceState, datetime], str | None] = lambda _s, _e: None
    """What qualifies a resource's balance at the data end, said beside its credit findings
    and in its row: where a node carried it from a reading before its first page."""
    past_days: bool = True
    """Read each bucket's past days (`collect/past.py`) where a rule reads them: not where the
    regions' metrics are a node's NVMe statistics, which hold its pages' minutes and no days
    before them (a past read there would make every volume look new)."""
    proofs: Proofs | None = None
    """What the fixes' past showed, kept between cycles and read a few resources a cycle (the
    daemon); None: each `proven` reads the past of every finding (`once`)."""
    accounts: Watched = field(init=False, repr=False)
    """The accounts watched, and how each answers."""
    scopes: Scopes = field(init=False, repr=False)
    """Every (account, region) watched: the region it is read through, its inventory."""
    coverage: Coverage = field(init=False, repr=False)
    """The volumes node agents read (`node_coverage_url`): their rates are left to them."""
    bill: Bill = field(init=False, repr=False)
    """The month's GetMetricData bill, and the cadences the budgets allow."""
    _pollers: dict[str, RegionPoller] = field(default_factory=dict, repr=False)
    _judgements: Judgements = field(default_factory=Judgements, repr=False)
    _mismatched: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def __post_init__(
        self,
        connect: Callable[[str], Region],
        connect_account: Callable[[Account, str], Region] | None,
        watched: Watched | None,
    ) -> None:
        self.accounts = Watched(self.settings) if watched is None else watched
        self.scopes = Scopes(self.settings, self.accounts, connect, connect_account)
        self.coverage = Coverage.of(self.settings)
        self.bill = Bill(self.settings)

    def run(
        self,
        now: datetime,
        alerted: Collection[tuple[str, str]] = (),
        steady: Mapping[tuple[str, str], frozenset[Bottleneck]] | None = None,
    ) -> CycleResult:
        """One cycle at `now`. `alerted`: (region, id) of resources with an alert pending or
        firing, which adaptive polling keeps hot; `steady`: those none of whose alerts is
        pending or clearing, with the limits their firing alerts name (`AlertBook.steady`),
        which it reads less often where no other limit is in play."""
        started = time.monotonic()
        if not self.scopes.inventories():
            self.refresh_inventory()
        covered = self.coverage.refresh()
        for where in self.scopes.inventories():
            self._poller(where).cover(covered)
        # A refresh on the other worker swaps in a new dict whole; this cycle keeps its own.
        inventories = self.scopes.inventories()
        resources, stats = self._poll(inventories, now, alerted, steady or {})
        asked = {where: self._poller(where).asked_until() for where in inventories}
        # The newest data every region has: a region whose CloudWatch publishes later is
        # not judged at a minute it has not published yet.
        ends = [self._poller(where).end(now) for where in inventories]
        end = min(ends, default=data_end(now, self.settings.settle_delay, self.resolution_s))
        snap = states.build(now, end, _qualified(resources, end, self.qualified), stats, asked)
        if self.price_list is None:
            self.price_list = prices.load(self.settings.prices)
        analysis = analyze(
            snap, self.rules, Catalog(self.price_list, self.offers), self._judgements
        )
        self._say_mismatches(analysis.snapshot)
        readings = analysis.readings.all()
        _say_failures(stats)
        projection = self.bill.project(
            inventories,
            self._pollers,
            covered,
            self.price_list,
            adaptive=self.adaptive,
            billed=self.billed,
        )
        duration = time.monotonic() - started
        log.info(
            "poll.completed",
            volumes=sum(1 for s in resources if s.is_volume),
            node_covered=sum(1 for s in resources if s.is_volume and s.node_agent) or None,
            instances=sum(1 for s in resources if not s.has_storage),
            db_instances=sum(1 for s in resources if s.is_db),
            queries=stats.metrics_requested,
            by_tier=dict(stats.by_tier),
            requests=sum(stats.requests.values()),
            findings=len(analysis.firing),
            pending=len(analysis.pending),
            projected_dollars_per_month=round(projection.dollars(), 2),
            duration_s=round(duration, 3),
        )
        unknown = Dark(analysis.unknown, self.scopes.dark) if self.scopes.dark else analysis.unknown
        return CycleResult(
            analysis.snapshot,
            analysis.firing,
            analysis.pending,
            duration,
            projection,
            unknown,
            readings,
        )

    def _poll(
        self,
        inventories: dict[str, Inventory],
        now: datetime,
        alerted: Collection[tuple[str, str]],
        steady: Mapping[tuple[str, str], frozenset[Bottleneck]],
    ) -> tuple[list[ResourceState], FetchStats]:
        """Every resource's state after this cycle's fetches, and what they cost; an account
        is judged by its own metrics."""
        resources: list[ResourceState] = []
        stats = FetchStats()
        accounts: dict[str, tuple[Account, FetchStats]] = {}
        for where, inv in inventories.items():
            mine = {rid for r, rid in alerted if r == where}
            settled = {rid: named for (r, rid), named in steady.items() if r == where}
            if not inv.account_id:
                resources.extend(self._poller(where).poll(inv, now, mine, stats, settled))
                continue
            account = self.scopes.at(where).account
            assert account is not None
            own = accounts.setdefault(account.id, (account, FetchStats()))[1]
            resources.extend(self._poller(where).poll(inv, now, mine, own, settled))
        for account, own in accounts.values():
            self.accounts.judge_metrics(account, own, self.clock)
            stats.merge(own)
        return resources, stats

    def _poller(self, region: str) -> RegionPoller:
        if region not in self._pollers:
            s = self.settings
            self._pollers[region] = RegionPoller(
                self.scopes.at(region),
                # Enough history for the rule that reads furthest back, whatever the setting.
                History(
                    max(s.lookback or 0.0, self.rules.reach() + LOOKBACK_MARGIN_S),
                    s.overlap,
                    s.settle_delay,
                ),
                s.settle_delay,
                adaptive=self.adaptive,
                policy=TierPolicy(
                    hot_utilization=s.hot_utilization,
                    quiet_utilization=s.quiet_utilization,
                    # Never shorter than a forecast rule's horizon: a bucket it will warn
                    # about is polled every interval before it does.
                    hot_empty_within_s=max(s.hot_empty_within, self.rules.longest_horizon()),
                    low_balance_percent=s.low_balance_percent,
                ),
                cadence=self.bill.cadence(),
                span_s=self.rules.reach() + LOOKBACK_MARGIN_S,
                past=PastDays() if self.past_days and self.rules.reads_past() else None,
                windows=self.rules.forecast_windows,
                empty_window=self.rules.empty_window,
                resolution_s=self.resolution_s,
                billed=self.billed,
            )
        return self._pollers[region]

    def tiers(self) -> dict[tuple[str, str], Tier]:
        """The polling tier of each resource, by (region, id), after the last cycle."""
        return {(r, rid): t for r, p in self._pollers.items() for rid, t in p.tiers.items()}

    def _say_mismatches(self, snapshot: Snapshot) -> None:
        """Log a resource whose data contradicts a modelled limit once, when it starts to."""
        now = {(s.ref.scope, s.ref.resource_id): s for s in snapshot.resources if s.mismatches}
        for key in now.keys() - self._mismatched:
            state = now[key]
            log.warning(
                "model.mismatch",
                region=state.ref.region,
                resource=state.ref.resource_id,
                limits=[m.text() for m in state.mismatches],
            )
        self._mismatched = set(now)

    # --- the other jobs and the commands: the inventory, the retries, cost and history ----

    def refresh_inventory(self) -> dict[str, Inventory]:
        """Describe every scope again (`Scopes.refresh`): what the next cycles read."""
        return self.scopes.refresh(self.clock())

    def retry_accounts(self, now: datetime | None = None) -> list[str]:
        """Describe again the failing accounts whose retry time has come (`Scopes.retry`);
        the ids of those that answered."""
        return self.scopes.retry(now or self.clock())

    def inventories(self) -> dict[str, Inventory]:
        """What the last refresh found, by scope (the region where there are no accounts)."""
        return self.scopes.inventories()

    def proven(
        self, result: CycleResult, now: datetime, alerted: Collection[tuple[str, str]] = ()
    ) -> CycleResult:
        """`result` with each finding's fixes weighed on its resource's own past
        (`live/proofs.py`), read from CloudWatch where due and counted in the snapshot's
        stats: each volume fix replayed over the volume's last fourteen days (four metrics a
        volume), and the instance types and DB classes with fewer vCPUs or less memory left
        out where the peaks of the last fourteen days do not fit them, before the few shown
        are chosen (one or two metrics an instance; `analyze/advice/proof.py`). `alerted`:
        (scope, id) of resources whose alerts are raised already, read after the others."""
        snapshot = result.snapshot
        kept = self.proofs if self.proofs is not None else Proofs(None, budget_s=None)
        kept.agent_namespace = self.settings.cloudwatch_agent_namespace
        choosing = proofs.chosen(result.findings)
        due = kept.due(result.findings, snapshot, now, alerted, choosing)
        if self.price_list is None:
            self.price_list = prices.load(self.settings.prices)
        catalog = Catalog(self.price_list, self.offers)
        if due:
            # Counted apart: a failure leaves fixes without their past, not rows without data.
            stats = FetchStats()
            # The cycle's freed pages go back first: a fortnight's answers, parsed one metric
            # at a time, are the cycle's heaviest moment.
            heap.give_back()
            kept.read(
                due,
                result.findings,
                snapshot,
                self.scopes.at,
                now,
                self.settings.settle_delay,
                stats,
                catalog,
            )
            # Billed, and apart from the polls: their failures do not make the cycle's.
            snapshot.stats.past_requested += stats.metrics_requested
            snapshot.stats.requests.update(stats.requests)
            if stats.metrics_failed:
                log.warning(
                    "past.unread",
                    call="GetMetricData",
                    failed=stats.metrics_failed,
                    requested=stats.metrics_requested,
                    reason=stats.errors[0] if stats.errors else "unknown",
                    effect="their fixes say nothing of the past; instance types with fewer "
                    "vCPUs or less memory say their peaks are unknown",
                )
        findings = [kept.applied(f, snapshot, catalog, choosing) for f in result.findings]
        kept.keep_only(result.findings, choosing, now)
        return replace(result, findings=findings)

    def offering(self) -> Analyzer:
        """Read AWS's offers through this analyzer's regions, and their prices from the Price
        List unless the settings say not to: what names other instance types and classes in
        the options, with what they cost."""
        pricing = OnDemandPrices.connect() if self.settings.pricing_api else None
        self.offers = AwsOffers(lambda region: self.scopes.connected(region).describe, pricing)
        return self

    def costs(self) -> dict[str, dict[str, Projection]]:
        """Per scope, from the inventory (described afresh) alone: the month's bill with every
        resource idle, active or hot, and under `polling: full`; the rates of the volumes node
        agents read cost nothing (`node_coverage_url`)."""
        return self.bill.costs(
            prices.load(self.settings.prices), self.refresh_inventory(), self.coverage.refresh()
        )

    def sampled(self, now: datetime) -> tuple[dict[str, Projection], FetchStats]:
        """Per scope, the month's bill in the tiers the inventory's load now places it in, with
        what reading it cost (`cost --sample`): the daemon's first cycle at `now`, then its
        second as the daemon's next cycles would run it, each finding an alert firing steadily
        (the resource hot, read every third minute where its alerts name every limit that makes
        it hot), and what the daemon then projects."""
        first = self.run(now)
        daily = self.rules.daily()
        named: dict[tuple[str, str], set[Bottleneck]] = {}
        for f in first.findings:
            limits = named.setdefault((f.resource.scope, f.resource.resource_id), set())
            if f.rule not in daily:  # whose condition moves with the days: never steady
                limits.add(f.bottleneck)
        steady = {key: frozenset(limits) for key, limits in named.items()}
        then = self.run(now, named.keys(), steady)
        stats = first.snapshot.stats
        stats.merge(then.snapshot.stats)
        return dict(self.bill.projections), stats

    def history_queries(self) -> dict[str, list[MetricQuery]]:
        """Per scope, every metric of the inventory (described afresh), at its own period."""
        return {
            region: [q for found in queries.for_inventory(inv, None).values() for q in found]
            for region, inv in self.refresh_inventory().items()
        }

    def history(
        self, wanted: dict[str, list[MetricQuery]], since_s: float, now: datetime
    ) -> tuple[dict[str, dict[str, dict[str, Series]]], FetchStats]:
        """These metrics over the last `since_s` up to the end of the data at `now`, each at
        its own period, fetched as the daemon fetches: by region, then resource id, then metric
        name."""
        raw: dict[str, dict[str, dict[str, Series]]] = {}
        stats = FetchStats()
        for region, found in wanted.items():
            plan = [
                (
                    aligned(now, period, since_s, self.settings.settle_delay),
                    [q for q in found if q.period_s == period],
                )
                for period in sorted({q.period_s for q in found})
            ]
            mine: dict[str, dict[str, Series]] = {}
            for _, fetched in fetch(self.scopes.at(region).metrics, plan, stats):
                for query, series in fetched.items():
                    mine.setdefault(query.resource_id, {})[query.metric] = series
            raw[region] = mine
        return raw, stats


def _say_failures(stats: FetchStats) -> None:
    """One line for a cycle in which metrics failed: the call, where, why, and how many."""
    if not stats.metrics_failed:
        return
    # A node agent's metrics come from its volumes' pages, not from CloudWatch.
    node = stats.free >= stats.metrics_requested
    log.error(
        "node.metrics_failed" if node else "cloudwatch.failed",
        call="NVMe log page" if node else "GetMetricData",
        outcome=stats.outcome,
        failed=stats.metrics_failed,
        requested=stats.metrics_requested,
        share=round(stats.failed_share, 3),
        reason=stats.errors[0] if stats.errors else "unknown",
    )


def _qualified(
    resources: Iterable[ResourceState],
    end: datetime,
    qualify: Callable[[ResourceState, datetime], str | None],
) -> list[ResourceState]:
    """The states, each with what qualifies its balance (`Analyzer.qualified`)."""
    out = []
    for state in resources:
        note = qualify(state, end)
        out.append(
            state if note is None else replace(state, balance_note=note, notes=(*state.notes, note))
        )
    return out
