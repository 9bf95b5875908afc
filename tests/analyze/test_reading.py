"""A resource's reading: what every output shows of it, worked out once in the analysis
stage."""

from __future__ import annotations

from datetime import timedelta

from analyzer.analyze.reading import Readings
from analyzer.analyze.states import build
from analyzer.model.metrics import Measure
from analyzer.model.reading import Condition
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
    read = Readings(build(end, end, [state]))
    found = read("us-east-1", "i-1")
    assert found is not None
    assert dict(found.balances) == {Measure.IO_BALANCE: 25.0, Measure.BYTE_BALANCE: 100.0}
    assert found.burst_balance_percent == 25.0  # the lower of the two
    assert read("us-east-1", "i-gone") is None


def test_a_balance_that_stopped_reporting_is_not_current() -> None:
    state = instance_state(M5, {Measure.IO_BALANCE: series([25.0] * 10)})
    early, late = T0 + timedelta(minutes=10), T0 + timedelta(minutes=40)
    now = Readings(build(early, early, [state]))("us-east-1", "i-1")
    then = Readings(build(late, late, [state]))("us-east-1", "i-1")
    assert now is not None and dict(now.balances) == {Measure.IO_BALANCE: 25.0}
    assert then is not None and dict(then.balances) == {}


def test_a_reading_is_worked_out_once_and_kept() -> None:
    state = instance_state(M5, {Measure.IO_BALANCE: series([25.0] * 10)})
    end = T0 + timedelta(minutes=10)
    read = Readings(build(end, end, [state]))
    first = read("us-east-1", "i-1")
    assert first is not None and first.status is Condition.OK
    assert read("us-east-1", "i-1") is first
    assert read.all() == (first,)
