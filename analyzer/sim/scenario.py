"""The incidents the demo replays: instances, their volumes and databases, and what each asks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from analyzer.model.units import GIB, KIB
from analyzer.sim.workloads import Demand, constant, periodic, steps

REGION = "us-east-1"
HISTORY_MIN = 4 * 60
QUIET_DAYS = 14
"""Before the four hours of history, a fortnight quiet: the resources are not new, and the
rules read their past as they read an account's that has run for weeks."""
AMI = "ami-12c6146b"
_MIN = 60


APPLY_ALLOWED = {"ebs-analyzer/apply": "allowed"}
"""The shop's volumes and the logs index opt in to `apply` (`demo --once --apply`); the others
do not."""


@dataclass(frozen=True)
class DemoVolume:
    name: str
    volume_type: str
    size_gib: int
    demand: Demand
    iops: int | None = None
    throughput_mibps: int | None = None
    balance_percent: float = 100.0
    grown_from_gib: int | None = None
    """Grown online to `size_gib` ten minutes before now: the bucket comes back full."""
    tags: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Its tags beside `Name`: those the EBS CSI driver writes on a claim's volume."""
    steady_days: float = 0.0
    """It ran at its demand's rate for this many days before the history, a minute an hour:
    the long past a saving is weighed on."""


@dataclass(frozen=True)
class DemoInstance:
    name: str
    instance_type: str
    story: str
    volumes: tuple[DemoVolume, ...]
    detailed_monitoring: bool = False
    tags: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Its tags beside `Name`: those EKS and Auto Scaling write on a cluster node."""


def ago(minutes: float) -> float:
    """Seconds from the simulation start to `minutes` before now."""
    return (HISTORY_MIN - minutes) * _MIN


BATCH_JOB = Demand(constant(60_000), io_size_bytes=112 * KIB, read_fraction=0.6)

CYCLE_S = 3 * 3600.0
"""The demo's jobs come back every three simulated hours (six minutes at the default speed),
so that a dashboard opened late still sees findings fire and resolve."""

BATCH_JOB_ENDING = Demand(
    periodic(60_000, 200, CYCLE_S, busy_s=90 * _MIN, busy_from_s=ago(75)),
    io_size_bytes=112 * KIB,
    read_fraction=0.6,
)
"""The same job, finishing a quarter of an hour into the demo and back 90 minutes later."""

ETL_JOB = periodic(7_500, 200, CYCLE_S, busy_s=3600.0, busy_from_s=ago(20))
"""Each of the ETL instance's two volumes: 7,500 IOPS of 4 KiB for an hour every three hours,
15,000 IOPS in all, four times the m5.large's 3,600 IOPS EBS baseline. The instance's own EBS
bucket (30 minutes at its 18,750 IOPS maximum) empties about 20 minutes into the demo."""

SEARCH_JOB = periodic(11_000, 1_500, CYCLE_S, busy_s=2 * 3600.0, busy_from_s=ago(30))
"""Each of the search instance's two volumes: 11,000 IOPS for two hours every three, 22,000
in all, above the m5.4xlarge's 18,750 IOPS EBS limit (which has no burst)."""

SCENARIO: tuple[DemoInstance, ...] = (
    DemoInstance(
        "shop-web",
        "m5.large",
        "Incident 1: heavy reads drain a gp2 50 GiB volume's burst credits",
        (
            DemoVolume(
                "shop-data",
                "gp2",
                50,
                Demand(steps((0, 100), (ago(40), 1_500)), 4 * KIB, 0.95),
                tags=APPLY_ALLOWED,
            ),
        ),
    ),
    DemoInstance(
        "shop-db",
        "m5.large",
        "Incident 1, later: credits gone, the volume runs at its 150 IOPS baseline",
        (
            DemoVolume(
                "shop-db-data",
                "gp2",
                50,
                Demand(steps((0, 100), (ago(100), 1_500)), 4 * KIB, 0.95),
                tags=APPLY_ALLOWED,
            ),
        ),
    ),
    DemoInstance(
        "reporting",
        "m5.xlarge",
        "Incident 2: an exhausted gp2 100 GiB volume grown online to 250 GiB",
        (
            DemoVolume(
                "reporting-data",
                "gp2",
                250,
                Demand(constant(3_000), 16 * KIB),
                balance_percent=0.0,
                grown_from_gib=100,
            ),
        ),
    ),
    DemoInstance(
        "batch-gp3",
        "r6i.8xlarge",
        "Incident 4, step 1: a batch job at its gp3 volume's throughput cap, ending 15 min in "
        "and back every three hours",
        (DemoVolume("batch-gp3-data", "gp3", 2_000, BATCH_JOB_ENDING, 16_000, 1_000),),
    ),
    DemoInstance(
        "batch-io2",
        "r6in.8xlarge",
        "Incident 4, step 2: moved to io2, now pinned at the instance's EBS limit",
        (DemoVolume("batch-io2-data", "io2", 2_000, BATCH_JOB, 32_000),),
    ),
    DemoInstance(
        "batch-io2-big",
        "m6in.12xlarge",
        "Incident 4, step 3: a larger instance, now at the io2 volume's IOPS",
        (DemoVolume("batch-io2-big-data", "io2", 2_000, BATCH_JOB, 32_000),),
        detailed_monitoring=True,
    ),
    DemoInstance(
        "etl",
        "m5.large",
        "An ETL job every three hours bursts the instance past its EBS baseline: its own EBS "
        "credits run out",
        (
            DemoVolume("etl-in", "gp3", 500, Demand(ETL_JOB, 4 * KIB, 0.9), 10_000),
            DemoVolume("etl-out", "gp3", 500, Demand(ETL_JOB, 4 * KIB, 0.1), 10_000),
        ),
    ),
    DemoInstance(
        "search",
        "m5.4xlarge",
        "Search indexing for two hours every three, at the instance's EBS IOPS limit",
        (
            DemoVolume("search-a", "gp3", 1_000, Demand(SEARCH_JOB, 8 * KIB, 0.8), 12_000),
            DemoVolume("search-b", "gp3", 1_000, Demand(SEARCH_JOB, 8 * KIB, 0.8), 12_000),
        ),
    ),
    DemoInstance(
        "logs",
        "m5.large",
        "Healthy: an st1 log volume below its baseline; the index, on io2 bought for 5,000 "
        "IOPS it has not used in a month, is a saving",
        (
            DemoVolume("logs-archive", "st1", 2_048, Demand(constant(50), 1024 * KIB, 0.1)),
            DemoVolume(
                "logs-index",
                "io2",
                100,
                Demand(constant(400), 16 * KIB),
                5_000,
                tags=APPLY_ALLOWED,
                steady_days=30,
            ),
        ),
    ),
)

ROOT = Demand(constant(5), 16 * KIB, 0.5)


@dataclass(frozen=True)
class DemoDatabase:
    name: str
    engine: str
    instance_class: str
    storage_type: str
    allocated_gib: int
    story: str
    reads: Callable[[float], float]
    writes: Callable[[float], float]
    io_size_bytes: float
    freeable_memory_bytes: float


DATABASES: tuple[DemoDatabase, ...] = (
    DemoDatabase(
        "orders-replica",
        "mysql",
        "db.m5.2xlarge",
        "gp2",
        200,
        "Incident 3: an RDS MySQL replica whose reads drain gp2 credits; its working set "
        "does not fit in its 32 GiB",
        reads=steps((0, 150), (ago(30), 2_500)),
        writes=constant(50),
        io_size_bytes=16 * KIB,
        freeable_memory_bytes=1.5 * GIB,
    ),
)


FORTNIGHT_START = datetime(2026, 11, 2, tzinfo=UTC)
"""A Monday: the first day of incident 3's fortnight."""
REPLICA_BUSY_IOPS = (2_950,) * 5 + (0, 0) + (3_040, 3_060, 3_079, 3_099, 3_200)
"""Incident 3 over a fortnight, on gp2 800 GiB (2,400 IOPS baseline, 21.6 million credits): the
replica's IOPS from 09:00 to 17:00 each day from `FORTNIGHT_START`. The first week ends each
working day with about 27 % left; the second sinks lower every day (15 %, 12 %, 9.5 %, 7 %)
until its Friday, with a little more demand, empties the bucket at about 16:30."""
REPLICA_WRITES = 50.0
REPLICA_QUIET_READS = 80.0


def replica_reads(t: float) -> float:
    """Read IOPS asked `t` seconds after `FORTNIGHT_START` (writes come on top)."""
    day, second = divmod(t, 86_400)
    busy = REPLICA_BUSY_IOPS[int(day) % len(REPLICA_BUSY_IOPS)]
    if busy and 9 * 3600 <= second < 17 * 3600:
        return busy - REPLICA_WRITES
    return REPLICA_QUIET_READS
