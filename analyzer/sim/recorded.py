"""Buckets driven by real recorded load: alert quality judged on shapes nobody here wrote.

`analyzer/data/realload/` holds real series recorded on production systems (the Numenta
Anomaly Benchmark's data, MIT licence, notice beside them): CPU, network, request counts, taxi
rides, road occupancy. None is an EBS volume's I/O, but each is a real shape of load over time:
how long bursts last, how they cluster, what a day looks like. Each scenario here scales one
of them to I/O and drives a gp2 or st1 volume, or an RDS instance's gp2 storage, with it
through the simulator, so that the bucket model gives the truth: the exhaustions that really
happen and the near misses that do not.

The scaling is the same for every series: at and below its median it is idle (a volume with
no I/O, for which AWS publishes no BurstBalance); above, it rises in proportion to the series
up to the resource's burst rate, scaled so that it asks `load` times the resource's baseline
on average. Values are held for their period, laid on the simulated days at their own time of
day, wrapping round where the series is shorter than the span. Each series drives several
sizes and loads (`SIZES`), which gives volumes that never empty, near misses and several
exhaustions a fortnight.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from analyzer.model import limits, rds_storage
from analyzer.model.resources import DbInstance, Instance, Inventory, Volume
from analyzer.model.units import GIB, KIB
from analyzer.sim.bursty import DAYS, HOST, WARMUP_DAYS
from analyzer.sim.datapoints import Datapoints
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.rds import DatabaseSimulation, SimDatabase
from analyzer.sim.scenario import FORTNIGHT_START, REGION
from analyzer.sim.workloads import Demand

DATA = Path(__file__).resolve().parent.parent / "data" / "realload"
IDLE_BELOW = 0.5
"""The series' quantile at and below which it is idle: no I/O at all."""
TOP_AT = 0.995
"""The series' quantile that asks the resource's whole burst rate (times `level`)."""
LEAST_RATE = 1.0
"""A demand below this (operations a second) is none: the volume is idle."""
MOST_LEVEL = 20.0


@dataclass(frozen=True, slots=True)
class Load:
    """One recorded series: its values, their period, and the first one's time of day."""

    name: str
    values: npt.NDArray[np.float64]
    period_s: int
    offset_s: float
    """Seconds from midnight (UTC) of the first value's period."""

    def shape(self) -> npt.NDArray[np.float64]:
        """The series scaled to 0 at its idle quantile and 1 at its top one, never below 0."""
        low, top = np.quantile(self.values, [IDLE_BELOW, TOP_AT])
        spread = top - low if top > low else 1.0
        shaped: npt.NDArray[np.float64] = np.clip((self.values - low) / spread, 0.0, None)
        return shaped


@cache
def load(name: str) -> Load:
    """The series `name` (a file of `DATA` without `.csv`)."""
    path = DATA / f"{name}.csv"
    stamps: list[datetime] = []
    values: list[float] = []
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            stamps.append(datetime.fromisoformat(row["timestamp"]))
            values.append(float(row["value"]))
    if len(stamps) < 2:
        raise ValueError(f"{path}: fewer than two rows")
    period = round((stamps[1] - stamps[0]).total_seconds())
    first = stamps[0]
    offset = first.hour * 3600 + first.minute * 60 + first.second
    return Load(name, np.asarray(values, dtype=np.float64), period, float(offset))


def loads() -> tuple[str, ...]:
    """Every recorded series shipped, by name."""
    return tuple(sorted(p.stem for p in DATA.glob("*.csv")))


def _held(
    shape: npt.NDArray[np.float64], period_s: int, offset_s: float
) -> Callable[[float], float]:
    """The shape as a function of seconds from the first simulated midnight: each value held
    for its period, at its own time of day, wrapping round."""
    count = len(shape)

    def at(t: float) -> float:
        return float(shape[int((t - offset_s) // period_s) % count])

    return at


@dataclass(frozen=True)
class Driven:
    """A resource driven by one recorded series: a volume (`gp2`, `st1`, `sc1`) or an RDS
    instance's storage (`rds-gp2`), of `size_gib`, asking on average `load` times its
    baseline."""

    series: str
    kind: str
    size_gib: int
    load: float = 0.8

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.size_gib}-{self.series}-x{self.load:g}"

    @property
    def resource_id(self) -> str:
        slug = self.name.replace("_", "-").replace(".", "")
        return slug if self.is_db else f"vol-{slug}"

    @property
    def is_db(self) -> bool:
        return self.kind.startswith("rds-")

    def demand(self, burst: float, baseline: float) -> Callable[[float], float]:
        """The rate asked at each second from the first simulated midnight, in the unit of
        `burst` and `baseline`: the series' shape scaled so that, capped at the burst rate,
        it asks `load` times the baseline on average."""
        series = load(self.series)
        shape = series.shape() * level(series.shape(), self.load * baseline / burst)
        held = _held(shape, series.period_s, series.offset_s)

        def asked(t: float) -> float:
            rate = min(held(t), 1.0) * burst
            return rate if rate >= LEAST_RATE else 0.0

        return asked

    def volume_demand(
        self,
        burst: float,
        baseline: float,
        io_size_bytes: float,
        read_fraction: float,
        sequential: bool = False,
    ) -> Demand:
        """`demand` asked of a volume in I/O of `io_size_bytes`, with the periods it holds
        each rate for: those of the series."""
        series = load(self.series)
        return Demand(
            self.demand(burst, baseline),
            io_size_bytes,
            read_fraction,
            sequential,
            held_s=series.period_s,
            held_from_s=series.offset_s,
        )

    def volume(self) -> Volume:
        return Volume(
            self.resource_id,
            REGION,
            self.kind,
            self.size_gib,
            "in-use",
            attached_to=f"i-{self.resource_id.removeprefix('vol-')}",
            tags={"Name": self.name},
        )

    def database(self) -> DbInstance:
        return DbInstance(
            self.resource_id,
            REGION,
            "mysql",
            "db.r6i.8xlarge",
            self.kind.removeprefix("rds-"),
            self.size_gib,
            "available",
            class_info=HOST,
            tags={"Name": self.name},
        )


def level(shape: npt.NDArray[np.float64], mean: float) -> float:
    """The factor that makes `shape`, capped at 1, average `mean` (at most `MOST_LEVEL`: a
    series that is idle most of the time may never ask that much)."""
    low, high = 0.0, MOST_LEVEL
    if float(np.minimum(shape * high, 1.0).mean()) <= mean:
        return high
    for _ in range(50):
        middle = (low + high) / 2
        if float(np.minimum(shape * middle, 1.0).mean()) < mean:
            low = middle
        else:
            high = middle
    return high


def simulate(driven: Driven, days: float = WARMUP_DAYS + DAYS) -> tuple[Inventory, Datapoints]:
    """The resource over `days` from `FORTNIGHT_START`, and its datapoints."""
    minutes = int(days * 1440)
    if driven.is_db:
        db = driven.database()
        storage = rds_storage.db_storage_envelope(db)
        if storage is None or storage.bucket is None:
            raise ValueError(f"{driven.kind}: no burst bucket to drive")
        asked = driven.demand(storage.iops, storage.bucket.baseline)
        database = SimDatabase(
            db, lambda t: 0.7 * asked(t), lambda t: 0.3 * asked(t), 16 * KIB, lambda _t: 64 * GIB
        )
        data = DatabaseSimulation(database, FORTNIGHT_START).run(minutes)
        return Inventory(REGION, db_instances=(db,)), data
    volume = driven.volume()
    envelope = limits.volume_envelope(volume)
    if envelope is None or envelope.bucket is None:
        raise ValueError(f"{driven.kind}: no burst bucket to drive")
    hdd = envelope.merges
    size = 1024 * KIB if hdd else 16 * KIB
    # Rates in operations of `size`: gp2 counts IOPS, st1/sc1 their throughput in MiB.
    burst = envelope.throughput_bps / size if hdd else envelope.iops
    baseline = envelope.baseline_throughput_bps / size if hdd else envelope.bucket.baseline
    demand = driven.volume_demand(burst, baseline, size, 0.3 if hdd else 0.6, sequential=hdd)
    instance_id = volume.attached_to or ""
    instance = Instance(
        instance_id, REGION, HOST.name, "running", volume_ids=(volume.volume_id,), type_info=HOST
    )
    host = SimInstance(instance_id, HOST, [SimVolume(volume, demand)], True)
    data = Simulation(host, FORTNIGHT_START).run(minutes)
    return Inventory(REGION, volumes=(volume,), instances=(instance,)), data


SIZES: tuple[tuple[str, int, float], ...] = (
    ("gp2", 100, 0.8),
    ("gp2", 250, 0.5),
    ("gp2", 250, 1.0),
    ("st1", 500, 0.8),
    ("rds-gp2", 200, 0.8),
)
"""Each series drives each of these (kind, GiB, load): small and larger gp2 asking half their
baseline on average, most of it, or all of it; st1; and an RDS instance's gp2 storage."""


def scenarios(series: tuple[str, ...] | None = None) -> tuple[Driven, ...]:
    """Every series shipped (or those named) at every size of `SIZES`."""
    return tuple(
        Driven(name, kind, size, mean) for name in (series or loads()) for kind, size, mean in SIZES
    )
