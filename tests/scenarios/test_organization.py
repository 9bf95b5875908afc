"""One daemon over an AWS Organization: three accounts in two regions, listed by moto's
Organizations and reached through moto's STS (each member's resources created with its role's
credentials, so that moto holds them in that account). One account's role is denied in the
middle of a run and restored: the other two keep their alerts, the denied one resolves
nothing, is counted and logged, and comes back without a restart."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from structlog.testing import capture_logs

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect.accounts import Account
from analyzer.collect.describe import parse_instance_type
from analyzer.collect.regions import Region, connect_as
from analyzer.live import daemon
from analyzer.model.resources import Volume
from analyzer.model.units import KIB
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.workloads import Demand, steps
from tests.fakes import Interruptible, access_denied

START = datetime(2026, 11, 21, 0, 0, tzinfo=UTC)
HOUR = 3600
REGIONS = ("us-east-1", "eu-west-1")
ROLE = "ebs-analyzer"
MANAGEMENT = "123456789012"
"""moto's own account: the Organization's management account, where the daemon runs."""


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Member:
    id: str
    name: str
    volume: str
    metrics: dict[str, Interruptible] = field(default_factory=dict)
    denied: bool = False

    def deny(self, on: bool) -> None:
        """Every call of this account's role refused (Describe calls at the HTTP layer, as
        botocore gets them; metrics at the CloudWatch stand-in), or answered again."""
        self.denied = on
        for client in self.metrics.values():
            client.fault = access_denied if on else None

    def refuse(self, **kwargs: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
        """A `before-call` handler: AWS's 403 AccessDenied answer while denied."""
        if not self.denied:
            return None
        body = {
            "Error": {"Code": "AccessDenied", "Message": "not authorized (role denied)"},
            "ResponseMetadata": {"HTTPStatusCode": 403},
        }
        return AWSResponse("https://aws.example", 403, {}, None), body


def _credentials(account_id: str) -> dict[str, str]:
    sts = boto3.client("sts", region_name="us-east-1")
    given = sts.assume_role(
        RoleArn=f"arn:aws:iam::{account_id}:role/{ROLE}", RoleSessionName="setup"
    )["Credentials"]
    return {
        "aws_access_key_id": given["AccessKeyId"],
        "aws_secret_access_key": given["SecretAccessKey"],
        "aws_session_token": given["SessionToken"],
    }


def _fleet(account_id: str, name: str) -> Member:
    """In us-east-1 a gp3 volume whose load exceeds its 125 MiB/s from 2 h on; in eu-west-1
    a spare detached volume."""
    keys = {} if account_id == MANAGEMENT else _credentials(account_id)
    ec2 = boto3.client("ec2", region_name="us-east-1", **keys)
    instance = ec2.run_instances(
        ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="r6i.8xlarge"
    )["Instances"][0]["InstanceId"]
    volume = ec2.create_volume(AvailabilityZone="us-east-1a", Size=100, VolumeType="gp3")[
        "VolumeId"
    ]
    ec2.attach_volume(VolumeId=volume, InstanceId=instance, Device="/dev/sdf")
    type_info = parse_instance_type(
        ec2.describe_instance_types(InstanceTypes=["r6i.8xlarge"])["InstanceTypes"][0]
    )
    load = Demand(steps((0, 200), (2 * HOUR, 2_000)), 128 * KIB)
    model = Volume(volume, "us-east-1", "gp3", 100, "in-use", 3_000, 125, instance)
    sim = Simulation(SimInstance(instance, type_info, [SimVolume(model, load)]), START)
    spare = boto3.client("ec2", region_name="eu-west-1", **keys)
    spare.create_volume(AvailabilityZone="eu-west-1a", Size=50, VolumeType="gp3")
    member = Member(account_id, name, volume)
    member.metrics = {
        "us-east-1": Interruptible(
            SimulatedCloudWatch(sim.run(10 * 60), attachments=sim.attachments)
        ),
        "eu-west-1": Interruptible(SimulatedCloudWatch()),
    }
    return member


@pytest.fixture
def organization(aws) -> Iterator[dict[str, Member]]:
    orgs = boto3.client("organizations", region_name="us-east-1")
    orgs.create_organization(FeatureSet="ALL")
    members = {MANAGEMENT: _fleet(MANAGEMENT, "master")}  # moto names it so
    for name in ("prod", "staging"):
        status = orgs.create_account(Email=f"{name}@example.com", AccountName=name)
        account_id = status["CreateAccountStatus"]["AccountId"]
        members[account_id] = _fleet(account_id, name)
    yield members


def build(tmp_path, members: dict[str, Member], clock: Clock) -> daemon.Daemon:
    config = settings.load(
        {
            "region": list(REGIONS),
            "listen": "127.0.0.1:0",
            "state_file": tmp_path / "state.json",
            "dry_run": True,
        },
        _config(tmp_path),
    )
    holder: list[daemon.Daemon] = []

    def connect_account(account: Account, region: str) -> Region:
        """As the daemon reads an account (its role's session from botocore's providers),
        the metrics from the account's simulator."""
        member = members[account.id]
        session = holder[0].analyzer.accounts.session(account, region)
        if session is not None:
            session.register("before-call", member.refuse, unique_id=f"deny-{account.id}")
        return connect_as(account, region, session, cloudwatch=member.metrics[region])

    process, server = daemon.build(
        config,
        rules.load(),
        clock=clock,
        process_metrics=False,
        connect_account=connect_account,
    )
    server.stop()
    holder.append(process)
    return process


def _config(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(f"organization:\n  role_name: {ROLE}\n")
    return path


def sample(process, name, **labels):
    return process.telemetry.registry.get_sample_value(name, labels)


def firing(process) -> dict[str, tuple[str, datetime]]:
    """Account id → (volume, since) of its firing throughput-cap alert."""
    return {
        a.finding.resource.account_id: (a.resource_id, a.since)
        for a in process.book.firing()
        if a.rule == "volume-throughput-cap"
    }


def test_one_daemon_watches_an_organization_and_one_denied_account_holds(tmp_path, organization):
    clock = Clock(START + timedelta(hours=3, seconds=30))
    process = build(tmp_path, organization, clock)
    assert process.cycle()

    # Every account, both regions: each account's capped volume fires, named by its account.
    inventories = process.analyzer.inventories()
    assert {(i.account_id, i.region) for i in inventories.values()} == {
        (a, r) for a in organization for r in REGIONS
    }
    before = firing(process)
    assert {a: v for a, (v, _) in before.items()} == {a: m.volume for a, m in organization.items()}
    names = {a.finding.resource.account_id: a.finding.resource.account_name for a in process.book}
    assert {names[a] for a in organization} == {"master", "prod", "staging"}
    denied = next(a for a, m in organization.items() if m.name == "prod")
    for account_id in organization:
        assert (
            sample(
                process,
                "ebs_analyzer_account_up",
                account_id=account_id,
                account_name=organization[account_id].name,
            )
            == 1
        )

    # prod's role is denied: its Describe calls and its metrics are refused from now on.
    organization[denied].deny(True)
    with capture_logs() as logs:
        for minute in range(1, 12):
            clock.now = START + timedelta(hours=3, minutes=minute, seconds=30)
            assert process.cycle()
            process.retry_accounts()
    after = firing(process)
    # Nothing resolved, nothing lost: the other accounts' alerts as they were, and the denied
    # account's alert held, though its condition was unknown for 11 minutes.
    assert after == before
    assert not [a for a in process.book if a.state.value == "resolved"]
    assert sample(process, "ebs_analyzer_account_up", account_id=denied, account_name="prod") == 0
    assert (
        sample(
            process,
            "ebs_analyzer_account_checks_total",
            account_id=denied,
            account_name="prod",
            outcome="denied",
        )
        >= 2
    )
    failed = [e for e in logs if e["event"] == "account.failed"]
    assert failed and {e["account_id"] for e in failed} == {denied}
    assert "AccessDenied" in failed[0]["error"]
    # Retried on its own schedule (a minute, then two, four…), not every cycle.
    assert 2 <= len(failed) <= 5
    others = [a for a in organization if a != denied]
    for account_id in others:
        name = organization[account_id].name
        assert (
            sample(process, "ebs_analyzer_account_up", account_id=account_id, account_name=name)
            == 1
        )

    # Restored: back at the next cycle, without a restart, its alert the same one.
    organization[denied].deny(False)
    clock.now = START + timedelta(hours=3, minutes=13, seconds=30)
    with capture_logs() as logs:
        assert process.cycle()
    assert any(e["event"] == "account.restored" for e in logs)
    assert sample(process, "ebs_analyzer_account_up", account_id=denied, account_name="prod") == 1
    assert firing(process) == before


def test_a_denied_account_at_start_is_dark_and_the_others_go_on(tmp_path, organization):
    """An account that never answered since the start has no inventory: a restored alert of
    it holds (not resolved for being absent), and the other accounts are watched."""
    clock = Clock(START + timedelta(hours=3, seconds=30))
    denied = next(a for a, m in organization.items() if m.name == "staging")
    first = build(tmp_path, organization, clock)
    assert first.cycle()
    assert denied in firing(first)

    organization[denied].deny(True)
    clock.now += timedelta(minutes=1)
    second = build(tmp_path, organization, clock)  # the state file's alerts restored
    for _ in range(9):
        clock.now += timedelta(minutes=1)
        assert second.cycle()
    held = firing(second)
    assert set(held) == set(organization)
    assert held[denied] == firing(first)[denied]
    assert denied not in {i.account_id for i in second.analyzer.inventories().values()}


def test_members_denied_at_start_leave_the_management_account_watched(tmp_path, organization):
    for member in organization.values():
        if member.id != MANAGEMENT:
            member.deny(True)
    clock = Clock(START + timedelta(hours=3, seconds=30))
    process = build(tmp_path, organization, clock)
    # The management account answers: the cycle goes on with it alone.
    assert process.cycle()
    assert set(firing(process)) == {MANAGEMENT}


def test_a_monitoring_account_reads_the_members_metrics_with_their_account_id(
    organization, monkeypatch
):
    """The daemon runs in the monitoring account: the members' Describe calls go through
    their roles (moto's STS), their metrics are asked of the monitoring account's CloudWatch,
    each query naming the member's account."""
    from analyzer.collect.aws import Clients
    from analyzer.live import cycle
    from tests.collect.test_regions import Answers

    asked = Answers()
    made = Clients.for_region
    monkeypatch.setattr(Clients, "for_region", lambda region, **_: made(region, cloudwatch=asked))
    prod = next(a for a, m in organization.items() if m.name == "prod")
    config = settings.load(
        {
            "region": ["us-east-1"],
            "accounts": [
                {"id": prod, "name": "prod", "role_arn": f"arn:aws:iam::{prod}:role/{ROLE}"}
            ],
            "monitoring_account": True,
        }
    )
    analyzer = cycle.Analyzer(config, rules.load())
    result = analyzer.run(START + timedelta(hours=3))
    volumes = {
        s.ref.resource_id: s.ref.account_id for s in result.snapshot.resources if s.is_volume
    }
    assert volumes[organization[prod].volume] == prod
    assert set(volumes.values()) == {prod}  # the member's own volumes, through its role
    queries = [q for call in asked.calls for q in call["MetricDataQueries"]]
    assert queries and {q["AccountId"] for q in queries} == {prod}
