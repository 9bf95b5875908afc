from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer.analyze.forecast import (
    bucket_forecast,
    drain_began,
    seconds_to_full,
    trend_forecast,
)
from analyzer.model import limits
from analyzer.model.units import KIB, MIB
from tests.helpers import T0, minutes, series

AT = T0 + minutes(10)


def forecast(size_gib, balance, iops, io_bytes=16 * KIB, reference=None):
    bucket = limits.gp2(size_gib).bucket
    n = 10
    return bucket_forecast(
        bucket,
        series([balance] * n),
        series([iops] * n),
        series([iops * io_bytes] * n),
        at=AT,
        reference=reference or AT - timedelta(seconds=30),
        rate_window_s=300,
    )


@pytest.mark.parametrize(
    ("size_gib", "seconds"), [(100, 2_000), (250, 2_400), (334, 2_703), (500, 3_600), (750, 7_200)]
)
def test_full_bucket_at_3000_iops_matches_the_aws_table(size_gib, seconds):
    # The reference time is the moment of the last reading: nothing to project.
    result = forecast(size_gib, 100.0, 3_000)
    assert result.seconds_to_empty == pytest.approx(seconds, abs=1)


def test_shop_volume_forty_percent_at_1500_iops():
    # gp2 50 GiB: baseline 150; 40 % of 5.4e6 credits = 2.16e6; drain 1,350/s -> 1,600 s.
    result = forecast(50, 40.0, 1_500)
    assert result.drain == 1_350
    assert result.seconds_to_empty == pytest.approx(1_600)


def test_projection_to_the_report_time():
    at_reading = forecast(50, 40.0, 1_500)
    five_min_later = forecast(50, 40.0, 1_500, reference=at_reading.balance_at + minutes(5))
    assert five_min_later.seconds_to_empty == pytest.approx(1_600 - 300)


def test_not_draining_below_baseline():
    assert forecast(100, 50.0, 250).seconds_to_empty is None
    assert forecast(100, 50.0, 250).drain < 0


def test_large_ios_count_as_several():
    # 1,000 IOPS of 512 KiB each are charged as 2,000 IOPS on gp2.
    result = forecast(100, 100.0, 1_000, io_bytes=512 * KIB)
    assert result.consumption == 2_000


def test_st1_small_ios_count_as_1_mib():
    bucket = limits.st1(1_024).bucket
    assert bucket.consumption(iops=300, bytes_per_second=300 * 64 * KIB) == 300 * MIB


def test_no_balance_means_no_forecast():
    bucket = limits.gp2(50).bucket
    assert bucket_forecast(bucket, series([]), series([1_500]), series([0]), AT, AT, 300) is None


@given(
    size=st.integers(min_value=1, max_value=999),
    balance=st.floats(min_value=0, max_value=100),
    iops=st.floats(min_value=0, max_value=3_000),
    extra=st.floats(min_value=1, max_value=2_000),
)
def test_more_load_never_lasts_longer(size, balance, iops, extra):
    bucket = limits.gp2(size).bucket
    a = bucket.seconds_to_empty(balance, iops)
    b = bucket.seconds_to_empty(balance, iops + extra)
    if a is not None:
        assert b is not None and b <= a
        assert a >= 0


@given(
    size=st.integers(min_value=1, max_value=999),
    balance=st.floats(min_value=0, max_value=100),
    less=st.floats(min_value=0, max_value=100),
    iops=st.floats(min_value=0, max_value=3_000),
)
def test_fewer_credits_never_last_longer(size, balance, less, iops):
    bucket = limits.gp2(size).bucket
    a = bucket.seconds_to_empty(balance, iops)
    b = bucket.seconds_to_empty(max(balance - less, 0), iops)
    if a is not None:
        assert b <= a


@given(st.floats(min_value=-100, max_value=200))
def test_credits_stay_within_the_bucket(balance):
    bucket = limits.gp2(50).bucket
    assert 0 <= bucket.credits(balance) <= bucket.capacity


def test_trend_forecast_on_a_falling_balance():
    # 100 % falling 2 % a minute -> 50 min to empty from the first reading.
    balances = series([100 - 2 * i for i in range(10)])
    result = trend_forecast(balances, AT, reference=AT, window_s=600)
    assert result.slope_percent_per_s == pytest.approx(-2 / 60)
    # newest reading 82 % at minute 9.5 (period middle); at minute 10: 81 % left, 40.5 min
    assert result.seconds_to_empty == pytest.approx(40.5 * 60)


def test_trend_forecast_flat_or_rising_is_not_empty():
    assert trend_forecast(series([50] * 5), AT, AT, 600).seconds_to_empty is None
    assert trend_forecast(series([10, 20]), AT, AT, 600).seconds_to_empty is None
    assert trend_forecast(series([10]), AT, AT, 600) is None


def read_from(per_minute):
    """Where a 10-minute window of these per-minute IOPS (16 KiB) on gp2 100 GiB is read from,
    as minutes before its end."""
    bucket = limits.gp2(100).bucket
    at = T0 + minutes(len(per_minute))
    iops = series(per_minute)
    start = drain_began(bucket, iops, series([v * 16 * KIB for v in per_minute]), at, 600)
    return round((at - start).total_seconds() / 60)


def test_the_drain_is_read_from_where_the_load_changed():
    assert read_from([100] * 6 + [3_000] * 4) == 3  # a burst: its first minute is left out
    assert read_from([100] * 8 + [3_000] * 2) == 2  # two minutes: a regime already
    assert read_from([100] * 9 + [3_000]) == 10  # one minute is not yet a regime
    assert read_from([3_000] * 6 + [100] * 4) == 3  # a burst that ended: the quiet speaks


def test_noise_and_steady_ramps_are_one_regime():
    assert read_from([1_000, 1_100, 950, 1_050, 1_000, 980, 1_020, 1_090, 940, 1_010]) == 10
    assert read_from([1_000 + 150 * k for k in range(10)]) == 10
    assert read_from([2_000] * 10) == 10


def test_a_refilling_bucket_is_full_again_at_its_baseline_less_the_load():
    # gp2 100 GiB: 300 IOPS baseline, 100 IOPS of load: 200 credits a second back;
    # 60 % of 5.4 million missing: 16,200 s.
    bucket = limits.gp2(100).bucket
    at = T0 + minutes(10)
    iops = series([100] * 10)
    full = seconds_to_full(
        bucket, series([40.0] * 10), iops, series([100 * 16 * KIB] * 10), at, 300
    )
    assert full == pytest.approx(16_200)
    assert seconds_to_full(bucket, series([100.0] * 10), iops, iops, at, 300) is None  # full
    busy = series([1_000] * 10)
    assert seconds_to_full(bucket, series([40.0] * 10), busy, busy, at, 300) is None  # draining


def _st1_forecast(balances, iops, io_bytes):
    bucket = limits.st1(2048).bucket
    n = len(balances)
    return bucket_forecast(
        bucket,
        series(balances),
        series([iops] * n),
        series([iops * io_bytes] * n),
        at=T0 + minutes(n),
        reference=T0 + minutes(n),
        rate_window_s=600,
    )


def test_st1_charge_is_read_from_the_balance_where_the_rates_cannot_tell():
    """400 operations of 128 KiB: 50 MiB/s merged, 400 MiB/s unmerged. A balance that holds
    says no drain (charged the 80 MiB/s baseline, within the range); one that falls 1.1 points
    a minute says unmerged (2 TiB × 1.1 % / 60 s ≈ 384 MiB/s drained, 464 charged, taken at
    the most)."""
    held = _st1_forecast([90.0] * 10, 400, 128 * KIB)
    assert held.consumption == pytest.approx(80 * MIB)
    assert held.seconds_to_empty is None
    assert held.charge_range is None
    falling = _st1_forecast([90.0 - 1.1 * m for m in range(10)], 400, 128 * KIB)
    assert falling.consumption == pytest.approx(400 * MIB)
    assert falling.charge_range is None


def test_st1_with_too_few_readings_decides_on_merged_io_and_gives_the_range():
    result = _st1_forecast([90.0, 89.0], 400, 128 * KIB)
    assert result.consumption == pytest.approx(50 * MIB)
    assert result.charge_range == pytest.approx((50 * MIB, 400 * MIB))


def test_st1_operations_above_the_cap_prove_merging():
    result = _st1_forecast([90.0, 89.0], 800, 128 * KIB)
    assert result.consumption == pytest.approx(100 * MIB)
    assert result.charge_range is None
