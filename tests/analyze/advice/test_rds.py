"""RDS fixes: classes RDS offers the engine, and storage sized and priced."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyze import prices
from analyzer.analyze.advice.rds import _gp2_fixes, _offered
from analyzer.analyze.catalog import Catalog
from analyzer.model.findings import Bottleneck, Finding, Severity
from analyzer.model.resources import DbInstance, ResourceRef, ResourceType
from analyzer.model.units import Unit

DEMO = Catalog(prices.load(prices.DEMO))


def db(engine: str = "mysql", size: int = 200) -> DbInstance:
    return DbInstance("orders", "us-east-1", engine, "db.m5.2xlarge", "gp2", size, "available")


def test_without_the_orderable_list_graviton_only_for_the_open_source_engines():
    assert "r6g" in _offered(db("mysql"), DEMO, memory_only=True).families  # type: ignore[operator]
    sqlserver = _offered(db("sqlserver-se"), DEMO, memory_only=True).families
    assert sqlserver is not None
    assert "r6g" not in sqlserver and "x2g" not in sqlserver and "r6i" in sqlserver


def drain(observed: float) -> Finding:
    return Finding(
        "rds-burst-exhaustion",
        Severity.WARNING,
        ResourceRef(ResourceType.DB_INSTANCE, "orders", "us-east-1"),
        Bottleneck.BURST_CREDITS,
        "draining",
        observed=observed,
        limit=600,
        unit=Unit.IOPS,
    )


def test_gp3_below_the_striping_threshold_is_grown_to_it_where_3000_iops_are_too_few():
    gp3, grow = _gp2_fixes(drain(2_550), db(), DEMO)
    # 2,550 IOPS with a fifth more room: more than the 3,000 gp3 gives MySQL below 400 GiB.
    assert gp3.action.startswith("Move the storage to gp3 and grow to 400 GiB")
    assert gp3.change is not None and gp3.change.after == {
        "storage_type": "gp3",
        "allocated_gib": 400,
    }
    assert gp3.monthly_delta == 23.00  # RDS gp2 and gp3: $0.115 a GiB-month
    assert grow.action.startswith("Grow the allocated storage to 1,020 GiB")
    small, _ = _gp2_fixes(drain(1_000), db(), DEMO)
    assert small.action.startswith("Move the storage to gp3 with ModifyDBInstance")
    assert small.monthly_delta == 0.0


def test_gp2_storage_is_grown_only_as_far_as_rds_storage_model_carries_it():
    """RDS gp2 reads its baseline from the storage model: striped MySQL of 1,201 GiB is four
    volumes of 300 GiB (3,600 IOPS), so 3,601 IOPS need 1,204 GiB; SQL Server keeps one volume,
    whose baseline stops at 16,000 IOPS, so no size carries 20,000."""
    _, grow = _gp2_fixes(drain(3_601 / 1.2), db(size=1_000), DEMO)
    assert grow.action.startswith("Grow the allocated storage to 1,204 GiB")
    assert "3,612 IOPS of baseline" in grow.action
    fixes = _gp2_fixes(drain(20_000 / 1.2), db("sqlserver-se", 1_000), DEMO)
    assert not [f for f in fixes if f.action.startswith("Grow")]


def test_gp3_at_or_past_the_striping_threshold_says_the_12000_iops_it_includes():
    """An 800 GiB MySQL replica read '3,000 IOPS without credits (12,000 from 400 GiB)'."""
    gp3, _ = _gp2_fixes(drain(2_550), db(size=800), DEMO)
    assert gp3.action.startswith("Move the storage to gp3 with ModifyDBInstance")
    assert gp3.action.endswith(": 12,000 IOPS without credits (mysql from 400 GiB)")
    small, _ = _gp2_fixes(drain(100), db(size=200), DEMO)
    assert small.action.endswith(": 3,000 IOPS without credits (12,000 from 400 GiB on mysql)")


def test_a_falling_daily_minimum_sizes_no_storage_on_its_percent():
    """A trend finding's `observed` is a balance in percent: read as IOPS it sized the
    replica's storage at 801 GiB, 'no credits needed'. Only gp3 is offered."""
    trend = replace(drain(7.0), unit=Unit.PERCENT, rule="burst-daily-minimum-falling")
    (gp3,) = _gp2_fixes(trend, db(size=800), DEMO)
    assert gp3.action.endswith(": 12,000 IOPS without credits (mysql from 400 GiB)")
