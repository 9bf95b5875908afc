"""A volume's load over the longest past CloudWatch keeps, as peaks (`analyze/savings.py`).

CloudWatch keeps 1-minute data for 15 days, 5-minute for 63 and 1-hour for 455, and every
period keeps its statistic set: an hour's `Maximum` of `VolumeReadOps` is the count of its
busiest raw datapoint, a minute's count (AWS/EBS publishes a datapoint a minute), so the peak
is a rate a second over that minute, not over the hour; its `SampleCount` says the maximum is
one (no more samples than minutes). Each stretch is read at the finest period still held for it:
the last 15 days' sums minute by minute (which reads and writes came in the same minute, and
the bucket's course), then `Maximum` at 5 minutes back to 63 days, and at an hour back to 455.
Metrics are billed per metric asked, not per datapoint (DOMAIN.md): four metrics a stretch
and one `SampleCount` for each coarse one, 14 a volume, read once.

A coarse period's peak rate is the sum of its reads' and its writes' busiest raw datapoints,
which may come from different minutes: a bound above what was asked, never below it.

An RDS instance's storage is read the same way, from AWS/RDS's rates (ReadIOPS, WriteIOPS,
ReadThroughput, WriteThroughput), already per second and published a minute at a time: the
minute's `Average` is its rate, and a coarse period's `Maximum` its busiest minute's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import numpy as np

from analyzer.collect.boundaries import MetricData
from analyzer.collect.demand import (
    BYTES,
    MINUTE_S,
    OPS,
    RATES,
    answers,
    demand_of,
    demand_queries,
)
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window, data_end, floor_to
from analyzer.model import metrics
from analyzer.model.demand import Demand, LongPast
from analyzer.model.metrics import Namespace
from analyzer.model.resources import DbInstance, Volume
from analyzer.model.series import Status
from analyzer.model.state import FetchStats

DAY_S = 86_400
STRETCHES = ((60, 15), (300, 63), (3_600, 455))
"""Each period CloudWatch keeps, and for how many days (Amazon CloudWatch User Guide,
"Metrics retention"; DOMAIN.md)."""
HOUR_S = 3_600


def _name(namespace: Namespace, part: object) -> str:
    found = metrics.feeding(namespace, part)  # type: ignore[arg-type]
    assert found is not None
    return found.name


READS = frozenset({_name(Namespace.EBS, OPS[0]), _name(Namespace.RDS, RATES[0])})
"""A volume's read operations and an RDS instance's read IOPS: whose `SampleCount` says
whether a coarse period's `Maximum` is a minute's."""


def windows(now: datetime, settle_s: float) -> list[Window]:
    """The stretches, finest first, each ending where the finer one begins, each on whole
    hours within what CloudWatch keeps at its period."""
    end = data_end(now, settle_s, STRETCHES[0][0])
    out: list[Window] = []
    later = end
    for period, days in STRETCHES:
        start = _ceil_hour(end - timedelta(days=days))
        out.append(Window(start, later, period))
        later = start
    return out


def _ceil_hour(at: datetime) -> datetime:
    floored = floor_to(at, HOUR_S)
    return floored if floored == at else floored + timedelta(seconds=HOUR_S)


def queries(resource: Volume | DbInstance) -> tuple[list[MetricQuery], list[MetricQuery]]:
    """A volume's minute sums of its operations and bytes (an RDS instance's minute rates of
    its storage's: AWS/RDS's ReadIOPS, WriteIOPS, ReadThroughput, WriteThroughput), and the
    `Maximum` of each with the `SampleCount` of its reads, for a coarse stretch (period set per
    stretch). A volume attached to nothing now is asked for them too: AWS/EBS holds what it
    published while it was attached, under the volume's id alone."""
    if isinstance(resource, DbInstance):
        sums = demand_queries(resource)
    else:
        sums = []
        for part in OPS + BYTES:
            metric = metrics.feeding(Namespace.EBS, part)
            dims = metrics.dimensions(metric, resource.volume_id, None) if metric else None
            if metric is not None and dims is not None:
                sums.append(
                    MetricQuery(
                        resource.volume_id, Namespace.EBS.value, metric.name, dims, "Sum", 60
                    )
                )
    coarse = [replace(q, stat="Maximum") for q in sums]
    coarse += [replace(q, stat="SampleCount") for q in sums if q.metric in READS]
    return sums, coarse


def read(
    metrics_: MetricData,
    resource: Volume | DbInstance,
    now: datetime,
    settle_s: float,
    stats: FetchStats,
) -> LongPast | None:
    """The resource's peaks over every stretch; None where a read failed (nothing is offered
    on a past half read)."""
    sums, coarse = queries(resource)
    if not sums:
        return None
    minute, *rest = windows(now, settle_s)
    stretches: list[Demand] = []
    for window in (minute, *rest):
        one = _stretch(metrics_, sums, coarse, window, stats)
        if one is None:
            return None
        if not one.per_minute:
            break  # its maxima are not a minute's counts: the window ends where it begins
        if one.demand is not None:  # none: idle all along (AWS publishes nothing while idle)
            stretches.append(one.demand)
    return LongPast(now, tuple(stretches), first(stretches), last_active(stretches))


@dataclass(frozen=True, slots=True)
class Stretch:
    """One stretch as read: its peaks (None where the volume was idle all along), and whether
    a coarse one's maxima are a minute's counts (off Nitro they are not, and say nothing)."""

    period_s: int
    read_at: datetime
    demand: Demand | None
    per_minute: bool = True


def stretch_window(period_s: int, now: datetime, settle_s: float) -> Window:
    """One stretch read on its own: from as far back as CloudWatch keeps its period to the
    newest whole period. Read on a day of its own, it overlaps the finer stretches read on
    other days, and leaves no gap between them."""
    days = dict(STRETCHES)[period_s]
    end = floor_to(data_end(now, settle_s, STRETCHES[0][0]), period_s)
    return Window(_ceil_hour(end - timedelta(days=days)), end, period_s)


def read_stretch(
    metrics_: MetricData,
    resource: Volume | DbInstance,
    period_s: int,
    now: datetime,
    settle_s: float,
    stats: FetchStats,
) -> Stretch | None:
    """One stretch of the resource's past (`stretch_window`): four metrics at the minute,
    five at a coarser period; None where the read failed."""
    sums, coarse = queries(resource)
    if not sums:
        return None
    window = stretch_window(period_s, now, settle_s)
    found = _stretch(metrics_, sums, coarse, window, stats)
    return replace(found, read_at=now) if found is not None else None


def _stretch(
    metrics_: MetricData,
    sums: list[MetricQuery],
    coarse: list[MetricQuery],
    window: Window,
    stats: FetchStats,
) -> Stretch | None:
    if window.period_s <= MINUTE_S:
        read_sums = [(q.metric, answers(metrics_, [q], window, stats)[q]) for q in sums]
        if any(s.status is Status.ERROR for _, s in read_sums):
            return None
        return Stretch(window.period_s, window.end, demand_of(read_sums, window))
    asked = [replace(q, period_s=window.period_s) for q in coarse]
    answered = answers(metrics_, asked, window, stats)
    if any(s.status is Status.ERROR for s in answered.values()):
        return None
    counts = [s for q, s in answered.items() if q.stat == "SampleCount"]
    most = max((max(s.values) for s in counts if s.values), default=0.0)
    if not per_minute(window.period_s, most):
        return Stretch(window.period_s, window.end, None, per_minute=False)
    maxima = ((q.metric, s) for q, s in answered.items() if q.stat == "Maximum")
    return Stretch(window.period_s, window.end, demand_of(maxima, window, maxima=True))


RAW_S = float(MINUTE_S)
"""How often AWS/EBS publishes a volume's raw datapoint: every minute, for every volume type
(DOMAIN.md). A coarse period's `Maximum` is a minute's count, and its rate that over 60 s."""


def per_minute(period_s: int, most_samples: float) -> bool:
    """Whether a coarse period's `Maximum` is a minute's count: its `SampleCount` never above
    the minutes in the period. AWS gives `Maximum` of a volume's operations and bytes only on
    Nitro instances; elsewhere the statistic set is another (EBS User Guide, "Amazon
    CloudWatch metrics for Amazon EBS"), and a count above the minutes says so."""
    return most_samples <= period_s / RAW_S


def first(stretches: Iterable[Demand]) -> datetime | None:
    """The start of the oldest stretch."""
    return min((s.start for s in stretches), default=None)


def last_active(stretches: Iterable[Demand]) -> datetime | None:
    """The start of the newest period with any I/O."""
    newest: datetime | None = None
    for s in stretches:
        busy = np.flatnonzero((s.iops > 0) | (s.bps > 0))
        if len(busy):
            at = s.start + timedelta(seconds=int(busy[-1]) * s.period_s)
            newest = at if newest is None or at > newest else newest
    return newest
