"""Fixes past a volume type's own ceiling, replayed through moto: another type, or striping;
never a fix that changes nothing.

io1 carries 256 KiB a second per IOPS up to 500 MiB/s: at 20,000 IOPS it is throughput-bound
and "Provision more IOPS" below 32,000 buys nothing; io2 carries 4,000 MiB/s at the same
IOPS, for the same price. A gp3 volume at its 80,000 IOPS and 2,000 MiB/s used to be advised
"Provision 80,000 IOPS, 2,000 MiB/s" at $0.00.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.live.cycle import Analyzer
from analyzer.model.findings import Finding
from analyzer.model.units import KIB
from analyzer.sim.workloads import Demand, constant
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def _findings(
    instance_type: str, volume_type: str, size: int, load: Demand, **extra: int
) -> list[Finding]:
    account = Account()
    instance = account.instance(instance_type)
    volume = account.volume(volume_type, size, instance, **extra)
    account.put(account.simulation(instance, {volume: load}, START).run(40))
    result = Analyzer(settings.load({"region": [account.region]}), rules.load()).run(
        START + timedelta(minutes=40, seconds=130)
    )
    return [f for f in result.findings if f.resource.resource_id == volume]


def test_io1_pinned_at_500_mib_per_second_is_offered_io2_at_the_same_price(aws: None) -> None:
    [cap] = _findings(
        "r6i.8xlarge", "io1", 1_000, Demand(constant(5_000), io_size_bytes=128 * KIB), Iops=20_000
    )
    assert cap.rule == "volume-throughput-cap"
    [io2] = [r for r in cap.remedies if r.action.startswith("Move to io2 with 20,000 IOPS")]
    assert "(4,000 MiB/s)" in io2.action
    assert io2.monthly_delta == pytest.approx(0.0)  # io2 costs what io1 does up to 32,000 IOPS
    # io1 itself: beyond 500 MiB/s only above 32,000 IOPS, at 16 KiB per IOPS.
    [more] = [r for r in cap.remedies if r.action.startswith("Provision")]
    assert more.action.startswith("Provision 64,000 IOPS and grow to 1,280 GiB")
    assert all(r.monthly_delta != 0 or r is io2 for r in cap.remedies)


def test_gp3_at_its_ceiling_is_offered_io2_or_striping_never_what_it_has(aws: None) -> None:
    """gp3 at 80,000 IOPS and 2,000 MiB/s (since 2025) on an instance of 100 Gbps."""
    [cap, *_] = _findings(
        "r6in.32xlarge",
        "gp3",
        4_000,
        Demand(constant(100_000), io_size_bytes=16 * KIB),
        Iops=80_000,
        Throughput=2_000,
    )
    assert cap.rule == "volume-iops-cap"
    actions = [r.action for r in cap.remedies]
    assert not [a for a in actions if a.startswith("Provision 80,000 IOPS, 2,000 MiB/s")]
    [io2] = [a for a in actions if a.startswith("Move to io2 with ")]
    assert int(io2.split()[4].replace(",", "")) > 80_000 and "needs a Nitro instance" in io2
    [stripe] = [a for a in actions if a.startswith("Stripe over 2 gp3 volumes")]
    assert "binds" not in io2  # gp3's own 2,000 MiB/s is gone
    # A striped set meets the instance's limits next (r6in.32xlarge: 100 Gbps).
    assert "'s EBS limits bind: 400,000 IOPS, 12,500 MB/s" in stripe
    assert all(r.monthly_delta != 0 for r in cap.remedies)


def test_a_fix_says_what_it_changes_in_fields_a_script_reads(aws: None) -> None:
    """The JSON report's remedies carry the change: from, to, and the limits after it; the
    state file keeps it."""
    from analyzer.analyze.alerts import AlertBook
    from analyzer.deliver import statefile
    from analyzer.deliver.records import finding_row

    [cap] = _findings(
        "r6i.8xlarge", "io1", 1_000, Demand(constant(5_000), io_size_bytes=128 * KIB), Iops=20_000
    )
    [io2] = [r for r in finding_row(cap)["remedies"] if r["action"].startswith("Move to io2")]
    assert io2["change"] == {
        "resource_type": "volume",
        "resource_id": cap.resource.resource_id,
        "from": {"volume_type": "io1", "size_gib": 1_000, "iops": 20_000, "throughput_mibps": None},
        "to": {
            "volume_type": "io2",
            "size_gib": 1_000,
            "iops": 20_000,
            "throughput_mibps": None,
            "iops_limit": 20_000.0,
            "throughput_limit_mibps": 4_000.0,
        },
    }
    book = AlertBook(3600, 300)
    book.update(START, [cap], [])
    [kept] = statefile.decode(statefile.encode(list(book)))
    assert kept.finding.remedies == cap.remedies
