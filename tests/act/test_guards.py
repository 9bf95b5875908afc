"""The guards, each a one-line reason: AWS's rolling day of modifications, the scope's tag and
its filters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from analyzer.act.guards import Policy, volume_limits
from analyzer.model.resources import Modification, Volume

REGION = "us-east-1"


NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)


def _mod(hours_ago: float, state: str = "completed") -> Modification:
    return Modification(state, NOW - timedelta(hours=hours_ago), 100, "gp3 50 GiB")


@pytest.mark.parametrize(
    ("mods", "says"),
    [
        ((), None),
        ((_mod(1), _mod(5), _mod(9)), None),
        # The fifth in 24 h: possible once the oldest of the four is a day old.
        (
            (_mod(1), _mod(5), _mod(9), _mod(20)),
            "the next becomes possible at 2026-11-28 16:00 UTC",
        ),
        ((_mod(1), _mod(5), _mod(9), _mod(25)), None),
        ((_mod(1), _mod(5), _mod(9), _mod(20, "failed")), None),
        ((_mod(0.1, "optimizing"),), "is still optimizing"),
    ],
)
def test_aws_s_four_modifications_in_a_rolling_day_each_after_the_last_completed(
    mods, says
) -> None:
    volume = Volume("vol-1", REGION, "gp2", 50, "in-use", modifications=mods)
    reason = volume_limits(volume, NOW)
    assert (reason is None) if says is None else (says in (reason or ""))


@pytest.mark.parametrize(
    ("tags", "scope", "allowed"),
    [
        ({"ebs-analyzer/apply": "allowed"}, (), True),
        ({"ebs-analyzer/apply": "yes"}, (), False),
        ({}, (), False),
        ({"team": "db"}, ("team=db",), True),
        ({"team": "db"}, ("team=db", "env=prod"), False),  # every filter, as --tag reads them
        ({"team": "db", "env": "prod"}, ("team=db", "env=prod"), True),
        ({"team": "web"}, ("team=db",), False),
    ],
)
def test_a_resource_is_in_scope_by_its_tag_or_every_filter_of_the_scope(tags, scope, allowed):
    assert Policy("ebs-analyzer/apply=allowed", scope).allows(tags) is allowed


def test_aws_s_latest_modification_and_those_made_here_are_counted_once_each() -> None:
    """DescribeVolumesModifications gives only a volume's latest modification (Amazon EC2 API
    Reference): the ones this analyzer made before it are counted from its own record."""
    latest = _mod(1)
    volume = Volume("vol-1", REGION, "gp2", 50, "in-use", modifications=(latest,))
    made_here = [
        latest.started + timedelta(seconds=20),
        NOW - timedelta(hours=5),
        NOW - timedelta(hours=9),
        NOW - timedelta(hours=20),
    ]
    assert "modified 4 times" in (volume_limits(volume, NOW, made_here) or "")
    assert volume_limits(volume, NOW, made_here[:3]) is None


def test_rds_storage_waits_for_changes_pending_for_the_maintenance_window() -> None:
    from analyzer.act.guards import db_limits
    from analyzer.model.resources import DbInstance

    db = DbInstance("orders", REGION, "mysql", "db.m5.large", "gp2", 200, "available")
    assert db_limits(db) is None
    # ApplyImmediately applies "any pending modifications" with the request (Amazon RDS API
    # Reference, ModifyDBInstance): a class change queued for the window would run now.
    pending = DbInstance(
        "orders",
        REGION,
        "mysql",
        "db.m5.large",
        "gp2",
        200,
        "available",
        pending=("DBInstanceClass",),
    )
    assert "changes pending for its maintenance window (DBInstanceClass)" in (
        db_limits(pending) or ""
    )
    busy = DbInstance("orders", REGION, "mysql", "db.m5.large", "gp2", 200, "storage-optimization")
    assert "is storage-optimization" in (db_limits(busy) or "")
