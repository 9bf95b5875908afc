"""GetMetricData for the simulated account, answered as moto answers it, without its scan.

moto answers each MetricStat query by walking every period of the window and, for each, every
datapoint the account holds: a fortnight of minutes is 20,160 periods, times every datapoint,
for each query. The answer depends only on which datapoints fall in which period, so here each
query picks its datapoints once (by name first), puts each in its period by arithmetic, and
folds each period with moto's own statistics, in moto's own order: the same values, the same
timestamps. Queries of another kind (metric math, Metrics Insights) go to moto as they are.
Installed once, for the demo and the tests.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

_PLAIN: list[Callable[..., list[dict[str, Any]]]] = []
"""moto's own method, kept the first time this is installed."""

US = 1_000_000


def _get_metric_data(
    self: Any,
    queries: list[dict[str, Any]],
    start_time: datetime,
    end_time: datetime,
    scan_by: str = "TimestampAscending",
) -> list[dict[str, Any]]:
    plain = _PLAIN[0]
    start = start_time.replace(microsecond=0)
    end = end_time.replace(microsecond=0)
    if start >= end or any("MetricStat" not in q for q in queries):
        return plain(self, queries, start_time, end_time, scan_by)  # its errors, its math
    from moto.cloudwatch.models import Dimension, Statistics

    by_name: dict[str, list[Any]] = defaultdict(list)
    for datum in self.get_all_metrics():
        if start <= datum.timestamp < end:
            by_name[datum.name].append(datum)
    answers = []
    for query in queries:
        stat_of = query["MetricStat"]
        metric = stat_of["Metric"]
        name, stat, unit = metric["MetricName"], stat_of["Stat"], stat_of.get("Unit")
        period_us = int(stat_of["Period"]) * US
        dimensions = sorted(
            Dimension(name=d["Name"], value=d["Value"]) for d in metric.get("Dimensions", [])
        )
        # As moto matches: with dimensions, by name and the very same set (whatever the
        # namespace); without, by namespace and name.
        if dimensions:
            chosen = [d for d in by_name.get(name, []) if sorted(d.dimensions) == dimensions]
        else:
            chosen = [d for d in by_name.get(name, []) if d.namespace == metric["Namespace"]]
        if unit:
            chosen = [d for d in chosen if d.unit == unit]
        periods: dict[int, list[Any]] = defaultdict(list)
        for datum in chosen:
            since = datum.timestamp - start
            periods[
                ((since.days * 86_400 + since.seconds) * US + since.microseconds) // period_us
            ].append(datum)
        values, timestamps = [], []
        for index in sorted(periods):
            stats = Statistics([stat], start + timedelta(microseconds=index * period_us))
            stats.metric_data = periods[index]
            values.append(stats.get_statistics_for_type(stat))
            timestamps.append(stats.timestamp)
        if scan_by == "TimestampDescending":
            values.reverse()
            timestamps.reverse()
        if query.get("ReturnData", True):
            answers.append(
                {
                    "id": query["Id"],
                    "label": query.get("Label") or f"{name} {stat}",
                    "values": values,
                    "timestamps": timestamps,
                    "status_code": "Complete",
                }
            )
    return answers


def install() -> None:
    """Have moto's CloudWatch answer GetMetricData's MetricStat queries without its scan
    (idempotent)."""
    from moto.cloudwatch.models import CloudWatchBackend

    if not _PLAIN:
        _PLAIN.append(CloudWatchBackend.get_metric_data)
    CloudWatchBackend.get_metric_data = _get_metric_data  # type: ignore[method-assign]
