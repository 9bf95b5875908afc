from analyzer.analyze.kinds.credit_forecast import CreditForecast
from analyzer.analyze.kinds.credits_exhausted import CreditsExhausted
from analyzer.model.findings import Severity
from analyzer.model.metrics import Measure
from analyzer.model.resources import InstanceType
from analyzer.model.series import Series
from analyzer.model.units import MB, Unit
from tests.helpers import evaluate, instance_state, series
from tests.helpers import gp2_of as gp2

FORECAST = CreditForecast(id="forecast", resource_types=["volume", "instance"], severity="warning")
EXHAUSTED = CreditsExhausted(
    id="exhausted", resource_types=["volume", "instance"], severity="critical"
)
M5 = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)


def test_a_missing_burst_balance_never_fires():
    assert evaluate(FORECAST, gp2([3_000] * 30, None)) is None
    assert evaluate(EXHAUSTED, gp2([150] * 30, None)) is None
    assert evaluate(FORECAST, gp2([3_000] * 30, Series.failed("InternalError"))) is None


def test_exhausted_and_pinned_at_baseline_is_critical():
    finding = evaluate(EXHAUSTED, gp2([150] * 30, [0.0] * 30))
    assert finding is not None
    assert finding.severity is Severity.CRITICAL
    assert finding.seconds_to_empty == 0
    assert "throttled at baseline 150 IOPS" in finding.summary
    assert evaluate(FORECAST, gp2([150] * 30, [0.0] * 30)) is None


def test_what_ran_before_the_bucket_emptied_is_said_only_where_the_history_shows_it():
    # 1,500 IOPS while 5 % was left, then empty and held at 150: not "down from 3,000".
    iops = [1_500] * 12 + [150] * 18
    balance = [5.0] * 12 + [0.0] * 18
    finding = evaluate(EXHAUSTED, gp2(iops, balance))
    assert finding is not None
    assert "down from 1,500 IOPS while credits lasted" in finding.summary
    assert finding.evidence["rate_before_empty"] == 1_500
    # Empty over all the history held: nothing is claimed about before.
    finding = evaluate(EXHAUSTED, gp2([150] * 30, [0.0] * 30))
    assert finding is not None and "down from" not in finding.summary


def test_empty_but_idle_is_not_a_bottleneck():
    assert evaluate(EXHAUSTED, gp2([20] * 30, [0.0] * 30)) is None


def test_instance_exhausted_at_baseline():
    state = instance_state(
        M5,
        {
            Measure.IOPS: series([1_000] * 30),
            Measure.THROUGHPUT: series([81 * MB] * 30),
            Measure.IO_BALANCE: series([80] * 30),
            Measure.BYTE_BALANCE: series([0] * 30),
        },
    )
    finding = evaluate(EXHAUSTED, state)
    assert finding is not None
    assert finding.unit is Unit.BYTES_PER_SECOND
    assert "EBSByteBalance% 0%" in finding.summary
    assert "81.2 MB/s" in finding.summary
