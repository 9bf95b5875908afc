"""An HA pair through a real Alertmanager (Debian's prometheus-alertmanager): two replicas of
one shard post the same alerts to it, and its receiver hears each alert once. One replica
killed mid-alert resolves nothing and repeats nothing; restarted without its state (a pod
rescheduled onto an empty volume), it re-sends nothing; the other killed next, the restarted
one carries the alert alone."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deliver.test_alertmanager import alerts_in, running
from tests.receiver import Receiver
from tests.scenarios.test_shards import fleet  # noqa: F401  (the module's fixture)
from tests.test_cli import free_port, running_daemon, wait_for

INTERVAL_S = 2
"""The replicas' cycle: their alerts' `endsAt` lie four of these ahead."""

CONFIG = """
route:
  receiver: team
  group_by: ['...']
  group_wait: 1s
  group_interval: 2s
  repeat_interval: 1h
receivers:
  - name: team
    webhook_configs:
      - url: {url}
        send_resolved: true
"""
"""One group per alert (`...`), so that each notification is about one alert, and a repeat
only after an hour: any second notification within the test is a duplicate or a resolve."""


class Replica:
    def __init__(self, name: str, endpoints: dict[str, str], am: str, tmp_path: Path) -> None:
        self.name, self.endpoints, self.am, self.tmp_path = name, endpoints, am, tmp_path
        self.port = free_port()
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> Replica:
        self.process = running_daemon(
            self.port,
            self.tmp_path / f"{self.name}.json",
            "--alertmanager-url",
            self.am,
            env=self.endpoints,
            interval_s=INTERVAL_S,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert wait_for(f"http://127.0.0.1:{self.port}/readyz", timeout_s=120)[0] == 200
        return self

    def kill(self) -> None:
        """As the kernel's OOM killer or a lost node would: no goodbye."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=30)
        (self.tmp_path / f"{self.name}.json").unlink(missing_ok=True)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)


@pytest.fixture
def pair(fleet, tmp_path: Path) -> Iterator[tuple[Receiver, str, list[Replica]]]:  # noqa: F811
    endpoints, _ = fleet
    team = Receiver().start()
    with running(tmp_path, CONFIG.format(url=team.url)) as am:
        replicas = [Replica(name, endpoints, am, tmp_path) for name in ("a", "b")]
        try:
            yield team, am, replicas
        finally:
            for replica in replicas:
                replica.stop()
            team.stop()


def notices(team: Receiver) -> list[tuple[str, str, str]]:
    """(status, alert name, resource) of every alert of every notification received."""
    return [
        (alert["status"], alert["labels"]["alertname"], alert["labels"]["resource_id"])
        for body in team.requests
        for alert in body["alerts"]
    ]


def again(team: Receiver, first: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """What was notified since `first` about the alerts `first` named: a resolve or a repeat.
    (An alert that begins meanwhile, as the simulated load goes on, is news, not a repeat.)"""
    named = {(name, resource) for _, name, resource in first}
    return [n for n in notices(team)[len(first) :] if (n[1], n[2]) in named]


def test_a_pair_alerts_once_and_a_replica_lost_or_restarted_changes_nothing(pair) -> None:  # type: ignore[no-untyped-def]
    team, am, (a, b) = pair
    a.start()
    b.start()
    deadline = time.monotonic() + 60
    while not team.requests and time.monotonic() < deadline:
        time.sleep(0.2)
    # Both replicas post every cycle; give Alertmanager several group intervals to send
    # whatever it would send twice.
    time.sleep(4 * INTERVAL_S + 4)
    first = notices(team)
    assert first, "no notification within a minute"
    assert {status for status, _, _ in first} == {"firing"}
    assert len(first) == len(set(first)), f"an alert notified twice: {first}"
    assert any(name == "gp2-burst-exhaustion" for _, name, _ in first)
    active = {a["fingerprint"] for a in alerts_in(am)}
    assert len(active) == len(first)

    # One replica dies mid-alert. Its last posts expire four cycles later; the other
    # replica's keep every alert alive.
    a.kill()
    time.sleep(4 * INTERVAL_S * 2 + 4)
    assert again(team, first) == [], "a resolve or a repeat after one replica died"
    assert {x["fingerprint"] for x in alerts_in(am)} >= active

    # It comes back without its state, as a rescheduled pod on an empty volume: it works
    # its alerts out afresh and posts them; Alertmanager has sent them already.
    a.start()
    time.sleep(4 * INTERVAL_S + 4)
    assert again(team, first) == [], "a restarted replica re-sent what the pair had sent"

    # The other one dies: the restarted one carries every alert alone.
    b.kill()
    time.sleep(4 * INTERVAL_S * 2 + 4)
    assert again(team, first) == []
    assert {x["fingerprint"] for x in alerts_in(am)} >= active
