"""Multi-Attach volumes, replayed through moto.

An io1/io2 volume may be attached to up to 16 Nitro instances at once. It used to keep only
its first attachment, and was asked for the exceeded checks, which AWS does not publish for
Multi-Attach volumes. moto keeps one attachment per volume, so a botocore `after-call` handler
on the analyzer's EC2 client gives DescribeVolumes' answer the second one AWS would list.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect import queries
from analyzer.collect.aws import Clients
from analyzer.collect.regions import connect
from analyzer.live.cycle import Analyzer
from analyzer.model.resources import Instance, Volume
from analyzer.model.units import KIB
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


@pytest.fixture
def shared(aws: None) -> Iterator[tuple[Account, str, str, str, Clients]]:
    """The volume on two instances, and clients whose DescribeVolumes answer lists both."""
    account = Account()
    first, second = account.instance("m5.large"), account.instance("m5.large")
    volume = account.volume("io2", 100, first, Iops=4_000, MultiAttachEnabled=True)
    clients = account.clients

    def with_second_attachment(parsed: dict[str, Any], **_: Any) -> None:
        for v in parsed.get("Volumes", []):
            if v["VolumeId"] == volume:
                v["Attachments"].append({**v["Attachments"][0], "InstanceId": second})

    clients.ec2.meta.events.register("after-call.ec2.DescribeVolumes", with_second_attachment)
    yield account, volume, first, second, clients


def test_a_multi_attach_volume_belongs_to_every_instance_it_is_attached_to(
    shared: tuple[Account, str, str, str, Clients],
) -> None:
    account, volume, first, second, clients = shared
    minutes = [START + timedelta(minutes=m) for m in range(40)]
    ops = 4_000 * 20  # at its 4,000 IOPS for 20 s of each minute, from both instances
    account.put(
        {
            (volume, "VolumeReadOps"): [(t, float(ops)) for t in minutes],
            (volume, "VolumeReadBytes"): [(t, ops * 16.0 * KIB) for t in minutes],
            (volume, "VolumeIdleTime"): [(t, 40.0) for t in minutes],
        }
    )
    config = settings.load({"region": [account.region]})
    analyzer = Analyzer(config, rules.load(), connect=lambda name: connect(name, clients))
    result = analyzer.run(START + timedelta(minutes=40, seconds=130))
    states = {s.ref.resource_id: s for s in result.snapshot.resources}

    shared_volume = states[volume].resource
    assert isinstance(shared_volume, Volume)
    assert shared_volume.multi_attach
    assert shared_volume.instance_ids == (first, second)
    assert set(states[volume].related) == {first, second}
    for instance_id in (first, second):
        instance = states[instance_id].resource
        assert isinstance(instance, Instance)
        assert volume in instance.volume_ids
        # Its own metrics are missing here; the shared volume's I/O is not its alone.
        assert any("Multi-Attach volume(s)" in n for n in states[instance_id].notes)

    asked = {q.metric for q in queries.for_volume(shared_volume, nitro=True)}
    assert not asked & {"VolumeIOPSExceededCheck", "VolumeThroughputExceededCheck"}
    assert "VolumeIdleTime" in asked

    [finding] = [f for f in result.findings if f.resource.resource_id == volume]
    assert finding.rule == "volume-iops-cap"
    assert "for about 20 s of each minute" in finding.summary
    assert f"on {first}, {second}" in finding.summary
