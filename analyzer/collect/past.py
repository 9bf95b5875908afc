"""The past days of each bucket: its daily minimum balance over the last two weeks.

CloudWatch bills a metric per request, not per datapoint, and keeps 1-minute data for 15
days: one request a day for each balance's `Minimum` over whole UTC days costs what one
minute's poll of it costs, and holds the fortnight a daily drain shows itself in. What a
rule reads from it (`credit_trend`) is the trend of those minima.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType

from analyzer.collect import cloudwatch, queries
from analyzer.collect.boundaries import MetricData
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import aligned
from analyzer.model import metrics
from analyzer.model.metrics import Measure, Namespace
from analyzer.model.resources import Inventory
from analyzer.model.series import Series, Status
from analyzer.model.state import FetchStats

DAYS = 14
DAY_S = 86_400
REFRESH_S = 6 * 3600.0
"""A new whole day appears once a day; asked again a few times a day, for resources that
failed or are new."""


def _balances() -> dict[str, Measure]:
    """Each balance's metric name (the same in AWS/EBS, AWS/EC2 and AWS/RDS), from the
    catalogue."""
    out = {}
    for namespace in Namespace:
        for measure in (Measure.BURST_BALANCE, Measure.IO_BALANCE, Measure.BYTE_BALANCE):
            metric = metrics.feeding(namespace, measure)
            if metric is not None:
                out[metric.name] = measure
    return out


BALANCES = _balances()


def past_queries(inventory: Inventory) -> dict[str, list[MetricQuery]]:
    """Per bucket resource: each of its balances' daily minimum."""
    out: dict[str, list[MetricQuery]] = {}
    for rid, found in queries.for_inventory(inventory, None).items():
        daily = [
            MetricQuery(q.resource_id, q.namespace, q.metric, q.dimension, "Minimum", DAY_S)
            for q in found
            if q.metric in BALANCES
        ]
        if daily:
            out[rid] = daily
    return out


@dataclass
class PastDays:
    """Daily minima per resource, fetched when due (`REFRESH_S`), kept between cycles."""

    days: int = DAYS
    refresh_s: float = REFRESH_S
    _series: dict[str, dict[Measure, Series]] = field(default_factory=dict)
    _asked: dict[str, datetime] = field(default_factory=dict)
    _planned: tuple[Inventory, dict[str, list[MetricQuery]]] | None = None
    version: int = 0
    """Moves whenever a resource's past changes: states built on the old one are stale."""

    def refresh(
        self, metrics: MetricData, inventory: Inventory, now: datetime, stats: FetchStats
    ) -> None:
        if self._planned is None or self._planned[0] is not inventory:
            self._planned = (inventory, past_queries(inventory))
        wanted = self._planned[1]
        due = [
            q
            for rid, found in wanted.items()
            if (now - self._asked.get(rid, datetime.min.replace(tzinfo=now.tzinfo)))
            >= timedelta(seconds=self.refresh_s)
            for q in found
        ]
        if not due:
            return
        window = aligned(now, DAY_S, self.days * DAY_S, 0.0)
        for batch in cloudwatch.batches(due):
            fetched, batch_stats = metrics.fetch(batch, window)
            stats.merge(batch_stats)
            for query, series in fetched.items():
                if series.status is Status.ERROR:
                    continue  # asked again next cycle
                mine = self._series.setdefault(query.resource_id, {})
                mine[BALANCES[query.metric]] = series
                self._asked[query.resource_id] = now
        self.version += 1

    def of(self, resource_id: str) -> Mapping[Measure, Series]:
        return MappingProxyType(self._series.get(resource_id, {}))
