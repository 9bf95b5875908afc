"""The accounts to watch, against moto's Organizations and STS: members with their OUs and tags,
the filters, and a member session that assumes its role through botocore and refreshes it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import botocore.credentials
import botocore.session
import pytest
from moto import mock_aws

from analyzer.collect.accounts import (
    SESSION_NAME,
    Filter,
    Member,
    _ous_on_paths,
    assumed_session,
    kept,
    members,
    own_id,
    role_arn,
)

REGION = "us-east-1"


@pytest.fixture
def org(aws: None) -> Iterator[dict[str, Any]]:
    """An Organization: `prod` in OU prod/db, `staging` in OU staging, `sandbox` under the root
    and closed `old`; the management account is moto's 123456789012."""
    with mock_aws():
        client = boto3.client("organizations", region_name=REGION)
        client.create_organization(FeatureSet="ALL")
        root = client.list_roots()["Roots"][0]["Id"]

        def ou(parent: str, name: str) -> str:
            made = client.create_organizational_unit(ParentId=parent, Name=name)
            return str(made["OrganizationalUnit"]["Id"])

        prod = ou(root, "prod")
        db = ou(prod, "db")
        staging = ou(root, "staging")

        def account(name: str, parent: str | None, tags: dict[str, str]) -> str:
            made = client.create_account(
                AccountName=name,
                Email=f"{name}@example.com",
                Tags=[{"Key": k, "Value": v} for k, v in tags.items()],
            )
            account_id = str(made["CreateAccountStatus"]["AccountId"])
            if parent is not None:
                client.move_account(
                    AccountId=account_id, SourceParentId=root, DestinationParentId=parent
                )
            return account_id

        ids = {
            "prod": account("prod", db, {"team": "db", "env": "prod"}),
            "staging": account("staging", staging, {"team": "db", "env": "staging"}),
            "sandbox": account("sandbox", None, {}),
            "old": account("old", None, {}),
        }
        client.close_account(AccountId=ids["old"])
        yield {"client": client, "ids": ids, "ous": {"prod": prod, "db": db, "staging": staging}}


def test_members_are_the_active_accounts_with_their_ous_nearest_first_and_tags(org) -> None:
    found = {m.name: m for m in members(org["client"])}
    assert set(found) == {"master", "prod", "staging", "sandbox"}  # closed `old` left out
    ous = org["ous"]
    assert found["prod"].ous == (ous["db"], ous["prod"])
    assert found["staging"].ous == (ous["staging"],)
    assert found["sandbox"].ous == ()
    assert found["prod"].tags == {"team": "db", "env": "prod"}
    assert found["prod"].id == org["ids"]["prod"]


def test_the_paths_give_the_ous_where_the_answer_has_them() -> None:
    paths = ["o-aa111bb222/r-a1b2/ou-a1b2-f6g7h111/ou-a1b2-f6g7h222/111111111111/"]
    assert _ous_on_paths(paths) == ("ou-a1b2-f6g7h222", "ou-a1b2-f6g7h111")
    assert _ous_on_paths(None) == ()


MEMBERS = [
    Member("111111111111", "prod", ("ou-db", "ou-prod"), {"team": "db", "env": "prod"}),
    Member("222222222222", "staging", ("ou-staging",), {"team": "db", "env": "staging"}),
    Member("333333333333", "sandbox", (), {}),
]


@pytest.mark.parametrize(
    ("include", "exclude", "names"),
    [
        (Filter(), Filter(), ["prod", "staging", "sandbox"]),
        (Filter(ous=("ou-prod",)), Filter(), ["prod"]),  # an OU keeps what is below it
        (Filter(tags={"team": "db"}), Filter(tags={"env": "staging"}), ["prod"]),
        (Filter(names=("prod", "sandbox")), Filter(ids=("333333333333",)), ["prod"]),
        (Filter(ids=("222222222222",), tags={"env": "prod"}), Filter(), []),  # every key
    ],
)
def test_include_keeps_what_it_names_and_exclude_drops_it(include, exclude, names) -> None:
    assert [m.name for m in kept(MEMBERS, include, exclude)] == names


def test_the_daemons_own_account(aws: None) -> None:
    with mock_aws():
        assert own_id(botocore.session.get_session(), REGION) == "123456789012"


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


def test_a_member_session_assumes_its_role_once_and_again_before_it_expires(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with mock_aws():
        base = botocore.session.get_session()
        asked: list[dict[str, Any]] = []
        base.register(
            "provide-client-params.sts.AssumeRole", lambda params, **_: asked.append(params)
        )
        clock = Clock()
        # The fetcher's cache reads botocore's clock: both on the test's.
        monkeypatch.setattr(botocore.credentials, "_local_now", clock)
        role = role_arn("111111111111", "ebs-analyzer-reader")
        member = assumed_session(base, role, "s3cret-id", REGION, clock=clock)
        assert asked == []  # nothing is assumed before it is needed
        sts = member.create_client("sts", region_name=REGION)
        who = sts.get_caller_identity()
        assert who["Arn"] == (
            f"arn:aws:sts::111111111111:assumed-role/ebs-analyzer-reader/{SESSION_NAME}"
        )
        sts.get_caller_identity()
        assert [(a["RoleArn"], a["ExternalId"], a["RoleSessionName"]) for a in asked] == [
            (role, "s3cret-id", SESSION_NAME)
        ]
        clock.now += timedelta(minutes=58)  # inside botocore's refresh window of the hour
        sts.get_caller_identity()
        assert len(asked) == 2


def test_without_an_external_id_none_is_sent(aws: None) -> None:
    with mock_aws():
        base = botocore.session.get_session()
        asked: list[dict[str, Any]] = []
        base.register(
            "provide-client-params.sts.AssumeRole", lambda params, **_: asked.append(params)
        )
        member = assumed_session(base, role_arn("222222222222", "r"), None, REGION)
        member.create_client("sts", region_name=REGION).get_caller_identity()
        assert "ExternalId" not in asked[0]
