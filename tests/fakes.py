"""Small typed fakes of the analyzer's two AWS boundaries (`collect/boundaries.py`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window
from analyzer.errors import AwsAccessError
from analyzer.model import metrics
from analyzer.model.metrics import Measure
from analyzer.model.reading import Condition, Reading, VolumeDetails
from analyzer.model.resources import (
    DbInstance,
    Initialization,
    Instance,
    InstanceType,
    Modification,
    ResourceRef,
    ResourceType,
    Volume,
)
from analyzer.model.series import Series
from analyzer.model.state import FetchStats


def quiet_past(query: MetricQuery) -> float | None:
    """A past query's answer for a resource that ran quiet the last fortnight: each balance's
    daily minimum full (`collect/past.py` asks nothing else of a bucket that never drained)."""
    if query.period_s == 86_400 and query.metric in metrics.BALANCES:
        return 100.0
    return None


M5 = InstanceType("m5.large", 3_600, 18_750, 81.25e6, 593.75e6, 8 * 1024**3, nitro=True)
R5 = InstanceType("r5.xlarge", 6_000, 18_750, 106.25e6, 593.75e6, 32 * 1024**3, nitro=True)


@dataclass
class FakeDescriber:
    region: str = "us-east-1"
    found_volumes: list[Volume] = field(default_factory=list)
    found_instances: list[Instance] = field(default_factory=list)
    found_dbs: list[DbInstance] | None = field(default_factory=list)
    types: dict[str, InstanceType] = field(
        default_factory=lambda: {"m5.large": M5, "r5.xlarge": R5}
    )
    type_calls: list[list[str]] = field(default_factory=list)

    def volumes(self) -> list[Volume]:
        return self.found_volumes

    def instances(self) -> list[Instance]:
        return self.found_instances

    def instance_types(self, names: Sequence[str]) -> list[InstanceType]:
        self.type_calls.append(list(names))
        return [self.types[n] for n in names if n in self.types]

    def volume_modifications(self) -> dict[str, list[Modification]]:
        return {}

    def volume_initializations(self) -> dict[str, Initialization]:
        return {v.volume_id: v.initialization for v in self.found_volumes if v.initialization}

    def offered_instance_types(self) -> list[InstanceType]:
        return list(self.types.values())

    def orderable_db_classes(self, engine: str) -> set[str]:
        return set()

    def db_instances(self) -> list[DbInstance]:
        if self.found_dbs is None:
            raise AwsAccessError("rds:DescribeDBInstances in us-east-1: AccessDenied: no")
        return self.found_dbs


@dataclass
class FakeMetricData:
    """Answers each query from `value(query, period start)`; None leaves the point out."""

    value: Callable[[MetricQuery, datetime], float | None]
    region: str = "us-east-1"
    windows: list[Window] = field(default_factory=list)

    def fetch(
        self, queries: Sequence[MetricQuery], window: Window
    ) -> tuple[dict[MetricQuery, Series], FetchStats]:
        self.windows.append(window)
        stats = FetchStats(metrics_requested=len(queries))
        out = {}
        for query in queries:
            stamps = [
                window.start + (window.end - window.start) * i / window.periods
                for i in range(window.periods)
            ]
            points = [(t, v) for t in stamps if (v := self.value(query, t)) is not None]
            out[query] = Series.of(points, query.period_s)
        return out, stats


def reading(
    resource_id: str = "vol-1",
    region: str = "us-east-1",
    *,
    balances: Mapping[Measure, float] | None = None,
    seconds_to_full: float | None = None,
    attached_to: str | None = None,
) -> Reading:
    """A volume's reading as the analysis gives it, with only what a test sets."""
    return Reading(
        ref=ResourceRef(ResourceType.VOLUME, resource_id, region),
        name=None,
        attached_to=attached_to,
        iops=None,
        throughput_bytes_per_second=None,
        iops_limit=None,
        throughput_limit_bytes_per_second=None,
        burst_balance_percent=(balances or {}).get(Measure.BURST_BALANCE),
        seconds_to_empty=None,
        seconds_to_full=seconds_to_full,
        avg_io_size_bytes=None,
        status=Condition.OK,
        data_age_seconds=0.0,
        iops_utilization=None,
        throughput_utilization=None,
        state="in-use",
        details=VolumeDetails("gp2", 100, False, (attached_to,) if attached_to else (), None, None),
        balances=balances or {},
    )


def reads(*found: Reading) -> Callable[[str, str], Reading | None]:
    """A cycle's readings as the alert book asks for them."""
    by_id = {(r.ref.region, r.ref.resource_id): r for r in found}
    return lambda region, resource_id: by_id.get((region, resource_id))


@dataclass
class Interruptible:
    """A CloudWatch client stand-in (`CloudWatch` takes one with `get_metric_data`): the
    answers of `client`, except while `fault` is set, which each call runs instead, to raise
    or to hang as a failing endpoint would."""

    client: Any
    fault: Callable[[], object] | None = None

    def get_metric_data(self, **kwargs: Any) -> Any:
        if self.fault is not None:
            self.fault()
        return self.client.get_metric_data(**kwargs)


def access_denied() -> None:
    """What a call made with a deleted or denied role's credentials gets: HTTP 403,
    AccessDenied."""
    raise ClientError(
        {
            "Error": {"Code": "AccessDenied", "Message": "not authorized (role denied)"},
            "ResponseMetadata": {"HTTPStatusCode": 403},
        },
        "GetMetricData",
    )


def internal_failure() -> None:
    """GetMetricData's answer in a CloudWatch outage: HTTP 500, InternalFailure."""
    raise ClientError(
        {
            "Error": {"Code": "InternalFailure", "Message": "(500)"},
            "ResponseMetadata": {"HTTPStatusCode": 500},
        },
        "GetMetricData",
    )
