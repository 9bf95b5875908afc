"""Alerts posted to a real Alertmanager (Debian's prometheus-alertmanager; CI installs it):
firing appears with our labels and annotations, resolving ends it, and a restarted daemon's
re-sent alert is the same alert, not a second one."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from analyzer.analyze.alerts import AlertBook
from analyzer.deliver.alertmanager import Alertmanager, annotations_of, labels_of
from analyzer.model.findings import Remedy, RemedyKind
from tests.analyze.test_alerts import WARNING
from tests.fakes import reading, reads
from tests.helpers import external
from tests.test_cli import free_port, wait_for

CONFIG = """
route:
  receiver: nobody
  group_wait: 1s
receivers:
  - name: nobody
"""


SHIPPED = Path(__file__).resolve().parents[2] / "deploy" / "alertmanager" / "alertmanager.yml"


@contextmanager
def running(tmp_path: Path, config: str) -> Iterator[str]:
    """A real Alertmanager with this configuration, on a free port: its URL."""
    binary = external(
        "prometheus-alertmanager", "alertmanager", install="apt-get install prometheus-alertmanager"
    )
    (tmp_path / "am.yml").write_text(config)
    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={tmp_path / 'am.yml'}",
            f"--storage.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        assert wait_for(f"{url}/-/ready", timeout_s=30)[0] == 200
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def alertmanager(tmp_path: Path) -> Iterator[str]:
    with running(tmp_path, CONFIG) as url:
        yield url


def alerts_in(url: str, active: bool = True) -> list[dict]:  # type: ignore[type-arg]
    query = f"active={'true' if active else 'false'}&silenced=false&inhibited=false"
    query += f"&unprocessed=true&resolved={'false' if active else 'true'}"
    with urllib.request.urlopen(f"{url}/api/v2/alerts?{query}", timeout=5) as answer:
        return json.loads(answer.read())  # type: ignore[no-any-return]


def firing_book(now: datetime) -> AlertBook:
    book = AlertBook(4 * 3600, 300)
    book.update(now, [WARNING], [])
    return book


def test_labels_carry_the_metrics_names_and_annotations_what_to_do() -> None:
    now = datetime.now(UTC)
    fixed = Remedy("Move to gp3: 3,000 IOPS without credits", 4.0, -1.0, kind=RemedyKind.MODIFY)
    book = AlertBook(4 * 3600, 300)
    book.update(now, [replace(WARNING, remedies=(fixed,))], [])
    [alert] = book.firing()
    assert labels_of(alert, None) == {
        "alertname": "gp2-burst-exhaustion",
        "severity": "warning",
        "bottleneck": "burst_credits",
        "resource_type": "volume",
        "resource_id": "vol-1",
        "region": "us-east-1",
        "volume_id": "vol-1",
    }
    notes = annotations_of(alert, "https://wiki.example/ebs-analyzer/docs/metrics.md")
    assert notes["summary"] == WARNING.summary
    assert notes["time_to_empty"] == "24 min"
    assert notes["fix"].startswith("Move to gp3: 3,000 IOPS without credits")
    assert notes["runbook_url"] == "https://wiki.example/ebs-analyzer/docs/metrics.md#alerts"


def test_firing_appears_resolving_ends_it_and_a_restart_does_not_duplicate(alertmanager) -> None:  # type: ignore[no-untyped-def]
    now = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=2)
    book = firing_book(now)
    sink = Alertmanager([alertmanager], interval_s=60)
    assert sink.push(book, now) == 1
    [seen] = alerts_in(alertmanager)
    assert seen["labels"]["alertname"] == "gp2-burst-exhaustion"
    assert seen["labels"]["volume_id"] == "vol-1"
    assert seen["annotations"]["time_to_empty"] == "24 min"
    ends = datetime.fromisoformat(seen["endsAt"].replace("Z", "+00:00"))
    assert timedelta(minutes=3) < ends - now <= timedelta(minutes=4, seconds=1)

    # A restarted daemon restores the alert from its state file and posts it again: the same
    # alert (Alertmanager deduplicates by labels), with the same start.
    restarted = Alertmanager([alertmanager], interval_s=60)
    assert restarted.push(firing_book(now), now + timedelta(minutes=1)) == 1
    [again] = alerts_in(alertmanager)
    assert again["fingerprint"] == seen["fingerprint"]
    assert again["startsAt"] == seen["startsAt"]

    # Resolved: posted with endsAt now, and Alertmanager no longer lists it as active.
    restarted.push(AlertBook(4 * 3600, 300), datetime.now(UTC))
    deadline = time.monotonic() + 10
    while alerts_in(alertmanager) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert alerts_in(alertmanager) == []


def test_an_unreachable_alertmanager_is_counted_and_the_next_one_still_gets_it(  # type: ignore[no-untyped-def]
    alertmanager,
) -> None:
    outcomes: list[tuple[str, str]] = []
    dead = f"http://127.0.0.1:{free_port()}"
    sink = Alertmanager([dead, alertmanager], 60, lambda c, o: outcomes.append((c, o)))
    assert sink.push(firing_book(datetime.now(UTC)), datetime.now(UTC)) == 1
    assert outcomes == [("alertmanager", "error"), ("alertmanager", "success")]
    assert len(alerts_in(alertmanager)) == 1


def test_the_shipped_inhibition_holds_back_the_volumes_of_an_instance_at_its_cap(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """deploy/alertmanager/alertmanager.yml: the instance's EBS cap inhibits the burst alert of
    a volume attached to it, not that of a volume on another instance."""
    from analyzer.model.findings import Bottleneck
    from analyzer.model.resources import ResourceRef, ResourceType

    now = datetime.now(UTC)
    capped = replace(
        WARNING,
        rule="instance-ebs-throughput-cap",
        resource=ResourceRef(ResourceType.INSTANCE, "i-1", "us-east-1"),
        bottleneck=Bottleneck.INSTANCE_THROUGHPUT,
    )
    elsewhere = replace(WARNING, resource=ResourceRef(ResourceType.VOLUME, "vol-2", "us-east-1"))
    book = AlertBook(4 * 3600, 300)
    book.update(now, [capped, WARNING, elsewhere], [])

    attached = reads(reading("vol-1", attached_to="i-1"), reading("vol-2", attached_to="i-2"))
    with running(tmp_path, SHIPPED.read_text()) as url:
        Alertmanager([url], 60).push(book, now, attached)
        deadline = time.monotonic() + 10
        held: list[str] = []
        while time.monotonic() < deadline and not held:
            query = "active=false&silenced=false&inhibited=true&unprocessed=false&resolved=false"
            with urllib.request.urlopen(f"{url}/api/v2/alerts?{query}", timeout=5) as answer:
                held = [a["labels"]["resource_id"] for a in json.loads(answer.read())]
            time.sleep(0.2)
    assert held == ["vol-1"]


def test_an_alert_of_an_account_carries_the_account_labels_of_its_series() -> None:
    now = datetime.now(UTC)
    owned = replace(
        WARNING, resource=replace(WARNING.resource, account_id="111111111111", account_name="prod")
    )
    book = AlertBook(4 * 3600, 300)
    book.update(now, [owned, WARNING], [])
    by_account = {labels_of(a, None).get("account_id"): labels_of(a, None) for a in book.firing()}
    # The same volume id in two accounts is two alerts, which Alertmanager keeps apart.
    assert set(by_account) == {"111111111111", None}
    assert by_account["111111111111"]["account_name"] == "prod"
    assert "account_name" not in by_account[None]
