"""What AWS/RDS would show for a database workload, computed from the storage model.

An RDS instance's storage is one envelope (its volumes striped together, with their buckets),
behind the EBS limits of its instance class. Each second the database serves what both let
through, its bucket fills and drains, and every simulated minute ends as the AWS/RDS
datapoints RDS publishes: per-second rates, latency, queue depth, BurstBalance, FreeableMemory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from analyzer.model import limits, rds_storage
from analyzer.model.limits import CreditBucket, Envelope
from analyzer.model.metrics import Measure, Part
from analyzer.model.resources import DbInstance
from analyzer.sim.datapoints import Datapoints, emit
from analyzer.sim.ec2 import SSD_SERVICE_S

Rate = Callable[[float], float]


@dataclass
class SimDatabase:
    db: DbInstance
    reads: Rate
    """Read IOPS the database asks of its storage, over seconds since the start."""
    writes: Rate
    io_size_bytes: float
    freeable_memory: Rate
    """Bytes of FreeableMemory over time."""
    balance_percent: float = 100.0
    storage: Envelope = field(init=False)
    credits: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        storage = rds_storage.db_storage_envelope(self.db)
        if storage is None:
            raise ValueError(f"{self.db.storage_type}: no model for this storage type")
        self.storage = storage
        self.credits = self.bucket.credits(self.balance_percent) if self.bucket else 0.0

    @property
    def bucket(self) -> CreditBucket | None:
        return self.storage.bucket

    @property
    def klass(self) -> Envelope | None:
        return limits.instance_type_envelope(self.db.class_info)


@dataclass
class _Minute:
    reads: float = 0.0
    writes: float = 0.0
    busy: float = 0.0
    queue: float = 0.0
    balance: float = 0.0
    free: float = 0.0


class DatabaseSimulation:
    def __init__(self, sim: SimDatabase, start: datetime) -> None:
        self.sim = sim
        self.start = start
        self.elapsed_s = 0

    @property
    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.elapsed_s)

    def _second(self, t: float, acc: _Minute) -> None:
        sim = self.sim
        size = sim.io_size_bytes
        reads, writes = max(sim.reads(t), 0.0), max(sim.writes(t), 0.0)
        demand = reads + writes
        credits_left = sim.bucket is None or sim.credits > 0
        caps = [
            sim.storage.iops_limit(credits_left),
            sim.storage.throughput_limit(credits_left) / size,
        ]
        klass = sim.klass
        if klass is not None:
            caps += [klass.iops, klass.throughput_bps / size]
        served = min(demand, *caps)
        bucket = sim.bucket
        if bucket is not None:
            served = min(served, (bucket.baseline + sim.credits) / bucket.consumption(1.0, size))
            sim.credits = min(
                max(sim.credits + bucket.baseline - bucket.consumption(served, served * size), 0.0),
                bucket.capacity,
            )
            acc.balance += 100.0 * sim.credits / bucket.capacity
        share = served / demand if demand else 0.0
        latency = SSD_SERVICE_S * (min(demand / served, 50.0) if served and demand > served else 1)
        acc.reads += reads * share
        acc.writes += writes * share
        acc.busy += served * latency
        acc.queue += served * latency
        acc.free += sim.freeable_memory(t)

    def minute(self) -> Datapoints:
        acc = _Minute()
        for _ in range(60):
            self._second(float(self.elapsed_s), acc)
            self.elapsed_s += 1
        stamp = self.now - timedelta(seconds=60)
        size = self.sim.io_size_bytes
        ops = acc.reads + acc.writes
        latency = acc.busy / ops if ops else 0.0
        values: dict[Measure | Part, float] = {
            Part.READ_RATE: acc.reads / 60,
            Part.WRITE_RATE: acc.writes / 60,
            Part.READ_BYTE_RATE: acc.reads * size / 60,
            Part.WRITE_BYTE_RATE: acc.writes * size / 60,
            Part.READ_LATENCY: latency,
            Part.WRITE_LATENCY: latency,
            Measure.QUEUE_LENGTH: acc.queue / 60,
            Measure.FREEABLE_MEMORY: acc.free / 60,
        }
        if self.sim.bucket is not None:
            values[Measure.BURST_BALANCE] = acc.balance / 60
        info = self.sim.db.class_info
        if info is not None and info.ebs_bursts:
            # The class's own EBS burst is not simulated: its balances stay full.
            values[Measure.IO_BALANCE] = values[Measure.BYTE_BALANCE] = 100.0
        out: Datapoints = {}
        emit(out, self.sim.db.db_instance_id, values, stamp)
        return out

    def run(self, minutes: int) -> Datapoints:
        out: Datapoints = {}
        for _ in range(minutes):
            for key, points in self.minute().items():
                out.setdefault(key, []).extend(points)
        return out
