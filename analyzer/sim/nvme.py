"""A simulated instance's EBS volumes as a node agent reads them: each volume's NVMe statistics
page every few seconds, counted from the simulator's seconds, beside the CloudWatch datapoints
of the very same run, so that the two paths can be judged on one workload.

The page's counters are cumulative (AWS EBS User Guide, "Amazon EBS detailed performance
statistics"): operations and bytes; read and write time and the time the volume's or the
instance's limits held I/O back, in microseconds; the queue length of the moment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO

from analyzer.collect.capture import Writer
from analyzer.collect.logpage import Stats, pack
from analyzer.model import metrics
from analyzer.model.metrics import Measure, Namespace
from analyzer.model.resources import Inventory
from analyzer.sim.datapoints import Datapoints
from analyzer.sim.ec2 import Second, Simulation

US = 1_000_000
ANCHOR_EVERY_S = 600
"""How often the node reads CloudWatch's BurstBalance (as `node.agent` does)."""


@dataclass
class _Totals:
    read_ops: float = 0.0
    write_ops: float = 0.0
    read_bytes: float = 0.0
    write_bytes: float = 0.0
    read_time_us: float = 0.0
    write_time_us: float = 0.0
    volume_iops_exceeded_us: float = 0.0
    volume_throughput_exceeded_us: float = 0.0
    instance_iops_exceeded_us: float = 0.0
    instance_throughput_exceeded_us: float = 0.0
    queue_length: float = 0.0

    def stats(self) -> Stats:
        return Stats(
            int(self.read_ops),
            int(self.write_ops),
            int(self.read_bytes),
            int(self.write_bytes),
            int(self.read_time_us),
            int(self.write_time_us),
            int(self.volume_iops_exceeded_us),
            int(self.volume_throughput_exceeded_us),
            int(self.instance_iops_exceeded_us),
            int(self.instance_throughput_exceeded_us),
            round(self.queue_length),
        )


@dataclass
class NodeView:
    """Counts each second of a simulation into every volume's page; a page every `every_s`."""

    every_s: int
    writer: Writer
    totals: dict[str, _Totals] = field(default_factory=dict)
    pages: int = 0

    def second(self, now: datetime, seconds: Mapping[str, Second], instance: Second) -> None:
        for vid, second in seconds.items():
            total = self.totals.setdefault(vid, _Totals())
            total.read_ops += second.read_ops
            total.write_ops += second.write_ops
            total.read_bytes += second.read_bytes
            total.write_bytes += second.write_bytes
            total.read_time_us += second.read_time * US
            total.write_time_us += second.write_time * US
            total.volume_iops_exceeded_us += second.iops_exceeded * US
            total.volume_throughput_exceeded_us += second.throughput_exceeded * US
            busy = second.read_ops + second.write_ops > 0
            total.instance_iops_exceeded_us += instance.iops_exceeded * busy * US
            total.instance_throughput_exceeded_us += instance.throughput_exceeded * busy * US
            total.queue_length = second.queue
        t = now.timestamp()
        if int(t) % self.every_s == 0:
            for vid, total in self.totals.items():
                self.writer.page(t, vid, pack(total.stats()))
                self.pages += 1


def capture(
    simulation: Simulation, minutes: int, every_s: int, out: IO[str], inventory: Inventory
) -> Datapoints:
    """Run `minutes` of the simulation, writing what a node agent on its instance would have
    captured to `out` (its inventory, its pages, CloudWatch's BurstBalance every ten minutes);
    the CloudWatch datapoints of the same run."""
    writer = Writer(out)
    writer.inventory(simulation.now.timestamp(), inventory)
    view = NodeView(every_s, writer)
    # The instance's other volumes (its root volume) are read too, idle: a node reads every
    # EBS volume attached to its instance.
    simulated = {s.volume.volume_id for s in simulation.instance.volumes}
    for volume in inventory.volumes:
        mine = volume.attached_to == simulation.instance.instance_id
        if mine and volume.volume_id not in simulated:
            view.totals[volume.volume_id] = _Totals()
    simulation.each_second = view.second
    datapoints = simulation.run(minutes)
    simulation.each_second = None
    balance = metrics.feeding(Namespace.EBS, Measure.BURST_BALANCE)
    for (rid, metric), points in sorted(datapoints.items()):
        if balance is None or metric != balance.name:
            continue
        for stamp, value in points:
            if int(stamp.timestamp()) % ANCHOR_EVERY_S == 0:
                writer.balance(stamp.timestamp() + 30.0, rid, value)
    return datapoints
