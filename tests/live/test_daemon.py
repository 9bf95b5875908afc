"""The daemon's alert lifecycle, driven by an injected clock through real cycles: moto holds
the inventory, the simulator the metric data, a local receiver plays Slack (429 and 500
included)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import boto3
import pytest
from structlog.testing import capture_logs

from analyzer import settings
from analyzer.analyze import rules
from analyzer.analyze.alerts import Alert, AlertBook
from analyzer.collect.aws import Clients
from analyzer.collect.describe import parse_instance_type
from analyzer.collect.regions import connect
from analyzer.deliver.notify import Channel
from analyzer.errors import ConfigError
from analyzer.live import daemon
from analyzer.model.resources import Volume
from analyzer.model.units import KIB
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.workloads import Demand, steps
from tests.fakes import Interruptible, internal_failure
from tests.receiver import Receiver

START = datetime(2026, 11, 21, 0, 0, tzinfo=UTC)
HOUR = 3600


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def receiver():
    r = Receiver().start()
    yield r
    r.stop()


@pytest.fixture
def cloudwatch():
    """The account's CloudWatch client: the simulator's answers, unless a fault is set."""
    return Interruptible(None)


@pytest.fixture
def account(aws, cloudwatch):
    """A gp3 volume whose load exceeds its 125 MiB/s from 2 h to 7.5 h."""
    ec2 = boto3.client("ec2", region_name="us-east-1")
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
    load = Demand(steps((0, 200), (2 * HOUR, 2_000), (7.5 * HOUR, 100)), 128 * KIB)
    model = Volume(volume, "us-east-1", "gp3", 100, "in-use", 3_000, 125, instance)
    sim = Simulation(SimInstance(instance, type_info, [SimVolume(model, load)]), START)
    cloudwatch.client = SimulatedCloudWatch(sim.run(8 * 60), attachments=sim.attachments)
    return volume, (
        lambda region: connect(region, Clients.for_region(region, cloudwatch=cloudwatch))
    )


def build(tmp_path, receiver, clients, clock, **more):
    config = settings.load(
        {
            "region": ["us-east-1"],
            "listen": "127.0.0.1:0",
            "state_file": tmp_path / "state.json",
            "slack_webhook_url": receiver.url,
            **more,
        }
    )
    process, server = daemon.build(config, rules.load(), clients, clock, process_metrics=False)
    server.stop()  # the lifecycle needs no HTTP
    return process


def sample(process, name, **labels):
    return process.telemetry.registry.get_sample_value(name, labels)


@pytest.mark.slow
def test_fire_repeat_restart_retry_and_resolve(tmp_path, receiver, account):
    volume, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    process = build(tmp_path, receiver, clients, clock)
    # Deliveries are counted from zero before the first one, failed or not.
    assert (
        sample(process, "ebs_analyzer_notifications_total", channel="slack", outcome="error") == 0
    )

    # First cycle: the backfill already shows 55 minutes at the cap. Slack says 429 once.
    receiver.answer((429, {"Retry-After": "1"}))
    assert process.cycle()
    assert len(receiver.requests) == 2
    message = receiver.requests[-1]
    assert message["text"].startswith("1 storage bottleneck on AWS: WARNING ")
    assert volume in message["text"]
    section = message["blocks"][1]["text"]["text"]
    assert "`volume-throughput-cap`" in section
    assert "*Observed:* 125 MiB/s · *Limit:* 125 MiB/s" in section
    assert "*Fix:* Provision 3,000 IOPS, 250 MiB/s" in section
    # Weighed on the volume's past before it was sent: the simulated CloudWatch holds 3 h.
    fix = next(line for line in section.splitlines() if line.startswith("*Fix:*"))
    assert "would have limited 0 min of the last 3 h" in fix

    # The same alert a minute and two hours later: nothing is sent again.
    for later in (timedelta(minutes=1), timedelta(hours=2)):
        clock.now = START + timedelta(hours=3, seconds=30) + later
        assert process.cycle()
    assert len(receiver.requests) == 2

    # A restart remembers the alert and does not re-send it.
    clock.now = START + timedelta(hours=6, seconds=30)
    process = build(tmp_path, receiver, clients, clock)
    assert [a.rule for a in process.book.firing()] == ["volume-throughput-cap"]
    assert process.cycle()
    assert len(receiver.requests) == 2

    # Four hours after it was sent, it is sent again; Slack fails three times (500), so the
    # repeat stays owed, survives in the state file, and goes out on the next cycle.
    clock.now = START + timedelta(hours=7, minutes=1, seconds=30)
    receiver.answer((500, {}), (500, {}), (500, {}))
    with capture_logs() as logs:
        assert process.cycle()
    assert len(receiver.requests) == 5
    assert any(e["event"] == "notification.failed" for e in logs)
    saved = json.loads((tmp_path / "state.json").read_text())
    assert [a["outbox"] for a in saved["alerts"]] == ["repeat"]
    assert receiver.url not in json.dumps(logs)

    clock.now += timedelta(minutes=1)
    assert process.cycle()
    assert len(receiver.requests) == 6
    assert "still firing after 4 h" in receiver.requests[-1]["blocks"][1]["text"]["text"]

    # The load drops at 7.5 h. The cap window empties by 7 h 45; the alert resolves once the
    # condition has been gone 5 minutes over at least two cycles.
    clock.now = START + timedelta(hours=7, minutes=46, seconds=30)
    assert process.cycle()
    assert len(receiver.requests) == 6
    clock.now += timedelta(minutes=6)
    assert process.cycle()
    assert len(receiver.requests) == 7
    resolved = receiver.requests[-1]
    assert resolved["text"].startswith("Resolved: volume-throughput-cap on " + volume)
    assert process.book.firing() == []
    assert json.loads((tmp_path / "state.json").read_text())["alerts"] == []
    assert (
        sample(process, "ebs_analyzer_notifications_total", channel="slack", outcome="success") == 2
    )
    assert (
        sample(process, "ebs_analyzer_notifications_total", channel="slack", outcome="error") == 1
    )


def test_alerts_below_notify_severity_fire_without_a_message(tmp_path, receiver, account):
    """The gp3 cap is a warning: with `notify_severity: critical` it fires and is exported,
    and Slack hears nothing of it."""
    _, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    process = build(tmp_path, receiver, clients, clock, notify_severity="critical")
    assert process.cycle()
    assert [a.rule for a in process.book.firing()] == ["volume-throughput-cap"]
    assert receiver.requests == []
    clock.now += timedelta(hours=5)
    assert process.cycle()
    assert receiver.requests == []


def test_one_missing_cycle_does_not_resolve(tmp_path, receiver, account):
    _, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    process = build(tmp_path, receiver, clients, clock)
    assert process.cycle()
    alert = process.book.firing()[0]
    # The condition is gone in one cycle (say a fetch failed) and back in the next.
    process.book.update(clock.now + timedelta(minutes=10), [], [])
    assert alert.absent_cycles == 1 and alert.state == "firing"
    clock.now += timedelta(minutes=11)
    assert process.cycle()
    assert alert.absent_cycles == 0 and alert.state == "firing"
    assert len(receiver.requests) == 1


def test_an_alert_that_fired_and_cleared_while_slack_was_down_is_announced(
    tmp_path, receiver, account
):
    """It used to be dropped: the channel never heard of it. Now one message gives both
    times."""
    _, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    process = build(tmp_path, receiver, clients, clock)
    receiver.answer(*[(500, {})] * 3)
    assert process.cycle()
    [alert] = process.book.firing()
    assert alert.outbox == "firing" and not alert.notified
    for minutes in (10, 20):
        process.book.update(clock.now + timedelta(minutes=minutes), [], [])
    assert [a.outbox for a in process.book.owed()] == ["resolved"]
    receiver.requests.clear()
    assert process.dispatcher.deliver(process.book, clock.now + timedelta(minutes=21)) == 1
    [message] = receiver.requests
    assert "Resolved" in message["text"]
    assert "fired 03:00 UTC and cleared 03:10 UTC while its firing message could not be" in (
        json.dumps(message)
    )
    assert list(process.book) == []


def test_a_cycle_that_fails_keeps_the_daemon_up(tmp_path, receiver):
    def unreachable(region):
        raise RuntimeError("endpoint unreachable")

    clock = Clock(START)
    process = build(tmp_path, receiver, unreachable, clock)
    with capture_logs() as logs:
        assert not process.cycle()
    assert [e["event"] for e in logs if e["log_level"] == "error"] == [
        "inventory.failed",
        "cycle.failed",
    ]
    assert process.ready() == (
        False,
        "not ready: no cycle has produced usable data yet; the last cycle failed describing "
        "the inventory (RuntimeError)",
    )
    assert sample(process, "ebs_analyzer_cycles_total", outcome="failed") == 1
    # Failing cycles still end: alive (a CloudWatch outage is no reason to restart).
    clock.now = START + timedelta(hours=1)
    assert not process.cycle()
    assert process.live() == (True, "alive")


def test_no_cycle_ending_for_ten_intervals_fails_liveness(tmp_path, receiver):
    """A stuck scheduler or a hung cycle: /livez fails, so Kubernetes restarts the pod; a
    first backfill gets half an hour."""
    clock = Clock(START)
    process = build(tmp_path, receiver, lambda region: None, clock)
    clock.now = START + timedelta(minutes=29)
    assert process.live() == (True, "alive")
    clock.now = START + timedelta(minutes=31)
    assert process.live() == (
        False,
        "not alive: no cycle has ended 1860 s ago (allowed 1800 s)",
    )


def test_an_unreadable_state_file_is_set_aside(tmp_path, receiver, account):
    _, clients = account
    (tmp_path / "state.json").write_text("{not json")
    with capture_logs() as logs:
        process = build(tmp_path, receiver, clients, Clock(START))
    assert list(process.book) == []
    assert (tmp_path / "state.json.unreadable").exists()
    assert any(e["event"] == "state.unreadable" for e in logs)


def test_a_state_file_that_can_never_be_written_stops_the_start(tmp_path, receiver, account):
    """A file in its place of the directory: exit 2 at start, one line, not a failed save
    every cycle."""
    _, clients = account
    (tmp_path / "blocked").write_text("a file, not a directory")
    config = settings.load(
        {
            "region": ["us-east-1"],
            "listen": "127.0.0.1:0",
            "state_file": tmp_path / "blocked" / "state.json",
            "slack_webhook_url": receiver.url,
        }
    )
    with pytest.raises(ConfigError, match=r"state_file .*state.json: cannot be written"):
        daemon.build(config, rules.load(), clients, Clock(START), process_metrics=False)


def test_a_state_file_that_cannot_be_moved_aside_still_lets_the_daemon_start(
    tmp_path, receiver, account, monkeypatch
):
    _, clients = account
    (tmp_path / "state.json").write_text('"a string, not a state file"')

    def refuse(self, target):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "replace", refuse)
    with capture_logs() as logs:
        process = build(tmp_path, receiver, clients, Clock(START))
    assert list(process.book) == []
    [event] = [e for e in logs if e["event"] == "state.unreadable"]
    assert event["moved_to"] is None and event["move_error"] == "Permission denied"


def test_a_cloudwatch_outage_is_loud(tmp_path, receiver, account, cloudwatch):
    """Every GetMetricData call failing is a failed cycle, in the metrics, the log and
    /readyz; one failing among others is a partial one. The volume whose alert fires steadily
    is read every third minute (`Cadence.of`): the outage shows at its next poll at the
    latest, and from then on every cycle asks and fails."""
    _, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    process = build(tmp_path, receiver, clients, clock)
    assert process.cycle()
    assert process.ready() == (True, "ready")

    cloudwatch.fault = internal_failure
    failed_cycles = []
    with capture_logs() as logs:
        for minute in range(1, 9):
            clock.now += timedelta(minutes=1)
            process.cycle()
            failed_cycles.append(sample(process, "ebs_analyzer_cycles_total", outcome="failed"))
            if minute == 2:
                assert process.ready() == (True, "ready")  # usable data 2 minutes ago
    failed = [e for e in logs if e["event"] == "cloudwatch.failed"]
    assert len(failed) == failed_cycles[-1]
    # From the third minute on, every cycle failed.
    assert all(b == a + 1 for a, b in pairwise(failed_cycles[1:]))
    assert failed[0]["outcome"] == "failed" and failed[0]["share"] == 1.0
    assert "InternalFailure" in failed[0]["reason"]
    assert sample(process, "ebs_analyzer_last_cycle_failed_metrics_ratio") == 1.0
    ready, why = process.ready()  # more than three intervals and a minute
    assert not ready and "the last cycle with usable data was" in why
    # The alert that fired before the outage is still firing: its data is unknown, not gone.
    assert [a.state.value for a in process.book] == ["firing"]


def _stopping_daemon(tmp_path, receiver, clients):
    """A daemon serving on any port, with its exit recorded instead of taken."""
    config = settings.load(
        {
            "region": ["us-east-1"],
            "listen": "127.0.0.1:0",
            "state_file": tmp_path / "state.json",
            "slack_webhook_url": receiver.url,
            "interval": 60,
        }
    )
    process, server = daemon.build(
        config, rules.load(), clients, Clock(START), process_metrics=False
    )
    exits: list[int] = []
    process.exit = exits.append
    return process, server, exits


def test_sigterm_during_a_hung_fetch_ends_within_the_grace_period(
    tmp_path, receiver, account, cloudwatch, monkeypatch
):
    """A GetMetricData that hangs kept the process alive 179 s after SIGTERM; Kubernetes
    kills it after 30. The cycle is abandoned, the state saved, and the process exits 0."""
    import threading
    import time

    _, clients = account
    hung = threading.Event()
    released = threading.Event()

    def hang():
        hung.set()
        released.wait(60)
        raise RuntimeError("released")

    cloudwatch.fault = hang
    monkeypatch.setattr(daemon, "STOP_GRACE_S", 1.0)
    process, server, exits = _stopping_daemon(tmp_path, receiver, clients)

    def stop_once_hung() -> None:
        hung.wait(30)
        process.stop()

    threading.Thread(target=stop_once_hung, daemon=True).start()
    with capture_logs() as logs:
        started = time.monotonic()
        assert process.run(server, speed=60) == 0
        took = time.monotonic() - started
    released.set()
    assert hung.is_set()
    assert took < 1.0 + 1.0 + 3.0  # the first cycle within a second, the grace, slack
    assert exits == [0]
    assert [e for e in logs if e["event"] == "daemon.cycle_abandoned"]
    [stopped] = [e for e in logs if e["event"] == "daemon.stopped"]
    assert stopped["state_saved"] is True
    assert (tmp_path / "state.json").exists()


@pytest.mark.slow
def test_sigterm_with_a_request_that_never_finishes_ends_within_the_grace_period(
    tmp_path, receiver, account, monkeypatch
):
    """The server lets the requests being answered finish, and its workers hold the
    interpreter's exit: one stuck for good kept the process alive after SIGTERM. Its stop
    gets the grace period, then the state is saved and the process exits 0."""
    import threading
    import time

    _, clients = account
    monkeypatch.setattr(daemon, "STOP_GRACE_S", 1.0)
    process, server, exits = _stopping_daemon(tmp_path, receiver, clients)
    stuck = threading.Event()
    real_stop = server.stop

    def stop_stuck() -> None:
        real_stop()
        stuck.wait(60)  # as a worker still writing to a client that never reads

    monkeypatch.setattr(server, "stop", stop_stuck)
    threading.Timer(2.0, process.stop).start()
    with capture_logs() as logs:
        started = time.monotonic()
        assert process.run(server, speed=60) == 0
        took = time.monotonic() - started
    stuck.set()
    assert took < 2.0 + 1.0 + 3.0  # the stop after 2 s, the grace, slack
    assert exits == [0]
    assert [e for e in logs if e["event"] == "daemon.server_stuck"]
    [stopped] = [e for e in logs if e["event"] == "daemon.stopped"]
    assert stopped["state_saved"] is True


def test_a_state_save_that_fails_is_logged_and_counted(tmp_path, receiver, account):
    _, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    process = build(tmp_path, receiver, clients, clock)
    assert process.cycle()
    assert sample(process, "ebs_analyzer_state_saves_total", outcome="success") >= 1
    (tmp_path / "state.json").unlink()
    (tmp_path / "state.json").mkdir()  # the path now holds a directory: replace() fails
    with capture_logs() as logs:
        clock.now += timedelta(minutes=1)
        assert process.cycle()
    assert any(e["event"] == "state.save_failed" for e in logs)
    assert sample(process, "ebs_analyzer_state_saves_total", outcome="error") >= 1


def test_every_cycle_posts_the_firing_alerts_to_each_alertmanager(tmp_path, receiver, account):
    """Beside Slack, the Alertmanager pair gets every firing alert every cycle, with the
    labels the metrics use: the volume's and the instance it is attached to."""
    volume, clients = account
    pair = [Receiver().start(), Receiver().start()]
    try:
        config = settings.load(
            {
                "region": ["us-east-1"],
                "listen": "127.0.0.1:0",
                "slack_webhook_url": receiver.url,
                "alertmanager_url": [am.url for am in pair],
            }
        )
        clock = Clock(START + timedelta(hours=3, seconds=30))
        process, server = daemon.build(config, rules.load(), clients, clock, process_metrics=False)
        server.stop()
        for minute in range(2):
            clock.now = START + timedelta(hours=3, minutes=minute, seconds=30)
            assert process.cycle()
        for am in pair:
            assert len(am.requests) == 2  # every cycle, not only when something changed
            [posted] = [a for a in am.requests[-1] if a["labels"]["volume_id"] == volume]
            assert posted["labels"]["alertname"] == "volume-throughput-cap"
            assert posted["labels"]["instance_id"].startswith("i-")
            assert posted["annotations"]["fix"].startswith("Provision 3,000 IOPS, 250 MiB/s")
        assert (
            sample(
                process,
                "ebs_analyzer_notifications_total",
                channel="alertmanager",
                outcome="success",
            )
            == 4
        )
    finally:
        for am in pair:
            am.stop()


def naive_state(tmp_path, receiver, clients, clock) -> dict:
    """The state file of a daemon that sent its alert, with `last_sent` stripped of its
    timezone, as a hand edit or another writer might leave it."""
    process = build(tmp_path, receiver, clients, clock)
    assert process.cycle()
    document = json.loads((tmp_path / "state.json").read_text())
    [alert] = document["alerts"]
    assert alert["last_sent"].endswith("+00:00")
    alert["last_sent"] = alert["last_sent"].removesuffix("+00:00")
    (tmp_path / "state.json").write_text(json.dumps(document))
    return document


def test_a_naive_time_in_the_state_file_does_not_stop_alerting(tmp_path, receiver, account):
    """It used to load, then fail every cycle: nothing delivered, saved or published, and
    /livez said alive. Now the entry is set aside at the start and the alert fires anew."""
    _, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    naive_state(tmp_path, receiver, clients, clock)
    receiver.requests.clear()
    with capture_logs() as logs:
        process = build(tmp_path, receiver, clients, clock)
    [skipped] = [e for e in logs if e["event"] == "state.entry_skipped"]
    assert skipped["error"].startswith("alerts.0.last_sent")
    assert list(process.book) == []
    clock.now += timedelta(minutes=1)
    assert process.cycle()
    [message] = receiver.requests
    assert message["text"].startswith("1 storage bottleneck on AWS")
    assert sample(process, "ebs_analyzer_cycles_total", outcome="success") == 1
    assert process.ready() == (True, "ready")
    saved = json.loads((tmp_path / "state.json").read_text())
    assert saved["alerts"][0]["last_sent"].endswith("+00:00")


def test_a_stored_value_that_still_fails_a_cycle_is_set_aside(tmp_path, receiver, account):
    """What validation lets through and still fails the cycle's conclusion: the cycle fails
    (one line, counted, /readyz says why), the state file is set aside, and the next cycle
    starts from an empty book and delivers."""
    _, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    assert build(tmp_path, receiver, clients, clock).cycle()
    receiver.requests.clear()
    process = build(tmp_path, receiver, clients, clock)
    [alert] = process.book.firing()
    assert alert.last_sent is not None
    alert.last_sent = alert.last_sent.replace(tzinfo=None)  # as if it had loaded so
    clock.now += timedelta(hours=4)  # a repeat is weighed: the naive time is subtracted
    with capture_logs() as logs:
        assert not process.cycle()
    [failed] = [e for e in logs if e["log_level"] == "error" and e["event"] == "cycle.failed"]
    assert failed["step"] == "updating the alert book"
    assert "offset-naive" in failed["error"]
    assert sample(process, "ebs_analyzer_cycles_total", outcome="failed") == 1
    assert sample(process, "ebs_analyzer_cycles_total", outcome="success") == 0
    [aside] = [e for e in logs if e["event"] == "state.unreadable"]
    assert aside["moved_to"] == str(tmp_path / "state.json.unreadable")
    assert "cycles fail on it: updating the alert book" in aside["error"]
    assert process.ready() == (
        False,
        "not ready: no cycle has produced usable data yet; the last cycle failed updating "
        "the alert book (TypeError)",
    )
    assert list(process.book) == []
    clock.now += timedelta(minutes=1)
    assert process.cycle()
    assert [r["text"].split(":")[0] for r in receiver.requests] == ["1 storage bottleneck on AWS"]
    assert process.ready() == (True, "ready")
    assert json.loads((tmp_path / "state.json").read_text())["alerts"][0]["last_sent"]


@dataclass
class Refusing:
    """A channel in front of the daemon's own that raises what no channel should (a KeyError,
    not a DeliveryError) while `refusing`."""

    channel: Channel
    refusing: bool = True

    @property
    def name(self) -> str:
        return self.channel.name

    def send(self, message: dict[str, Any], alerts: Sequence[Alert], now: datetime) -> None:
        if self.refusing:
            raise KeyError("blocks")
        self.channel.send(message, alerts, now)


def test_a_failing_delivery_is_a_failed_cycle_and_the_next_one_runs(tmp_path, receiver, account):
    """Not only the alert book: whatever raises while a cycle concludes fails that cycle
    alone. A book that did not come from the state file is kept, and so is the file."""
    _, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    process = build(tmp_path, receiver, clients, clock)
    channel = Refusing(process.dispatcher.channel)
    process.dispatcher.channel = channel
    with capture_logs() as logs:
        assert not process.cycle()
    [failed] = [e for e in logs if e["event"] == "cycle.failed"]
    assert failed["step"] == "delivering"
    assert not any(e["event"] == "state.unreadable" for e in logs)
    assert [a.outbox.value for a in process.book.owed()] == ["firing"]
    channel.refusing = False
    clock.now += timedelta(minutes=1)
    assert process.cycle()
    assert len(receiver.requests) == 1
    assert sample(process, "ebs_analyzer_cycles_total", outcome="failed") == 1


class Unpublishable(AlertBook):
    """An alert book whose firing alerts, which the cycle publishes, cannot be read while
    `broken`."""

    broken = False

    def firing(self) -> list[Alert]:
        if self.broken:
            raise ValueError("cannot publish")
        return super().firing()


def test_cycles_whose_conclusion_keeps_failing_fail_liveness(tmp_path, receiver, account):
    """A cycle that fails reading AWS ends as planned; one whose conclusion raises does not:
    when that goes on for ten intervals and half an hour, /livez fails and the pod restarts."""
    _, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    process = build(tmp_path, receiver, clients, clock)
    config = process.settings
    book = Unpublishable(config.repeat_interval, config.resolve_after, config.notify_severity)
    process.book = book
    assert process.cycle()

    book.broken = True
    for _ in range(31):
        clock.now += timedelta(minutes=1)
        assert not process.cycle()
    alive, why = process.live()
    assert not alive
    assert why == "not alive: the last cycle ended 1860 s ago (allowed 1800 s)"
    ready, why = process.ready()
    assert not ready and why.endswith("the last cycle failed publishing (ValueError)")


def test_a_receivers_wait_is_honoured_after_a_restart(tmp_path, receiver, account):
    """Slack's Retry-After used to be forgotten on restart: the new process sent at once."""
    _, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    process = build(tmp_path, receiver, clients, clock)
    receiver.answer((429, {"Retry-After": "600"}))
    assert process.cycle()
    assert [a.outbox.value for a in process.book.owed()] == ["firing"]
    saved = json.loads((tmp_path / "state.json").read_text())
    assert saved["not_before"] == (clock.now + timedelta(seconds=600)).isoformat()
    sent = len(receiver.requests)

    clock.now += timedelta(minutes=1)
    process = build(tmp_path, receiver, clients, clock)
    assert process.dispatcher.not_before == START + timedelta(hours=3, seconds=630)
    with capture_logs() as logs:
        assert process.cycle()
    assert len(receiver.requests) == sent
    assert any(e["event"] == "notification.deferred" for e in logs)

    clock.now += timedelta(minutes=10)
    assert process.cycle()
    assert len(receiver.requests) == sent + 1
    assert process.book.owed() == []
    assert json.loads((tmp_path / "state.json").read_text())["not_before"] is None


def test_a_stored_wait_is_honoured_an_hour_at_most(tmp_path, receiver, account):
    """A far deadline in the state file (a clock gone wrong, a hand edit) silences nothing
    for long."""
    from analyzer.deliver import statefile

    _, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    statefile.save([], tmp_path / "state.json", not_before=clock.now + timedelta(days=30))
    with capture_logs() as logs:
        process = build(tmp_path, receiver, clients, clock)
    assert process.dispatcher.not_before == clock.now + timedelta(hours=1)
    assert any(e["event"] == "state.deadline_bounded" for e in logs)


def test_a_state_file_behind_a_link_is_written_through(tmp_path, receiver, account):
    """The link used to be replaced by a regular file at the first save, and its target never
    updated again."""
    _, clients = account
    volume = tmp_path / "volume"
    volume.mkdir()
    link = tmp_path / "state.json"
    link.symlink_to(volume / "state.json")
    clock = Clock(START + timedelta(hours=3, seconds=30))
    process = build(tmp_path, receiver, clients, clock)
    assert process.cycle()
    assert link.is_symlink()
    assert len(json.loads((volume / "state.json").read_text())["alerts"]) == 1
    process = build(tmp_path, receiver, clients, clock)
    assert [a.rule for a in process.book.firing()] == ["volume-throughput-cap"]


def test_a_state_file_nested_too_deep_is_set_aside_at_the_start(tmp_path, receiver, account):
    """It used to end the start in a RecursionError, and every restart after it."""
    _, clients = account
    (tmp_path / "state.json").write_text("[" * 100_000)
    with capture_logs() as logs:
        process = build(tmp_path, receiver, clients, Clock(START + timedelta(hours=3)))
    [event] = [e for e in logs if e["event"] == "state.unreadable"]
    assert event["error"] == "nested too deep to read"
    assert (tmp_path / "state.json.unreadable").exists()
    assert list(process.book) == []


def test_a_time_later_than_now_in_the_state_file_is_read_as_now(tmp_path, receiver, account):
    """A `last_sent` years ahead used to hold back every repeat of its alert until then."""
    _, clients = account
    clock = Clock(START + timedelta(hours=3, seconds=30))
    assert build(tmp_path, receiver, clients, clock).cycle()
    document = json.loads((tmp_path / "state.json").read_text())
    document["alerts"][0]["last_sent"] = "2126-01-01T00:00:00+00:00"
    (tmp_path / "state.json").write_text(json.dumps(document))
    with capture_logs() as logs:
        process = build(tmp_path, receiver, clients, clock)
    [late] = [e for e in logs if e["event"] == "state.future_time"]
    assert late["last_sent"] == "2126-01-01T00:00:00+00:00"
    [alert] = process.book.firing()
    assert alert.last_sent == clock.now
    clock.now += timedelta(hours=4, minutes=1)  # the repeat interval: sent again
    assert process.cycle()
    assert "still firing" in receiver.requests[-1]["blocks"][1]["text"]["text"]


@pytest.mark.slow
def test_cycles_go_on_through_a_step_of_the_wall_clock(tmp_path, receiver, account):
    """The wall clock stepped back an hour (an NTP correction, a VM restored from a
    snapshot): cycles went on being scheduled at wall-clock times an hour ahead, so none ran,
    and /livez and /readyz read negative ages as fresh. Schedules and health ages now run on
    the monotonic clock; the step is logged once; the data windows follow the wall clock."""
    import threading
    import time

    _, clients = account
    speed = 60.0  # a 60 s interval every real second
    origin, offset = time.monotonic(), [0.0]

    def stepping() -> datetime:
        elapsed = (time.monotonic() - origin) * speed
        return START + timedelta(hours=3, seconds=elapsed - offset[0])

    config = settings.load(
        {
            "region": ["us-east-1"],
            "listen": "127.0.0.1:0",
            "state_file": tmp_path / "state.json",
            "slack_webhook_url": receiver.url,
            "interval": 60,
        }
    )
    process, server = daemon.build(config, rules.load(), clients, stepping, process_metrics=False)
    process._ticks = lambda: time.monotonic() * speed  # the host's own, which never steps

    def cycles() -> float:
        return sum(
            sample(process, "ebs_analyzer_cycles_total", outcome=o) or 0.0
            for o in ("success", "partial", "failed")
        )

    def step_then_stop() -> None:
        deadline = time.monotonic() + 20
        while cycles() < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        offset[0] = 3_600.0  # back an hour
        before = cycles()
        while cycles() < before + 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        process.stop()

    threading.Thread(target=step_then_stop, daemon=True).start()
    with capture_logs() as logs:
        assert process.run(server, speed=speed) == 0
    assert cycles() >= 5  # two before the step, three after it
    [stepped] = [e for e in logs if e["event"] == "clock.stepped"]
    assert stepped["direction"] == "back" and -3_700 < stepped["seconds"] < -3_500
    assert process.live()[0] and process.ready()[0]


def test_a_busy_port_is_said_before_any_aws_call(tmp_path):
    """`run` read the account's offers (Describe, the Price List) before binding."""
    import socket

    called = []

    def connect(region):
        called.append(region)
        raise AssertionError("AWS called before the address was taken")

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = settings.load({"region": ["us-east-1"], "listen": f"127.0.0.1:{port}"})
        with pytest.raises(ConfigError, match=f"--listen 127.0.0.1:{port}: "):
            daemon.build(config, rules.load(), connect, process_metrics=False)
    assert called == []
