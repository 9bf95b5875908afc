"""GetMetricData answered from simulations, for the demo and the tests."""

from __future__ import annotations

import bisect
import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from analyzer.collect.demand import BYTES, OPS
from analyzer.collect.queries import BASIC_PERIOD_S
from analyzer.model import metrics
from analyzer.model.metrics import Dimension, Namespace
from analyzer.model.resources import AgentMetrics
from analyzer.sim.datapoints import Datapoints, fold, namespace_of, quiet_past, statistic
from analyzer.sim.ec2 import Simulation
from analyzer.sim.rds import DatabaseSimulation

_Key = tuple[str, str, frozenset[tuple[str, str]]]
STEADY = frozenset(
    m.name for part in OPS + BYTES if (m := metrics.feeding(Namespace.EBS, part)) is not None
)
"""A volume's operation and byte sums: what a steady volume's past holds
(`SimVolume.steady_days`)."""
"""Namespace, metric name and the dimensions it is published with: what CloudWatch matches."""


def _fixed(name: str) -> bool:
    """Whether an AWS/EC2 metric comes at its own period whatever the monitoring."""
    try:
        return metrics.named(Namespace.EC2, name).period_s is not None
    except KeyError:
        return False


def _period_s(stamps: Sequence[datetime]) -> float:
    """The period of a metric's points: the least spacing of its first few (a minute alone)."""
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(stamps[:8])]
    return min((g for g in gaps if g > 0), default=60.0)


class SimulatedCloudWatch:
    """GetMetricData answered from the simulator, aggregated as CloudWatch would.

    Each metric is kept under the dimensions AWS publishes it with (`metrics.dimensions`): a
    volume's per-attachment metrics under its instance and its id together, and none of them
    for a volume `attachments` does not name. A query is answered only on an exact match of its
    dimensions, as CloudWatch answers it; any other comes back empty. Live simulations are
    advanced up to the end of each request, so data appears as simulated time passes; points
    older than `keep_s` are dropped. EC2 metrics of instances under basic monitoring come as
    5-minute points whatever period is asked for.

    With `published` (the simulated clock), a datapoint is answered only once CloudWatch would
    have published it: `lag_s` after the end of its period (`publication_lag`).

    With `quiet_days`, each balance has a past before its first point: that many days of a
    quiet resource's, its bucket full (`datapoints.quiet_past`). Resources that existed before
    the simulation have one; without it, each is as new as its first point. A simulated volume
    with `steady_days` has its operations' and bytes' past likewise, at its first minute's.
    """

    def __init__(
        self,
        data: Datapoints | None = None,
        simulations: Sequence[Simulation | DatabaseSimulation] = (),
        keep_s: float = 6 * 3600.0,
        attachments: Mapping[str, str] | None = None,
        agents: Mapping[str, AgentMetrics] | None = None,
        published: Callable[[], datetime] | None = None,
        lag_s: float = 0.0,
        quiet_days: float = 0.0,
    ) -> None:
        self._lock = threading.Lock()
        self._quiet_days = quiet_days
        self._first: dict[_Key, datetime] = {}
        """Each balance's first point: its quiet past ends there."""
        self._steady: dict[_Key, tuple[float, float]] = {}
        """A steady volume's sums: the days of their past, and their first point's value."""
        self._data: dict[_Key, list[tuple[datetime, float]]] = {}
        self._stamps: dict[_Key, list[datetime]] = {}
        """The timestamps of `_data`'s points, for finding a window by bisection."""
        self._published = published
        self.asked = 0
        """How many metric queries GetMetricData has answered (what CloudWatch bills)."""
        self._lag = timedelta(seconds=lag_s)
        self._simulations = list(simulations)
        self._attachments = dict(attachments or {})
        self._agents = dict(agents or {})
        """By volume id: where its CloudWatch agent metrics were recorded, namespace and
        dimensions (the agent's configuration decides both); others get the catalogue's."""
        self._steady_days: dict[str, float] = {}
        for simulation in simulations:
            if isinstance(simulation, Simulation):
                self._attachments.update(simulation.attachments)
                self._steady_days |= {
                    v.volume.volume_id: v.steady_days
                    for v in simulation.instance.volumes
                    if v.steady_days
                }
        self._basic = {
            s.instance.instance_id
            for s in simulations
            if isinstance(s, Simulation) and not s.instance.detailed_monitoring
        }
        self._keep = timedelta(seconds=keep_s)
        self._add(data or {})

    def _add(self, data: Datapoints) -> None:
        for (resource_id, name), points in data.items():
            namespace, _ = namespace_of(name, resource_id)
            metric = metrics.named(namespace, name)
            dims = metrics.dimensions(metric, resource_id, self._attachments.get(resource_id))
            agent = self._agents.get(resource_id)
            if namespace == Namespace.AGENT.value and agent is not None:
                namespace, dims = agent.namespace, agent.dimensions
            if dims is not None:
                key = (namespace, name, frozenset(dims))
                if name in metrics.BALANCES and points:
                    self._first.setdefault(key, min(t for t, _ in points))
                days = self._steady_days.get(resource_id)
                if days and name in STEADY and points and key not in self._first:
                    first = min(points)
                    self._first[key] = first[0]
                    self._steady[key] = (days, first[1])
                held = self._data.setdefault(key, [])
                stamps = self._stamps.setdefault(key, [])
                new = [t for t, _ in points]
                in_order = all(a <= b for a, b in itertools.pairwise(new))
                if in_order and (not stamps or not new or stamps[-1] <= new[0]):
                    held.extend(points)
                    stamps.extend(new)
                else:
                    held.extend(points)
                    held.sort(key=lambda point: point[0])
                    self._stamps[key] = [t for t, _ in held]

    def advance(self, until: datetime) -> None:
        """Simulate every whole minute that ends by `until`."""
        with self._lock:
            for simulation in self._simulations:
                while simulation.now + timedelta(minutes=1) <= until:
                    self._add(simulation.minute())
            oldest = until - self._keep
            for key, points in self._data.items():
                if points and points[0][0] < oldest:
                    self._data[key] = [(t, v) for t, v in points if t >= oldest]
                    self._stamps[key] = [t for t, _ in self._data[key]]

    @property
    def present(self) -> datetime | None:
        """The simulated present: the moment its simulations have been played to (None
        without any)."""
        with self._lock:
            return max((s.now for s in self._simulations), default=None)

    def _between(self, key: _Key, start: datetime, end: datetime) -> list[tuple[datetime, float]]:
        """The points of `key` in `[start, end)` that are published by now."""
        stamps = self._stamps.get(key)
        if not stamps:
            return []
        first_point = self._first.get(key)
        days, value = self._steady.get(key, (self._quiet_days, 100.0))
        before = (
            quiet_past(first_point, days, start, end, value)
            if first_point is not None and days and start < first_point
            else []
        )
        points = self._data[key]
        first = bisect.bisect_left(stamps, start)
        last = bisect.bisect_left(stamps, end)
        if self._published is not None:
            # A point stamped t covers [t, t + period): published `lag` after that ends.
            period = timedelta(seconds=_period_s(stamps))
            last = min(last, bisect.bisect_right(stamps, self._published() - self._lag - period))
        return before + points[first:last]

    def modify_volume(self, volume_id: str, at: datetime, **config: Any) -> None:
        """A volume modified at `at`: its simulation is played to then, and under the new
        configuration from then on."""
        self.advance(at)
        with self._lock:
            for simulation in self._simulations:
                found = simulation.volume(volume_id) if isinstance(simulation, Simulation) else None
                if found is not None:
                    found.modify(**{k: v for k, v in config.items() if v is not None})

    def list_metrics(self, **kwargs: Any) -> dict[str, Any]:
        """ListMetrics of one namespace, filtered on dimension names (and values where given),
        in one page; every metric held counts as recently active."""
        wanted = [(d["Name"], d.get("Value")) for d in kwargs.get("Dimensions", [])]
        found = []
        with self._lock:
            keys = [key for key, points in self._data.items() if points]
        for namespace, name, dims in keys:
            held = dict(dims)
            if namespace != kwargs["Namespace"] or kwargs.get("MetricName", name) != name:
                continue
            if all(n in held and v in (None, held[n]) for n, v in wanted):
                found.append(
                    {
                        "Namespace": namespace,
                        "MetricName": name,
                        "Dimensions": [{"Name": n, "Value": v} for n, v in sorted(dims)],
                    }
                )
        return {"Metrics": found}

    def get_metric_data(self, **kwargs: Any) -> dict[str, Any]:
        start, end = kwargs["StartTime"], kwargs["EndTime"]
        self.advance(end)
        results = []
        self.asked += len(kwargs["MetricDataQueries"])
        for query in kwargs["MetricDataQueries"]:
            stat = query["MetricStat"]
            metric = stat["Metric"]
            dims = {(d["Name"], d["Value"]) for d in metric.get("Dimensions", [])}
            key = (metric["Namespace"], metric["MetricName"], frozenset(dims))
            with self._lock:
                points = self._between(key, start, end)
            instance = dict(dims).get(Dimension.INSTANCE.value, "")
            # A metric nothing publishes comes back empty, as CloudWatch answers it.
            basic = points and instance in self._basic
            if key[0] == "AWS/EC2" and basic and not _fixed(key[1]):
                points = fold(points, BASIC_PERIOD_S, statistic(instance, key[1]))
            folded = fold(points, stat["Period"], stat["Stat"])
            results.append(
                {
                    "Id": query["Id"],
                    "Label": metric["MetricName"],
                    "Timestamps": [t for t, _ in folded],
                    "Values": [v for _, v in folded],
                    "StatusCode": "Complete",
                }
            )
        return {"MetricDataResults": results, "Messages": []}
