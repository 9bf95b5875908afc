"""GetMetricData answered from simulations, for the demo and the tests."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from analyzer.collect.queries import BASIC_PERIOD_S
from analyzer.sim.datapoints import Datapoints, fold, namespace_of, statistic
from analyzer.sim.ec2 import Simulation
from analyzer.sim.rds import DatabaseSimulation


class SimulatedCloudWatch:
    """GetMetricData answered from the simulator, aggregated as CloudWatch would.

    Live simulations are advanced up to the end of each request, so data appears as simulated
    time passes; points older than `keep_s` are dropped. EC2 metrics of instances under basic
    monitoring come as 5-minute points whatever period is asked for.
    """

    def __init__(
        self,
        data: Datapoints | None = None,
        simulations: Sequence[Simulation | DatabaseSimulation] = (),
        keep_s: float = 6 * 3600.0,
    ) -> None:
        self._lock = threading.Lock()
        self._data: dict[tuple[str, str, str], list[tuple[datetime, float]]] = {}
        self._simulations = list(simulations)
        self._basic = {
            s.instance.instance_id
            for s in simulations
            if isinstance(s, Simulation) and not s.instance.detailed_monitoring
        }
        self._keep = timedelta(seconds=keep_s)
        self._add(data or {})

    def _add(self, data: Datapoints) -> None:
        for (resource_id, metric), points in data.items():
            namespace, _ = namespace_of(metric, resource_id)
            self._data.setdefault((namespace, metric, resource_id), []).extend(points)

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

    def get_metric_data(self, **kwargs: Any) -> dict[str, Any]:
        start, end = kwargs["StartTime"], kwargs["EndTime"]
        self.advance(end)
        results = []
        for query in kwargs["MetricDataQueries"]:
            stat = query["MetricStat"]
            metric = stat["Metric"]
            key = (metric["Namespace"], metric["MetricName"], metric["Dimensions"][0]["Value"])
            with self._lock:
                points = [(t, v) for t, v in self._data.get(key, []) if start <= t < end]
            if key[0] == "AWS/EC2" and key[2] in self._basic:
                points = fold(points, BASIC_PERIOD_S, statistic(key[2], key[1]))
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
