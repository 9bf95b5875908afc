"""The accounts a daemon watches, resolved from the settings against moto's Organizations, and
each one's health: its outcome, and a retry schedule of its own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3
import pytest
from structlog.testing import capture_logs

from analyzer import settings
from analyzer.collect.accounts import Account
from analyzer.errors import AwsAccessError, AwsCallError
from analyzer.live.watched import Watched, failure_of, outcome_of
from analyzer.model.state import FetchStats

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
OWN = "123456789012"


def watched(**given) -> Watched:
    return Watched(settings.load({"region": ["us-east-1"], **given}))


@pytest.fixture
def org(aws):
    client = boto3.client("organizations", region_name="us-east-1")
    client.create_organization(FeatureSet="ALL")
    ids = {}
    for name, tags in (("prod", {"env": "prod"}), ("staging", {"env": "staging"})):
        made = client.create_account(
            AccountName=name,
            Email=f"{name}@example.com",
            Tags=[{"Key": k, "Value": v} for k, v in tags.items()],
        )
        ids[name] = made["CreateAccountStatus"]["AccountId"]
    return ids


def test_without_accounts_nothing_is_configured():
    assert not watched().configured


def test_the_listed_accounts_in_order_with_their_roles():
    found = watched(
        accounts=[
            {
                "id": "111111111111",
                "name": "prod",
                "role_arn": "arn:aws:iam::111111111111:role/ebs-analyzer",
                "external_id": "s3cret",
                "regions": ["eu-west-1"],
                "tags": {"team": "db"},
            },
            {"id": "222222222222"},
        ]
    ).resolve("us-east-1")
    assert found == [
        Account(
            "111111111111",
            "prod",
            "arn:aws:iam::111111111111:role/ebs-analyzer",
            "s3cret",
            ("eu-west-1",),
            {"team": "db"},
        ),
        Account("222222222222"),
    ]


def test_an_organization_gives_its_active_members_through_the_role(org):
    found = {a.id: a for a in watched(organization={"role_name": "reader"}).resolve("us-east-1")}
    assert set(found) == {OWN, org["prod"], org["staging"]}
    # The account the daemon runs in is read with its own credentials, not a role.
    assert found[OWN].role_arn is None
    assert found[org["prod"]].role_arn == f"arn:aws:iam::{org['prod']}:role/reader"
    assert found[org["prod"]].name == "prod"
    assert found[org["prod"]].tags == {"env": "prod"}


def test_the_filters_keep_and_drop_members(org):
    kept = watched(organization={"include": {"tags": {"env": "prod"}}}).resolve("us-east-1")
    assert [a.id for a in kept] == [org["prod"]]
    dropped = watched(organization={"exclude": {"names": ["master", "staging"]}})
    assert [a.id for a in dropped.resolve("us-east-1")] == [org["prod"]]


def test_a_listed_account_is_read_as_its_entry_says(org):
    entry = {
        "id": org["prod"],
        "name": "production",
        "role_arn": f"arn:aws:iam::{org['prod']}:role/custom",
        "budget": 5,
    }
    found = {a.id: a for a in watched(accounts=[entry], organization={}).resolve("us-east-1")}
    assert found[org["prod"]].name == "production"
    assert found[org["prod"]].role_arn.endswith(":role/custom")
    assert len(found) == 3


def test_an_organization_that_cannot_be_listed_keeps_its_members(org, monkeypatch):
    accounts = watched(organization={})
    first = accounts.resolve("us-east-1")

    def refused(*_args):
        raise AwsAccessError("organizations:ListAccounts: AccessDenied: no", "AccessDenied")

    monkeypatch.setattr(accounts, "_members", refused)
    with capture_logs() as logs:
        assert accounts.resolve("us-east-1") == first
    assert [e["event"] for e in logs] == ["organization.list_failed"]
    # With no members yet, the failure is the refresh's.
    fresh = watched(organization={})
    monkeypatch.setattr(fresh, "_members", refused)
    with pytest.raises(AwsAccessError):
        fresh.resolve("us-east-1")


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (AwsAccessError("x: AccessDenied: no", "AccessDenied"), "denied"),
        (AwsAccessError("x: could not connect"), "error"),
        (AwsCallError("x: Throttling: slow down", "Throttling"), "throttled"),
        (AwsCallError("x: InternalFailure", "InternalFailure"), "error"),
    ],
)
def test_an_outcome_by_the_error(error, outcome):
    assert outcome_of(error) == outcome


def test_a_failed_cycle_names_its_outcome_by_aws_code():
    assert outcome_of(failure_of("GetMetricData: AccessDenied: no", "AccessDenied")) == "denied"
    assert outcome_of(failure_of("GetMetricData: ExpiredToken", "ExpiredToken")) == "denied"
    assert outcome_of(failure_of("GetMetricData: Rate exceeded", "Throttling")) == "throttled"
    # Known by its code, not by its words: a message that merely mentions a code is an error.
    assert outcome_of(failure_of("AccessDenied: seen in a log line", None)) == "error"
    assert outcome_of(failure_of("GetMetricData InternalError", "InternalError")) == "error"


def test_a_failing_account_is_retried_after_a_wait_that_doubles_up_to_the_inventory_interval():
    accounts = watched(inventory_interval="10m")
    account = Account("111111111111", "prod", "arn:aws:iam::111111111111:role/x")
    heard: list[str] = []
    accounts.listeners.append(lambda a, outcome: heard.append(outcome))
    waits = []
    now = NOW
    for _ in range(6):
        health = accounts.failed(account, AwsAccessError("AccessDenied", "AccessDenied"), now)
        waits.append((health.retry_at - now).total_seconds())
        assert accounts.due(now) == []
        assert accounts.due(health.retry_at) == [account]
        now = health.retry_at
    assert waits == [60, 120, 240, 480, 600, 600]
    assert not health.up and health.failures == 6
    back = accounts.answered(account)
    assert back.up and back.retry_at is None and accounts.due(now + timedelta(days=1)) == []
    assert heard == ["denied"] * 6 + ["success"]


def test_an_account_without_a_role_must_be_the_daemons_own(aws):
    from analyzer.errors import ConfigError

    accounts = watched()
    accounts.check_own(Account(OWN), "us-east-1")
    with pytest.raises(ConfigError, match="222222222222 has no role_arn, and the daemon's"):
        accounts.check_own(Account("222222222222"), "us-east-1")
    accounts.check_own(Account("222222222222", role_arn="arn:aws:iam::222222222222:role/x"), "")


def test_an_account_whose_every_metric_failed_is_failing_until_its_metrics_answer():
    accounts = watched()
    account = Account("111111111111", "prod", "arn:aws:iam::111111111111:role/x")
    asked: list[datetime] = []

    def clock() -> datetime:
        asked.append(NOW)
        return NOW

    heard: list[str] = []
    accounts.listeners.append(lambda a, outcome: heard.append(outcome))
    accounts.judge_metrics(account, FetchStats(), clock)  # nothing asked: nothing to judge
    assert heard == [] and asked == []
    denied = FetchStats(
        metrics_requested=4, metrics_failed=4, errors=["AccessDenied: no"], codes=["AccessDenied"]
    )
    accounts.judge_metrics(account, denied, clock)
    health = accounts.health[account.id]
    assert health.outcome == "denied" and health.retry_at == NOW + timedelta(seconds=60)
    accounts.judge_metrics(account, denied, clock)  # already failing: its schedule stands
    assert health.failures == 1 and len(asked) == 1
    partial = FetchStats(metrics_requested=4, metrics_failed=1)
    accounts.judge_metrics(account, partial, clock)
    assert health.up and health.retry_at is None
    assert heard == ["denied", "success"]
