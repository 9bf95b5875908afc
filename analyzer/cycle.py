"""One analysis cycle: inventory → poll → normalize → snapshot → findings."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import structlog

from analyzer.analyze import prices, states
from analyzer.analyze.analysis import analyze
from analyzer.analyze.prices import PriceList
from analyzer.analyze.rules import RuleSet
from analyzer.collect import inventory, queries
from analyzer.collect.aws import default_region
from analyzer.collect.history import History
from analyzer.collect.inventory import InstanceTypeCache, TagFilter
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region, connect
from analyzer.collect.window import aligned
from analyzer.errors import ConfigError
from analyzer.model.findings import Finding
from analyzer.model.resources import Inventory
from analyzer.model.series import Series
from analyzer.model.state import FetchStats, ResourceState, Snapshot
from analyzer.settings import Settings

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class CycleResult:
    snapshot: Snapshot
    findings: list[Finding]
    """Firing: the condition holds now and has held for the rule's `for`."""
    pending: list[Finding]
    """The condition holds now but not yet for the rule's `for`."""
    duration_s: float


@dataclass
class Analyzer:
    """Runs cycles; between them it keeps the inventory, the instance types and the history,
    so that a long-running process fetches only what is new."""

    settings: Settings
    rules: RuleSet
    connect: Callable[[str], Region] = connect
    """How a region is read: boto3's standard chain unless a test or the demo says else."""
    types: InstanceTypeCache = field(default_factory=InstanceTypeCache)
    price_list: PriceList | None = None
    _regions: dict[str, Region] = field(default_factory=dict, repr=False)
    _inventories: dict[str, Inventory] = field(default_factory=dict, repr=False)
    _histories: dict[str, History] = field(default_factory=dict, repr=False)

    def regions(self) -> list[str]:
        if self.settings.region:
            return list(dict.fromkeys(self.settings.region))
        region = default_region()
        if not region:
            raise ConfigError(
                "no AWS region: pass --region, or set EBS_ANALYZER_REGION or AWS_REGION"
            )
        return [region]

    def _for(self, region: str) -> Region:
        if region not in self._regions:
            self._regions[region] = self.connect(region)
        return self._regions[region]

    def refresh_inventory(self) -> dict[str, Inventory]:
        """Describe every region again; resources that are gone drop out of the next cycle."""
        tags = [TagFilter.parse(t) for t in self.settings.tag]
        fresh = {
            r: inventory.discover(self._for(r).describe, self.types, tags) for r in self.regions()
        }
        self._inventories = fresh
        log.info(
            "inventory.refreshed",
            regions=len(fresh),
            volumes=sum(len(i.volumes) for i in fresh.values()),
            instances=sum(len(i.instances) for i in fresh.values()),
        )
        return fresh

    def _history(self, region: str) -> History:
        if region not in self._histories:
            s = self.settings
            self._histories[region] = History(s.lookback, s.overlap, s.settle_delay)
        return self._histories[region]

    def _poll(
        self, region: str, inv: Inventory, now: datetime, stats: FetchStats
    ) -> dict[MetricQuery, Series]:
        history = self._history(region)
        wanted = [q for qs in queries.for_inventory(inv).values() for q in qs]
        source = self._for(region).metrics
        for window, group in history.plan(wanted, now):
            fetched, group_stats = source.fetch(group, window)
            stats.merge(group_stats)
            history.merge(window, fetched)
        return history.current(wanted, now)

    def run(self, now: datetime) -> CycleResult:
        started = time.monotonic()
        if not self._inventories:
            self.refresh_inventory()
        resources: list[ResourceState] = []
        stats = FetchStats()
        for region, inv in self._inventories.items():
            resources.extend(states.states_for(inv, self._poll(region, inv, now, stats)))
        data_end = aligned(now, queries.VOLUME_PERIOD_S, 0, self.settings.settle_delay).end
        snap = states.build(now, data_end, resources, stats)
        if self.price_list is None:
            self.price_list = prices.load(self.settings.prices)
        analysis = analyze(snap, self.rules, self.price_list)
        duration = time.monotonic() - started
        log.info(
            "poll.completed",
            volumes=sum(1 for s in resources if s.is_volume),
            instances=sum(1 for s in resources if not s.has_storage),
            db_instances=sum(1 for s in resources if s.is_db),
            queries=stats.metrics_requested,
            requests=sum(stats.requests.values()),
            findings=len(analysis.firing),
            pending=len(analysis.pending),
            duration_s=round(duration, 3),
        )
        return CycleResult(analysis.snapshot, analysis.firing, analysis.pending, duration)
