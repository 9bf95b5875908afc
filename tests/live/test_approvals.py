"""A fix approved in Slack, end to end: moto holds the account, the simulator a gp2 volume
draining its credits, a local receiver plays Slack's webhook and the interactions'
response_url, and signed requests are POSTed to the daemon's own /slack/actions. Every
refusal leaves the volume as it was, read back from the account."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import boto3
import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.cli import main
from analyzer.collect.aws import Clients
from analyzer.collect.describe import parse_instance_type
from analyzer.collect.regions import connect
from analyzer.deliver import statefile
from analyzer.errors import ConfigError
from analyzer.live import daemon
from analyzer.model.resources import Volume
from analyzer.model.units import KIB
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.scenario import QUIET_DAYS
from analyzer.sim.workloads import Demand, steps
from tests.account import stamped_at
from tests.live.test_daemon import HOUR, START, Clock
from tests.receiver import Receiver

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
APPROVER, STRANGER = "U0APPROVER", "U0STRANGER"
ALLOWED = {"Key": "ebs-analyzer/apply", "Value": "allowed"}
CSI_ONLY = [  # the driver's own tags, without the claim's (no --extra-create-metadata)
    {"Key": "ebs.csi.aws.com/cluster", "Value": "true"},
    {"Key": "CSIVolumeName", "Value": "pvc-3f2a"},
    {"Key": "kubernetes.io/created-for/pv/name", "Value": "pvc-3f2a"},
]
CLAIM = [
    {"Key": "kubernetes.io/created-for/pvc/namespace", "Value": "db"},
    {"Key": "kubernetes.io/created-for/pvc/name", "Value": "data-0"},
    {"Key": "ebs.csi.aws.com/cluster", "Value": "true"},
]


@pytest.fixture
def receiver():
    r = Receiver().start()
    yield r
    r.stop()


def _account(tags: list[dict[str, str]]) -> tuple[str, Any]:
    """gp2 50 GiB on an m5.large, at 1,500 IOPS from the first hour: its bucket empties 67
    minutes later."""
    ec2 = boto3.client("ec2", region_name="us-east-1")
    instance = ec2.run_instances(
        ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="m5.large"
    )["Instances"][0]["InstanceId"]
    spec = [{"ResourceType": "volume", "Tags": tags}] if tags else []
    volume = ec2.create_volume(
        AvailabilityZone="us-east-1a", Size=50, VolumeType="gp2", TagSpecifications=spec
    )["VolumeId"]
    ec2.attach_volume(VolumeId=volume, InstanceId=instance, Device="/dev/sdf")
    type_info = parse_instance_type(
        ec2.describe_instance_types(InstanceTypes=["m5.large"])["InstanceTypes"][0]
    )
    load = Demand(steps((0, 20), (HOUR, 1_500)), 16 * KIB)
    model = Volume(volume, "us-east-1", "gp2", 50, "in-use", 150, None, instance)
    sim = Simulation(SimInstance(instance, type_info, [SimVolume(model, load)]), START)
    cloudwatch = SimulatedCloudWatch(
        sim.run(3 * 60), attachments=sim.attachments, quiet_days=QUIET_DAYS
    )
    return volume, lambda region: connect(region, Clients.for_region(region, cloudwatch=cloudwatch))


def _daemon(tmp_path, receiver, clients, clock, **more):
    config = settings.load(
        {
            "region": ["us-east-1"],
            "listen": "127.0.0.1:0",
            "state_file": tmp_path / "state.json",
            "slack_webhook_url": receiver.url,
            "slack_signing_secret": SECRET,
            "apply_approvers": [APPROVER],
            **more,
        }
    )
    process, server = daemon.build(config, rules.load(), clients, clock, process_metrics=False)
    server.start()
    return process, server


def _firing(process, clock, receiver) -> dict[str, Any]:
    """Cycles from 1 h 20 into the drain until a firing message is sent; that message."""
    for minute in range(20, 50):
        clock.now = START + timedelta(hours=1, minutes=minute, seconds=30)
        process.cycle()
        sent = [r for r in receiver.requests if "blocks" in r and "storage bottleneck" in r["text"]]
        if sent:
            return sent[-1]
    raise AssertionError("no alert fired")


def _buttons(message: dict[str, Any]) -> list[str]:
    return [
        element["value"]
        for block in message["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
        if element.get("action_id") == "ebs-analyzer.apply"
    ]


def _signed(body: bytes, stamp: int | None = None, secret: str = SECRET) -> dict[str, str]:
    stamp = int(time.time()) if stamp is None else stamp
    digest = hmac.new(secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256)
    return {
        "X-Slack-Request-Timestamp": str(stamp),
        "X-Slack-Signature": f"v0={digest.hexdigest()}",
        "Content-Type": "application/x-www-form-urlencoded",
    }


def _click(receiver, fix_id: str, user: str = APPROVER) -> bytes:
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": "someone"},
        "response_url": receiver.url.rstrip("/") + "/respond",
        "actions": [{"action_id": "ebs-analyzer.apply", "value": fix_id, "type": "button"}],
        "trigger_id": f"{time.monotonic_ns()}",
    }
    return urlencode({"payload": json.dumps(payload)}).encode()


def _post(server, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}/slack/actions", body, headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def _replies(receiver, count: int, timeout_s: float = 20.0) -> list[str]:
    """The texts posted to the response_url, once there are `count` of them."""
    deadline = time.monotonic() + timeout_s
    while True:
        said = [
            r["text"]
            for (path, _), r in zip(receiver.seen, receiver.requests, strict=True)
            if path.endswith("/respond")
        ]
        if len(said) >= count or time.monotonic() > deadline:
            return said
        time.sleep(0.05)


def _described(volume: str) -> tuple[str, int]:
    ec2 = boto3.client("ec2", region_name="us-east-1")
    found = ec2.describe_volumes(VolumeIds=[volume])["Volumes"][0]
    modified = ec2.describe_volumes_modifications(
        Filters=[{"Name": "volume-id", "Values": [volume]}]
    )["VolumesModifications"]
    return found["VolumeType"], len(modified)


def _count(process, outcome: str) -> float | None:
    return process.telemetry.registry.get_sample_value(
        "ebs_analyzer_apply_attempts_total", {"via": "slack", "outcome": outcome}
    )


def test_a_click_by_an_approver_applies_the_fix_once_and_the_next_cycles_show_it(
    aws, tmp_path, receiver
) -> None:
    volume, clients = _account([ALLOWED])
    clock = Clock(START)
    process, server = _daemon(tmp_path, receiver, clients, clock)
    try:
        message = _firing(process, clock, receiver)
        fix = f"{volume}:type=gp3,iops=3000,throughput=125"
        assert _buttons(message) == [fix]

        # Forged, stale: 401, nothing done.
        body = _click(receiver, fix)
        assert _post(server, body, _signed(body, secret="not-the-secret")) == 401
        assert _post(server, body, _signed(body, stamp=int(time.time()) - 301)) == 401
        # A stranger: 200, told so, nothing changed.
        stranger = _click(receiver, fix, STRANGER)
        assert _post(server, stranger, _signed(stranger)) == 200
        [said] = _replies(receiver, 1)
        assert f"<@{STRANGER}> is not an approver" in said
        assert _described(volume) == ("gp2", 0)
        assert _count(process, "denied") == 1

        # The approver: applied in one ModifyVolume, the outcome in the channel.
        headers = _signed(body)
        assert _post(server, body, headers) == 200
        said = _replies(receiver, 2)[-1]
        assert f"applied by <@{APPROVER}>: modification completed" in said
        assert "*today:* gp2 50 GiB" in said and "*cost:* −$1.00/month" in said
        assert _described(volume) == ("gp3", 1)
        # The same request replayed within the five minutes: nothing, not even a reply.
        assert _post(server, body, headers) == 200
        # Clicked again: the ledger says it is done; AWS is not asked.
        again = _click(receiver, fix)
        assert _post(server, again, _signed(again)) == 200
        replies = _replies(receiver, 3)
        assert len(replies) == 3 and f"already applied by <@{APPROVER}>" in replies[-1]
        assert _described(volume) == ("gp3", 1)
        assert (_count(process, "applied"), _count(process, "already")) == (1, 1)

        # The next cycles read the volume as it is now: gp3's 3,000 IOPS, no bucket.
        process.refresh_inventory()
        clock.now += timedelta(minutes=1)
        process.cycle()
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics") as scraped:
            text = scraped.read().decode()
        [limit] = [
            line
            for line in text.splitlines()
            if line.startswith("ebs_analyzer_volume_iops_limit{") and volume in line
        ]
        assert 'volume_type="gp3"' in limit and limit.endswith(" 3000.0")
    finally:
        server.stop()

    # The record survives a restart: who, which fix, from what to what.
    state = statefile.load_state(tmp_path / "state.json")
    outcomes = [(a.who, a.outcome) for a in state.applied]
    assert outcomes == [(STRANGER, "denied"), (APPROVER, "applied"), (APPROVER, "already")]
    applied = state.applied[1]
    assert applied.fix_id == fix and applied.target["volume_type"] == "gp3"
    assert applied.before["volume_type"] == "gp2"


@pytest.mark.parametrize(
    ("tags", "says"),
    [
        ([], "outside the apply scope"),
        ([ALLOWED, *CLAIM], "belongs to PVC db/data-0"),
        ([ALLOWED, *CSI_ONLY], "belongs to PV pvc-3f2a, made by the EBS CSI driver"),
    ],
)
def test_outside_the_scope_or_on_a_claim_there_is_no_button_and_a_click_changes_nothing(
    aws, tmp_path, receiver, capsys, tags, says
) -> None:
    volume, clients = _account(tags)
    clock = Clock(START)
    process, server = _daemon(tmp_path, receiver, clients, clock)
    try:
        message = _firing(process, clock, receiver)
        assert _buttons(message) == []
        # A click forged from an earlier message, or a hand-made one: refused all the same,
        # since no message of this daemon offered it.
        fix = f"{volume}:type=gp3,iops=3000,throughput=125"
        body = _click(receiver, fix)
        assert _post(server, body, _signed(body)) == 200
        [said] = _replies(receiver, 1)
        assert f"no alert firing now carries an Apply button for {fix}" in said, said
        assert _described(volume) == ("gp2", 0)
        assert _count(process, "refused") == 1
        # And from a terminal, the guard says why.
        capsys.readouterr()
        assert main(["apply", fix, "--region", "us-east-1", "--no-past", "--yes"]) == 3
        assert says in capsys.readouterr().err
        assert _described(volume) == ("gp2", 0)
    finally:
        server.stop()


def test_a_fifth_modification_in_a_day_or_a_malformed_fix_is_refused_from_slack_too(
    aws, tmp_path, receiver
) -> None:
    volume, clients = _account([ALLOWED])
    clock = Clock(START)
    process, server = _daemon(tmp_path, receiver, clients, clock)
    ec2 = boto3.client("ec2", region_name="us-east-1")
    stamped_at(START)  # made as the drain began, as AWS would stamp them
    for size in (51, 52, 53, 54):
        ec2.modify_volume(VolumeId=volume, Size=size)
    try:
        _firing(process, clock, receiver)
        fixes = (
            f"{volume}:type=gp3,iops=3000,throughput=125",
            f"{volume}:type=gp4",
            "vol-0123456789abcdef0:type=gp3",  # no alert names it: a button not this daemon's
        )
        for n, fix in enumerate(fixes, start=1):
            body = _click(receiver, fix)
            assert _post(server, body, _signed(body)) == 200
            assert len(_replies(receiver, n)) == n
        fifth, malformed, unasked = _replies(receiver, 3)
        assert "carries an Apply button for vol-0123456789abcdef0:type=gp3" in unasked
        assert (
            "modified 4 times in the last 24 h (AWS allows 4): the next becomes possible" in fifth
        )
        assert f"carries an Apply button for {volume}:type=gp4" in malformed
        assert _described(volume) == ("gp2", 4)
        assert _count(process, "refused") == 3
    finally:
        server.stop()


@pytest.mark.parametrize("tags", [[ALLOWED], []])
def test_a_policy_applies_a_cheaper_gp3_that_held_on_its_own_and_announces_it(
    aws, tmp_path, receiver, tags
) -> None:
    volume, clients = _account(tags)
    clock = Clock(START)
    process, server = _daemon(
        tmp_path,
        receiver,
        clients,
        clock,
        slack_signing_secret=None,
        apply_approvers=[],
        apply_automatically=["gp2-to-gp3"],
    )
    try:
        message = _firing(process, clock, receiver)
        assert _buttons(message) == []  # no approvals in Slack: no buttons
        # The same cycle that fired applied it, where the volume is in scope; a later cycle
        # does not try it again.
        clock.now += timedelta(minutes=1)
        process.cycle()
        said = [r["text"] for r in receiver.requests if r["text"].startswith("*Applied by policy")]
        if not tags:
            assert said == [] and _described(volume) == ("gp2", 0)
            return
        assert _described(volume) == ("gp3", 1)
        [text] = said
        assert "`gp2-burst-exhaustion`" in text
        assert "applied by policy:gp2-to-gp3: modification completed" in text
        counted = process.telemetry.registry.get_sample_value(
            "ebs_analyzer_apply_attempts_total", {"via": "policy", "outcome": "applied"}
        )
        assert counted == 1
    finally:
        server.stop()


def test_a_policy_names_only_kinds_it_knows(aws, tmp_path, receiver) -> None:
    _, clients = _account([ALLOWED])
    with pytest.raises(ConfigError, match="'anything' is not a kind of fix applied automatically"):
        _daemon(tmp_path, receiver, clients, Clock(START), apply_automatically=["anything"])


@pytest.mark.parametrize(
    ("more", "missing"),
    [
        ({"apply_approvers": []}, "apply_approvers"),
        ({"slack_signing_secret": None}, "slack_signing_secret"),
    ],
)
def test_approvals_need_both_the_secret_and_the_approvers(aws, tmp_path, receiver, more, missing):
    _, clients = _account([ALLOWED])
    with pytest.raises(ConfigError, match=f"^{missing}: Slack approvals need both"):
        _daemon(tmp_path, receiver, clients, Clock(START), **more)


def test_without_approvals_the_path_is_not_served(aws, tmp_path, receiver) -> None:
    _, clients = _account([ALLOWED])
    _, server = _daemon(
        tmp_path, receiver, clients, Clock(START), slack_signing_secret=None, apply_approvers=[]
    )
    try:
        body = _click(receiver, "vol-1:type=gp3")
        assert _post(server, body, _signed(body)) == 405
    finally:
        server.stop()
