"""Faults injected between the daemon and AWS (a proxy in front of a moto server) and Slack (a
receiver that answers 429, 500, slowly, or not at all). Each fault: no crash, no false
"Resolved", no message lost or sent twice beyond what docs/reliability.md says, and the fault
seen in the log and the metrics.

The daemon runs in this process, one cycle at a time on a test clock, with real HTTP to the
proxy and the receiver.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from moto.server import ThreadedMotoServer
from structlog.testing import capture_logs

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect import aws
from analyzer.live import daemon
from analyzer.sim.workloads import Demand, constant
from tests.account import Account
from tests.faults import FaultProxy
from tests.receiver import Receiver

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def world(moto_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A gp3 volume at twice its 3,000 IOPS for an hour, CloudWatch and EC2 each behind a
    fault proxy, a Slack receiver, and a daemon on a clock half an hour into the data."""
    urllib.request.urlopen(urllib.request.Request(f"{moto_url}/moto-api/reset", method="POST"))
    account = Account(endpoint_url=moto_url)
    instance = account.instance("m5.large")
    volume = account.volume("gp3", 200, instance)
    account.put(account.simulation(instance, {volume: Demand(constant(6_000))}, START).run(120))
    cloudwatch, ec2 = FaultProxy(moto_url).start(), FaultProxy(moto_url).start()
    receiver = Receiver().start()
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDWATCH", cloudwatch.url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", ec2.url)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    # Short enough that a hung proxy (3 s) times out within a test, long enough that moto
    # answering slowly on a busy machine does not.
    monkeypatch.setattr(aws, "READ_TIMEOUT_S", 2)
    monkeypatch.setattr(aws, "CONNECT_TIMEOUT_S", 2)
    config = settings.load(
        {
            "region": ["us-east-1"],
            "listen": "127.0.0.1:0",
            "slack_webhook_url": receiver.url,
            "state_file": None,
        }
    )
    clock = Clock(START + timedelta(minutes=30, seconds=130))
    process, server = daemon.build(config, rules.load(), None, clock, process_metrics=False)
    server.stop()
    try:
        yield {
            "daemon": process,
            "clock": clock,
            "cloudwatch": cloudwatch,
            "ec2": ec2,
            "receiver": receiver,
            "volume": volume,
        }
    finally:
        receiver.stop()
        cloudwatch.stop()
        ec2.stop()


def sample(process: daemon.Daemon, name: str, **labels: str) -> float:
    return process.telemetry.registry.get_sample_value(name, labels) or 0.0


def cycles(world: dict[str, Any], n: int) -> None:
    for _ in range(n):
        world["clock"].now += timedelta(minutes=1)
        world["daemon"].cycle()


def texts(receiver: Receiver) -> list[str]:
    return [r["text"].split(":")[0] for r in receiver.requests]


def firing_first(world: dict[str, Any]) -> None:
    assert world["daemon"].cycle()
    assert [a.rule for a in world["daemon"].book.firing()] == ["volume-iops-cap"]
    assert texts(world["receiver"]) == ["1 storage bottleneck on AWS"]


@pytest.mark.parametrize("fault", ["http500", "throttle", "garbage", "hang"])
def test_cloudwatch_failing_for_seven_minutes(world: dict[str, Any], fault: str) -> None:
    firing_first(world)
    process = world["daemon"]
    world["cloudwatch"].fault = fault
    failed = []
    with capture_logs() as logs:
        for _ in range(7):
            cycles(world, 1)
            failed.append(sample(process, "ebs_analyzer_cycles_total", outcome="failed") or 0)
    assert [a.state.value for a in process.book] == ["firing"]  # held, not resolved
    assert texts(world["receiver"]) == ["1 storage bottleneck on AWS"]  # no "Resolved"
    # The volume whose alert fires steadily is read every third minute: the outage shows at
    # its next poll at the latest, and every cycle after asks again and fails.
    assert failed[2:] == [failed[2] + n for n in range(5)] and failed[2] >= 1
    said = {e["event"] for e in logs}
    # A call that fails is a failed cycle of unknown data (the alert says so); one that hangs
    # past its timeout fails the cycle (unreachable), and the book is not touched at all.
    assert {"cloudwatch.failed", "alert.unknown"} <= said or "cycle.failed" in said
    world["cloudwatch"].fault = "none"
    cycles(world, 2)
    assert [a.state.value for a in process.book] == ["firing"]
    assert texts(world["receiver"]) == ["1 storage bottleneck on AWS"]  # no second "Firing"
    assert sample(process, "ebs_analyzer_cycles_total", outcome="success") >= 3


def test_the_inventory_failing_keeps_the_last_one_and_is_counted(world: dict[str, Any]) -> None:
    firing_first(world)
    process = world["daemon"]
    world["ec2"].fault = "http500"
    with capture_logs() as logs:
        process.refresh_inventory()
        cycles(world, 2)
    assert [e["event"] for e in logs if e["event"] == "inventory.failed"] == ["inventory.failed"]
    assert sample(process, "ebs_analyzer_inventory_refreshes_total", outcome="error") == 1
    assert [a.state.value for a in process.book] == ["firing"]
    assert sample(process, "ebs_analyzer_cycles_total", outcome="success") == 3


def test_a_describe_refused_from_the_start_is_an_inventory_failure(world: dict[str, Any]) -> None:
    """Not a CloudWatch one: the shipped "inventory failing" alert fires, the "CloudWatch
    failing" one does not, and the line says which action to grant."""
    process = world["daemon"]
    world["ec2"].fault = "ec2-denied"
    with capture_logs() as logs:
        assert not process.cycle()
        cycles(world, 1)
    assert sample(process, "ebs_analyzer_inventory_refreshes_total", outcome="error") == 2
    assert sample(process, "ebs_analyzer_cycles_total", outcome="failed") == 2
    assert sample(process, "ebs_analyzer_last_cycle_failed_metrics_ratio") == 0
    assert world["cloudwatch"].seen == 0
    (failed, *_) = [e for e in logs if e["event"] == "inventory.failed"]
    assert failed["error"].startswith("ec2:DescribeVolumes in us-east-1: UnauthorizedOperation")
    assert "grant ec2:DescribeVolumes" in failed["error"]
    assert process.ready() == (
        False,
        "not ready: no cycle has produced usable data yet; "
        "the last cycle failed describing the inventory (AwsAccessError)",
    )
    world["ec2"].fault = "none"
    cycles(world, 1)
    assert sample(process, "ebs_analyzer_inventory_refreshes_total", outcome="success") == 1
    assert sample(process, "ebs_analyzer_cycles_total", outcome="success") == 1


@pytest.mark.parametrize(
    ("answers", "deferred"),
    [
        ([(500, {})] * 3, False),  # 5xx, retried within the cycle, then owed
        ([(429, {"Retry-After": "90"})], True),  # honoured by the next cycle too
        ([(200, {"X-Delay": "3"})], False),  # slower than the timeout: owed again
    ],
    ids=["http500", "retry-after", "slow"],
)
def test_slack_failing_loses_nothing(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch, answers: list[Any], deferred: bool
) -> None:
    from analyzer.deliver import slack

    monkeypatch.setattr(slack.SlackChannel, "__init__", _quick(slack.SlackChannel.__init__))
    process = world["daemon"]
    process.dispatcher.channel = slack.SlackChannel(world["receiver"].url)
    world["receiver"].answer(*answers)
    with capture_logs() as logs:
        assert process.cycle(), [e for e in logs if e["log_level"] == "error"]
    assert [a.outbox.value for a in process.book.owed()] == ["firing"]
    assert (
        sample(process, "ebs_analyzer_notifications_total", channel="slack", outcome="error") == 1
    )
    assert any(e["event"] == "notification.failed" for e in logs)
    cycles(world, 1)
    if deferred:  # Slack asked for 90 s: the cycle a minute later sends nothing
        assert process.book.owed() and process.dispatcher.not_before is not None
        cycles(world, 1)
    assert process.book.owed() == []
    firing = [t for t in texts(world["receiver"]) if t == "1 storage bottleneck on AWS"]
    # A receiver slower than the timeout took the first one too: the one message that
    # docs/reliability.md says may go twice.
    assert len(firing) == (2 if answers[0][0] == 200 else len(answers) + 1)


def test_slack_unreachable_keeps_the_message_owed(world: dict[str, Any]) -> None:
    process = world["daemon"]
    world["receiver"].stop()
    process.cycle()
    assert [a.outbox.value for a in process.book.owed()] == ["firing"]
    assert (
        sample(process, "ebs_analyzer_notifications_total", channel="slack", outcome="error") == 1
    )


def _quick(init: Any) -> Any:
    """The Slack client with a 1 s timeout, so that a slow receiver is slow within a test."""

    def quick(self: Any, url: str, timeout_s: int = 1, max_wait_s: float = 30.0) -> None:
        init(self, url, timeout_s=1, max_wait_s=max_wait_s)

    return quick
