"""Datapoints as CloudWatch publishes them: one per period, with a statistic."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

Datapoints = dict[tuple[str, str], list[tuple[datetime, float]]]

STATISTIC = {
    "EBSIOBalance%": "Average",
    "EBSByteBalance%": "Average",
    "BurstBalance": "Average",
    "VolumeQueueLength": "Average",
    "InstanceEBSIOPSExceededCheck": "Maximum",
    "InstanceEBSThroughputExceededCheck": "Maximum",
    "VolumeIOPSExceededCheck": "Maximum",
    "VolumeThroughputExceededCheck": "Maximum",
}
"""The statistic each metric is published with when coarser points are folded; others: Sum."""


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


def namespace_of(metric: str, resource_id: str) -> tuple[str, str]:
    """The namespace and dimension of a simulated metric of this resource."""
    if resource_id.startswith("vol-"):
        return "AWS/EBS", "VolumeId"
    if resource_id.startswith("i-"):
        return "AWS/EC2", "InstanceId"
    return "AWS/RDS", "DBInstanceIdentifier"
