"""One full analysis cycle: inventory → poll → normalize → snapshot → findings."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

import structlog

from analyzer import advice, cloudwatch, engine, inventory, prices, queries, snapshot
from analyzer.aws import Clients, default_region
from analyzer.cloudwatch import CloudWatch, FetchStats
from analyzer.errors import ConfigError
from analyzer.inventory import InstanceTypeCache, Inventory, TagFilter
from analyzer.models import Finding
from analyzer.prices import PriceList
from analyzer.queries import MetricQuery
from analyzer.rules import RuleSet
from analyzer.settings import Settings
from analyzer.snapshot import ResourceState, Snapshot
from analyzer.window import Window, aligned

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class CycleResult:
    snapshot: Snapshot
    findings: list[Finding]
    duration_s: float


def plan(inv: Inventory) -> list[MetricQuery]:
    """The metric queries of every resource in a region."""
    instances = {i.instance_id: i for i in inv.instances}
    out: list[MetricQuery] = []
    for volume in inv.volumes:
        instance = instances.get(volume.attached_to or "")
        nitro = instance.type_info.nitro if instance and instance.type_info else None
        out.extend(queries.for_volume(volume, nitro))
    for instance in inv.instances:
        out.extend(queries.for_instance(instance))
    return out


@dataclass
class Analyzer:
    settings: Settings
    rules: RuleSet
    clients: Callable[[str], Clients] = Clients.for_region
    types: InstanceTypeCache = field(default_factory=InstanceTypeCache)
    price_list: PriceList | None = None
    _clients: dict[str, Clients] = field(default_factory=dict, repr=False)

    def regions(self) -> list[str]:
        if self.settings.region:
            return list(dict.fromkeys(self.settings.region))
        region = default_region()
        if not region:
            raise ConfigError(
                "no AWS region: pass --region, or set EBS_ANALYZER_REGION or AWS_REGION"
            )
        return [region]

    def _for(self, region: str) -> Clients:
        if region not in self._clients:
            self._clients[region] = self.clients(region)
        return self._clients[region]

    def run(self, now: datetime) -> CycleResult:
        started = time.monotonic()
        tags = [TagFilter.parse(t) for t in self.settings.tag]
        states: list[ResourceState] = []
        windows: dict[int, Window] = {}
        stats = FetchStats()
        for region in self.regions():
            clients = self._for(region)
            inv = inventory.discover(clients, self.types, tags)
            result = cloudwatch.poll(
                CloudWatch(clients.cloudwatch, region),
                plan(inv),
                now,
                self.settings.lookback,
                self.settings.settle_delay,
            )
            windows.update(result.windows)
            stats.merge(result.stats)
            states.extend(snapshot.states_for(inv, result.series))
        data_end = aligned(now, queries.VOLUME_PERIOD_S, 0, self.settings.settle_delay).end
        snap = snapshot.build(now, data_end, states, windows, stats)
        if self.price_list is None:
            self.price_list = prices.load(self.settings.prices)
        findings = [
            replace(f, remedies=advice.remedies(f, snap, self.price_list))
            for f in engine.evaluate(self.rules.rules, snap)
        ]
        duration = time.monotonic() - started
        log.info(
            "poll.completed",
            volumes=sum(1 for s in states if s.is_volume),
            instances=sum(1 for s in states if not s.is_volume),
            queries=stats.metrics_requested,
            requests=sum(stats.requests.values()),
            findings=len(findings),
            duration_s=round(duration, 3),
        )
        return CycleResult(snap, findings, duration)
