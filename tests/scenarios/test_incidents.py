"""The incidents of SPEC.md, replayed end to end: moto serves the inventory and the metric data
the simulator computed; the analyzer runs through its real boto3 adapters and rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import prices, rules
from analyzer.live.cycle import Analyzer, CycleResult
from analyzer.model.findings import Finding
from analyzer.model.units import KIB, MIB
from analyzer.sim.workloads import Demand, constant, steps
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
SEEN = timedelta(seconds=0)
"""Where a cycle runs after the minutes it is meant to read: moto holds every datapoint at
once, so a cycle at the end of a minute reads it (a balance at once; a sum once its next
minute is there, or the settle delay has passed)."""


def analyze(account: Account, now: datetime) -> CycleResult:
    """One cycle with AWS's offers (moto's instance types) priced by the demo's snapshot."""
    config = settings.load(
        {"region": [account.region], "prices": str(prices.DEMO), "pricing_api": False}
    )
    return Analyzer(config, rules.load()).offering().run(now)


def findings_for(result: CycleResult, resource_id: str) -> dict[str, Finding]:
    return {f.rule: f for f in result.findings if f.resource.resource_id == resource_id}


def row(result: CycleResult, resource_id: str) -> dict:
    from analyzer.deliver.rows import to_dict

    data = to_dict(result.snapshot.generated_at, result.readings, result.findings)
    return next(r for r in data["resources"] if r["resource_id"] == resource_id)


def test_incident_1_shop_volume_drains_then_runs_at_baseline(aws: None) -> None:
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp2", 50, instance)
    heavy = 3 * 3600  # heavy reads start three hours in
    demand = Demand(steps((0, 100), (heavy, 1_500)), io_size_bytes=4 * KIB, read_fraction=0.95)
    sim = account.simulation(instance, {volume: demand}, START)
    account.put(sim.run(3 * 60 + 100))
    heavy_at = START + timedelta(seconds=heavy)
    # 1,350 credits a second drain a full bucket of 5.4 million in 4,000 s.
    empty_at = heavy_at + timedelta(seconds=4_000)

    now = heavy_at + timedelta(minutes=40) + SEEN
    result = analyze(account, now)
    found = findings_for(result, volume)
    assert set(found) == {"gp2-burst-exhaustion"}
    warning = found["gp2-burst-exhaustion"]
    assert warning.severity == "warning"
    assert warning.bottleneck == "burst_credits"
    assert warning.seconds_to_empty == pytest.approx((empty_at - now).total_seconds(), abs=30)
    assert warning.observed == pytest.approx(1_500)
    assert warning.limit == 150
    assert "→ 0 in 27 min" in warning.summary  # its balance read the minute it is published
    assert "then throttled to 150 IOPS" in warning.summary
    assert warning.next_bottleneck is not None
    assert warning.next_bottleneck.bottleneck == "volume_iops"
    assert warning.next_bottleneck.limit == 3_000
    resource = row(result, volume)
    assert resource["burst_balance_percent"] == pytest.approx(40.7, abs=0.1)
    assert resource["iops"] == pytest.approx(1_500)
    assert resource["iops_limit"] == 3_000
    assert resource["seconds_to_empty"] == pytest.approx(warning.seconds_to_empty, abs=1)

    later = heavy_at + timedelta(minutes=100) + SEEN
    result = analyze(account, later)
    found = findings_for(result, volume)
    assert set(found) == {"volume-burst-credits-exhausted"}
    critical = found["volume-burst-credits-exhausted"]
    assert critical.severity == "critical"
    assert critical.observed == pytest.approx(150)
    assert critical.limit == 150
    assert "throttled at baseline 150 IOPS" in critical.summary
    assert row(result, volume)["iops_limit"] == 150


def test_incident_2_growing_the_volume_brings_the_burst_back(aws: None) -> None:
    account = Account()
    instance = account.instance("m5.xlarge")
    volume = account.volume("gp2", 100, instance)
    grown = 2 * 3600
    demand = Demand(constant(3_000), io_size_bytes=16 * KIB)
    sim = account.simulation(
        instance, {volume: demand}, START, balances={volume: 0.0}, resizes={volume: [(grown, 250)]}
    )
    account.put(sim.run(2 * 60 + 20))
    grown_at = START + timedelta(seconds=grown)

    before = analyze(account, grown_at + SEEN)
    found = findings_for(before, volume)
    assert set(found) == {"volume-burst-credits-exhausted"}
    assert found["volume-burst-credits-exhausted"].observed == pytest.approx(300)

    account.modify_volume(volume, grown_at, Size=250)
    now = grown_at + timedelta(minutes=10) + SEEN
    after = analyze(account, now)
    found = findings_for(after, volume)
    # The cap window holds only the minutes since the growth took effect (those before were
    # held at the old baseline): nine, every one at the 3,000 IOPS burst ceiling (the tenth,
    # the sums' newest minute, is read once the next is there).
    assert set(found) == {"gp2-burst-exhaustion", "volume-iops-cap"}
    assert found["volume-iops-cap"].evidence["datapoints"] == 9
    # A full bucket at 3,000 IOPS lasts 2,400 s on 250 GiB (AWS's table).
    empty_at = grown_at + timedelta(seconds=2_400)
    assert found["gp2-burst-exhaustion"].seconds_to_empty == pytest.approx(
        (empty_at - now).total_seconds(), abs=30
    )
    assert row(after, volume)["iops_limit"] == 3_000
    # Once the whole cap window runs at the 3,000 IOPS burst ceiling, it is pinned there too.
    settled = findings_for(analyze(account, grown_at + timedelta(minutes=20) + SEEN), volume)
    assert set(settled) == {"gp2-burst-exhaustion", "volume-iops-cap"}
    assert settled["volume-iops-cap"].limit == 3_000


@pytest.fixture(scope="module")
def batch_job(aws_module: None) -> tuple[Account, dict[str, tuple[str, str]], CycleResult]:
    """Incident 4: the same batch job on three instance and volume combinations."""
    account = Account()
    job = Demand(constant(60_000), io_size_bytes=112 * KIB, read_fraction=0.6)
    steps_ = {
        "r6i.8xlarge": ("gp3", {"Iops": 16_000, "Throughput": 1_000}, False),
        "r6in.8xlarge": ("io2", {"Iops": 32_000}, False),
        "m6in.12xlarge": ("io2", {"Iops": 32_000}, True),
    }
    ids: dict[str, tuple[str, str]] = {}
    for instance_type, (volume_type, extra, detailed) in steps_.items():
        instance = account.instance(instance_type, detailed=detailed)
        volume = account.volume(volume_type, 2_000, instance, **extra)
        ids[instance_type] = (instance, volume)
        sim = account.simulation(instance, {volume: job}, START, detailed=detailed)
        account.put(sim.run(60))
    result = analyze(account, START + timedelta(minutes=60) + SEEN)
    return account, ids, result


def test_incident_4_step_1_gp3_volume_throughput_cap(batch_job) -> None:  # type: ignore[no-untyped-def]
    account, ids, result = batch_job
    instance, volume = ids["r6i.8xlarge"]
    found = findings_for(result, volume)
    assert set(found) == {"volume-throughput-cap"}
    cap = found["volume-throughput-cap"]
    assert cap.bottleneck == "volume_throughput"
    assert cap.limit == 1_000 * MIB
    assert cap.observed == pytest.approx(1_000 * MIB, rel=0.001)
    assert "1,000 MiB/s volume cap" in cap.summary
    assert findings_for(result, instance) == {}
    api = account.instance_type("r6i.8xlarge")
    assert cap.next_bottleneck is not None
    assert cap.next_bottleneck.bottleneck == "instance_throughput"
    assert cap.next_bottleneck.resource_id == instance
    assert cap.next_bottleneck.limit == api.maximum_throughput_bps


def test_incident_4_step_2_instance_throughput_cap(batch_job) -> None:  # type: ignore[no-untyped-def]
    account, ids, result = batch_job
    instance, volume = ids["r6in.8xlarge"]
    found = findings_for(result, instance)
    assert set(found) == {"instance-throughput-cap"}
    cap = found["instance-throughput-cap"]
    api = account.instance_type("r6in.8xlarge")
    assert cap.bottleneck == "instance_throughput"
    assert cap.limit == api.maximum_throughput_bps
    assert cap.observed == pytest.approx(api.maximum_throughput_bps, rel=0.001)
    # Basic monitoring: 5-minute sums, divided by 300.
    assert cap.evidence["period_seconds"] == 300
    assert findings_for(result, volume) == {}
    assert cap.next_bottleneck is not None
    assert cap.next_bottleneck.bottleneck == "volume_iops"
    assert cap.next_bottleneck.resource_id == volume
    assert cap.next_bottleneck.limit == 32_000


def test_incident_4_step_3_io2_volume_iops_cap(batch_job) -> None:  # type: ignore[no-untyped-def]
    account, ids, result = batch_job
    instance, volume = ids["m6in.12xlarge"]
    found = findings_for(result, volume)
    assert set(found) == {"volume-iops-cap"}
    cap = found["volume-iops-cap"]
    assert cap.bottleneck == "volume_iops"
    assert cap.limit == 32_000
    assert cap.observed == pytest.approx(32_000, rel=0.001)
    assert findings_for(result, instance) == {}
    # Provisioning more IOPS runs into io2's 4,000 MiB/s before the instance's limit.
    api = account.instance_type("m6in.12xlarge")
    assert cap.next_bottleneck is not None
    assert cap.next_bottleneck.bottleneck == "volume_throughput"
    assert cap.next_bottleneck.limit == 4_000 * MIB
    assert api.maximum_throughput_bps > 4_000 * MIB


def test_incident_3_rds_replica_drains_every_day_and_memory_is_the_cause(aws: None) -> None:
    """A MySQL replica on gp2 200 GiB: every morning reads drain BurstBalance to 0; its
    working set (170 GB) does not fit in db.r5.xlarge's 32 GiB."""
    account = Account()
    day = account.daily_replica("db.r5.xlarge")
    morning = day + timedelta(days=1, hours=9)

    # 20 minutes into the busy hours: 3,000 IOPS (the burst ceiling) drain 2,400 credits a
    # second from a bucket that refilled overnight.
    now = morning + timedelta(minutes=20) + SEEN
    found = findings_for(analyze(account, now), "orders-replica")
    # (Memory pressure needs half an hour of it: not yet.)
    assert set(found) == {"rds-burst-exhaustion", "rds-iops-cap"}
    forecast = found["rds-burst-exhaustion"]
    assert forecast.bottleneck == "burst_credits"
    assert forecast.resource.resource_type == "db_instance"
    assert forecast.limit == 600  # the baseline of 200 GiB of gp2
    empty_at = morning + timedelta(seconds=5_400_000 / 2_400)
    assert forecast.seconds_to_empty == pytest.approx((empty_at - now).total_seconds(), abs=60)
    assert found["rds-iops-cap"].bottleneck == "volume_iops"
    # Growing 200 GiB of MySQL storage past 400 GiB restripes it: the fix says so.
    [grow] = [r for r in forecast.remedies if r.action.startswith("Grow the allocated storage")]
    assert "from 400 GiB RDS spreads mysql storage over four volumes, a long, I/O-heavy" in (
        grow.action
    )

    # An hour later the bucket is empty and reads are throttled at the 600 IOPS baseline.
    found = findings_for(
        analyze(account, morning + timedelta(hours=1, minutes=20) + SEEN), "orders-replica"
    )
    assert set(found) == {"rds-burst-credits-exhausted", "rds-memory-pressure"}
    assert found["rds-burst-credits-exhausted"].observed == pytest.approx(600, rel=0.01)
    memory = found["rds-memory-pressure"]
    assert memory.bottleneck == "memory"
    assert "A class with more memory, not faster storage" in memory.summary
    # Twice the memory, cheapest first: Graviton's db.r6g.2xlarge before db.r5.2xlarge.
    assert [r.change.after["instance_type"] for r in memory.remedies if r.change] == [
        "db.r6g.2xlarge",
        "db.r5.2xlarge",
        "db.r6i.2xlarge",
    ]

    # In the afternoon the bucket refills: nothing drains, nothing fires, though it was empty
    # two hours ago and will be again tomorrow.
    afternoon = analyze(account, morning + timedelta(hours=6) + SEEN)
    assert findings_for(afternoon, "orders-replica") == {}
    assert row(afternoon, "orders-replica")["seconds_to_empty"] is None
