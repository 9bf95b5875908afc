"""What AWS/RDS would show for a database workload: the storage and the class both cap what
is served, the gp2 bucket drains and fills, and each minute ends as per-second datapoints."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.model.resources import DbInstance, InstanceType
from analyzer.model.units import GIB, KIB, MB
from analyzer.sim.ec2 import SSD_SERVICE_S
from analyzer.sim.rds import DatabaseSimulation, Rate, SimDatabase
from analyzer.sim.workloads import constant, steps
from tests.helpers import T0

BIG = InstanceType("r6i.8xlarge", 40_000, 40_000, 1_250 * MB, 1_250 * MB, nitro=True)
"""A class no storage here reaches: the storage alone caps."""
BURSTING = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)
NONE = constant(0)
ONE_GIB = constant(GIB)
SMALL = InstanceType("t-fixed", 1_000, 1_000, 100 * MB, 100 * MB, nitro=True)


def database(
    storage: str = "gp2",
    gib: int = 200,
    iops: int | None = None,
    klass: InstanceType = BIG,
) -> DbInstance:
    return DbInstance(
        "orders",
        "us-east-1",
        "mysql",
        f"db.{klass.name}",
        storage,
        gib,
        "available",
        iops=iops,
        class_info=klass,
    )


def run(
    db: DbInstance,
    reads: Rate,
    writes: Rate = NONE,
    minutes: int = 1,
    io: float = 16 * KIB,
    free: Rate = ONE_GIB,
    balance: float = 100.0,
) -> dict[str, list[float]]:
    data = DatabaseSimulation(SimDatabase(db, reads, writes, io, free, balance), T0).run(minutes)
    assert {rid for rid, _ in data} == {"orders"}
    return {name: [v for _, v in points] for (_, name), points in data.items()}


def test_storage_without_a_model_is_refused() -> None:
    with pytest.raises(ValueError, match="magnetic"):
        SimDatabase(database("magnetic", 100), constant(0), constant(0), 16 * KIB, constant(0))


def test_gp2_bursts_until_its_bucket_is_empty_then_serves_its_baseline() -> None:
    # gp2 200 GiB: 600 IOPS baseline, 3,000 burst, 5.4 million credits: 3,000 IOPS drain
    # 2,400 a second, empty after 2,250 s (37.5 min).
    data = run(database(), constant(5_000), minutes=40)
    assert data["ReadIOPS"][0] == pytest.approx(3_000)
    assert data["ReadIOPS"][-1] == pytest.approx(600)
    served = sum(r * 60 for r in data["ReadIOPS"])
    burst_s = (served - 600 * 60 * 40) / (3_000 - 600)
    assert burst_s == pytest.approx(2_250, abs=1)
    assert data["BurstBalance"][-1] == 0
    # The first minute's balance averages its seconds: 2,400 credits a second of 5.4 million.
    assert data["BurstBalance"][0] == pytest.approx(100 - 100 * 2_400 * 30.5 / 5.4e6, rel=1e-6)


def test_below_its_baseline_an_empty_bucket_fills() -> None:
    data = run(database(), constant(100), minutes=10, balance=0.0)
    # 500 credits a second to spare; the last minute averages the balance after seconds
    # 541 to 600.
    assert data["BurstBalance"][-1] == pytest.approx(100 * 500 * 570.5 / 5.4e6, rel=1e-9)
    assert data["ReadIOPS"] == pytest.approx([100] * 10)


def test_the_class_caps_what_the_storage_would_serve() -> None:
    data = run(database("io1", 400, iops=3_000, klass=SMALL), constant(5_000))
    assert data["ReadIOPS"] == pytest.approx([1_000])
    assert data["ReadLatency"][0] > SSD_SERVICE_S


def test_reads_and_writes_are_served_in_proportion_and_per_second() -> None:
    data = run(database("io1", 400, iops=3_000), constant(3_000), constant(1_000))
    assert data["ReadIOPS"] == pytest.approx([2_250])
    assert data["WriteIOPS"] == pytest.approx([750])
    assert data["ReadThroughput"] == pytest.approx([2_250 * 16 * KIB])
    assert data["WriteThroughput"] == pytest.approx([750 * 16 * KIB])


@pytest.mark.parametrize(
    ("asked", "latency"),
    [(1_000.0, SSD_SERVICE_S), (3_000.0, SSD_SERVICE_S), (6_000.0, 2 * SSD_SERVICE_S)],
)
def test_latency_rises_with_the_demand_beyond_what_is_served(asked: float, latency: float) -> None:
    data = run(database("io1", 400, iops=3_000), constant(asked))
    assert data["ReadLatency"] == pytest.approx([latency])
    assert data["WriteLatency"] == data["ReadLatency"]
    assert data["DiskQueueDepth"] == pytest.approx([min(asked, 3_000) * latency])


def test_an_idle_minute_has_no_latency_and_negative_demand_is_none() -> None:
    data = run(database(), constant(-50), constant(0))
    assert data["ReadIOPS"] == [0] and data["ReadLatency"] == [0]
    assert data["DiskQueueDepth"] == [0]


def test_freeable_memory_is_the_minutes_average() -> None:
    data = run(database(), constant(0), free=lambda t: t * GIB, minutes=2)
    assert data["FreeableMemory"] == pytest.approx([29.5 * GIB, 89.5 * GIB])


@pytest.mark.parametrize(
    ("db", "burst_balance", "class_balances"),
    [
        (database("gp2"), True, False),
        (database("gp3", 400), False, False),
        (database("gp2", klass=BURSTING), True, True),
    ],
)
def test_balances_are_published_where_there_is_a_bucket(
    db: DbInstance, burst_balance: bool, class_balances: bool
) -> None:
    data = run(db, constant(100))
    assert ("BurstBalance" in data) is burst_balance
    assert ("EBSIOBalance%" in data) is class_balances
    assert ("EBSByteBalance%" in data) is class_balances
    if class_balances:
        # The class's own burst is not simulated: full.
        assert data["EBSIOBalance%"] == data["EBSByteBalance%"] == [100.0]


def test_each_minute_is_stamped_at_its_start() -> None:
    sim = DatabaseSimulation(
        SimDatabase(database(), constant(10), constant(0), 16 * KIB, constant(GIB)), T0
    )
    data = sim.run(3)
    assert [t for t, _ in data[("orders", "ReadIOPS")]] == [
        T0 + timedelta(minutes=m) for m in range(3)
    ]
    assert sim.now == T0 + timedelta(minutes=3)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.floats(0, 10_000), min_size=1, max_size=6),
    st.floats(0, 100),
)
def test_the_balance_stays_between_empty_and_full_and_nothing_more_than_asked_is_served(
    levels: list[float], balance: float
) -> None:
    reads = steps(*((i * 60.0, level) for i, level in enumerate(levels)))
    data = run(database(), reads, minutes=len(levels), balance=balance)
    assert all(0 <= b <= 100 for b in data["BurstBalance"])
    for served, asked in zip(data["ReadIOPS"], levels, strict=True):
        assert 0 <= served <= min(asked, 3_000) + 1e-9
