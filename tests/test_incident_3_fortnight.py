"""Incident 3 over a fortnight, through moto and `ebs-analyzer backtest`: an RDS replica's reads
drain its gp2 800 GiB BurstBalance every working day; the second week sinks lower each day
(three near misses: 12 %, 9.5 %, 7 % left at 17:00) until Friday, with a little more demand,
empties it at about 16:30. What the daemon would have said, cycle by cycle, from its own past
days: nothing false on the near-miss days, Friday's empty afternoon hours ahead, and the
falling daily minimum days ahead.

The replica lives in moto; its metrics come from the simulator's GetMetricData, which
aggregates as CloudWatch does: moto's own scans every stored datapoint for each period asked,
hours for a fortnight of minutes."""

from __future__ import annotations

import contextlib
import io
import json
from datetime import datetime, timedelta

import boto3
import pytest

from analyzer.cli import main
from analyzer.collect.aws import Clients
from analyzer.collect.describe import parse_db_instance
from analyzer.model.units import GIB, KIB
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.rds import DatabaseSimulation, SimDatabase
from analyzer.sim.scenario import FORTNIGHT_START, REPLICA_WRITES, replica_reads
from tests.account import Account

FRIDAY = FORTNIGHT_START + timedelta(days=11)
UNTIL = FRIDAY + timedelta(hours=20)
NEAR_MISSES = [FORTNIGHT_START + timedelta(days=d) for d in (8, 9, 10)]


@pytest.fixture(scope="module")
def report(aws_module: None) -> dict:  # type: ignore[type-arg]
    account = Account()
    raw = boto3.client("rds", region_name=account.region).create_db_instance(
        DBInstanceIdentifier="orders-replica",
        Engine="mysql",
        DBInstanceClass="db.m5.2xlarge",
        AllocatedStorage=800,
        StorageType="gp2",
        MasterUsername="admin",
        MasterUserPassword="password123",
    )["DBInstance"]
    db = parse_db_instance(raw, account.region, {"m5.2xlarge": account.instance_type("m5.2xlarge")})
    sim = DatabaseSimulation(
        SimDatabase(db, replica_reads, lambda _t: REPLICA_WRITES, 16 * KIB, lambda _t: 1.5 * GIB),
        FORTNIGHT_START,
    )
    data = sim.run(int((UNTIL - FORTNIGHT_START).total_seconds() // 60))
    cloud = SimulatedCloudWatch(data, keep_s=15 * 86_400)
    plain = Clients.for_region.__func__  # type: ignore[attr-defined]
    until = (UNTIL + timedelta(minutes=5)).isoformat()
    span = ["--since", "284h", "--until", until, "--region", account.region]
    out = io.StringIO()
    with (
        pytest.MonkeyPatch.context() as patch,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(io.StringIO()),
    ):
        patch.setattr(
            Clients,
            "for_region",
            classmethod(lambda cls, region, **o: plain(cls, region, cloudwatch=cloud, **o)),
        )
        assert main(["backtest", *span, "--format", "json"]) == 0
    return json.loads(out.getvalue())


def _on(day: datetime, alert: dict) -> bool:  # type: ignore[type-arg]
    fired = datetime.fromisoformat(alert["fired_at"])
    return day <= fired < day + timedelta(days=1)


def test_no_forecast_warns_on_the_near_miss_days(report) -> None:  # type: ignore[no-untyped-def]
    forecasts = [a for a in report["alerts"] if a["rule"] == "rds-burst-exhaustion"]
    for day in NEAR_MISSES:
        loud = [a for a in forecasts if _on(day, a) and a["severity"] != "info"]
        assert loud == [], day


def test_friday_is_warned_hours_before_the_bucket_empties(report) -> None:  # type: ignore[no-untyped-def]
    [empty] = report["exhaustions"]
    started = datetime.fromisoformat(empty["started_at"])
    assert (
        FRIDAY + timedelta(hours=16, minutes=20)
        <= started
        <= FRIDAY + timedelta(hours=16, minutes=40)
    )
    profile = [
        a
        for a in report["alerts"]
        if _on(FRIDAY, a) and a["rule"] == "rds-burst-exhaustion" and a["severity"] == "warning"
    ]
    assert profile, report["alerts"]
    warned = datetime.fromisoformat(profile[0]["fired_at"])
    assert started - warned >= timedelta(hours=2)
    # The trend of the daily minimum spoke first, days ahead; the 20 % alarm an hour ahead.
    assert empty["lead_seconds"] >= 3 * 86_400
    assert 3_600 <= empty["alarm_lead_seconds"] <= 5 * 3_600


def test_the_falling_daily_minimum_warns_days_ahead(report) -> None:  # type: ignore[no-untyped-def]
    trend = [a for a in report["alerts"] if a["rule"] == "burst-daily-minimum-falling"]
    assert trend
    assert datetime.fromisoformat(trend[0]["fired_at"]) <= FRIDAY - timedelta(days=2)
