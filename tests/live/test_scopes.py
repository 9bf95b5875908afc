"""Every scope watched, over fakes of the Describe boundary: which ones, each connected once,
and each account's inventory taken whole, kept while it fails, dark where it never answered."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from analyzer import settings
from analyzer.collect.accounts import Account
from analyzer.collect.regions import Region
from analyzer.errors import AwsAccessError
from analyzer.live.scopes import Scopes
from analyzer.live.watched import Watched
from analyzer.model.resources import Volume
from tests.fakes import FakeDescriber, FakeMetricData

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
PROD, STAGING = "111111111111", "222222222222"


@dataclass
class Refusing(FakeDescriber):
    """A scope whose DescribeVolumes is refused while it is among `refused`."""

    scope: str = ""
    refused: set[str] = field(default_factory=set)

    def volumes(self) -> list[Volume]:
        if self.scope in self.refused:
            raise AwsAccessError("ec2:DescribeVolumes: AccessDenied: no", "AccessDenied")
        return self.found_volumes


def _volume(volume_id: str, region: str = "us-east-1") -> Volume:
    return Volume(volume_id, region, "gp3", 100, "in-use")


def _metrics() -> FakeMetricData:
    return FakeMetricData(lambda _query, _start: None)


def test_without_accounts_each_region_is_a_scope_of_the_daemons_own_account() -> None:
    connected: list[str] = []

    def connect(region: str) -> Region:
        connected.append(region)
        found = FakeDescriber(region, found_volumes=[_volume(f"vol-{region}", region)])
        return Region(region, found, _metrics())

    config = settings.load({"region": ["us-east-1", "eu-west-1", "us-east-1"]})
    scopes = Scopes(config, Watched(config), connect)
    assert scopes.targets() == [(None, "us-east-1"), (None, "eu-west-1")]
    first = scopes.refresh(NOW)
    assert {w: [v.volume_id for v in i.volumes] for w, i in first.items()} == {
        "us-east-1": ["vol-us-east-1"],
        "eu-west-1": ["vol-eu-west-1"],
    }
    second = scopes.refresh(NOW)
    assert second is scopes.inventories() and second is not first  # swapped in whole
    assert scopes.at("eu-west-1").name == "eu-west-1"
    assert connected == ["us-east-1", "eu-west-1"]  # each region connected once


def _two_accounts() -> tuple[Scopes, set[str]]:
    """Prod in two regions, staging in the top-level one; the scopes refused, none yet."""
    config = settings.load(
        {
            "region": ["us-east-1"],
            "accounts": [
                {"id": PROD, "name": "prod", "regions": ["us-east-1", "eu-west-1"]},
                {"id": STAGING, "name": "staging"},
            ],
        }
    )
    refused: set[str] = set()

    def connect_account(account: Account, region: str) -> Region:
        found = Refusing(
            region,
            found_volumes=[_volume(f"vol-{account.id}", region)],
            scope=f"{account.id}/{region}",
            refused=refused,
        )
        return Region(region, found, _metrics(), account)

    return Scopes(config, Watched(config), connect_account=connect_account), refused


def test_an_account_is_read_in_its_own_regions_else_the_top_level_ones() -> None:
    scopes, _ = _two_accounts()
    assert [(a.id if a else None, r) for a, r in scopes.targets()] == [
        (PROD, "us-east-1"),
        (PROD, "eu-west-1"),
        (STAGING, "us-east-1"),
    ]
    found = scopes.refresh(NOW)
    assert set(found) == {f"{PROD}/us-east-1", f"{PROD}/eu-west-1", f"{STAGING}/us-east-1"}
    assert found[f"{PROD}/eu-west-1"].account_name == "prod"
    assert scopes.dark == frozenset()


def test_an_account_that_fails_keeps_what_it_had_and_is_dark_where_it_had_nothing() -> None:
    scopes, refused = _two_accounts()
    refused.add(f"{PROD}/eu-west-1")  # one region refused: the whole account fails
    found = scopes.refresh(NOW)
    assert set(found) == {f"{STAGING}/us-east-1"}
    assert scopes.dark == {f"{PROD}/us-east-1", f"{PROD}/eu-west-1"}
    health = scopes.accounts.health[PROD]
    assert health.outcome == "denied" and health.retry_at == NOW + timedelta(seconds=60)
    assert scopes.retry(NOW) == []  # not due yet
    refused.clear()
    assert scopes.retry(NOW + timedelta(seconds=60)) == [PROD]
    assert set(scopes.inventories()) == {
        f"{STAGING}/us-east-1",
        f"{PROD}/us-east-1",
        f"{PROD}/eu-west-1",
    }
    assert scopes.dark == frozenset() and scopes.accounts.health[PROD].up
    before = scopes.inventories()[f"{PROD}/us-east-1"]
    refused.add(f"{PROD}/us-east-1")
    scopes.refresh(NOW + timedelta(minutes=5))
    assert scopes.inventories()[f"{PROD}/us-east-1"] is before  # kept: its alerts hold
    assert scopes.dark == frozenset()


def test_a_refresh_fails_only_when_every_account_does() -> None:
    scopes, refused = _two_accounts()
    scopes.refresh(NOW)
    refused.update(scopes.inventories())
    with pytest.raises(AwsAccessError):
        scopes.refresh(NOW + timedelta(minutes=5))
    assert len(scopes.inventories()) == 3  # the last refresh's, untouched
