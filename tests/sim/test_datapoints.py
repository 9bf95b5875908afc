"""Simulated datapoints: named, aggregated and folded as CloudWatch publishes them."""

from __future__ import annotations

from datetime import timedelta

import pytest

from analyzer.model.metrics import Measure, Part
from analyzer.sim.datapoints import Datapoints, aggregate, emit, fold, namespace_of, statistic
from tests.helpers import T0, minutes


@pytest.mark.parametrize(
    ("resource_id", "expected"),
    [
        ("vol-0abc", ("AWS/EBS", "VolumeId")),
        ("i-0abc", ("AWS/EC2", "InstanceId")),
        ("orders-replica", ("AWS/RDS", "DBInstanceIdentifier")),
    ],
)
def test_namespace_of_follows_the_resource_id(resource_id: str, expected: tuple[str, str]) -> None:
    assert namespace_of("", resource_id) == expected


@pytest.mark.parametrize(
    ("resource_id", "metric", "stat"),
    [
        ("vol-1", "VolumeReadOps", "Sum"),
        ("vol-1", "BurstBalance", "Average"),
        ("i-1", "EBSReadOps", "Sum"),
        ("db", "ReadIOPS", "Average"),
    ],
)
def test_statistic_is_the_catalogue_s(resource_id: str, metric: str, stat: str) -> None:
    assert statistic(resource_id, metric) == stat


@pytest.mark.parametrize(
    ("stat", "value"),
    [("Sum", 10.0), ("Average", 2.5), ("Maximum", 4.0), ("Minimum", 1.0), ("SampleCount", 4.0)],
)
def test_aggregate(stat: str, value: float) -> None:
    assert aggregate([1.0, 2.0, 3.0, 4.0], stat) == value


def test_aggregate_refuses_a_statistic_it_does_not_simulate() -> None:
    with pytest.raises(ValueError, match="p99"):
        aggregate([1.0], "p99")


def test_fold_groups_whole_periods_aligned_to_the_epoch() -> None:
    points = [(T0 + minutes(m), float(m)) for m in range(10)]
    assert fold(points, 300, "Sum") == [(T0, 10.0), (T0 + minutes(5), 35.0)]
    shifted = [(t + minutes(2), v) for t, v in points]
    assert fold(shifted, 300, "Maximum") == [
        (T0, 2.0),
        (T0 + minutes(5), 7.0),
        (T0 + minutes(10), 9.0),
    ]
    assert fold([(T0 + timedelta(seconds=61), 1.0)], 60, "Average") == [(T0 + minutes(1), 1.0)]


def test_emit_names_each_value_as_the_catalogue_does() -> None:
    out: Datapoints = {}
    emit(out, "vol-1", {Part.READ_OPS: 600.0, Measure.BURST_BALANCE: 40.0}, T0)
    emit(out, "vol-1", {Part.READ_OPS: 660.0}, T0 + minutes(1))
    assert out == {
        ("vol-1", "VolumeReadOps"): [(T0, 600.0), (T0 + minutes(1), 660.0)],
        ("vol-1", "BurstBalance"): [(T0, 40.0)],
    }


def test_emit_refuses_a_value_no_metric_of_the_namespace_feeds() -> None:
    with pytest.raises(ValueError, match="AWS/EBS: no metric feeds"):
        emit({}, "vol-1", {Part.READ_RATE: 1.0}, T0)
