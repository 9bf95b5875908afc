"""A volume restored from a snapshot reads its first blocks slowly: pinned under its cap on
those numbers, it would be told to grow. While DescribeVolumeStatus says it is initializing
(moto answers as AWS does, through the simulated account's DescribeVolumeStatus), its row
says so with AWS's progress and time left, and no volume cap is judged on it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect import recording
from analyzer.deliver import report
from analyzer.deliver.rows import resource_row
from analyzer.live.cycle import Analyzer
from analyzer.model.resources import Initialization, Inventory, Volume
from analyzer.sim import volume_status
from analyzer.sim.workloads import Demand, constant
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def replay(initializing: bool):
    """A gp3 volume asked for 3,500 IOPS, held at its 3,000 IOPS cap for 40 minutes."""
    account = Account()
    instance = account.instance("m5.large", detailed=True)
    volume = account.volume("gp3", 200, instance)
    if initializing:
        volume_status.initializing(account.region, volume, progress=42, seconds_left=1_800)
    sim = account.simulation(instance, {volume: Demand(constant(3_500))}, START, detailed=True)
    account.put(sim.run(40))
    config = settings.load({"region": [account.region]})
    return Analyzer(config, rules.load()).run(START + timedelta(minutes=40, seconds=130)), volume


@pytest.mark.parametrize("initializing", [False, True])
def test_an_initializing_volume_says_so_instead_of_a_cap(aws: None, initializing: bool) -> None:
    result, volume = replay(initializing)
    caps = [f.rule for f in result.findings if f.resource.resource_id == volume]
    row = resource_row(result.reading("us-east-1", volume))
    if not initializing:
        assert caps == ["volume-iops-cap"]
        assert row["status"] == "ok" and row["initialization"] is None
        return
    assert caps == []
    assert row["status"] == "initializing"
    assert row["initialization"] == {
        "progress_percent": 42,
        "seconds_left": 1_800,
        "type": "default",
    }
    text = report.to_text(result.snapshot.generated_at, result.readings, result.findings)
    assert f"~ {volume}: still initializing from its snapshot (42% done, about 30 min left)" in text


def test_a_recording_keeps_a_volume_initializing(tmp_path) -> None:
    volume = Volume(
        "vol-1", "us-east-1", "gp3", 200, "in-use", 3_000, 125, "i-1",
        initialization=Initialization(42, 1_800, "default"),
    )  # fmt: skip
    path = tmp_path / "r.json"
    inventory = Inventory("us-east-1", (volume,))
    recording.write(path, recording.Recording(START, START, {"us-east-1": inventory}, {}))
    [kept] = recording.read(path).inventories["us-east-1"].volumes
    assert kept.initialization == volume.initialization
