"""io1 and io2 off Nitro, replayed through moto: AWS delivers at most 32,000 IOPS to an
instance not built on Nitro, whatever is provisioned. An io2 volume with 64,000 IOPS on an
m4.16xlarge (Xen) was given its full 64,000, so a workload held at 32,000 showed half its
limit and no finding."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from analyzer import settings
from analyzer.analyze import rules
from analyzer.deliver.rows import resource_row
from analyzer.live.cycle import Analyzer
from analyzer.model.units import KIB
from analyzer.sim.workloads import Demand, constant
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
XEN_MAX_IOPS = 32_000
"""AWS's Provisioned IOPS SSD documentation: at most 32,000 IOPS on instances not built on
Nitro."""


def test_io2_on_a_xen_instance_is_capped_at_32000_iops(aws: None) -> None:
    account = Account()
    instance = account.instance("m4.16xlarge")
    assert account.instance_type("m4.16xlarge").nitro is False
    volume = account.volume("io2", 2_000, instance, Iops=64_000)
    demand = Demand(constant(50_000), io_size_bytes=16 * KIB)
    account.put(account.simulation(instance, {volume: demand}, START).run(40))
    config = settings.load({"region": [account.region]})
    result = Analyzer(config, rules.load()).run(START + timedelta(minutes=40, seconds=130))
    row = resource_row(result.reading(account.region, volume))
    assert row["iops_limit"] == XEN_MAX_IOPS
    assert row["iops"] == XEN_MAX_IOPS
    [finding] = [f for f in result.findings if f.resource.resource_id == volume]
    assert finding.rule == "volume-iops-cap"
    assert "32,000 IOPS volume cap" in finding.summary
    [fix] = finding.remedies
    assert fix.action.startswith(f"Move {instance} to an instance type built on Nitro")
    assert "64,000 IOPS provisioned" in fix.action


def test_with_the_regions_types_the_nitro_types_are_named_and_priced(aws: None) -> None:
    from analyzer.analyze import prices

    account = Account()
    instance = account.instance("m4.16xlarge")
    volume = account.volume("io2", 2_000, instance, Iops=64_000)
    demand = Demand(constant(50_000), io_size_bytes=16 * KIB)
    account.put(account.simulation(instance, {volume: demand}, START).run(40))
    config = settings.load(
        {"region": [account.region], "prices": str(prices.DEMO), "pricing_api": False}
    )
    analyzer = Analyzer(config, rules.load()).offering()
    result = analyzer.run(START + timedelta(minutes=40, seconds=130))
    [finding] = [f for f in result.findings if f.resource.resource_id == volume]
    first = finding.remedies[0]
    assert first.change is not None and first.change.resource_id == instance
    info = account.instance_type(first.change.after["instance_type"])
    assert info.nitro and (info.baseline_iops or 0) >= 64_000
    assert "delivers the 64,000 IOPS provisioned (and already paid for)" in first.action
