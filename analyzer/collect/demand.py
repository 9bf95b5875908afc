"""What a resource asked of its storage over its last days, minute by minute, for replaying
fixes through (`analyze/held.py`).

CloudWatch keeps 1-minute data for 15 days and bills a metric per request, not per datapoint:
a volume's operation and byte counts over fourteen days cost four metrics, what one minute's
poll of them costs. They are asked only for resources with a fix to prove, when it is proven,
and dropped once replayed: a fortnight of minutes is 20,160 values a metric.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta

import numpy as np

from analyzer.collect import queries
from analyzer.collect.agent_metrics import Lister
from analyzer.collect.boundaries import MetricData
from analyzer.collect.fetch import fetch
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window, aligned
from analyzer.model import metrics
from analyzer.model.demand import Demand
from analyzer.model.metrics import Dimension, Measure, Namespace, Part
from analyzer.model.resources import DbInstance, Volume
from analyzer.model.series import Series, Status
from analyzer.model.state import FetchStats, Resource

DAYS = 14
PERIOD_S = 60
OPS = (Part.READ_OPS, Part.WRITE_OPS)
BYTES = (Part.READ_BYTES, Part.WRITE_BYTES)
"""AWS/EBS's per-period sums of a volume's operations and bytes (EBS User Guide, "Amazon
CloudWatch metrics for Amazon EBS"): a rate is the sum over the period's seconds."""
RATES = (Part.READ_RATE, Part.WRITE_RATE)
BYTE_RATES = (Part.READ_BYTE_RATE, Part.WRITE_BYTE_RATE)
"""AWS/RDS's rates of an instance's storage, already per second (RDS User Guide, "Amazon
CloudWatch metrics for Amazon RDS": ReadIOPS, WriteIOPS, ReadThroughput, WriteThroughput):
their Average over a period is its rate."""


def _names(namespace: Namespace, parts: tuple[Part, ...]) -> tuple[str, ...]:
    found = (metrics.feeding(namespace, part) for part in parts)
    return tuple(m.name for m in found if m is not None)


_SUMS = frozenset(_names(Namespace.EBS, OPS + BYTES) + _names(Namespace.EC2, OPS + BYTES))
_OPS = frozenset(
    _names(Namespace.EBS, OPS) + _names(Namespace.EC2, OPS) + _names(Namespace.RDS, RATES)
)
_BYTES = frozenset(
    _names(Namespace.EBS, BYTES) + _names(Namespace.EC2, BYTES) + _names(Namespace.RDS, BYTE_RATES)
)


CPU = "CPUUtilization"
"""AWS/EC2's CPU utilization of an instance, in percent, published every 5 minutes under basic
monitoring (EC2 User Guide, "Instance metrics"): the periods a peak is read over."""
CPU_PERIOD_S = 300


def cpu_query(resource_id: str, namespace: Namespace = Namespace.EC2) -> MetricQuery:
    """An EC2 instance's CPU utilization, or an RDS instance's (AWS/RDS publishes the same
    name by DBInstanceIdentifier)."""
    dimension = namespace.dimension.value
    return MetricQuery(
        resource_id, namespace.value, CPU, ((dimension, resource_id),), "Average", CPU_PERIOD_S
    )


def free_memory_query(db_instance_id: str) -> MetricQuery:
    """An RDS instance's lowest freeable memory in each 5-minute period, in bytes."""
    metric = metrics.feeding(Namespace.RDS, Measure.FREEABLE_MEMORY)
    dimensions = metrics.dimensions(metric, db_instance_id) if metric is not None else None
    assert metric is not None and dimensions is not None
    return MetricQuery(
        db_instance_id, Namespace.RDS.value, metric.name, dimensions, "Minimum", CPU_PERIOD_S
    )


def fetch_cpu_peaks(
    metrics_: MetricData,
    ids: Iterable[str],
    now: datetime,
    settle_s: float,
    stats: FetchStats,
    namespace: Namespace = Namespace.EC2,
) -> dict[str, tuple[float, float]]:
    """By instance id, the highest 5-minute mean of its CPU utilization over the last `DAYS`
    days (percent), and the days that covers: one metric an instance with a type to choose.
    An instance whose answer failed or held nothing is left out: its CPU is unknown."""
    return _extremes(
        metrics_, [cpu_query(i, namespace) for i in dict.fromkeys(ids)], now, settle_s, stats, max
    )


def fetch_least_free_memory(
    metrics_: MetricData, ids: Iterable[str], now: datetime, settle_s: float, stats: FetchStats
) -> dict[str, tuple[float, float]]:
    """By RDS instance id, its lowest freeable memory (bytes) over the last `DAYS` days, and
    the days that covers: one metric a DB instance with a class to choose."""
    asked = [free_memory_query(i) for i in dict.fromkeys(ids)]
    return _extremes(metrics_, asked, now, settle_s, stats, min)


MEMORY_USED = "mem_used_percent"
"""The CloudWatch agent's memory in use, in percent of the instance's (its `mem` plugin:
CloudWatch agent User Guide, "Metrics collected by the CloudWatch agent"), under the
dimensions its `append_dimensions` gives: taken from ListMetrics, never assumed."""
MAX_SETS = 3
"""Dimension sets read for one instance's memory (the agent's configuration changed)."""


def fetch_most_memory_used(
    metrics_: MetricData,
    listing: Lister | None,
    namespace: str,
    ids: Iterable[str],
    now: datetime,
    settle_s: float,
    stats: FetchStats,
) -> dict[str, tuple[float, float]]:
    """By EC2 instance id, the most memory in use over the last `DAYS` days (percent: the
    highest 5-minute maximum of `mem_used_percent`), and the days that covers, where the
    CloudWatch agent publishes it: one ListMetrics request a region (a page per 500
    instances), and one metric an instance (up to `MAX_SETS` where the agent's dimensions
    changed). An instance it does not publish for is left out: its memory is unknown. A
    failed ListMetrics is an AwsAccessError or AwsCallError, as a failed read."""
    wanted = set(ids)
    if not wanted or listing is None:
        return {}
    sets: dict[str, list[tuple[tuple[str, str], ...]]] = {}
    for name, dims in listing.list_metrics(namespace, Dimension.INSTANCE.value, MEMORY_USED):
        instance = dict(dims).get(Dimension.INSTANCE.value)
        if name == MEMORY_USED and instance in wanted:
            sets.setdefault(instance, []).append(dims)
    asked = [
        MetricQuery(rid, namespace, MEMORY_USED, dims, "Maximum", CPU_PERIOD_S)
        for rid, found in sets.items()
        for dims in sorted(found)[:MAX_SETS]
    ]
    return _extremes(metrics_, asked, now, settle_s, stats, max)


def _extremes(
    metrics_: MetricData,
    asked: list[MetricQuery],
    now: datetime,
    settle_s: float,
    stats: FetchStats,
    pick: Callable[[Iterable[float]], float],
) -> dict[str, tuple[float, float]]:
    if not asked:
        return {}
    window = aligned(now, CPU_PERIOD_S, DAYS * 86_400, settle_s)
    out: dict[str, tuple[float, float]] = {}
    for _, got in fetch(metrics_, [(window, asked)], stats):
        for query, series in got.items():
            if series.status is Status.OK and series.values:
                days = (window.end - series.timestamps[0]).total_seconds() / 86_400
                found = (pick(series.values), days)
                # Several dimension sets of one instance: the most of them, over the longest.
                if query.resource_id in out:
                    kept = out[query.resource_id]
                    found = (pick((kept[0], found[0])), max(kept[1], found[1]))
                out[query.resource_id] = found
    return out


def demand_queries(resource: Resource) -> list[MetricQuery]:
    """A volume's operation and byte sums at one minute, as AWS/EBS publishes them (the
    CloudWatch agent's, where it publishes some, stand for them only in polls); an RDS
    instance's storage rates at one minute, as AWS/RDS publishes them; an EC2 instance's EBS
    operation and byte sums at its monitoring's period (five minutes under basic monitoring,
    whose points a finer period would not split)."""
    period = PERIOD_S
    if isinstance(resource, Volume):
        found = queries.for_volume(resource, use_agent=False)
    elif isinstance(resource, DbInstance):
        found = queries.for_db_instance(resource, period_s=PERIOD_S)
    else:
        found = queries.for_instance(resource)
        period = max((q.period_s for q in found), default=PERIOD_S)
    return [replace(q, period_s=period) for q in found if q.metric in _OPS | _BYTES]


def fetch_demand(
    metrics: MetricData,
    resources: Iterable[Resource],
    now: datetime,
    settle_s: float,
    stats: FetchStats,
    days: float = DAYS,
) -> Iterator[tuple[str, Demand]]:
    """Each volume's, RDS instance's or EC2 instance's rates over its last `days` days (or
    what CloudWatch holds of them), as CloudWatch shows them, by resource id, read as the
    caller takes them. Each of its four metrics is asked in a call of its own (billed the
    same: GetMetricData bills metrics, not calls) and folded into the rates before the next
    is asked, so that one series of 20,160 values is held at a time, not four. A resource
    whose counts failed, or that has none, is left out: its fixes say nothing of the past
    rather than something wrong."""
    for resource in resources:
        found = demand_queries(resource)
        if not found:
            continue
        window = aligned(now, found[0].period_s, days * 86_400, settle_s)
        demand = demand_of(_one_by_one(metrics, found, window, stats), window)
        if demand is not None:
            yield resource.ref.resource_id, demand


def _one_by_one(
    metrics: MetricData, found: list[MetricQuery], window: Window, stats: FetchStats
) -> Iterator[tuple[str, Series]]:
    for query in found:
        # Read in a call of its own, whose frame is gone once it returns: nothing here holds
        # a metric's answer while the next is read.
        yield query.metric, _answer(metrics, query, window, stats)


def _answer(metrics: MetricData, query: MetricQuery, window: Window, stats: FetchStats) -> Series:
    return answers(metrics, [query], window, stats)[query]


def answers(
    metrics: MetricData, asked: list[MetricQuery], window: Window, stats: FetchStats
) -> dict[MetricQuery, Series]:
    """Each query's series over `window` ("not answered", failed, where the call gave none)."""
    answered: dict[MetricQuery, Series] = {}
    for _, got in fetch(metrics, [(window, asked)], stats):
        answered.update(got)
    return {q: answered.get(q, Series.failed("not answered")) for q in asked}


MINUTE_S = 60
"""A volume's raw datapoint: AWS/EBS publishes one a minute."""


def demand_of(
    series: Iterable[tuple[str, Series]], window: Window, maxima: bool = False
) -> Demand | None:
    """The rates these series show over `window`, from the first datapoint of any of them: a
    volume's sums (`OPS`, `BYTES`) or an RDS instance's rates (`RATES`, `BYTE_RATES`), by
    metric name, each folded in as it comes. With `maxima`, each datapoint is a period's
    `Maximum` of a volume's sums, its busiest minute's count: the rate over that minute. None
    where one failed (the rest are not taken) or no operation was counted."""
    iops, bps = np.zeros(window.periods), np.zeros(window.periods)
    counted, first = False, window.periods
    for name, one in series:
        if one.status is Status.ERROR:
            return None
        if one.values:
            into = iops if name in _OPS else bps if name in _BYTES else None
            if into is not None:
                # A sum's maximum is a minute's count; a rate (AWS/RDS) is one already.
                over = (MINUTE_S if maxima else window.period_s) if name in _SUMS else None
                into += _rates(one, window, over)
                counted = counted or into is iops
            first = min(first, _first_datapoint(one, window))
        # Let go of this series before the next is read: two fortnights are never held.
        del one
    if not counted:
        return None
    start = window.start + timedelta(seconds=first * window.period_s)
    return Demand.seen(start, window.period_s, iops[first:], bps[first:])


def _rates(series: Series, window: Window, over_s: float | None) -> np.ndarray:
    """The per-second rate of the series in each period of `window` (zero where CloudWatch
    has no datapoint: it publishes none while a volume is idle); `over_s`: the seconds each
    datapoint counts over (None: each is already a rate)."""
    total = np.zeros(window.periods)
    stamps = np.fromiter((t.timestamp() for t in series.timestamps), np.float64)
    index = ((stamps - window.start.timestamp()) // window.period_s).astype(np.int64)
    inside = (index >= 0) & (index < len(total))
    np.add.at(total, index[inside], np.asarray(series.values, dtype=np.float64)[inside])
    return total / over_s if over_s is not None else total


def _first_datapoint(series: Series, window: Window) -> int:
    """The period of the series' oldest datapoint: the volume's history begins there (a
    volume created last week has a week of it)."""
    if not series.timestamps:
        return 0
    return max(int((series.timestamps[0] - window.start).total_seconds() // window.period_s), 0)
