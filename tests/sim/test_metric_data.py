"""GetMetricData for the simulated account: each question answered as moto answers it, without
moto's scan of every datapoint for every period."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from analyzer.sim import metric_data
from tests.conftest import REGION

T0 = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def _stat(
    qid: str, namespace: str, name: str, dims: dict[str, str], period: int, stat: str, **more: Any
) -> dict[str, Any]:
    metric = {
        "Namespace": namespace,
        "MetricName": name,
        "Dimensions": [{"Name": k, "Value": v} for k, v in dims.items()],
    }
    return {"Id": qid, "MetricStat": {"Metric": metric, "Period": period, "Stat": stat, **more}}


QUESTIONS: list[list[dict[str, Any]]] = [
    # The same name under two volumes and two namespaces; by its dimensions.
    [
        _stat("a", "AWS/EBS", "VolumeReadOps", {"VolumeId": "vol-1"}, 60, "Sum"),
        _stat("b", "AWS/EBS", "VolumeReadOps", {"VolumeId": "vol-2"}, 300, "Sum"),
        _stat("c", "AWS/EBS", "BurstBalance", {"VolumeId": "vol-1"}, 60, "Average"),
    ],
    # Without dimensions: every datapoint of the namespace and name; coarser periods.
    [
        _stat("d", "AWS/EBS", "VolumeReadOps", {}, 3600, "Maximum"),
        _stat("e", "Custom", "VolumeReadOps", {}, 600, "SampleCount"),
    ],
    # A unit, a label, a query not returned, and the newest first.
    [
        _stat("f", "AWS/EBS", "VolumeReadOps", {"VolumeId": "vol-1"}, 60, "Minimum", Unit="Count"),
        {
            **_stat("g", "AWS/EBS", "BurstBalance", {"VolumeId": "vol-1"}, 120, "Average"),
            "Label": "balance",
        },
        {
            **_stat("h", "AWS/EBS", "VolumeReadOps", {"VolumeId": "vol-2"}, 60, "Sum"),
            "ReturnData": False,
        },
    ],
]


@pytest.fixture
def cloudwatch(aws: None) -> Any:
    metric_data.install()  # again: installing is idempotent
    client = boto3.client("cloudwatch", region_name=REGION)
    for namespace, unit in (("AWS/EBS", "Count"), ("Custom", None)):
        for vid, scale in (("vol-1", 1.0), ("vol-2", 3.0)):
            items = [
                {
                    "MetricName": "VolumeReadOps",
                    "Dimensions": [{"Name": "VolumeId", "Value": vid}],
                    "Timestamp": T0 + timedelta(seconds=37 * i),
                    "Value": scale * (i % 17) + 0.1,
                    **({"Unit": unit} if unit else {}),
                }
                for i in range(400)
            ]
            items += [
                {
                    "MetricName": "BurstBalance",
                    "Dimensions": [{"Name": "VolumeId", "Value": vid}],
                    "Timestamp": T0 + timedelta(minutes=i),
                    "Value": 100.0 - i / 3,
                }
                for i in range(0, 240, 2)
            ]
            for first in range(0, len(items), 500):
                client.put_metric_data(Namespace=namespace, MetricData=items[first : first + 500])
    return client


def _answer(client: Any, queries: list[dict[str, Any]], order: str) -> list[dict[str, Any]]:
    found = client.get_metric_data(
        MetricDataQueries=queries,
        StartTime=T0 + timedelta(seconds=90),
        EndTime=T0 + timedelta(hours=4),
        ScanBy=order,
    )["MetricDataResults"]
    return found  # type: ignore[no-any-return]


@pytest.mark.parametrize("order", ["TimestampAscending", "TimestampDescending"])
@pytest.mark.parametrize("queries", QUESTIONS, ids=["dimensions", "no-dimensions", "unit-label"])
def test_each_question_is_answered_as_moto_answers_it(
    cloudwatch: Any, queries: list[dict[str, Any]], order: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.cloudwatch.models import CloudWatchBackend

    answered = _answer(cloudwatch, queries, order)
    assert any(r["Values"] for r in answered)
    monkeypatch.setattr(CloudWatchBackend, "get_metric_data", metric_data._PLAIN[0])
    assert answered == _answer(cloudwatch, queries, order)


def test_moto_s_own_errors_and_metric_math_are_moto_s(
    cloudwatch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botocore.exceptions import ClientError
    from moto.cloudwatch.models import CloudWatchBackend

    with pytest.raises(ClientError, match="StartTime"):
        cloudwatch.get_metric_data(
            MetricDataQueries=QUESTIONS[0], StartTime=T0, EndTime=T0, ScanBy="TimestampAscending"
        )
    math = [*QUESTIONS[0], {"Id": "total", "Expression": "SUM([a, b])"}]
    answered = _answer(cloudwatch, math, "TimestampAscending")
    monkeypatch.setattr(CloudWatchBackend, "get_metric_data", metric_data._PLAIN[0])
    assert answered == _answer(cloudwatch, math, "TimestampAscending")
