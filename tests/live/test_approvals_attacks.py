"""The apply path under attack, end to end: a signed click by an approver applies only the fix
a message of this daemon offered on an alert still firing; a flood of denials flushes nothing;
a dry run is dry; a stop between AWS's acceptance and the read-back loses no record. Each
refusal leaves the volume as it was, read back from the account (moto)."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from datetime import timedelta
from typing import Any

import boto3
import pytest

from analyzer.collect.changes import Ec2RdsChanges
from analyzer.deliver import statefile
from analyzer.live.approvals import GP3_INCLUDED, automatic_fix
from analyzer.model.findings import Change, PastFit, Remedy, RemedyKind
from analyzer.model.resources import ResourceType
from tests.live.test_approvals import (
    ALLOWED,
    APPROVER,
    START,
    STRANGER,
    Clock,
    _account,
    _buttons,
    _click,
    _count,
    _daemon,
    _described,
    _firing,
    _post,
    _replies,
    _signed,
)
from tests.receiver import Receiver
from tests.test_cli import moto_server  # noqa: F401 - a fixture

GP3 = "type=gp3,iops=3000,throughput=125"


@pytest.fixture
def receiver():
    r = Receiver().start()
    yield r
    r.stop()


def _size(volume: str) -> int:
    ec2 = boto3.client("ec2", region_name="us-east-1")
    return int(ec2.describe_volumes(VolumeIds=[volume])["Volumes"][0]["Size"])


@pytest.mark.parametrize(
    "target",
    ["size=500", "type=sc1,size=125", "type=gp3,iops=16000,throughput=1000", "type=io2,iops=64000"],
)
def test_an_approvers_click_on_a_target_no_alert_offered_changes_nothing(
    aws, tmp_path, receiver, target
) -> None:
    volume, clients = _account([ALLOWED])
    clock = Clock(START)
    process, server = _daemon(tmp_path, receiver, clients, clock)
    try:
        message = _firing(process, clock, receiver)
        assert _buttons(message) == [f"{volume}:{GP3}"]
        body = _click(receiver, f"{volume}:{target}")
        assert _post(server, body, _signed(body)) == 200
        [said] = _replies(receiver, 1)
        assert f"no alert firing now carries an Apply button for {volume}:{target}" in said
        assert _described(volume) == ("gp2", 0) and _size(volume) == 50
        assert _count(process, "refused") == 1
    finally:
        server.stop()


def test_a_button_whose_alert_resolved_is_refused(aws, tmp_path, receiver) -> None:
    """The volume moved to gp3 behind the daemon's back (the console): the burst alert
    resolves, and its button, still in the channel, applies nothing any more."""
    volume, clients = _account([ALLOWED])
    clock = Clock(START)
    process, server = _daemon(tmp_path, receiver, clients, clock)
    try:
        [offered] = _buttons(_firing(process, clock, receiver))
        ec2 = boto3.client("ec2", region_name="us-east-1")
        ec2.modify_volume(VolumeId=volume, VolumeType="gp3", Iops=3000, Throughput=125)
        process.refresh_inventory()
        for _ in range(6):
            clock.now += timedelta(minutes=1)
            process.cycle()
        assert not [a for a in process.book.firing() if a.resource_id == volume]
        # A larger gp3, offered nowhere, clicked on the resolved alert's resource.
        body = _click(receiver, offered.replace("iops=3000", "iops=6000"))
        assert _post(server, body, _signed(body)) == 200
        body = _click(receiver, offered)
        assert _post(server, body, _signed(body)) == 200
        first, second = _replies(receiver, 2)
        assert "no alert firing now carries an Apply button" in first
        assert "no alert firing now carries an Apply button" in second
        assert _described(volume) == ("gp3", 1)
    finally:
        server.stop()


def test_offers_survive_a_restart_with_their_alert(aws, tmp_path, receiver) -> None:
    volume, clients = _account([ALLOWED])
    clock = Clock(START)
    process, server = _daemon(tmp_path, receiver, clients, clock)
    try:
        [offered] = _buttons(_firing(process, clock, receiver))
    finally:
        server.stop()
    state = statefile.load_state(tmp_path / "state.json")
    assert [a.offered for a in state.alerts] == [(offered,)]
    process, server = _daemon(tmp_path, receiver, clients, clock)
    try:
        process.refresh_inventory()
        body = _click(receiver, offered)
        assert _post(server, body, _signed(body)) == 200
        assert "applied by" in _replies(receiver, 1)[-1]
        assert _described(volume) == ("gp3", 1)
    finally:
        server.stop()


def test_a_flood_of_denials_keeps_the_applied_record_and_posts_once(
    aws, tmp_path, receiver
) -> None:
    volume, clients = _account([ALLOWED])
    clock = Clock(START)
    process, server = _daemon(tmp_path, receiver, clients, clock)
    path = tmp_path / "state.json"
    try:
        [offered] = _buttons(_firing(process, clock, receiver))
        body = _click(receiver, offered)
        assert _post(server, body, _signed(body)) == 200
        assert "applied by" in _replies(receiver, 1)[0]
        written = path.stat().st_mtime_ns
        for n in range(520):
            stranger = _click(receiver, f"{volume}:size={500 + n}", STRANGER)
            assert _post(server, stranger, _signed(stranger)) == 200
        process.interactions.drain()  # type: ignore[union-attr]
        replies = _replies(receiver, 3, timeout_s=1)
        assert len(replies) == 2 and "is not an approver" in replies[1]
        assert _count(process, "denied") == 520
        assert path.stat().st_mtime_ns != written  # the first denial was saved …
        process.save_state()  # … and the count with the next cycle's save
    finally:
        server.stop()
    state = statefile.load_state(path)
    kept = [(a.who, a.outcome, a.count) for a in state.applied]
    # … once: the others are counted on it; the applied record stays.
    assert kept == [(APPROVER, "applied", 1), (STRANGER, "denied", 520)]
    assert _described(volume) == ("gp3", 1)


def test_a_dry_run_daemon_answers_a_click_with_awss_verdict_and_changes_nothing(
    aws, tmp_path, receiver
) -> None:
    volume, clients = _account([ALLOWED])
    clock = Clock(START)
    # A dry run sends nothing to Slack: the messages, buttons and all, go to the log.
    process, server = _daemon(tmp_path, receiver, clients, clock, dry_run=True)
    try:
        for minute in range(20, 50):
            clock.now = START + timedelta(hours=1, minutes=minute, seconds=30)
            process.cycle()
        [alert] = process.book.firing()
        [offered] = alert.offered
        body = _click(receiver, offered)
        assert _post(server, body, _signed(body)) == 200
        [said] = _replies(receiver, 1)
        assert "dry run (the daemon runs with --dry-run)" in said
        assert "AWS says the change would succeed (DryRun)" in said
        assert _described(volume) == ("gp2", 0)
        assert _count(process, "dry_run") == 1
    finally:
        server.stop()


def test_a_stop_during_the_read_back_leaves_the_record_and_a_restart_reports_it(
    aws, tmp_path, receiver, monkeypatch
) -> None:
    _, clients = _account([ALLOWED])
    clock = Clock(START)
    process, server = _daemon(tmp_path, receiver, clients, clock, apply_wait="5m")
    path = tmp_path / "state.json"
    reading = threading.Event()
    release = threading.Event()
    real = Ec2RdsChanges.volume

    def slow(self: Ec2RdsChanges, volume_id: str) -> Any:
        found = real(self, volume_id)
        if found is not None and found.volume_type == "gp3":  # read back, after the change
            reading.set()
            release.wait(10)
            # AWS takes minutes to optimize a large volume: still modifying.
            mods = tuple(replace(m, state="modifying") for m in found.modifications)
            return replace(found, modifications=mods)
        return found

    monkeypatch.setattr(Ec2RdsChanges, "volume", slow)
    try:
        [offered] = _buttons(_firing(process, clock, receiver))
        body = _click(receiver, offered)
        assert _post(server, body, _signed(body)) == 200
        assert reading.wait(10)
        # Killed now, the state file already says what AWS accepted.
        [accepted] = json.loads(path.read_text())["applied"]
        assert (accepted["fix_id"], accepted["outcome"], accepted["settled"]) == (
            offered,
            "applied",
            False,
        )
        assert accepted["started"] is not None
        # A stop cuts the read-back short: the outcome is recorded and said.
        assert process.approvals is not None
        process.approvals.stopping.set()
        release.set()
        assert process.approvals.finish(10)
        assert "read-back was cut short by a stop" in _replies(receiver, 1)[0]
    finally:
        release.set()
        server.stop()
    settled = statefile.load_state(path).applied
    assert [(a.outcome, a.settled) for a in settled] == [("applied", True)]

    # Had the process died before that, a restart reports the change it never saw end.
    document = json.loads(path.read_text())
    document["applied"][0]["settled"] = False
    path.write_text(json.dumps(document))
    before = len(receiver.requests)
    process, server = _daemon(tmp_path, receiver, clients, clock)
    server.stop()
    [announced] = [r["text"] for r in receiver.requests[before:]]
    assert announced.startswith(f"*Applied before a restart*: `{offered}` by <@{APPROVER}>")
    assert [a.settled for a in statefile.load_state(path).applied] == [True]


def _remedy(fix_after: dict[str, Any], delta: float = -1.0) -> Remedy:
    change = Change(
        ResourceType.VOLUME,
        "vol-1",
        {"volume_type": "gp2", "size_gib": 100},
        {"volume_type": "gp2", "size_gib": 100} | fix_after,
    )
    return Remedy(
        "Move to gp3",
        change=change,
        kind=RemedyKind.MODIFY,
        monthly_delta=delta,
        past=PastFit(days=14, minutes_limited=0),
    )


@pytest.mark.parametrize(
    ("after", "taken"),
    [
        ({"volume_type": "gp3", "iops": 3000, "throughput_mibps": 125}, True),
        ({"volume_type": "gp3", "iops": 4000, "throughput_mibps": 125}, False),
        ({"volume_type": "gp3", "iops": 3000, "throughput_mibps": 250}, False),
        ({"volume_type": "gp3", "iops": 3000, "throughput_mibps": 125, "size_gib": 200}, False),
        ({"volume_type": "io2", "iops": 3000}, False),
    ],
)
def test_the_gp2_to_gp3_policy_takes_exactly_gp3s_included_performance(after, taken) -> None:
    remedy = _remedy(after)
    assert remedy.fix_id is not None
    found = automatic_fix([remedy], frozenset({"gp2-to-gp3"}))
    assert (found is remedy) is taken, remedy.fix_id
    assert GP3_INCLUDED == {"type": "gp3", "iops": 3000, "throughput": 125}


def test_a_signed_request_replayed_after_a_restart_is_not_handed_over_again(
    aws, tmp_path, receiver
) -> None:
    volume, clients = _account([ALLOWED])
    clock = Clock(START)
    process, server = _daemon(tmp_path, receiver, clients, clock)
    try:
        [offered] = _buttons(_firing(process, clock, receiver))
        body = _click(receiver, offered, STRANGER)
        headers = _signed(body)
        assert _post(server, body, headers) == 200
        assert len(_replies(receiver, 1)) == 1
    finally:
        server.stop()
    saved = json.loads((tmp_path / "state.json").read_text())["slack_seen"]
    assert len(saved) == 1 and set(saved[0]) == {"sha256", "at"}
    assert headers["X-Slack-Signature"] not in json.dumps(saved)  # its digest, never itself
    process, server = _daemon(tmp_path, receiver, clients, clock)
    try:
        assert _post(server, body, headers) == 200
        assert len(_replies(receiver, 2, timeout_s=1)) == 1  # nothing handed over, no reply
        assert _count(process, "denied") is None
    finally:
        server.stop()
    assert _described(volume) == ("gp2", 0)


@pytest.mark.slow
def test_run_dry_run_answers_a_signed_click_with_awss_verdict(
    moto_server,  # noqa: F811 - the fixture
    tmp_path,
) -> None:
    """End to end through the command line: `ebs-analyzer run --dry-run` in a process of its
    own, EC2 and CloudWatch in moto's server, the click signed as Slack signs it."""
    import signal
    import subprocess
    import time
    from datetime import UTC, datetime

    from analyzer.model.units import KIB
    from analyzer.sim.workloads import Demand, steps
    from tests.account import Account
    from tests.test_cli import free_port, running_daemon, wait_for

    account = Account(endpoint_url=moto_server)
    instance = account.instance("m5.large")
    volume = account.volume("gp2", 50, instance)
    account.ec2.create_tags(Resources=[volume], Tags=[ALLOWED])
    start = (datetime.now(UTC) - timedelta(hours=2)).replace(second=0, microsecond=0)
    heavy = Demand(steps((0, 100), (20 * 60, 1_500)), io_size_bytes=16 * KIB)
    account.put(account.simulation(instance, {volume: heavy}, start).run(120))
    replies = Receiver().start()
    port, state = free_port(), tmp_path / "state.json"
    process = running_daemon(
        port,
        state,
        "--dry-run",
        "--log-format",
        "json",
        env={
            "AWS_ENDPOINT_URL": moto_server,
            "SLACK_SIGNING_SECRET": "8f742231b10e8888abcd99yyyzzz85a5",
            "EBS_ANALYZER_APPLY_APPROVERS": APPROVER,
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert wait_for(f"http://127.0.0.1:{port}/readyz")[0] == 200
        deadline, offered = time.monotonic() + 60, []
        while not offered and time.monotonic() < deadline:
            if state.exists():
                alerts = json.loads(state.read_text() or "{}").get("alerts", [])
                offered = [fix for a in alerts for fix in a.get("offered", [])]
            time.sleep(0.2)
        assert offered == [f"{volume}:{GP3}"]

        class _Server:
            pass

        server = _Server()
        server.port = port  # type: ignore[attr-defined]
        body = _click(replies, offered[0])
        assert _post(server, body, _signed(body)) == 200
        [said] = _replies(replies, 1, timeout_s=30)
        assert "dry run (the daemon runs with --dry-run)" in said, said
        assert "AWS says the change would succeed (DryRun)" in said
        found = account.ec2.describe_volumes(VolumeIds=[volume])["Volumes"][0]
        assert found["VolumeType"] == "gp2"
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
        replies.stop()
    assert process.returncode == 0, err[-2000:]
