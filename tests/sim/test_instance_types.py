"""DescribeInstanceTypes for the simulated account: each question answered as moto answers
it, its answer built once."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from analyzer.sim import instance_types
from tests.conftest import REGION

QUESTIONS: list[dict[str, Any]] = [
    {},
    {"InstanceTypes": ["m5.large", "r6i.8xlarge"]},
    {"Filters": [{"Name": "current-generation", "Values": ["true"]}]},
]


def _types(ec2: Any, question: dict[str, Any]) -> list[dict[str, Any]]:
    pages = ec2.get_paginator("describe_instance_types").paginate(**question)
    return [t for page in pages for t in page["InstanceTypes"]]


@pytest.fixture
def ec2(aws: None) -> Any:
    instance_types.install()  # again: installing is idempotent
    return boto3.client("ec2", region_name=REGION)


@pytest.mark.parametrize("question", QUESTIONS, ids=["all", "named", "filtered"])
def test_each_question_is_answered_as_moto_answers_it(
    ec2: Any, question: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.responses.instances import InstanceResponse

    answered = _types(ec2, question)
    monkeypatch.setattr(InstanceResponse, "describe_instance_types", instance_types._PLAIN[0])
    assert answered == _types(ec2, question)
    assert answered


def test_the_same_question_is_answered_from_the_first_answer(
    ec2: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[object] = []
    plain = instance_types._PLAIN[0]
    monkeypatch.setattr(instance_types, "_ANSWERS", {})
    monkeypatch.setattr(instance_types, "_PLAIN", [lambda self: built.append(self) or plain(self)])
    first = _types(ec2, QUESTIONS[1])
    assert _types(ec2, QUESTIONS[1]) == first
    assert len(built) == 1
    _types(ec2, QUESTIONS[2])  # another question: built for itself
    assert len(built) == 2
