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
