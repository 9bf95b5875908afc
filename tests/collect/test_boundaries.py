"""The two AWS boundaries: the boto3 adapters and the tests' fakes offer every call of each."""

from __future__ import annotations

import inspect

import pytest

from analyzer.collect.boundaries import Describer, MetricData
from analyzer.collect.cloudwatch import CloudWatch
from analyzer.collect.describe import Ec2Rds
from tests.fakes import FakeDescriber, FakeMetricData


def calls(protocol: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in vars(protocol).items()
        if not name.startswith("_") and inspect.isfunction(member)
    }


@pytest.mark.parametrize(
    ("protocol", "implementation"),
    [
        (Describer, Ec2Rds),
        (Describer, FakeDescriber),
        (MetricData, CloudWatch),
        (MetricData, FakeMetricData),
    ],
)
def test_each_implementation_takes_every_call(protocol: type, implementation: type) -> None:
    for name, signature in calls(protocol).items():
        method = getattr(implementation, name, None)
        assert callable(method), f"{implementation.__name__} lacks {name}"
        assert list(inspect.signature(method).parameters) == list(signature.parameters), name
