"""What the alert book reads off a snapshot: a resource's balance, by measure, while current."""

from __future__ import annotations

from datetime import timedelta

from analyzer.analyze.states import build
from analyzer.model.metrics import Measure
from analyzer.model.resources import InstanceType
from analyzer.model.units import MB
from tests.helpers import T0, instance_state, series

M5 = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)


def test_an_instance_balance_is_read_by_its_measure_not_its_bottleneck() -> None:
    """Both EBS buckets of an instance bind as instance burst credits: the measure tells."""
    state = instance_state(
        M5, {Measure.IO_BALANCE: series([25.0] * 30), Measure.BYTE_BALANCE: series([100.0] * 30)}
    )
    end = T0 + timedelta(minutes=30)
    snap = build(end, end, [state])
    assert snap.balance_of("us-east-1", "i-1", "io_balance") == 25.0
    assert snap.balance_of("us-east-1", "i-1", "byte_balance") == 100.0
    assert snap.balance_of("us-east-1", "i-1", "not_a_measure") is None
    assert snap.balance_of("us-east-1", "i-gone", "io_balance") is None


def test_a_balance_that_stopped_reporting_is_not_current() -> None:
    state = instance_state(M5, {Measure.IO_BALANCE: series([25.0] * 10)})
    early, late = T0 + timedelta(minutes=10), T0 + timedelta(minutes=40)
    assert build(early, early, [state]).balance_of("us-east-1", "i-1", "io_balance") == 25.0
    assert build(late, late, [state]).balance_of("us-east-1", "i-1", "io_balance") is None
