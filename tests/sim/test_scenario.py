"""The incidents the demo replays: their clocks, their jobs and incident 3's fortnight hold
the figures their docstrings give."""

from __future__ import annotations

import pytest

from analyzer.model import rds_storage
from analyzer.model.resources import DbInstance
from analyzer.sim.scenario import (
    CYCLE_S,
    DATABASES,
    ETL_JOB,
    FORTNIGHT_START,
    HISTORY_MIN,
    REPLICA_BUSY_IOPS,
    REPLICA_QUIET_READS,
    REPLICA_WRITES,
    SCENARIO,
    SEARCH_JOB,
    ago,
    replica_reads,
)

HOUR = 3600.0
DAY = 86_400.0


@pytest.mark.parametrize(
    ("minutes", "seconds"),
    [(HISTORY_MIN, 0.0), (0, HISTORY_MIN * 60.0), (10, (HISTORY_MIN - 10) * 60.0), (-5, 14_700)],
)
def test_ago_counts_from_the_simulation_start(minutes: float, seconds: float) -> None:
    assert ago(minutes) == seconds


@pytest.mark.parametrize(
    ("t", "iops"),
    [
        (ago(21), 200),
        (ago(20), 7_500),
        (ago(20) + HOUR - 1, 7_500),
        (ago(20) + HOUR, 200),
        (ago(20) + CYCLE_S, 7_500),
        (ago(20) - CYCLE_S + 30 * 60, 7_500),
    ],
)
def test_the_etl_job_runs_an_hour_every_three_hours(t: float, iops: float) -> None:
    assert ETL_JOB(t) == iops


def test_the_jobs_exceed_the_instance_limits_their_docstrings_name() -> None:
    # Two volumes each: the ETL job four times the m5.large's 3,600 IOPS baseline, and the
    # search job above the m5.4xlarge's 18,750 IOPS.
    assert 2 * ETL_JOB(ago(20)) / 3_600 == pytest.approx(4, abs=0.2)
    assert 2 * SEARCH_JOB(ago(30)) > 18_750
    assert SEARCH_JOB(ago(30) + 2 * HOUR) == 1_500
    [etl] = [i for i in SCENARIO if i.name == "etl"]
    [search] = [i for i in SCENARIO if i.name == "search"]
    assert (etl.instance_type, len(etl.volumes)) == ("m5.large", 2)
    assert (search.instance_type, len(search.volumes)) == ("m5.4xlarge", 2)


def test_every_resource_has_its_own_name_and_a_story() -> None:
    names = [i.name for i in SCENARIO] + [d.name for d in DATABASES]
    names += [v.name for i in SCENARIO for v in i.volumes]
    assert len(names) == len(set(names))
    assert all(i.story for i in SCENARIO) and all(d.story for d in DATABASES)


def test_a_grown_volume_grew() -> None:
    grown = [v for i in SCENARIO for v in i.volumes if v.grown_from_gib is not None]
    assert grown
    assert all(v.grown_from_gib < v.size_gib for v in grown if v.grown_from_gib)


def test_the_fortnight_starts_on_a_monday() -> None:
    assert FORTNIGHT_START.weekday() == 0
    assert FORTNIGHT_START.hour == FORTNIGHT_START.minute == 0
    assert [i for i, busy in enumerate(REPLICA_BUSY_IOPS) if not busy] == [5, 6]


@pytest.mark.parametrize(
    ("t", "reads"),
    [
        (9 * HOUR - 1, REPLICA_QUIET_READS),
        (9 * HOUR, 2_950 - REPLICA_WRITES),
        (17 * HOUR - 1, 2_950 - REPLICA_WRITES),
        (17 * HOUR, REPLICA_QUIET_READS),
        (5 * DAY + 12 * HOUR, REPLICA_QUIET_READS),  # Saturday
        (11 * DAY + 12 * HOUR, 3_200 - REPLICA_WRITES),  # the second Friday
        (11 * DAY + 17 * HOUR, REPLICA_QUIET_READS),
    ],
)
def test_the_replica_is_busy_from_nine_to_five_on_working_days(t: float, reads: float) -> None:
    assert replica_reads(t) == reads


@pytest.mark.parametrize(
    ("day", "left_percent"),
    [(0, 27.0), (4, 27.0), (7, 15.0), (8, 12.0), (9, 9.5), (10, 7.0), (11, 0.0)],
)
def test_each_working_day_ends_with_what_the_docstring_says(day: int, left_percent: float) -> None:
    """gp2 800 GiB: each night fills the bucket again (quiet reads are far below the
    baseline), and each working day drains what its demand asks above the baseline."""
    replica = DbInstance("orders-replica", "us-east-1", "mysql", "db.m5.2xlarge", "gp2", 800, "")
    storage = rds_storage.db_storage_envelope(replica)
    assert storage is not None and storage.bucket is not None
    bucket = storage.bucket
    assert (bucket.baseline, bucket.capacity) == (2_400, 21.6e6)
    asked = replica_reads(day * DAY + 12 * HOUR) + REPLICA_WRITES
    assert bucket.baseline > REPLICA_QUIET_READS + REPLICA_WRITES
    left = max(bucket.capacity - (asked - bucket.baseline) * 8 * HOUR, 0.0)
    assert 100 * left / bucket.capacity == pytest.approx(left_percent, abs=0.5)
    if not left:  # the second Friday empties at about 16:30
        empty_at = 9 * HOUR + bucket.capacity / (asked - bucket.baseline)
        assert empty_at == pytest.approx(16.5 * HOUR, abs=10 * 60)
