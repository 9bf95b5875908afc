"""An impaired volume replayed through moto, which answers each metric only under the
dimensions AWS publishes it with: the stalled-I/O check (InstanceId and VolumeId) and the
instance's attached-EBS status check say the I/O stopped. The volume is reported impaired,
with AWS's guidance and no fix; nothing built on its numbers (a drain that the stall froze,
a queue without operations) is said while it lasts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.deliver.rows import resource_row
from analyzer.live.cycle import Analyzer
from analyzer.sim.ec2 import STALLED_QUEUE, SimInstance, Simulation, SimVolume
from analyzer.sim.workloads import Demand, constant
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
MINUTES = 70


def replay(stalled: bool):
    """A gp2 100 GiB volume on a Nitro m5.large, draining at 1,500 IOPS from full since 06:00
    (empty at about 07:15); with `stalled`, its I/O stops from 07:02 on, at about 17 %."""
    account = Account()
    instance = account.instance("m5.large", detailed=True)
    volume = account.volume("gp2", 100, instance)
    stalls = ((62 * 60.0, 10 * 3600.0),) if stalled else ()
    sim = Simulation(
        SimInstance(
            instance,
            account.instance_type("m5.large"),
            [
                SimVolume(
                    account.described_volume(volume), Demand(constant(1_500)), 100.0, (), stalls
                )
            ],
            detailed_monitoring=True,
        ),
        START,
    )
    account.put(sim.run(MINUTES))
    config = settings.load({"region": [account.region]})
    result = Analyzer(config, rules.load()).run(START + timedelta(minutes=MINUTES, seconds=130))
    return result, volume, instance


@pytest.mark.parametrize("stalled", [False, True])
def test_a_stalled_volume_is_impaired_not_throttled(aws: None, stalled: bool) -> None:
    result, volume, instance = replay(stalled)
    mine = {f.rule: f for f in result.findings if f.resource.resource_id == volume}
    theirs = {f.rule: f for f in result.findings if f.resource.resource_id == instance}
    row = resource_row(result.reading("us-east-1", volume))
    if not stalled:  # the same drain unimpaired: the credit rules speak
        assert any(f.bottleneck.value == "burst_credits" for f in mine.values())
        assert row["status"] == "ok"
        return
    assert set(mine) == {"volume-io-stalled"}
    finding = mine["volume-io-stalled"]
    assert finding.severity.value == "critical"
    assert finding.bottleneck.value == "impaired"
    assert finding.remedies == () and finding.next_bottleneck is None
    assert "I/O stalled since 07:02 UTC (VolumeStalledIOCheck failing for" in finding.summary
    assert "restore the volume from its latest snapshot" in finding.summary
    assert set(theirs) == {"instance-attached-ebs-impaired"}
    assert "StatusCheckFailed_AttachedEBS" in theirs["instance-attached-ebs-impaired"].summary
    assert row["status"] == "impaired"
    assert STALLED_QUEUE > 0
