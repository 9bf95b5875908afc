"""The CloudWatch agent's EBS NVMe metrics as a second source, through moto: a volume at its
IOPS cap for 20 s of every minute on a Nitro instance. AWS/EBS's exceeded check says only that
each minute reached the cap; the agent's exceeded time says for how long. With
`cloudwatch_agent_namespace`, the daemon finds the agent's metrics by ListMetrics and reads
them in place of AWS/EBS's, for as many metrics."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from analyzer import settings
from analyzer.analyze import rules
from analyzer.live.cycle import Analyzer
from analyzer.model import metrics
from analyzer.model.units import KIB
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
NOW = START + timedelta(minutes=40, seconds=130)
OPS = 3_000 * 20  # 3,000 IOPS, the volume's cap, for 20 s of each minute


def _agent(name: str) -> str:
    found = metrics.agent_instead(name)
    assert found is not None
    return found.name


def _bursting(account: Account, with_agent: bool, agent_minutes: int = 40) -> str:
    instance = account.instance("m5.large")  # Nitro: AWS/EBS publishes the exceeded checks
    volume = account.volume("gp3", 200, instance)
    minutes = [START + timedelta(minutes=m) for m in range(40)]
    published = {
        "VolumeReadOps": float(OPS),
        "VolumeWriteOps": 0.0,
        "VolumeReadBytes": OPS * 16.0 * KIB,
        "VolumeWriteBytes": 0.0,
        "VolumeIOPSExceededCheck": 1.0,
        "VolumeThroughputExceededCheck": 0.0,
    }
    data = {(volume, name): [(t, value) for t in minutes] for name, value in published.items()}
    if with_agent:
        # As the agent publishes them: the counters' growth each minute, times in µs.
        for name, value in published.items():
            agent_value = value
            if name == "VolumeIOPSExceededCheck":
                agent_value = 20e6
            data[(volume, _agent(name))] = [(t, agent_value) for t in minutes[:agent_minutes]]
    account.put(data)
    return volume


def test_the_agents_exceeded_time_says_how_long_each_minute_was_at_the_cap(aws: None) -> None:
    account = Account()
    volume = _bursting(account, with_agent=True)
    plain = Analyzer(settings.load({"region": [account.region]}), rules.load()).run(NOW)
    config = settings.load({"region": [account.region], "cloudwatch_agent_namespace": "CWAgent"})
    timed = Analyzer(config, rules.load()).run(NOW)

    [before] = [f for f in plain.findings if f.resource.resource_id == volume]
    [after] = [f for f in timed.findings if f.resource.resource_id == volume]
    assert before.rule == after.rule == "volume-iops-cap"
    assert "timed" not in before.summary
    assert "cap for about 20 s of each minute in 15 of 15 minutes" in after.summary
    assert "timed by the CloudWatch agent" in after.summary
    assert after.evidence["seconds_at_cap_per_minute"] == 20.0
    # The agent's metrics stood in for AWS/EBS's: as many metrics, so the same bill.
    assert timed.snapshot.stats.metrics_requested == plain.snapshot.stats.metrics_requested


def test_without_the_agent_the_setting_changes_nothing(aws: None) -> None:
    account = Account()
    volume = _bursting(account, with_agent=False)
    config = settings.load({"region": [account.region], "cloudwatch_agent_namespace": "CWAgent"})
    result = Analyzer(config, rules.load()).run(NOW)
    [finding] = [f for f in result.findings if f.resource.resource_id == volume]
    assert (
        finding.rule == "volume-iops-cap" and finding.evidence["seconds_at_cap_per_minute"] is None
    )


def test_an_agent_that_stopped_hands_its_volume_back_to_aws_ebs_at_once(aws: None) -> None:
    """ListMetrics lists a stopped agent's metrics for three hours more; its silence is not
    idleness (it publishes zeros while idle), so the volume is read from AWS/EBS again in the
    same cycle, with a warning, and the cap is still found."""
    from structlog.testing import capture_logs

    account = Account()
    volume = _bursting(account, with_agent=True, agent_minutes=30)  # stopped 10 min ago
    config = settings.load({"region": [account.region], "cloudwatch_agent_namespace": "CWAgent"})
    analyzer = Analyzer(config, rules.load())
    with capture_logs() as logs:
        result = analyzer.run(NOW)
    [silent] = [e for e in logs if e["event"] == "agent_metrics.silent"]
    assert silent["volume"] == volume
    [finding] = [f for f in result.findings if f.resource.resource_id == volume]
    assert finding.rule == "volume-iops-cap"
    assert (
        finding.evidence["seconds_at_cap_per_minute"] is None
    )  # AWS/EBS's checks, not the agent's
    with capture_logs() as logs:
        again = analyzer.run(NOW + timedelta(minutes=1))
    assert not [e for e in logs if e["event"] == "agent_metrics.silent"]  # said once
    assert [f for f in again.findings if f.resource.resource_id == volume]
