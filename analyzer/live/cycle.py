"""One analysis cycle: inventory → poll → normalize → snapshot → findings."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Container
from dataclasses import dataclass, field
from datetime import UTC, datetime

import structlog

from analyzer.analyze import prices, states
from analyzer.analyze.analysis import Judgements, analyze
from analyzer.analyze.catalog import NO_OFFERS, Catalog, Offers
from analyzer.analyze.prices import PriceList
from analyzer.analyze.rules import RuleSet
from analyzer.analyze.tiers import TierPolicy
from analyzer.collect import inventory, queries, shards
from analyzer.collect.accounts import Account
from analyzer.collect.agent_metrics import AgentDiscovery
from analyzer.collect.aws import NO_REGION, Clients, default_region
from analyzer.collect.fetch import fetch
from analyzer.collect.history import History
from analyzer.collect.inventory import InstanceTypeCache, TagFilter
from analyzer.collect.offers import AwsOffers
from analyzer.collect.past import PastDays
from analyzer.collect.pricing import OnDemandPrices
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region, connect, connect_as
from analyzer.collect.window import MINUTE_S, aligned, data_end
from analyzer.errors import AwsAccessError, AwsCallError, ConfigError
from analyzer.live.bill import Bill
from analyzer.live.coverage import Coverage
from analyzer.live.polling import RegionPoller
from analyzer.live.watched import Watched
from analyzer.model.costs import Projection
from analyzer.model.findings import Finding
from analyzer.model.metrics import Tier
from analyzer.model.reading import Reading
from analyzer.model.resources import Inventory, scope_of
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
    connect: Callable[[str], Region] = connect
    """How a region is read: boto3's standard chain unless a test or the demo says else."""
    connect_account: Callable[[Account, str], Region] | None = None
    """How an account's region is read: through its role (`Watched.session`) unless a test
    or the demo says else."""
    watched: Watched | None = None
    """The accounts of the settings and their health; made from the settings unless given."""
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC), repr=False)
    """What an account's retry schedule runs on: the daemon's clock."""
    types: InstanceTypeCache = field(default_factory=InstanceTypeCache)
    price_list: PriceList | None = None
    offers: Offers = NO_OFFERS
    """What else AWS offers, and its prices: what turns a finding into priced options."""
    _regions: dict[str, Region] = field(default_factory=dict, repr=False)
    """By scope."""
    _dark: frozenset[str] = field(default=frozenset(), repr=False)
    """Scopes of accounts that failed before any inventory of theirs was found."""
    _swapping: threading.Lock = field(default_factory=threading.Lock, repr=False)
    """Held while a refresh or an account's retry swaps in the inventories."""
    _monitoring: dict[str, Clients] = field(default_factory=dict, repr=False)
    """The monitoring account's clients, by region, where metrics are read there."""
    _inventories: dict[str, Inventory] = field(default_factory=dict, repr=False)
    adaptive: bool = False
    """Poll each resource on the cadence and with the metrics of its tier (the daemon);
    otherwise every metric of every resource (`once`)."""
    resolution_s: int = MINUTE_S
    """The finest period asked for: CloudWatch's minute, or a few seconds where the regions'
    metrics come from a node's NVMe statistics."""
    billed: Callable[[MetricQuery], bool] = lambda _: True
    """Whether CloudWatch bills a query: not where a node's NVMe statistics answer it. The
    projected bill and the budget count only those it bills."""
    coverage: Coverage = field(init=False, repr=False)
    """The volumes node agents read (`node_coverage_url`): their rates are left to them."""
    agent: AgentDiscovery | None = None
    """Which volumes the CloudWatch agent publishes for (`cloudwatch_agent_namespace`)."""
    _pollers: dict[str, RegionPoller] = field(default_factory=dict, repr=False)
    _judgements: Judgements = field(default_factory=Judgements, repr=False)
    _mismatched: set[tuple[str, str]] = field(default_factory=set, repr=False)
    bill: Bill = field(init=False, repr=False)
    """The month's GetMetricData bill, and the cadences the budgets allow."""

    def __post_init__(self) -> None:
        if self.watched is None:
            self.watched = Watched(self.settings)
        self.coverage = Coverage.of(self.settings)
        if self.agent is None and self.settings.cloudwatch_agent_namespace:
            self.agent = AgentDiscovery(self.settings.cloudwatch_agent_namespace)
        self.bill = Bill(self.settings)

    @property
    def accounts(self) -> Watched:
        assert self.watched is not None
        return self.watched

    def regions(self) -> list[str]:
        if self.settings.region:
            return list(dict.fromkeys(self.settings.region))
        region = default_region()
        if not region:
            raise ConfigError(NO_REGION)
        return [region]

    def offering(self) -> Analyzer:
        """Read AWS's offers through this analyzer's regions, and their prices from the Price
        List unless the settings say not to: what names other instance types and classes in
        the options, with what they cost."""
        pricing = OnDemandPrices.connect() if self.settings.pricing_api else None
        self.offers = AwsOffers(lambda region: self._for(region).describe, pricing)
        return self

    def targets(self) -> list[tuple[Account | None, str]]:
        """Every (account, region) to read: the daemon's own account (None) in each region
        when no account is configured; else each account in its regions (or the top-level
        ones)."""
        regions = self.regions()
        if not self.accounts.configured:
            return [(None, r) for r in regions]
        found = self.accounts.resolve(regions[0])
        return [pair for a in found for pair in _places(a, regions)]

    def _for(self, region: str, account: Account | None = None) -> Region:
        where = scope_of(account.id, region) if account else region
        if where not in self._regions:
            self._regions[where] = (
                self.connect(region) if account is None else self._connect_account(account, region)
            )
        return self._regions[where]

    def _connect_account(self, account: Account, region: str) -> Region:
        if self.connect_account is not None:
            return self.connect_account(account, region)
        if account.role_arn is None:
            self.accounts.check_own(account, self.regions()[0])
        member = self.accounts.session(account, self.regions()[0])
        monitoring = None
        if self.settings.monitoring_account:
            # One CloudWatch client per region reads every account's metrics.
            if region not in self._monitoring:
                self._monitoring[region] = Clients.for_region(region)
            monitoring = self._monitoring[region]
        return connect_as(account, region, member, monitoring)

    def _discover(self, account: Account | None, region: str) -> Inventory:
        tags = [TagFilter.parse(t) for t in self.settings.tag]
        where = self._for(region, account)
        found = inventory.discover(
            where.describe,
            self.types,
            tags,
            account_id=account.id if account else "",
            account_name=(account.name or "") if account else "",
        )
        if self.agent is not None and where.listing is not None:
            found = self.agent.discover(found, where.listing)
        return shards.kept(found, self.settings.sharding())

    def refresh_inventory(self) -> dict[str, Inventory]:
        """Describe every account's regions again; resources that are gone drop out of the
        next cycle. Where there are accounts, one that fails keeps the inventory it had (its
        alerts hold) and is described again on its own schedule (`retry_accounts`); the
        refresh fails only when every account does."""
        now = self.clock()
        fresh: dict[str, Inventory] = {}
        failures: list[Exception] = []
        by_account: dict[str, list[tuple[Account, str]]] = {}
        for account, region in self.targets():
            if account is None:
                fresh[region] = self._discover(None, region)
            else:
                by_account.setdefault(account.id, []).append((account, region))
        for pairs in by_account.values():
            found = self._describe_account(pairs, now)
            if isinstance(found, Exception):
                failures.append(found)
                continue
            fresh.update(found)
        if by_account and len(failures) == len(by_account):
            raise failures[0]
        self._swap(fresh, [s for pairs in by_account.values() for s in _scopes(pairs)])
        log.info(
            "inventory.refreshed",
            regions=len(fresh),
            accounts=len(by_account) or None,
            failed_accounts=len(failures) or None,
            volumes=sum(len(i.volumes) for i in fresh.values()),
            instances=sum(len(i.instances) for i in fresh.values()),
        )
        return self._inventories

    def _describe_account(
        self, pairs: list[tuple[Account, str]], now: datetime
    ) -> dict[str, Inventory] | Exception:
        """One account's regions, all or none: an account that fails in one region is
        failing (its role, its permissions), and keeps what it had everywhere."""
        account = pairs[0][0]
        try:
            found = {scope_of(a.id, r): self._discover(a, r) for a, r in pairs}
        except (AwsAccessError, AwsCallError) as exc:
            self.accounts.failed(account, exc, now)
            return exc
        self.accounts.answered(account)
        return found

    def _swap(self, fresh: dict[str, Inventory], scopes: list[str]) -> None:
        """Take in a refresh: a scope it has replaces the one kept; one it lacks (its account
        failed) keeps what it had, or is dark where it had nothing."""
        with self._swapping:
            old = self._inventories
            kept = {s: old[s] for s in scopes if s not in fresh and s in old}
            self._dark = frozenset(s for s in scopes if s not in fresh and s not in kept)
            self._inventories = {**fresh, **kept}

    def retry_accounts(self, now: datetime | None = None) -> list[str]:
        """Describe again the failing accounts whose retry time has come; the ids of those
        that answered."""
        now = now or self.clock()
        due = self.accounts.due(now)
        if not due:
            return []
        regions = self.regions()
        fresh: dict[str, Inventory] = {}
        back: list[str] = []
        for account in due:
            found = self._describe_account(_places(account, regions), now)
            if not isinstance(found, Exception):
                fresh.update(found)
                back.append(account.id)
        if back:
            with self._swapping:
                self._inventories = {**self._inventories, **fresh}
                self._dark = frozenset(s for s in self._dark if s not in fresh)
        return back

    def inventories(self) -> dict[str, Inventory]:
        """What the last refresh found, by scope (the region where there are no accounts)."""
        return self._inventories

    def _at(self, where: str) -> Region:
        """The region a scope is read through: connected when its inventory was described
        (the daemon's own account's region is connected on first use)."""
        return self._regions.get(where) or self._for(where)

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
            for _, fetched in fetch(self._at(region).metrics, plan, stats):
                for query, series in fetched.items():
                    mine.setdefault(query.resource_id, {})[query.metric] = series
            raw[region] = mine
        return raw, stats

    def _poller(self, region: str) -> RegionPoller:
        if region not in self._pollers:
            s = self.settings
            self._pollers[region] = RegionPoller(
                self._at(region),
                # Enough history for the rule that reads furthest back, whatever the setting.
                History(
                    max(s.lookback, self.rules.reach() + LOOKBACK_MARGIN_S),
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
                past=PastDays() if self.rules.reads_past() else None,
                windows=self.rules.forecast_windows,
                resolution_s=self.resolution_s,
                billed=self.billed,
            )
        return self._pollers[region]

    def tiers(self) -> dict[tuple[str, str], Tier]:
        """The polling tier of each resource, by (region, id), after the last cycle."""
        return {(r, rid): t for r, p in self._pollers.items() for rid, t in p.tiers.items()}

    def run(self, now: datetime, alerted: Collection[tuple[str, str]] = ()) -> CycleResult:
        """One cycle at `now`. `alerted`: (region, id) of resources with an alert pending or
        firing, which adaptive polling keeps hot."""
        started = time.monotonic()
        if not self._inventories:
            self.refresh_inventory()
        covered = self.coverage.refresh()
        for where in self._inventories:
            self._poller(where).cover(covered)
        resources: list[ResourceState] = []
        stats = FetchStats()
        # A refresh on the other worker swaps in a new dict whole; this cycle keeps its own.
        inventories = self._inventories
        accounts: dict[str, tuple[Account, FetchStats]] = {}
        for where, inv in inventories.items():
            mine = {rid for r, rid in alerted if r == where}
            if not inv.account_id:
                resources.extend(self._poller(where).poll(inv, now, mine, stats))
                continue
            account = self._at(where).account
            assert account is not None
            own = accounts.setdefault(account.id, (account, FetchStats()))[1]
            resources.extend(self._poller(where).poll(inv, now, mine, own))
        for account, own in accounts.values():
            self.accounts.judge_metrics(account, own, self.clock)
            stats.merge(own)
        asked = {where: self._poller(where).asked_until() for where in inventories}
        end = data_end(now, self.settings.settle_delay, self.resolution_s)
        snap = states.build(now, end, resources, stats, asked)
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
        unknown = Dark(analysis.unknown, self._dark) if self._dark else analysis.unknown
        return CycleResult(
            analysis.snapshot,
            analysis.firing,
            analysis.pending,
            duration,
            projection,
            unknown,
            readings,
        )

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

    def costs(self) -> dict[str, dict[str, Projection]]:
        """Per scope, from the inventory (described afresh) alone: the month's bill with every
        resource idle, active or hot, and under `polling: full`; the rates of the volumes node
        agents read cost nothing (`node_coverage_url`)."""
        return self.bill.costs(
            prices.load(self.settings.prices), self.refresh_inventory(), self.coverage.refresh()
        )


def _scopes(pairs: list[tuple[Account, str]]) -> list[str]:
    return [scope_of(a.id, r) for a, r in pairs]


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


def _places(account: Account, regions: list[str]) -> list[tuple[Account, str]]:
    """Where an account is read: its own regions, or the top-level ones."""
    return [(account, r) for r in (account.regions or regions)]
