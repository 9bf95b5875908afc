"""Micro-bursts replayed through moto: a volume at its cap for 20 s of every minute, on an
instance without CloudWatch's exceeded checks (they exist on Nitro only), averages to a third
of its cap a minute. The rate per busy second, from VolumeIdleTime, shows the cap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from analyzer import settings
from analyzer.analyze import rules
from analyzer.live.cycle import Analyzer
from analyzer.model.units import KIB
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def test_a_volume_at_its_cap_for_20_s_of_every_minute_is_found(aws: None) -> None:
    account = Account()
    instance = account.instance("m4.large")  # Xen: no exceeded checks
    assert account.instance_type("m4.large").nitro is False
    volume = account.volume("gp3", 200, instance)
    minutes = [START + timedelta(minutes=m) for m in range(40)]
    ops = 3_000 * 20  # 3,000 IOPS, the volume's cap, for 20 s of each minute
    account.put(
        {
            (volume, "VolumeReadOps"): [(t, float(ops)) for t in minutes],
            (volume, "VolumeWriteOps"): [(t, 0.0) for t in minutes],
            (volume, "VolumeReadBytes"): [(t, ops * 16.0 * KIB) for t in minutes],
            (volume, "VolumeWriteBytes"): [(t, 0.0) for t in minutes],
            (volume, "VolumeIdleTime"): [(t, 40.0) for t in minutes],
        }
    )
    now = START + timedelta(minutes=40, seconds=130)
    config = settings.load({"region": [account.region]})
    result = Analyzer(config, rules.load()).run(now)
    [finding] = [f for f in result.findings if f.resource.resource_id == volume]
    assert finding.rule == "volume-iops-cap"
    assert "at its 3,000 IOPS volume cap for about 20 s of each minute" in finding.summary
    assert "minute averages show 33% of it" in finding.summary
    assert finding.evidence["busy_rate_datapoints"] == 15


def test_without_idle_time_a_third_of_the_cap_is_no_finding(aws: None) -> None:
    """The same minute averages with the volume busy all minute long: no cap was reached."""
    account = Account()
    instance = account.instance("m4.large")
    volume = account.volume("gp3", 200, instance)
    minutes = [START + timedelta(minutes=m) for m in range(40)]
    account.put(
        {
            (volume, "VolumeReadOps"): [(t, 60_000.0) for t in minutes],
            (volume, "VolumeReadBytes"): [(t, 60_000 * 16.0 * KIB) for t in minutes],
            (volume, "VolumeIdleTime"): [(t, 0.0) for t in minutes],
        }
    )
    now = START + timedelta(minutes=40, seconds=130)
    config = settings.load({"region": [account.region]})
    result = Analyzer(config, rules.load()).run(now)
    assert [f for f in result.findings if f.resource.resource_id == volume] == []


def test_on_nitro_the_exceeded_check_shows_the_cap_the_minute_averages_hide(aws: None) -> None:
    """AWS publishes VolumeIOPSExceededCheck with InstanceId and VolumeId together, and moto
    answers only the exact set, as CloudWatch does: asked any other way, it is empty."""
    account = Account()
    instance = account.instance("m5.large")
    assert account.instance_type("m5.large").nitro is True
    volume = account.volume("gp3", 200, instance)
    minutes = [START + timedelta(minutes=m) for m in range(40)]
    ops = 3_000 * 60 * 0.6  # the minute averages show 60 % of the 3,000 IOPS cap
    account.put(
        {
            (volume, "VolumeReadOps"): [(t, ops) for t in minutes],
            (volume, "VolumeWriteOps"): [(t, 0.0) for t in minutes],
            (volume, "VolumeReadBytes"): [(t, ops * 16.0 * KIB) for t in minutes],
            (volume, "VolumeWriteBytes"): [(t, 0.0) for t in minutes],
            (volume, "VolumeIOPSExceededCheck"): [(t, 1.0) for t in minutes],
            (volume, "VolumeThroughputExceededCheck"): [(t, 0.0) for t in minutes],
        }
    )
    now = START + timedelta(minutes=40, seconds=130)
    config = settings.load({"region": [account.region]})
    result = Analyzer(config, rules.load()).run(now)
    [finding] = [f for f in result.findings if f.resource.resource_id == volume]
    assert finding.rule == "volume-iops-cap"
    assert finding.evidence["exceeded_check_datapoints"] >= 14
