"""A resource's reading: which statuses rest on data, and a value no output can change."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from analyzer.model.metrics import Measure
from analyzer.model.reading import Condition
from tests.fakes import reading


@pytest.mark.parametrize(
    ("condition", "had_data"),
    [
        (Condition.OK, True),
        (Condition.MODEL_MISMATCH, True),
        (Condition.IMPAIRED, True),
        (Condition.INITIALIZING, True),
        (Condition.NO_DATA, False),
        (Condition.ERROR, False),
        (Condition.STALE, False),
    ],
)
def test_a_status_says_whether_the_cycle_had_its_data(condition, had_data):
    assert condition.had_data is had_data


def test_every_status_is_one_the_report_can_name():
    assert {c.value for c in Condition} == {
        "ok",
        "no_data",
        "error",
        "stale",
        "impaired",
        "initializing",
        "model_mismatch",
        "node_agent",
    }


def test_a_reading_keeps_its_own_balances_and_is_frozen():
    balances = {Measure.BURST_BALANCE: 40.0}
    found = reading(balances=balances)
    balances[Measure.BURST_BALANCE] = 0.0
    assert found.balances == {Measure.BURST_BALANCE: 40.0}
    with pytest.raises(TypeError):
        found.balances[Measure.BURST_BALANCE] = 1.0  # type: ignore[index]
    with pytest.raises(FrozenInstanceError):
        found.iops = 3_000.0  # type: ignore[misc]
