"""The node's view of a simulation: its pages count the very seconds CloudWatch's datapoints
sum, so that the two paths can be compared on one run."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

from analyzer.collect import capture
from analyzer.model.resources import Instance, Inventory, Volume
from analyzer.model.units import KIB
from analyzer.sim import nvme
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.workloads import Demand, constant, periodic
from tests.collect.test_queries import NITRO

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def run(demand: Demand, minutes: int, tmp_path: Path, kind: str = "gp2", size: int = 50):
    volume = Volume("vol-1", "us-east-1", kind, size, "in-use", attached_to="i-1")
    instance = Instance("i-1", "us-east-1", "m5.large", "running", False, ("vol-1",), NITRO)
    sim = Simulation(SimInstance("i-1", NITRO, [SimVolume(volume, demand)]), START)
    out = io.StringIO()
    inventory = Inventory("us-east-1", (volume,), (instance,))
    datapoints = nvme.capture(sim, minutes, 5, out, inventory)
    path = tmp_path / "view.jsonl"
    path.write_text(out.getvalue())
    return datapoints, capture.read(path)


def test_the_pages_count_what_cloudwatch_sums(tmp_path: Path) -> None:
    datapoints, found = run(Demand(constant(1_500), 4 * KIB, 0.95), 3, tmp_path)
    assert found.inventory is not None and found.every() == 5
    reads = [r for r in found.reads if r.volume_id == "vol-1"]
    assert len(reads) == 3 * 12  # every 5 s for three minutes
    cloudwatch = sum(v for _, v in datapoints[("vol-1", "VolumeReadOps")])
    last = reads[-1].stats
    assert last is not None
    assert last.read_ops == int(cloudwatch)
    written = sum(v for _, v in datapoints[("vol-1", "VolumeWriteOps")])
    assert last.write_ops == int(written)
    assert last.read_time_us > 0 and last.volume_iops_exceeded_us == 0


def test_the_seconds_at_the_cap_are_counted_to_the_microsecond(tmp_path: Path) -> None:
    """gp3's 3,000 IOPS asked 6,000 for 20 s of each minute: 20 s exceeded a minute."""
    burst = Demand(periodic(6_000, 0, 60, 20), io_size_bytes=16 * KIB)
    datapoints, found = run(burst, 2, tmp_path, kind="gp3", size=200)
    last = found.reads[-1].stats
    assert last is not None
    assert last.volume_iops_exceeded_us == 2 * 20 * 1_000_000
    assert [v for _, v in datapoints[("vol-1", "VolumeIOPSExceededCheck")]] == [1.0, 1.0]


def test_cloudwatchs_balance_is_kept_every_ten_minutes(tmp_path: Path) -> None:
    _, found = run(Demand(constant(1_500), 4 * KIB), 21, tmp_path)
    # The minutes starting at 06:00, 06:10 and 06:20, each standing for its middle.
    assert [b.t - START.timestamp() for b in found.balances] == [30.0, 630.0, 1230.0]
    assert found.balances[0].percent > found.balances[-1].percent
