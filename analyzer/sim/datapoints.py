"""Datapoints as CloudWatch publishes them: one per period, with a statistic."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from analyzer.model import metrics
from analyzer.model.metrics import Measure, Namespace, Part

Datapoints = dict[tuple[str, str], list[tuple[datetime, float]]]
"""(resource id, metric name) → the points of that metric."""


def statistic(resource_id: str, metric: str) -> str:
    """The statistic a metric is published with, when its points are folded coarser."""
    return metrics.named(namespace_of(metric, resource_id)[0], metric).statistic


def emit(
    out: Datapoints,
    resource_id: str,
    values: dict[Measure | Part, float],
    stamp: datetime,
) -> None:
    """One period's values, named as the catalogue names what they feed."""
    namespace = Namespace(namespace_of("", resource_id)[0])
    for feeds, value in values.items():
        metric = metrics.feeding(namespace, feeds)
        if metric is None:
            raise ValueError(f"{namespace}: no metric feeds {feeds}")
        out.setdefault((resource_id, metric.name), []).append((stamp, value))


QUIET_EVERY_S = 3600
"""How often a quiet resource's balance is published before its simulation: AWS publishes a
balance only for a minute with I/O, here an hourly job's."""


def quiet_past(
    first: datetime, days: float, start: datetime, end: datetime, value: float = 100.0
) -> list[tuple[datetime, float]]:
    """A bucket's balance over the `days` before `first` (its first simulated point), as a
    quiet resource's: full, read once an hour; the points in `[start, end)`, oldest first.
    With `value`, a steady volume's sums likewise: its first minute's, once an hour."""
    every = timedelta(seconds=QUIET_EVERY_S)
    count = int(days * 86_400 // QUIET_EVERY_S)
    stamps = (first - every * k for k in range(count, 0, -1))
    return [(t, value) for t in stamps if start <= t < end]


def aggregate(values: Sequence[float], stat: str) -> float:
    match stat:
        case "Sum":
            return math.fsum(values)
        case "Average":
            return math.fsum(values) / len(values)
        case "Maximum":
            return max(values)
        case "Minimum":
            return min(values)
        case "SampleCount":
            return float(len(values))
    raise ValueError(f"statistic {stat!r} is not simulated")


def fold(
    points: Sequence[tuple[datetime, float]], period_s: int, stat: str
) -> list[tuple[datetime, float]]:
    """Points → one point per whole period (aligned to the epoch), with the given statistic."""
    groups: dict[datetime, list[float]] = {}
    for stamp, value in points:
        epoch = stamp.timestamp()
        key = datetime.fromtimestamp(epoch - epoch % period_s, stamp.tzinfo)
        groups.setdefault(key, []).append(value)
    return [(key, aggregate(values, stat)) for key, values in sorted(groups.items())]


_AGENT = frozenset(m.name for m in metrics.of(Namespace.AGENT))
"""The CloudWatch agent's metrics of a volume, published in its namespace."""


def namespace_of(metric: str, resource_id: str) -> tuple[str, str]:
    """The namespace and dimension of a simulated metric of this resource."""
    if resource_id.startswith("vol-"):
        namespace = Namespace.AGENT if metric in _AGENT else Namespace.EBS
    elif resource_id.startswith("i-"):
        namespace = Namespace.EC2
    else:
        namespace = Namespace.RDS
    return namespace.value, namespace.dimension
