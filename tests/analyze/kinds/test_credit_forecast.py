"""The credit forecast with the day profile: which forecast speaks, and what it says.

A gp2 800 GiB volume (2,400 IOPS baseline, 5.4 million credits: 160 points an hour of refill)
drained every day from 09:00 to 17:00, by 2,574 IOPS on the past days (7 % left at 17:00); a
gp2 100 GiB volume (300 IOPS) with a daily half-hour burst. The past is read from five-minute
means, so the moments it names are good to five minutes.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from analyzer.analyze import prices
from analyzer.analyze.analysis import conclude
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.kinds.credit_forecast import CreditForecast
from analyzer.model.findings import Bottleneck, Finding, Severity
from analyzer.model.metrics import Measure
from analyzer.model.past import Grid, Past
from analyzer.model.resources import InstanceType
from analyzer.model.series import Series
from analyzer.model.units import KIB, MB, MIB, Unit
from tests.helpers import T0, evaluate, instance_state, series, snapshot_of, volume_state
from tests.helpers import gp2_of as gp2

RULE = CreditForecast(id="forecast", resource_types=["volume"], severity="warning")
CAPACITY = 5.4e6
NEAR_MISS = 2_400 + 0.93 * CAPACITY / (8 * 3600)
"""IOPS that take 93 points from 09:00 to 17:00 off gp2 800 GiB."""
FORECAST = CreditForecast(id="forecast", resource_types=["volume", "instance"], severity="warning")
M5 = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)


def simulated(
    size: int,
    past_iops: float,
    today_iops: float,
    busy: tuple[float, float],
    end: datetime,
    today_late: float = 0.0,
) -> tuple[Series, Series]:
    """Each minute's balance and IOPS of a gp2 volume over the two weeks before `end` and
    `end`'s day, asked `past_iops` (today `today_iops`) every day in the busy hours."""
    baseline = 3.0 * size
    start = end.replace(hour=0, minute=0) - timedelta(days=14)
    balance, stamps, levels, rates = 100.0, [], [], []
    at = start
    while at < end:
        hour = at.hour + at.minute / 60
        today = at.date() == end.date()
        starts = busy[0] + (today_late if today else 0.0)
        iops = (today_iops if today else past_iops) if starts <= hour < busy[1] else 0.0
        stamps.append(at)
        levels.append(balance)
        rates.append(iops)
        credits = balance / 100 * CAPACITY + 60 * (baseline - iops)
        balance = min(max(credits / CAPACITY * 100, 0.0), 100.0)
        at += timedelta(minutes=1)
    return (
        Series.of(zip(stamps, levels, strict=True), 60),
        Series.of(zip(stamps, rates, strict=True), 60),
    )


def judged(
    today_iops: float,
    minutes: int,
    past: bool = True,
    size: int = 800,
    past_iops: float = NEAR_MISS,
    busy: tuple[float, float] = (9, 17),
    today_late: float = 0.0,
) -> Finding | None:
    """What the rule says `minutes` after T0 (a Saturday noon), with the past as fetched six
    hours before (or none)."""
    end = T0 + timedelta(minutes=minutes)
    balance, iops = simulated(size, past_iops, today_iops, busy, end, today_late)
    hour = end - timedelta(hours=1)
    state = volume_state(
        "gp2",
        size,
        {
            Measure.BURST_BALANCE: balance.since(hour),
            Measure.IOPS: iops.since(hour),
            Measure.THROUGHPUT: iops.since(hour).map(lambda v: v * 16 * KIB),
        },
    )
    if past:
        fetched = end - timedelta(hours=6)
        grid = Grid.of(balance.until(fetched), fetched - timedelta(days=15), fetched, 300)
        state = replace(state, past=Past(days={Measure.BURST_BALANCE: grid}))
    snap = snapshot_of(state, rules=(RULE,), minutes_of_data=minutes)
    found = RULE.evaluate(snap.resources[0], snap, snap.data_end)
    return conclude(found, snap, Catalog(prices.load())) if found else None


def test_a_day_following_a_near_miss_past_is_info_where_the_recent_rate_alone_warns() -> None:
    """16:40: the recent rate alone empties the bucket in under an hour; the past days say
    the load eases at 17:00 with about 7 % left."""
    alone = judged(NEAR_MISS, 280, past=False)
    assert alone is not None
    assert alone.severity is Severity.WARNING
    assert alone.evidence["forecast"] == "floor"  # below the floor: the alarm's own warning

    found = judged(NEAR_MISS, 280)
    assert found is not None
    assert found.severity is Severity.INFO
    assert found.evidence["forecast"] == "profile"
    assert found.seconds_to_empty is None
    assert found.evidence["past_days_kind"] == "weekend days"
    assert "but the load usually eases at 16:55 UTC today and today follows" in found.summary
    assert found.evidence["left_percent"] == pytest.approx(7, abs=1.5)


def test_a_day_with_a_little_more_demand_warns_hours_before_it_empties() -> None:
    """2,625 IOPS from 09:00: empty at about 15:40, warned at 12:30 on the profile's word,
    while the recent rate alone still says more than three hours."""
    assert judged(2_625, 30, past=False) is None
    found = judged(2_625, 30)
    assert found is not None
    assert found.severity is Severity.WARNING
    assert found.evidence["forecast"] == "profile"
    assert found.evidence["load_ratio"] == pytest.approx(2_625 / NEAR_MISS, rel=0.01)
    assert found.seconds_to_empty == pytest.approx(3.2 * 3600, abs=600)
    assert "→ empties at about 15:35 UTC today (in 3 h 04 min)" in found.summary
    assert (
        "the load usually eases at 16:55 UTC today (past weekend days, same hours" in found.summary
    )
    assert "then throttled to 2,400 IOPS" in found.summary


BACKUP = (12.0, 12.5)
"""A daily half hour at 1,500 IOPS on gp2 100 GiB (300 IOPS baseline): 40 points spent."""


def test_a_burst_like_the_past_days_that_end_early_is_info() -> None:
    """12:20 at 1,700 IOPS: the recent rate empties the bucket in 44 min; on past days the
    burst ended at 12:30, and today's rate is near theirs (1.13×)."""
    found = judged(1_700, 20, size=100, past_iops=1_500, busy=BACKUP)
    assert found is not None
    assert found.severity is Severity.INFO
    assert found.evidence["left_percent"] == pytest.approx(55, abs=3)


def test_a_burst_well_above_the_past_days_is_left_to_the_recent_rate() -> None:
    """1,900 IOPS (1.27× the past days): today departs from them, and the physics forecast
    warns although the profile would end at 12:30 with credits left."""
    found = judged(1_900, 20, size=100, past_iops=1_500, busy=BACKUP)
    assert found is not None
    assert found.severity is Severity.WARNING
    assert found.evidence["forecast"] == "physics"


def test_profile_false_switches_the_profile_off() -> None:
    off = RULE.model_copy(update={"profile": False})
    assert not off.reads_past
    assert RULE.reads_past


def test_a_fresh_burst_above_the_past_days_is_not_averaged_into_following_them() -> None:
    """3,000 IOPS from 12:12 (the past days: 1,500 from 12:00). Over the profile's 30 minutes
    today looks lighter than its past days; over the last five it runs at twice their rate:
    it departs, and the physics forecast warns."""
    found = judged(3_000, 20, size=100, past_iops=1_500, busy=BACKUP, today_late=0.2)
    assert found is not None
    assert found.severity is Severity.WARNING
    assert found.evidence["forecast"] == "physics"


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


def test_gp2_from_1000_gib_has_no_bucket_to_forecast():
    assert evaluate(FORECAST, gp2([5_000] * 30, [100.0] * 30, size=1_000)) is None


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
