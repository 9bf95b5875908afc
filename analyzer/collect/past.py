"""The past days of each bucket: its daily minimum balance, and its balance through the day.

CloudWatch bills a metric per request, not per datapoint, and keeps 1-minute data for 15 days
and 5-minute data for 63: one request for each balance's `Minimum` over the last fourteen whole
UTC days costs what one minute's poll of it costs, and holds the fortnight a daily drain shows
itself in (`credit_trend` reads its trend). Where those minima show a drain (one below
`DRAINED_BELOW`), one more request for the balance's 5-minute `Average` over the same fortnight
gives the day profile `credit_forecast` runs the rest of today through. Both are asked again a
few times a day; buckets that never drain cost the one request and keep 14 numbers.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from types import MappingProxyType

import numpy as np

from analyzer.collect import queries
from analyzer.collect.boundaries import MetricData
from analyzer.collect.fetch import fetch
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import aligned
from analyzer.model import metrics
from analyzer.model.metrics import Measure, Namespace
from analyzer.model.past import NO_PAST, Grid, Past
from analyzer.model.resources import Inventory
from analyzer.model.series import Series, Status
from analyzer.model.state import FetchStats

DAYS = 14
DAY_S = 86_400
REFRESH_S = 6 * 3600.0
"""A new whole day appears once a day, and is asked for in the first cycle after midnight
(UTC); asked again a few times a day besides, for resources that failed or are new. The
profile reads past days at least six hours old (see `credit_forecast`'s `profile_horizon`),
so a balance fetched this often always holds them."""
PROFILE_PERIOD_S = 300
PROFILE_SPAN_S = (DAYS + 1) * DAY_S
"""Fourteen days back from now, and the hours before the same moment of the oldest of them."""
DRAINED_BELOW = 98.0
"""Percent: a bucket whose daily minimum never fell below this has no drain worth a profile."""


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


def profile_query(daily: MetricQuery) -> MetricQuery:
    """The balance's 5-minute mean, for the day profile."""
    return replace(daily, stat="Average", period_s=PROFILE_PERIOD_S)


def past_queries(inventory: Inventory) -> dict[str, list[MetricQuery]]:
    """Per bucket resource: each of its balances' daily minimum."""
    out: dict[str, list[MetricQuery]] = {}
    for rid, found in queries.for_inventory(inventory, None).items():
        daily = [
            MetricQuery(q.resource_id, q.namespace, q.metric, q.dimensions, "Minimum", DAY_S)
            for q in found
            if q.metric in BALANCES
        ]
        if daily:
            out[rid] = daily
    return out


COVERED_FROM_S = 3600
"""A history's first day counts whole where its balance was read within this of its start."""


def whole_days(minima: Series, since: datetime, grid: Grid | None = None) -> Series:
    """The daily minima of the days the balance's history covers. A history older than the
    window (from `since`, the first day asked for) covers its first day. One that begins
    within it may hold only that day's last hours (a volume created at 20:32: its minimum is
    that of three and a half hours); that day counts only where the day profile (`grid`)
    shows the balance read in its first hour, and is left out where it does not, or where
    there is no profile to tell."""
    points = minima.points()
    if not points or points[0][0] <= since:
        return minima
    day = points[0][0].timestamp()
    if grid is not None:
        first_hour = grid.at(np.arange(day, day + COVERED_FROM_S, grid.period_s, dtype=float))
        if not np.isnan(first_hour).all():
            return minima
    return Series.of(points[1:], minima.period_s, minima.status)


@dataclass
class PastDays:
    """Daily minima per resource, and the day profile of those that drain, fetched when due
    (`REFRESH_S`) and kept between cycles."""

    days: int = DAYS
    refresh_s: float = REFRESH_S
    _minima: dict[str, dict[Measure, Series]] = field(default_factory=dict)
    _profiles: dict[str, dict[Measure, Grid]] = field(default_factory=dict)
    _asked: dict[str, datetime] = field(default_factory=dict)
    _planned: tuple[Inventory, dict[str, list[MetricQuery]]] | None = None
    _past: dict[str, Past] = field(default_factory=dict)
    version: int = 0
    """Moves whenever a resource's past changes: states built on the old one are stale."""

    def refresh(
        self,
        metrics: MetricData,
        inventory: Inventory,
        now: datetime,
        stats: FetchStats,
        covered: Collection[str] = frozenset(),
    ) -> None:
        """Fetch the past of the balances due. `covered`: volumes a node agent reads, whose
        BurstBalance the node models: their past is not asked for."""
        if self._planned is None or self._planned[0] is not inventory:
            self._planned = (inventory, past_queries(inventory))
        wanted = self._planned[1]
        never = datetime.min.replace(tzinfo=now.tzinfo)
        today = now.replace(hour=0, minute=0, second=0, microsecond=0)
        due = [
            q
            for rid, found in wanted.items()
            if rid not in covered
            and (
                (now - self._asked.get(rid, never)) >= timedelta(seconds=self.refresh_s)
                or self._asked.get(rid, never) < today  # a new whole day to read
            )
            for q in found
        ]
        if not due:
            return
        answered = self._fetch_minima(metrics, due, now, stats)
        self._fetch_profiles(metrics, [q for q in due if q in answered], now, stats)
        since = aligned(now, DAY_S, self.days * DAY_S, 0.0).start
        for rid in {q.resource_id for q in answered}:
            profiles = self._profiles.get(rid, {})
            minima = {
                measure: whole_days(lows, since, profiles.get(measure))
                for measure, lows in self._minima.get(rid, {}).items()
            }
            self._past[rid] = Past(MappingProxyType(minima), MappingProxyType(profiles))
        self.version += 1

    def _fetch_minima(
        self, metrics: MetricData, due: list[MetricQuery], now: datetime, stats: FetchStats
    ) -> set[MetricQuery]:
        """Each due balance's daily minima; the queries answered (a failed one is asked again
        next cycle)."""
        window = aligned(now, DAY_S, self.days * DAY_S, 0.0)
        answered = set()
        for _, fetched in fetch(metrics, [(window, due)], stats):
            for query, series in fetched.items():
                if series.status is Status.ERROR:
                    continue
                self._minima.setdefault(query.resource_id, {})[BALANCES[query.metric]] = series
                self._asked[query.resource_id] = now
                answered.add(query)
        return answered

    def _fetch_profiles(
        self, metrics: MetricData, daily: list[MetricQuery], now: datetime, stats: FetchStats
    ) -> None:
        """The day profile of each balance whose minima show a drain; dropped for those whose
        minima no longer do. A failed fetch keeps the profile it had."""
        drained = []
        for query in daily:
            measure = BALANCES[query.metric]
            lows = self._minima[query.resource_id][measure].values
            if lows and min(lows) < DRAINED_BELOW:
                drained.append(profile_query(query))
            else:
                self._profiles.get(query.resource_id, {}).pop(measure, None)
        window = aligned(now, PROFILE_PERIOD_S, PROFILE_SPAN_S, 0.0)
        for _, fetched in fetch(metrics, [(window, drained)], stats):
            for query, series in fetched.items():
                if series.status is Status.ERROR:
                    continue
                grid = Grid.of(series, window.start, window.end, PROFILE_PERIOD_S)
                self._profiles.setdefault(query.resource_id, {})[BALANCES[query.metric]] = grid

    def of(self, resource_id: str) -> Past:
        return self._past.get(resource_id, NO_PAST)
