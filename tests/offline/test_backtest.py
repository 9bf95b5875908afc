"""`ebs-analyzer backtest` against moto: incident 1's volume over the last six hours."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from analyzer.cli import main
from analyzer.collect.window import floor_to
from analyzer.model.units import KIB
from analyzer.sim.workloads import Demand, steps
from tests.account import Account


@pytest.fixture
def shop(aws: None) -> tuple[str, datetime]:
    """gp2 50 GiB: 100 IOPS, then from 2 h in 1,500 IOPS of 4 KiB, which drain the full
    bucket in 66 min 40 s; the data runs up to now."""
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp2", 50, instance)
    start = floor_to(datetime.now(UTC), 60) - timedelta(hours=6)
    demand = Demand(steps((0, 100), (2 * 3600, 1_500)), io_size_bytes=4 * KIB)
    account.put(account.simulation(instance, {volume: demand}, start).run(6 * 60))
    return volume, start


def test_the_exhaustion_is_listed_with_our_lead_and_the_alarms(shop, capsys) -> None:  # type: ignore[no-untyped-def]
    volume, start = shop
    assert main(["backtest", "--since", "6h", "--format", "json", "--region", "us-east-1"]) == 0
    out, err = capsys.readouterr()
    assert "fetching" in err and "fetched" in err and "GetMetricData" in err
    report = json.loads(out)
    [empty] = [e for e in report["exhaustions"] if e["resource_id"] == volume]
    started = datetime.fromisoformat(empty["started_at"])
    # Heavy from 2 h; empty 4,000 s later (to the minute: the balance is read each minute).
    expected = start + timedelta(hours=2, seconds=4_000)
    assert abs((started - expected).total_seconds()) <= 120
    # Our forecast warns most of an hour ahead; the 20 % alarm a quarter of an hour ahead.
    assert empty["lead_seconds"] >= 40 * 60
    assert 10 * 60 <= empty["alarm_lead_seconds"] <= 20 * 60
    rules = {(a["rule"], a["resource_id"]) for a in report["alerts"]}
    assert ("gp2-burst-exhaustion", volume) in rules
    assert ("volume-burst-credits-exhausted", volume) in rules
    quality = report["quality"]
    assert quality["warned"] == quality["exhaustions"] == 1
    assert quality["false_warnings"] == 0
    assert quality["later_than_alarm"] == 0
    assert quality["median_lead_seconds"] == empty["lead_seconds"]
    assert quality["alarm"] == {
        "threshold_percent": 20.0,
        "warned": 1,
        "episodes": 1,
        "false_episodes": 0,
        "median_lead_seconds": empty["alarm_lead_seconds"],
        "seconds": quality["alarm"]["seconds"],
    }
    # The warnings were on from the first one to the last one's end, the alarm while the
    # balance was below 20 %: both at least from when each warned to the bucket's refill.
    assert quality["warning_seconds"] >= empty["lead_seconds"]
    assert quality["alarm"]["seconds"] >= empty["alarm_lead_seconds"]
    # The same figures for the volume alone: it is the only one that ran empty.
    mine = quality["resources"][volume]
    assert {k: v for k, v in quality.items() if k != "resources"} == mine


def test_the_text_report_names_both_leads(shop, capsys) -> None:  # type: ignore[no-untyped-def]
    volume, _ = shop
    assert main(["backtest", "--since", "6h", "--region", "us-east-1"]) == 0
    out = capsys.readouterr().out
    assert "EXHAUSTIONS (1)" in out
    exhaustions = out.split("EXHAUSTIONS")[1].split("SATURATIONS")[0]
    [line] = [line for line in exhaustions.splitlines() if line.strip().startswith(volume)]
    assert "burst_balance" in line and "ahead)" in line
    # Our warning, then the alarm's, each in its column.
    assert "BurstBalance < 20 % ALARM" in exhaustions
    assert len(re.split(r"\s{2,}", line.strip())) == 5
    # The quality table has a row for the volume and one for the total.
    quality = out.split("QUALITY")[1]
    [row] = [line for line in quality.splitlines() if line.strip().startswith(volume)]
    # exhaustions 1, warned 1, a lead, no false warning, how long on, none later than the
    # alarm.
    assert re.match(rf"\s*{volume}\s+1\s+1\s+\d[\w ]*?\s+0\s+\d[\w ]*?\s+0\s+│", row), row
    assert any(line.strip().startswith("total") for line in quality.splitlines())


def test_since_beyond_what_cloudwatch_keeps_is_refused(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["backtest", "--since", "30d", "--region", "us-east-1"]) == 2
    assert "--since 30d: must be above 0 and at most 15d" in capsys.readouterr().err


@pytest.mark.slow
def test_a_recording_replays_offline_exactly_as_the_live_history(shop, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    until = datetime.now(UTC).replace(second=0, microsecond=0).isoformat()
    span = ["--since", "6h", "--until", until, "--region", "us-east-1"]
    assert main(["backtest", *span, "--format", "json"]) == 0
    live = capsys.readouterr().out
    path = tmp_path / "shop.json.gz"
    assert main(["record", *span, "-o", str(path)]) == 0
    assert "recorded" in capsys.readouterr().err
    # Offline: no AWS at all (moto would answer; the endpoint below would not).
    offline = ["backtest", "--from", str(path), "--format", "json", "--region", "us-east-1"]
    import os

    os.environ["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9"
    try:
        assert main(offline) == 0
    finally:
        del os.environ["AWS_ENDPOINT_URL"]
    assert capsys.readouterr().out == live


def test_a_file_that_is_not_a_recording_says_so(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "x.json.gz"
    path.write_text("hello")
    assert main(["backtest", "--from", str(path)]) == 2
    assert f"{path}: not a recording" in capsys.readouterr().err
