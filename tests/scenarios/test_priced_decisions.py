"""Decisions, priced, replayed through moto: each binding limit ends in concrete options that
lift it, with their prices, in the text report, the JSON report and Slack.

The instance types come from moto's DescribeInstanceTypes (AWS's own figures); the prices
from the demo's snapshot, pinned here where a test relies on them.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import prices, rules
from analyzer.analyze.alerts import AlertBook
from analyzer.deliver import report, slack
from analyzer.live.cycle import Analyzer, CycleResult
from analyzer.model.findings import Finding
from analyzer.model.units import KIB
from analyzer.sim.workloads import Demand, constant
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
SETTLE = timedelta(seconds=130)
HOURS = 730  # a month of on-demand hours
DEMO = prices.load(prices.DEMO)


def analyze(account: Account, now: datetime) -> CycleResult:
    config = settings.load(
        {"region": [account.region], "prices": str(prices.DEMO), "pricing_api": False}
    )
    return Analyzer(config, rules.load()).offering().run(now)


def finding(result: CycleResult, resource_id: str, rule: str) -> Finding:
    [found] = [
        f for f in result.findings if f.resource.resource_id == resource_id and f.rule == rule
    ]
    return found


def everywhere(result: CycleResult, found: Finding, shown: int = 2) -> None:
    """The first `shown` options, with their prices, in text, JSON and Slack."""
    options = found.remedies[:shown]
    assert options and all(r.monthly_cost is not None for r in options)
    text = report.render(result.snapshot, result.readings, result.findings, "text")
    document = json.loads(report.render(result.snapshot, result.readings, result.findings, "json"))
    [row] = [
        f
        for f in document["findings"]
        if f["resource_id"] == found.resource.resource_id and f["rule"] == found.rule
    ]
    book = AlertBook(3600.0, 300.0)
    book.update(result.snapshot.generated_at, [found], [])
    [(_, message)] = slack.messages(book.owed(), result.snapshot.generated_at)
    posted = json.dumps(message, ensure_ascii=False)
    for remedy, listed in zip(options, row["remedies"], strict=False):
        assert f"fix: {remedy.text()}" in text
        assert remedy.text() in posted
        assert listed["action"] == remedy.action
        assert listed["monthly_cost"] == remedy.monthly_cost
        assert listed["changes"], "a program can read what it changes"


@pytest.fixture(scope="module")
def batch_job(aws_module: None) -> tuple[dict[str, tuple[str, str]], CycleResult]:
    """Incident 4: the same batch job on three instance and volume combinations."""
    account = Account()
    job = Demand(constant(60_000), io_size_bytes=112 * KIB, read_fraction=0.6)
    steps = {
        "r6i.8xlarge": ("gp3", {"Iops": 16_000, "Throughput": 1_000}, False),
        "r6in.8xlarge": ("io2", {"Iops": 32_000}, False),
        "m6in.12xlarge": ("io2", {"Iops": 32_000}, True),
    }
    ids: dict[str, tuple[str, str]] = {}
    for instance_type, (volume_type, extra, detailed) in steps.items():
        instance = account.instance(instance_type, detailed=detailed)
        volume = account.volume(volume_type, 2_000, instance, **extra)
        ids[instance_type] = (instance, volume)
        sim = account.simulation(instance, {volume: job}, START, detailed=detailed)
        account.put(sim.run(60))
    return ids, analyze(account, START + timedelta(minutes=60) + SETTLE)


def test_the_demo_snapshot_prices_incident_4_as_aws_lists_them() -> None:
    # us-east-1 Linux on-demand: m6in.12xlarge is 20 % cheaper than r6in.12xlarge.
    assert DEMO.instances["m6in.12xlarge"] == 3.34152
    assert DEMO.instances["r6in.12xlarge"] == 4.18392
    assert DEMO.instances["r6in.8xlarge"] == 2.78928
    assert DEMO.db_classes["mysql"]["db.m5.2xlarge"] == 0.684
    assert DEMO.db_classes["mysql"]["db.r6g.2xlarge"] == 0.899


def test_incident_4_step_1_the_volume_alone_buys_a_fifth_so_both_are_offered(batch_job) -> None:  # type: ignore[no-untyped-def]
    ids, result = batch_job
    instance, volume = ids["r6i.8xlarge"]
    cap = finding(result, volume, "volume-throughput-cap")
    first, both = cap.remedies[:2]
    assert first.action.startswith("Provision 16,000 IOPS, 1,200 MiB/s")
    assert "the instance throughput limit of" in first.action
    # Both at once: gp3 at its 2,000 MiB/s and a type that carries twice the job.
    assert both.action.startswith("Both at once, sized for 2.00× today's rate")
    assert "Provision 18,500 IOPS, 2,000 MiB/s" in both.action
    [volume_change, instance_change] = both.changes
    assert volume_change.after["throughput_mibps"] == 2_000
    assert instance_change.resource_id == instance
    assert instance_change.after["ebs_throughput_mbps"] >= 2 * 1_000 * 1.048576
    # gp3: $0.005 per IOPS above 3,000, $0.04 per MiB/s above 125.
    volume_delta = 2_500 * 0.005 + 1_000 * 0.04
    assert both.monthly_delta == pytest.approx(volume_delta + instance_change_delta(both), abs=0.01)
    everywhere(result, cap)


def instance_change_delta(remedy) -> float:  # type: ignore[no-untyped-def]
    """The instance half of a joint fix's price difference, from the snapshot."""
    [_, moved] = remedy.changes
    before = DEMO.instances[moved.before["instance_type"]]
    after = DEMO.instances[moved.after["instance_type"]]
    return round((after - before) * HOURS, 2)


def test_incident_4_step_2_names_m6in_cheaper_than_r6in_marked_for_its_memory(batch_job) -> None:  # type: ignore[no-untyped-def]
    ids, result = batch_job
    instance, volume = ids["r6in.8xlarge"]
    cap = finding(result, instance, "instance-throughput-cap")
    named = {r.change.after["instance_type"]: r for r in cap.remedies if len(r.changes) == 1}
    m6in, r6in = named["m6in.12xlarge"], named["r6in.12xlarge"]
    assert m6in.monthly_cost == pytest.approx(3.34152 * HOURS, abs=0.01)
    assert r6in.monthly_cost == pytest.approx(4.18392 * HOURS, abs=0.01)
    assert m6in.monthly_delta == pytest.approx((3.34152 - 2.78928) * HOURS, abs=0.01)
    # Without the CloudWatch agent the memory in use is unknown: the cheaper type with less
    # memory is offered, says so, and goes after those that keep today's 256 GiB.
    order = [r.change.after["instance_type"] for r in cap.remedies if len(r.changes) == 1]
    assert order[0] == "r6in.12xlarge" and order[-1] == "m6in.12xlarge"
    assert m6in.action.startswith(f"Move {instance} to m6in.12xlarge (less memory): EBS 4,688")
    assert "192 GiB, 48 vCPUs (today 256 GiB, 32)" in m6in.action
    assert m6in.action.endswith(
        "; memory in use unknown: publish mem_used_percent with the CloudWatch agent to check"
    )
    assert "(less memory)" not in r6in.action
    assert m6in.change.after["memory_gib"] == 192 and m6in.change.before["memory_gib"] == 256
    # The io2 volume binds 17 % further on: the joint fix raises it with the instance.
    [both] = [r for r in cap.remedies if len(r.changes) == 2]
    assert both.action.startswith("Both at once, sized for 1.34× today's rate")
    assert both.changes[0].resource_id == volume
    assert both.changes[0].after["iops"] > 32_000
    assert both.changes[1].after["ebs_throughput_mbps"] >= 1.34 * 3_125
    everywhere(result, cap, shown=3)


def test_incident_4_step_3_the_io2_volume_is_raised_within_its_own_ceiling(batch_job) -> None:  # type: ignore[no-untyped-def]
    ids, result = batch_job
    _, volume = ids["m6in.12xlarge"]
    cap = finding(result, volume, "volume-iops-cap")
    # Up to io2's 4,000 MiB/s at 112 KiB: 37,000 IOPS, 5,000 more at $0.0455 (32,001-64,000).
    first = cap.remedies[0]
    assert first.action.startswith("Provision 37,000 IOPS")
    assert first.monthly_delta == pytest.approx(5_000 * 0.0455)
    everywhere(result, cap, shown=1)


def test_an_instance_ebs_burst_running_out_names_types_whose_baseline_carries_it(
    aws: None,
) -> None:
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp3", 500, instance, Iops=3_000, Throughput=500)
    load = Demand(constant(1_100), io_size_bytes=256 * KIB)
    account.put(account.simulation(instance, {volume: load}, START).run(40))
    result = analyze(account, START + timedelta(minutes=40) + SETTLE)
    burst = finding(result, instance, "instance-ebs-burst-exhaustion")
    first = burst.remedies[0]
    # m5.large sustains 81.25 MB/s; the job moves 288 MB/s: a baseline of 346 MB/s at least.
    assert first.change is not None
    assert first.change.after["ebs_throughput_mbps"] >= 1.2 * 288
    assert first.monthly_delta == pytest.approx(
        (DEMO.instances[first.change.after["instance_type"]] - 0.096) * HOURS, abs=0.01
    )
    everywhere(result, burst)


def test_incident_3_memory_pressure_on_db_m5_2xlarge_offers_graviton_with_twice_the_memory(
    aws: None,
) -> None:
    account = Account()
    day = account.daily_replica("db.m5.2xlarge")
    now = day + timedelta(days=1, hours=10, minutes=20) + SETTLE
    result = analyze(account, now)
    memory = finding(result, "orders-replica", "rds-memory-pressure")
    first = memory.remedies[0]
    assert first.change is not None
    assert first.change.after["instance_type"] == "db.r6g.2xlarge"
    assert first.change.after["memory_gib"] == 64 and first.change.before["memory_gib"] == 32
    assert first.monthly_delta == pytest.approx((0.899 - 0.684) * HOURS, abs=0.01)
    assert "64 GiB, 8 vCPUs (today 32 GiB, 8)" in first.action
    everywhere(result, memory)
    # The storage fixes of the same database are priced too (RDS storage, Single-AZ).
    drained = finding(result, "orders-replica", "rds-burst-credits-exhausted")
    assert all(r.monthly_cost is not None for r in drained.remedies)


@pytest.mark.parametrize(
    ("instance_type", "volume_type", "size", "load", "extra", "rule"),
    [
        (
            "r6i.8xlarge",
            "io1",
            1_000,
            Demand(constant(5_000), io_size_bytes=128 * KIB),
            {"Iops": 20_000},
            "volume-throughput-cap",
        ),
        (
            "r6in.32xlarge",
            "gp3",
            4_000,
            Demand(constant(100_000), io_size_bytes=16 * KIB),
            {"Iops": 80_000, "Throughput": 2_000},
            "volume-iops-cap",
        ),
    ],
    ids=["io1-at-500-mib-per-second", "gp3-at-its-ceiling"],
)
def test_a_volume_types_own_ceiling_ends_in_priced_options_everywhere(
    aws: None, instance_type, volume_type, size, load, extra, rule
) -> None:  # type: ignore[no-untyped-def]
    account = Account()
    instance = account.instance(instance_type)
    volume = account.volume(volume_type, size, instance, **extra)
    account.put(account.simulation(instance, {volume: load}, START).run(40))
    result = analyze(account, START + timedelta(minutes=40) + SETTLE)
    cap = finding(result, volume, rule)
    # Every option changes something (io1 → io2 at the same price lifts 500 MiB/s to 4,000).
    assert all(
        c.before != {k: c.after.get(k) for k in c.before} for r in cap.remedies for c in r.changes
    )
    everywhere(result, cap)
