"""Options replayed over a workload's own past: the minutes each would have limited."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest

from analyzer.analyze.held import before_emptied, behind, replay, time_bought
from analyzer.model import limits
from analyzer.model.demand import Demand
from analyzer.model.limits import Envelope

START = datetime(2026, 11, 13, 0, 0, tzinfo=UTC)
DAYS = 14
MINUTES = DAYS * 1440
BATCH_AT, BATCH_MIN, BATCH_IOPS = 2 * 60, 120, 1_200.0
"""A nightly batch: two hours at 1,200 IOPS from 02:00, 16 KiB I/O."""
IO_BYTES = 16 * 1024


def nightly_batch(quiet_iops: float = 20.0) -> tuple[np.ndarray, np.ndarray]:
    """The demand: the batch every night, a trickle otherwise."""
    iops = np.full(MINUTES, quiet_iops)
    for day in range(DAYS):
        first = day * 1440 + BATCH_AT
        iops[first : first + BATCH_MIN] = BATCH_IOPS
    return iops, iops * IO_BYTES


def as_served(envelope: Envelope, iops: np.ndarray, bps: np.ndarray) -> tuple[list, list]:
    """What CloudWatch shows of that demand on a volume with `envelope`, minute by minute:
    its own bucket model, written out here apart from the one under test."""
    bucket = envelope.bucket
    assert bucket is not None
    credits, shown_iops, shown_bps = bucket.capacity, [], []
    for want, want_bps in zip(iops.tolist(), bps.tolist(), strict=True):
        cap = envelope.iops if credits > bucket.capacity / 100 else envelope.baseline_iops
        got = min(want, cap)
        shown_iops.append(got)
        shown_bps.append(want_bps * got / want if want else 0.0)
        credits = min(max(credits - (got - bucket.baseline) * 60, 0.0), bucket.capacity)
    return shown_iops, shown_bps


def observed_on_gp2_80() -> Demand:
    iops, bps = nightly_batch()
    shown_iops, shown_bps = as_served(limits.gp2(80), iops, bps)
    return behind(Demand.seen(START, 60, np.array(shown_iops), np.array(shown_bps)), limits.gp2(80))


def test_a_gp2_volume_drained_nightly_is_replayed_at_the_demand_before_it_emptied() -> None:
    # gp2 80 GiB: 240 IOPS baseline, 3,000 burst, 5.4 M credits (Amazon EBS User Guide, "gp2").
    assert limits.gp2(80).baseline_iops == 240
    assert limits.gp2(80).bucket is not None
    assert limits.gp2(80).bucket.capacity == 5_400_000
    demand = observed_on_gp2_80()
    # 5.4 M credits fall by (1,200 - 240) x 60 a minute, below the 1 % read as empty after
    # 93 minutes: the last 27 minutes of each night ran at the baseline, and stand for
    # 1,200 IOPS, a floor.
    assert demand.floor.sum() == DAYS * 27
    assert demand.iops.max() == BATCH_IOPS
    assert demand.iops[BATCH_AT + 119] == BATCH_IOPS
    as_is = replay(demand, limits.gp2(80))
    assert as_is.minutes_limited == DAYS * 27
    assert as_is.limited_days == DAYS and as_is.floor
    assert as_is.days == 14.0
    assert as_is.fit().text() == (
        f"would have limited at least {DAYS * 27:,} min, on 14 of 14 days (a floor: held-back "
        "demand counted at its rate before)"
    )


def test_the_size_its_demand_needs_holds_and_the_burst_is_not_needed() -> None:
    demand = observed_on_gp2_80()
    # 400 GiB: a 1,200 IOPS baseline, the batch's own rate.
    assert replay(demand, limits.gp2(400)).held
    assert replay(demand, limits.gp3(3000, 125)).held
    # 160 GiB: 480 IOPS baseline; its credits last 125 min at 1,200 IOPS, past the batch.
    assert replay(demand, limits.gp2(160)).held


def test_a_stopgap_says_how_long_it_would_have_bought_on_the_worst_day() -> None:
    demand = observed_on_gp2_80()
    as_is = replay(demand, limits.gp2(80))
    # 120 GiB: 360 IOPS baseline, 5.4 M / 840 s = 107.1 min before empty, against 93.75.
    grown = replay(demand, limits.gp2(120))
    assert 0 < grown.minutes_limited < as_is.minutes_limited
    bought = time_bought(grown, as_is)
    assert bought == pytest.approx(14 * 60, abs=60)
    assert grown.fit(bought).text().endswith(", buying 14 min on the worst day")
    assert time_bought(replay(demand, limits.gp2(400)), as_is) is None


def test_a_cap_limits_the_minutes_above_it_on_the_days_they_came() -> None:
    iops = np.full(3 * 1440 + 600, 500.0)  # starts at midnight, ends at 10:00 on day four
    iops[1440 + 60 : 1440 + 70] = 3_500.0  # ten minutes above 3,000 on the second day
    iops[2 * 1440 + 5] = 3_050.0  # within the 2 % a cap wavers by: held
    demand = behind(Demand.seen(START, 60, iops, iops * IO_BYTES), None)
    result = replay(demand, limits.gp3(3000, 125))
    assert result.minutes_limited == 10
    assert result.limited_days == 1
    assert result.worst_day == date(2026, 11, 14)
    assert result.worst_day_minutes == 10
    assert not result.floor
    assert result.first_limited[1] == START + timedelta(days=1, minutes=60)
    assert result.first_limited[0] is None and len(result.first_limited) == 4
    # 3.4 days touch four UTC days: the one limited is one of those four.
    assert result.fit().text() == "would have limited 10 min, on 1 of 4 days"
    short = Demand.seen(START, 60, iops[:300], iops[:300] * IO_BYTES)
    assert replay(short, limits.gp3(3000, 125)).fit().text() == (
        "would have limited 0 min of the last 5 h"
    )


def test_throughput_limits_too() -> None:
    iops = np.full(1440, 100.0)
    bps = np.full(1440, 100.0 * 1024**2)  # 100 MiB/s
    bps[600:630] = 200 * 1024**2
    demand = behind(Demand.seen(START, 60, iops, bps), None)
    assert replay(demand, limits.gp3(3000, 125)).minutes_limited == 30
    assert replay(demand, limits.gp3(3000, 250)).held


def test_no_datapoint_is_no_demand_and_a_period_counts_its_minutes() -> None:
    iops = np.array([np.nan, 4_000.0, np.nan, 4_000.0])
    demand = behind(Demand.seen(START, 300, iops, iops * IO_BYTES), None)
    assert demand.iops.tolist() == [0.0, 4_000.0, 0.0, 4_000.0]
    result = replay(demand, limits.gp3(3000, 125))
    assert result.minutes_limited == 10
    assert result.fit().text() == "would have limited 10 min of the last 20 min"


def test_a_workload_held_at_its_cap_from_the_start_counts_as_a_floor() -> None:
    iops = np.full(600, 3_000.0)  # pinned at gp3's 3,000 from the first minute: unknown above
    demand = behind(Demand.seen(START, 60, iops, iops * IO_BYTES), limits.gp3(3000, 125))
    assert demand.floor.all()
    result = replay(demand, limits.gp3(6000, 125))
    assert result.held and result.floor
    assert result.fit().floor


def test_nothing_to_replay() -> None:
    empty = np.array([])
    result = replay(behind(Demand.seen(START, 60, empty, empty), None), limits.gp3(3000, 125))
    assert result.held and result.worst_day is None and result.first_limited == ()


def drained_until_now(minutes_empty: int) -> Demand:
    """gp2 80 GiB drained at 1,200 IOPS from a full bucket, then `minutes_empty` minutes at
    its baseline to the end: the volume `once` finds exhausted."""
    drain = 93  # (5.4 M - 1 %) / ((1,200 - 240) x 60), as above
    iops = np.concatenate(
        (np.full(600, 20.0), np.full(drain, BATCH_IOPS), np.full(minutes_empty, 240.0))
    )
    return Demand.seen(START, 60, iops, iops * IO_BYTES)


def test_the_rate_before_an_empty_bucket_ran_out_is_read_from_its_past() -> None:
    bucket = limits.gp2(80).bucket
    assert bucket is not None
    assert before_emptied(drained_until_now(60), bucket) == BATCH_IOPS
    # The newest minutes not published yet: CloudWatch shows nothing, not zero.
    late = drained_until_now(60)
    late.iops[-2:] = 0.0
    late.bps[-2:] = 0.0
    assert before_emptied(late, bucket) == BATCH_IOPS


def test_no_rate_before_is_claimed_where_the_past_does_not_end_at_the_baseline() -> None:
    bucket = limits.gp2(80).bucket
    assert bucket is not None
    # Still draining at the end, or back to a trickle: not empty by its past.
    iops = np.concatenate((np.full(600, 20.0), np.full(60, BATCH_IOPS)))
    assert before_emptied(Demand.seen(START, 60, iops, iops * IO_BYTES), bucket) is None
    iops = np.concatenate((np.full(600, 20.0), np.full(60, 240.0), np.full(30, 20.0)))
    assert before_emptied(Demand.seen(START, 60, iops, iops * IO_BYTES), bucket) is None
    # At the baseline throughout, or after a rate no higher: nothing clearly above it.
    assert (
        before_emptied(
            Demand.seen(START, 60, np.full(600, 240.0), np.full(600, 240.0 * IO_BYTES)), bucket
        )
        is None
    )
    iops = np.concatenate((np.full(600, 250.0), np.full(60, 240.0)))
    assert before_emptied(Demand.seen(START, 60, iops, iops * IO_BYTES), bucket) is None
    assert before_emptied(Demand.seen(START, 60, np.zeros(60), np.zeros(60)), bucket) is None


def test_an_instance_type_bursts_thirty_minutes_at_its_maximum_on_two_buckets() -> None:
    from analyzer.model.limits import instance_type_envelope
    from tests.fakes import M5

    m5 = instance_type_envelope(M5)
    assert m5 is not None
    # m5.large: 3,600 IOPS and 81.25 MB/s of baseline, 18,750 and 593.75 MB/s at most
    # (DescribeInstanceTypes, EbsOptimizedInfo). Each bucket holds 30 min at the maximum:
    # 15,150 x 1,800 I/O credits, drained at 10,000 - 3,600 a second: 71 min.
    assert (m5.baseline_iops, m5.iops) == (3_600, 18_750)

    def run(minutes: int, iops: float = 10_000.0, io_bytes: float = 4_096) -> Demand:
        rates = np.concatenate((np.full(60, 100.0), np.full(minutes, iops), np.full(60, 100.0)))
        return Demand.seen(START, 60, rates, rates * io_bytes)

    assert replay(run(70), m5).held
    # Below the 1 % read as empty from its 72nd minute on: 19 of the 90 minutes limited.
    assert replay(run(90), m5).minutes_limited == 19
    # Throughput has its own bucket: 2,000 IOPS of 256 KiB, 524 MB/s, under the IOPS baseline
    # but past the 81.25 MB/s one. 512.5 MB/s for 30 min of credits, drained at 443 MB/s a
    # second, last 35 min: 25 of the 60 limited.
    by_bytes = replay(run(60, 2_000.0, 256 * 1024), m5)
    assert by_bytes.minutes_limited == 25


def test_fourteen_days_that_start_after_midnight_are_fifteen_days_counted_alike() -> None:
    """Limited every day of a fortnight that starts at 10:00: fifteen UTC days, each
    limited, said as 15 of 15, never 15 of 14."""
    iops = np.full(MINUTES, 3_500.0)
    demand = behind(Demand.seen(START + timedelta(hours=10), 60, iops, iops * IO_BYTES), None)
    result = replay(demand, limits.gp3(3000, 125))
    assert (result.limited_days, result.days_spanned) == (15, 15)
    fit = result.fit()
    assert fit.text().startswith(f"would have limited {MINUTES:,} min, on 15 of 15 days")
    from analyzer.deliver.records import past_row

    row = past_row(fit)
    assert (row["days"], row["limited_days"], row["days_spanned"]) == (14.0, 15, 15)


def _credits_left_step_by_step(bucket, charge, period_s):  # type: ignore[no-untyped-def]
    """The bucket period by period, as `CreditBucket` models it: what the arrays must give."""
    from analyzer.model.state import EMPTY_BALANCE_PERCENT

    left = np.ones(len(charge), dtype=np.bool_)
    credits = bucket.capacity
    for index, used in enumerate(charge.tolist()):
        has = credits > EMPTY_BALANCE_PERCENT / 100 * bucket.capacity
        left[index] = has
        served = min(used, bucket.burst if has else bucket.baseline)
        credits = min(max(credits - (served - bucket.baseline) * period_s, 0.0), bucket.capacity)
    return left


_GP2 = limits.CreditBucket(5_400_000.0, 300.0, 3_000.0, limits.Unit.IOPS)
_ST1 = limits.CreditBucket(
    1 * 1024**4 / 1, 40 * limits.MIB, 250 * limits.MIB, limits.Unit.BYTES_PER_SECOND, io_cap=500
)


@pytest.mark.parametrize("seed", range(12))
def test_the_bucket_over_arrays_is_the_bucket_period_by_period(seed: int) -> None:
    """A fortnight of minutes: nightly drains that empty the bucket, bursts that do not,
    quiet stretches that refill it, and noise; the same periods with and without credits."""
    from analyzer.analyze.held import _credits_left

    rng = np.random.default_rng(seed)
    minutes = 14 * 1_440
    base = rng.choice([0.0, 50.0, 250.0, 290.0], size=minutes)
    charge = base + rng.exponential(40.0, size=minutes)
    for day in range(14):
        start = day * 1_440 + int(rng.integers(0, 1_200))
        charge[start : start + int(rng.integers(20, 180))] = rng.uniform(1_500, 4_000)
    for bucket in (_GP2, replace(_GP2, capacity=900_000.0)):
        want = _credits_left_step_by_step(bucket, charge, 60)
        assert not want.all() and want.any()
        assert np.array_equal(_credits_left(bucket, charge, 60), want)
    assert _credits_left(_GP2, np.full(100, 299.0), 60).all()


@pytest.mark.parametrize("seed", range(6))
def test_each_days_first_limited_minute_is_the_first_held_back(seed: int) -> None:
    """Scattered minutes above a cap, some days with none, starting after midnight."""
    rng = np.random.default_rng(seed)
    start = START + timedelta(minutes=int(rng.integers(0, 1_440)))
    iops = np.where(rng.random(MINUTES) < 0.002, 4_000.0, 100.0)
    iops[2 * 1_440 : 4 * 1_440] = 100.0  # two days within the cap
    held = replay(Demand.seen(start, 60, iops, iops * 4096), limits.gp3(3_000, 125))
    want: dict[date, datetime] = {}
    for index in np.flatnonzero(iops > 3_000).tolist():
        at = start + timedelta(minutes=index)
        want.setdefault(at.date(), at)
    assert [t for t in held.first_limited if t is not None] == sorted(want.values())
    assert sum(t is None for t in held.first_limited) == held.days_spanned - len(want)


def test_what_a_period_charges_over_arrays_is_what_the_model_charges() -> None:
    from analyzer.analyze.held import _charges

    rng = np.random.default_rng(7)
    iops = rng.uniform(0, 2_000, size=500)
    bps = iops * rng.choice([4 * 1024, 64 * 1024, 1024**2, 4 * 1024**2], size=500)
    for bucket in (_GP2, _ST1, replace(_ST1, io_cap=None)):
        want = [bucket.consumption(i, b) for i, b in zip(iops.tolist(), bps.tolist(), strict=True)]
        assert np.allclose(_charges(bucket, iops, bps), want, rtol=0, atol=0)


def test_a_bucket_hovering_at_empty_is_followed_period_by_period_and_quickly() -> None:
    """Throttled at its baseline, the rates seen waver about it: the bucket runs dry and earns
    a little back every period or two. Past a few dozen such stretches the arrays hand over to
    the period-by-period bucket, which gives the same without a pass over the rest each."""
    from analyzer.analyze.held import _credits_left

    rng = np.random.default_rng(3)
    charge = np.concatenate(([3_000.0] * 2_000, 300.0 + rng.normal(0, 1.0, size=18_160)))
    want = _credits_left_step_by_step(_GP2, charge, 60)
    assert np.array_equal(_credits_left(_GP2, charge, 60), want)
    assert (~want).sum() > 100 and want[2_000:].any()


def test_minutes_held_at_the_limits_before_a_modification_are_floors_after_it() -> None:
    """gp2 50 GiB held at its 150 IOPS baseline (its bucket empty) for ten minutes, then moved
    to gp3: judged by the gp3's 3,000 IOPS alone, those minutes look like a demand of 150;
    by the gp2's limits, in force then, they were held back, and count at the 1,500 IOPS
    before, as a floor."""
    iops = np.array([1_500.0] * 10 + [150.0] * 10 + [1_500.0] * 10)
    seen = Demand.seen(START, 60, iops, iops * 4096)
    empty = np.array([False] * 10 + [True] * 10 + [False] * 10)
    gp3, gp2 = limits.gp3(3_000, 125), limits.gp2(50)
    assert not behind(seen, gp3, empty).floor.any()
    changed = START + timedelta(minutes=20)
    demand = behind(seen, gp3, empty, earlier=(changed, gp2))
    assert demand.floor.tolist() == [False] * 10 + [True] * 10 + [False] * 10
    assert demand.iops.tolist() == [1_500.0] * 30
    # Limits before that no model knows: whether they held is not known, so not a floor.
    assert not behind(seen, gp3, empty, earlier=(changed, None)).floor.any()
