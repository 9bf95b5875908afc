import pytest

from analyzer.analyze.kinds.credit_forecast import CreditForecast
from analyzer.analyze.kinds.credits_exhausted import CreditsExhausted
from analyzer.model.findings import Bottleneck, Severity
from analyzer.model.metrics import Measure
from analyzer.model.resources import InstanceType
from analyzer.model.series import Series
from analyzer.model.units import KIB, MB, MIB, Unit
from tests.helpers import evaluate, instance_state, series, volume_state

FORECAST = CreditForecast(id="forecast", resource_types=["volume", "instance"], severity="warning")
EXHAUSTED = CreditsExhausted(
    id="exhausted", resource_types=["volume", "instance"], severity="critical"
)
M5 = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)


def gp2(iops, balance, size=50, io=4 * KIB):
    measures = {Measure.IOPS: series(iops), Measure.THROUGHPUT: series([v * io for v in iops])}
    if balance is not None:
        measures[Measure.BURST_BALANCE] = (
            balance if isinstance(balance, Series) else series(balance)
        )
    return volume_state("gp2", size, measures)


def test_forecast_for_the_shop_volume():
    finding = evaluate(FORECAST, gp2([1_500] * 30, [40.0] * 30))
    assert finding is not None
    assert finding.bottleneck is Bottleneck.BURST_CREDITS
    assert finding.unit is Unit.IOPS
    assert (finding.observed, finding.limit) == (1_500, 150)
    # 2.16e6 credits at 1,350 a second = 1,600 s from the reading at minute 29.5; the report
    # time is 2.5 minutes later.
    assert finding.seconds_to_empty == pytest.approx(1_600 - 150)
    assert finding.summary.startswith("vol-1 (gp2 50 GiB on i-1): BurstBalance 40% → 0 in 24 min")
    assert finding.evidence["model"] == "bucket"


def test_forecast_beyond_the_horizon_does_not_fire():
    assert evaluate(FORECAST, gp2([200] * 30, [100.0] * 30)) is None  # ~30 h away


def test_not_draining_does_not_fire():
    assert evaluate(FORECAST, gp2([100] * 30, [40.0] * 30)) is None


def test_a_missing_burst_balance_never_fires():
    assert evaluate(FORECAST, gp2([3_000] * 30, None)) is None
    assert evaluate(EXHAUSTED, gp2([150] * 30, None)) is None
    assert evaluate(FORECAST, gp2([3_000] * 30, Series.failed("InternalError"))) is None


def test_gp2_from_1000_gib_has_no_bucket_to_forecast():
    assert evaluate(FORECAST, gp2([5_000] * 30, [100.0] * 30, size=1_000)) is None


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


def test_st1_forecast_counts_throughput_credits():
    tib = 1_024
    measures = {
        Measure.IOPS: series([250] * 30),
        Measure.THROUGHPUT: series([250 * MIB] * 30),
        Measure.BURST_BALANCE: series([50.0] * 30),
    }
    state = volume_state("st1", tib, measures)
    rule = CreditForecast(id="f", resource_types=["volume"], severity="warning", horizon="4h")
    finding = evaluate(rule, state)
    assert finding is not None
    assert finding.unit is Unit.BYTES_PER_SECOND
    assert finding.limit == 40 * MIB
    # half of 1 TiB of credits at 210 MiB/s of drain, less the 2.5 minutes since the reading
    assert finding.seconds_to_empty == pytest.approx(0.5 * 1024 * 1024 / 210 - 150, rel=1e-6)


def test_instance_forecast_follows_the_balance_trend():
    falling = series([100 - 2 * i for i in range(30)])
    state = instance_state(
        M5,
        {
            Measure.IOPS: series([10_000] * 30),
            Measure.THROUGHPUT: series([50 * MB] * 30),
            Measure.IO_BALANCE: falling,
            Measure.BYTE_BALANCE: series([100] * 30),
        },
    )
    finding = evaluate(FORECAST, state)
    assert finding is not None
    assert finding.bottleneck is Bottleneck.INSTANCE_BURST_CREDITS
    assert finding.evidence["model"] == "trend"
    assert finding.limit == 3_600
    # 42 % at minute 29.5, falling 2 % a minute, 2.5 minutes before the report: 18.5 minutes.
    assert finding.seconds_to_empty == pytest.approx(18.5 * 60, rel=1e-6)


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


def test_a_load_that_rose_within_the_window_is_named_with_its_rate_since():
    # 100 IOPS, then 1,500 from 12:27: the 5-minute mean (660 IOPS) would understate
    # the drain; the forecast reads it from the new load, and the summary says so.
    finding = evaluate(FORECAST, gp2([100] * 27 + [1_500] * 3, [40.0] * 30))
    assert finding is not None
    assert finding.evidence["rate_since_change"] == 1_500
    assert "→ 0 in" in finding.summary
    assert " at 1,500 IOPS since 12:28 UTC; then throttled to 150 IOPS" in finding.summary
    assert "charged as" not in finding.summary


def test_gp2_large_ios_are_named_as_counting_as_several():
    # 1,000 IOPS of 512 KiB: charged as 2,000 IOPS, since gp2 counts each 256 KiB as one.
    finding = evaluate(FORECAST, gp2([1_000] * 30, [40.0] * 30, io=512 * KIB))
    assert finding is not None
    assert "at 1,000 IOPS, charged as 2,000 IOPS (each I/O above 256 KiB counts as several)" in (
        finding.summary
    )
    assert "1 MiB" not in finding.summary


def test_the_rate_read_since_a_change_is_the_observed_rate_too():
    finding = evaluate(FORECAST, gp2([100] * 27 + [1_500] * 3, [40.0] * 30))
    assert finding is not None and finding.observed == 1_500
