"""The longest past CloudWatch keeps, read as peaks: each stretch at the finest period it is
still held at, a coarse period's `Maximum` a rate over the raw interval, 14 metrics a
volume."""

from __future__ import annotations

from datetime import timedelta

import pytest

from analyzer.collect import peaks
from analyzer.collect.aws import Clients
from analyzer.collect.boundaries import MetricData
from analyzer.collect.queries import for_volume
from analyzer.collect.regions import connect
from analyzer.model.resources import DbInstance, Volume
from analyzer.model.state import FetchStats
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.datapoints import Datapoints
from tests.helpers import T0

NOW = T0
VOLUME = Volume("vol-a", "us-east-1", "io2", 500, "in-use", 20_000, None, "i-a")


def _metrics(data: Datapoints) -> MetricData:
    cloud = SimulatedCloudWatch(data, keep_s=500 * 86_400.0, attachments={"vol-a": "i-a"})
    return connect("us-east-1", Clients.for_region("us-east-1", cloudwatch=cloud)).metrics


def _minutes(busy: dict[float, float], days: int, quiet_iops: float = 100.0) -> Datapoints:
    """Raw one-minute datapoints, one an hour at `quiet_iops` over `days` days back from NOW,
    and at each `busy` moment (days ago → IOPS) one minute at that rate; 16 KiB reads."""
    reads: list = []
    for hour in range(days * 24, 0, -1):
        reads.append((NOW - timedelta(hours=hour), quiet_iops * 60))
    for ago, iops in busy.items():
        at = (NOW - timedelta(days=ago)).replace(second=0, microsecond=0)
        reads.append((at + timedelta(minutes=13), iops * 60))
    reads.sort()
    return {
        ("vol-a", "VolumeReadOps"): reads,
        ("vol-a", "VolumeWriteOps"): [(t, 0.0) for t, _ in reads],
        ("vol-a", "VolumeReadBytes"): [(t, v * 16_384) for t, v in reads],
        ("vol-a", "VolumeWriteBytes"): [(t, 0.0) for t, _ in reads],
    }


def test_each_stretch_is_read_at_the_finest_period_cloudwatch_holds_for_it() -> None:
    data = _minutes({3.3: 3_000.0, 40.2: 18_000.0, 200.5: 9_000.0}, days=300)
    stats = FetchStats()
    past = peaks.read(_metrics(data), VOLUME, NOW, 120.0, stats)
    assert past is not None
    assert [s.period_s for s in past.stretches] == [60, 300, 3_600]
    # Each ends where the finer one begins, 15, 63 and 455 days back (on whole hours).
    minute, five, hour = past.stretches
    assert five.start + timedelta(seconds=len(five.iops) * 300) == minute.start
    assert NOW - minute.start <= timedelta(days=15)
    assert NOW - five.start <= timedelta(days=63)
    # The peaks as rates a second of their busiest minute, whatever the period.
    assert float(minute.iops.max()) == pytest.approx(3_000)
    assert float(five.iops.max()) == pytest.approx(18_000)
    assert float(hour.iops.max()) == pytest.approx(9_000)
    assert float(five.bps.max()) == pytest.approx(18_000 * 16_384)
    assert past.days == pytest.approx(300, abs=0.1)
    # 4 sums, then 4 maxima and a count at each coarse period: what it costs, once.
    assert stats.metrics_requested == 14
    assert len(for_volume(VOLUME, use_agent=False)) == 10


def test_a_peak_is_a_minutes_rate_whatever_the_reads_spacing() -> None:
    # Reads come every five minutes (idle minutes between); writes every minute, one at
    # 18,000 IOPS forty days ago: the writes' busiest minute is a minute's, not five.
    reads = [(NOW - timedelta(minutes=5 * k), 60 * 100.0) for k in range(1, 50 * 288)]
    writes = [(NOW - timedelta(minutes=k), 60 * 500.0) for k in range(1, 50 * 1440)]
    spike = (NOW - timedelta(days=40)).replace(second=0, microsecond=0)
    writes = sorted([(t, v) for t, v in writes if t != spike] + [(spike, 60 * 18_000.0)])
    data = {
        ("vol-a", "VolumeReadOps"): sorted(reads),
        ("vol-a", "VolumeWriteOps"): writes,
        ("vol-a", "VolumeReadBytes"): [(t, v * 16_384) for t, v in sorted(reads)],
        ("vol-a", "VolumeWriteBytes"): [(t, v * 16_384) for t, v in writes],
    }
    past = peaks.read(_metrics(data), VOLUME, NOW, 120.0, FetchStats())
    assert past is not None
    five = past.stretches[1]
    assert float(five.iops.max()) == pytest.approx(18_000 + 100)


def test_maxima_that_are_not_a_minutes_count_end_the_window() -> None:
    # More samples in a period than it has minutes: not a datapoint a minute (a volume's
    # statistic set off Nitro), so its Maximum is no minute's count, and nothing older is read.
    reads = sorted((NOW - timedelta(seconds=20 * k), 100.0) for k in range(1, 20 * 4320))
    data = {
        ("vol-a", "VolumeReadOps"): reads,
        ("vol-a", "VolumeWriteOps"): [(t, 0.0) for t, _ in reads],
        ("vol-a", "VolumeReadBytes"): [(t, v * 16_384) for t, v in reads],
        ("vol-a", "VolumeWriteBytes"): [(t, 0.0) for t, _ in reads],
    }
    past = peaks.read(_metrics(data), VOLUME, NOW, 120.0, FetchStats())
    assert past is not None and [s.period_s for s in past.stretches] == [60]
    assert past.days <= 15


def test_a_stretch_idle_all_along_does_not_end_the_window() -> None:
    # Busy 200 days ago, idle from 63 to 15 days back: the year-old peak still counts.
    data = _minutes({3.3: 1_000.0, 200.5: 9_000.0}, days=0)
    past = peaks.read(_metrics(data), VOLUME, NOW, 120.0, FetchStats())
    assert past is not None
    assert [s.period_s for s in past.stretches] == [60, 3_600]
    assert max(float(s.iops.max()) for s in past.stretches) == pytest.approx(9_000)


def test_the_minute_is_the_raw_interval() -> None:
    assert peaks.per_minute(3_600, 60) and peaks.per_minute(300, 5)
    assert not peaks.per_minute(3_600, 61)


def test_a_failed_read_offers_no_past() -> None:
    class Failing:
        region = "us-east-1"

        def fetch(self, queries, window):  # type: ignore[no-untyped-def]
            from analyzer.model.series import Series

            stats = FetchStats(metrics_requested=len(queries))
            return {q: Series.failed("ThrottlingException") for q in queries}, stats

    assert peaks.read(Failing(), VOLUME, NOW, 120.0, FetchStats()) is None


def test_a_stretch_read_on_its_own_reaches_the_newest_period() -> None:
    """Read on a day of its own, a coarse stretch overlaps the finer ones: the busiest minute
    three days ago is in the hour stretch too, at what it cost alone."""
    data = _minutes({3.3: 3_000.0, 200.5: 9_000.0}, days=300)
    stats = FetchStats()
    hour = peaks.read_stretch(_metrics(data), VOLUME, 3_600, NOW, 120.0, stats)
    assert hour is not None and hour.demand is not None and hour.per_minute
    assert hour.read_at == NOW and stats.metrics_requested == 5
    end = hour.demand.start + timedelta(seconds=len(hour.demand.iops) * 3_600)
    assert NOW - timedelta(hours=1) <= end <= NOW
    assert float(hour.demand.iops.max()) == pytest.approx(9_000)
    recent = hour.demand.iops[-4 * 24 :]
    assert float(recent.max()) == pytest.approx(3_000)
    minute = peaks.read_stretch(_metrics(data), VOLUME, 60, NOW, 120.0, stats)
    assert minute is not None and minute.demand is not None
    assert stats.metrics_requested == 9
    assert NOW - minute.demand.start <= timedelta(days=15)


def test_an_rds_instances_rates_are_read_as_rates_at_every_period() -> None:
    """AWS/RDS publishes ReadIOPS a minute at a time, already per second: a coarse period's
    `Maximum` is its busiest minute's rate, not a count to divide."""
    db = DbInstance("orders", "us-east-1", "mysql", "db.m5.large", "io1", 400, "available", 20_000)
    reads: list = [(NOW - timedelta(hours=h), 300.0) for h in range(100 * 24, 0, -1)]
    reads.append(((NOW - timedelta(days=40.2)).replace(second=0, microsecond=0), 2_500.0))
    reads.sort()
    data = {
        ("orders", "ReadIOPS"): reads,
        ("orders", "WriteIOPS"): [(t, 50.0) for t, _ in reads],
        ("orders", "ReadThroughput"): [(t, v * 16_384) for t, v in reads],
        ("orders", "WriteThroughput"): [(t, 50.0 * 16_384) for t, _ in reads],
    }
    cloud = SimulatedCloudWatch(data, keep_s=500 * 86_400.0)
    metrics = connect("us-east-1", Clients.for_region("us-east-1", cloudwatch=cloud)).metrics
    stats = FetchStats()
    past = peaks.read(metrics, db, NOW, 120.0, stats)
    assert past is not None
    assert [s.period_s for s in past.stretches] == [60, 300, 3_600]
    minute, five, _ = past.stretches
    assert float(minute.iops.max()) == pytest.approx(350.0)
    assert float(five.iops.max()) == pytest.approx(2_550.0)  # reads' busiest + writes'
    assert float(five.bps.max()) == pytest.approx(2_550.0 * 16_384)
    assert stats.metrics_requested == 14
