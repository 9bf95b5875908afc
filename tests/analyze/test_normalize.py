from datetime import timedelta

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from analyzer.analyze import normalize
from analyzer.model.metrics import Measure
from analyzer.model.series import Series, Status
from tests.helpers import T0, series


@pytest.mark.parametrize(
    ("stamps_min", "requested", "expected"),
    [
        ([0, 1, 2, 3], 60, 60),
        ([0, 5, 10], 60, 300),  # EC2 basic monitoring answers a 60 s request with 5 min points
        ([0, 5, 15, 20], 60, 300),  # a missing 5-minute point does not change the resolution
        ([0, 2, 4], 60, 60),  # sparse 1-minute data is not a 2-minute resolution
        ([0], 60, 60),
        ([0, 5], 300, 300),
        ([0, 60, 120], 60, 3600),
    ],
)
def test_detect_period(stamps_min, requested, expected):
    s = Series.of([(T0 + timedelta(minutes=m), 1.0) for m in stamps_min], requested)
    assert normalize.detect_period(s, requested) == expected


@pytest.mark.parametrize(
    ("sums", "period", "rates"),
    [([60_000, 90_000], 60, [1_000, 1_500]), ([300_000], 300, [1_000]), ([0], 60, [0])],
)
def test_rate_is_sum_divided_by_period(sums, period, rates):
    assert list(normalize.rate(series(sums, period_s=period)).values) == rates


@given(
    st.lists(st.floats(min_value=0, max_value=1e12, allow_nan=False), min_size=1, max_size=30),
    st.sampled_from([60, 300]),
)
def test_rate_times_period_is_the_sum_and_never_negative(sums, period):
    rates = normalize.rate(series(sums, period_s=period))
    for r, s in zip(rates.values, sums, strict=True):
        assert r >= 0
        assert r * period == pytest.approx(s, rel=1e-12, abs=1e-9)


def test_add_treats_a_missing_point_as_zero_but_a_failure_as_failure():
    reads = series([10, 20, 30])
    writes = Series.of([(T0 + timedelta(minutes=1), 5.0)], 60)
    assert list(normalize.add(reads, writes).values) == [10, 25, 30]
    assert normalize.add(reads, Series()).values == reads.values
    failed = normalize.add(reads, Series.failed("InternalError"))
    assert failed.status is Status.ERROR and failed.error == "InternalError"
    assert normalize.add(Series(), Series()).status is Status.NO_DATA


def _pointwise_sum(parts):
    totals = {}
    for part in parts:
        for stamp, value in part.points():
            totals[stamp] = totals.get(stamp, 0.0) + value
    return sorted(totals.items())


_runs = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=40),  # first minute
        st.lists(st.floats(min_value=0, max_value=1e9, allow_nan=False), max_size=25),
        st.lists(st.integers(min_value=0, max_value=30), max_size=3),  # minutes left out
    ),
    min_size=1,
    max_size=6,
)


@given(_runs)
@example([(0, [1.0, 2.0, 3.0], []), (1, [10.0, 20.0, 30.0], [])])  # overlapping, one beyond
@example([(0, [1.0, 2.0], []), (2, [10.0], []), (1, [5.0], [])])  # end to end, one inside
@example([(0, [1.0], []), (2, [10.0], [])])  # a minute no part has
def test_add_is_the_pointwise_sum_over_every_timestamp(runs):
    """Whatever the overlaps and gaps (parts polled minutes apart, points CloudWatch left
    out), the sum is taken at every timestamp any part has, each part counting there once."""
    parts = []
    for first, values, gaps in runs:
        points = [
            (T0 + timedelta(minutes=first + k), v) for k, v in enumerate(values) if k not in gaps
        ]
        parts.append(Series.of(points, 60))
    summed = normalize.add(*parts)
    expected = _pointwise_sum(parts)
    assert summed.timestamps == tuple(t for t, _ in expected)
    assert list(summed.values) == pytest.approx([v for _, v in expected], rel=1e-12)
    assert summed.status is (Status.OK if expected else Status.NO_DATA)


@given(
    st.lists(
        st.tuples(
            st.floats(min_value=0, max_value=1e9, allow_nan=False),
            st.floats(min_value=-1, max_value=1e6, allow_nan=False),
        ),
        max_size=20,
    ),
    st.booleans(),
)
def test_divide_is_the_pointwise_ratio_where_the_denominator_is_positive(pairs, shifted):
    numerator = series([n for n, _ in pairs])
    start = T0 + timedelta(minutes=1 if shifted else 0)
    denominator = Series.of(
        [(start + timedelta(minutes=k), d) for k, (_, d) in enumerate(pairs)], 60
    )
    den = dict(denominator.points())
    expected = [(t, n / den[t]) for t, n in numerator.points() if t in den and den[t] > 0]
    assert normalize.divide(numerator, denominator).points() == expected


def raw_volume(ops_per_min, bytes_per_min, idle_s=None, balance=None):
    raw = {
        "VolumeReadOps": series([o * 0.75 for o in ops_per_min]),
        "VolumeWriteOps": series([o * 0.25 for o in ops_per_min]),
        "VolumeReadBytes": series([b * 0.75 for b in bytes_per_min]),
        "VolumeWriteBytes": series([b * 0.25 for b in bytes_per_min]),
        "VolumeTotalReadTime": series([o * 0.75 * 0.001 for o in ops_per_min]),
        "VolumeTotalWriteTime": series([o * 0.25 * 0.002 for o in ops_per_min]),
    }
    if idle_s is not None:
        raw["VolumeIdleTime"] = series(idle_s)
    if balance is not None:
        raw["BurstBalance"] = series(balance)
    return raw


def test_volume_measures():
    out = normalize.volume(
        raw_volume(
            [90_000, 60_000], [90_000 * 4096, 60_000 * 16384], idle_s=[0, 30], balance=[40, 38]
        )
    )
    assert list(out[Measure.IOPS].values) == [1_500, 1_000]
    assert Measure.READ_IOPS not in out  # reads and writes apart: read by no rule here
    assert list(out[Measure.THROUGHPUT].values) == [1_500 * 4096, 1_000 * 16384]
    assert list(out[Measure.AVG_IO_SIZE].values) == [4096, 16384]
    assert out[Measure.LATENCY].values[0] == pytest.approx(0.00125)
    # 60,000 ops in the 30 s the volume was busy: 2,000 IOPS while active
    assert list(out[Measure.ACTIVE_IOPS].values) == [1_500, 2_000]
    assert list(out[Measure.BURST_BALANCE].values) == [40, 38]


def test_volume_without_burst_balance_has_no_such_measure():
    out = normalize.volume(raw_volume([60], [60]))
    assert Measure.BURST_BALANCE not in out


def test_instance_basic_monitoring_divides_by_300():
    five_min = [3_000_000, 3_000_000, 3_000_000]
    raw = {
        "EBSReadOps": series(five_min, period_s=60).__class__.of(
            [(T0 + timedelta(minutes=5 * i), v) for i, v in enumerate(five_min)], 60
        ),
        "EBSWriteOps": Series(),
    }
    out = normalize.instance(raw)
    assert out[Measure.IOPS].period_s == 300
    assert list(out[Measure.IOPS].values) == [10_000, 10_000, 10_000]


def test_instance_detailed_monitoring_divides_by_60():
    raw = {"EBSReadOps": series([600_000, 600_000]), "EBSWriteOps": series([0, 0])}
    assert list(normalize.instance(raw)[Measure.IOPS].values) == [10_000, 10_000]


def test_divide_skips_zero_denominators():
    assert list(normalize.divide(series([1, 2, 3]), series([0, 2, 1])).values) == [1, 3]


def test_rds_rates_are_already_per_second():
    raw = {
        "ReadIOPS": series([3_000, 2_000]),
        "WriteIOPS": series([1_000, 0]),
        "ReadThroughput": series([3_000 * 16_384, 2_000 * 16_384]),
        "WriteThroughput": series([1_000 * 8_192, 0]),
        "ReadLatency": series([0.002, 0.001]),
        "WriteLatency": series([0.004, 0.004]),
        "FreeableMemory": series([1.5e9, 1.4e9]),
        "BurstBalance": series([50, 49]),
    }
    out = normalize.db_instance(raw)
    assert list(out[Measure.IOPS].values) == [4_000, 2_000]
    assert list(out[Measure.READ_IOPS].values) == [3_000, 2_000]
    assert out[Measure.THROUGHPUT].values[0] == 3_000 * 16_384 + 1_000 * 8_192
    # latency weighted by each direction's IOPS: (3,000 x 2 ms + 1,000 x 4 ms) / 4,000
    assert out[Measure.LATENCY].values[0] == pytest.approx(0.0025)
    assert out[Measure.AVG_IO_SIZE].values[1] == 16_384
    assert list(out[Measure.FREEABLE_MEMORY].values) == [1.5e9, 1.4e9]
    assert list(out[Measure.BURST_BALANCE].values) == [50, 49]


def test_a_grid_laid_out_once_serves_every_sum_on_the_same_periods():
    a = series([1, 2, 3])
    b = series([10, 20], start=T0 + timedelta(minutes=2))
    grid = normalize.Grid.of([a, b])
    assert grid is not None and grid.offsets == (0, 2)
    c = series([100, 200, 300])
    d = series([1_000, 2_000], start=T0 + timedelta(minutes=2))
    assert list(normalize.add(c, d, grid=grid).values) == [100, 200, 1_300, 2_000]
    # A grid laid out for other periods is not used.
    e = series([5, 5], start=T0 + timedelta(minutes=1))
    assert list(normalize.add(a, e, grid=grid).values) == [1, 7, 8]
