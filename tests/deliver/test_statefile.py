"""The state file: typed alerts in, the same alerts out; what cannot be read is set aside."""

from __future__ import annotations

import json
import os
from datetime import timedelta

import pytest
from structlog.testing import capture_logs

from analyzer.deliver import statefile
from analyzer.deliver.alerts import AlertBook, AlertState, Owed
from analyzer.model.findings import Bottleneck, Severity
from tests.helpers import GOLDEN, T0, analyze, shop_volume


def book_with_an_alert() -> AlertBook:
    analysis = analyze(shop_volume())
    book = AlertBook(4 * 3600, 300)
    book.update(T0, analysis.firing, [])
    book.update(T0 + timedelta(minutes=5), [], [])
    return book


def test_alerts_come_back_as_they_were_saved(tmp_path) -> None:
    book = book_with_an_alert()
    path = tmp_path / "state.json"
    statefile.save(list(book), path)
    loaded = statefile.load(path)
    assert loaded == book.alerts
    [alert] = loaded.values()
    assert alert.finding.remedies and alert.finding.next_bottleneck is not None
    assert alert.finding.window_s == 300.0
    assert alert.absent_since == T0 + timedelta(minutes=5)


def test_a_file_written_by_version_0_1_is_read() -> None:
    alerts = statefile.load(GOLDEN / "state_v1.json")
    [alert] = alerts.values()
    assert alert.state is AlertState.FIRING and alert.outbox is None
    assert alert.sent_severity is Severity.WARNING
    assert alert.finding.bottleneck is Bottleneck.BURST_CREDITS
    assert alert.finding.next_bottleneck is not None
    assert alert.finding.window_s == 300.0  # from the evidence: that file kept no window


def test_an_older_daemon_can_read_what_this_one_writes(tmp_path) -> None:
    """The alert records keep the keys version 0.1 reads, so a rollback loses no alert (it
    reads records by key and passes over the ones it does not know)."""
    old = json.loads((GOLDEN / "state_v1.json").read_text())
    path = tmp_path / "state.json"
    statefile.save(list(book_with_an_alert()), path)
    new = json.loads(path.read_text())
    assert new["version"] == old["version"]
    assert set(new["alerts"][0]) >= set(old["alerts"][0])


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{not json", "Expecting property name"),
        ('{"version": 2, "alerts": []}', "version"),
        ("[]", "document"),
        ('{"version": 1, "alerts": [{"state": "firing"}]}', "alerts.0.since"),
        ('{"version": 1, "alerts": [{"state": "gone", "since": "x", "finding": {}}]}', "alerts.0"),
        (b"\xff\xfe garbage", "utf-8"),
    ],
)
def test_an_unreadable_file_is_set_aside_with_a_log_line(tmp_path, content, why) -> None:
    path = tmp_path / "state.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with capture_logs() as logs:
        assert statefile.load(path) == {}
    [event] = [e for e in logs if e["event"] == "state.unreadable"]
    assert why in event["error"]
    assert not path.exists() and (tmp_path / "state.json.unreadable").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only directory")
def test_a_file_that_cannot_be_moved_aside_does_not_crash(tmp_path) -> None:
    path = tmp_path / "state.json"
    path.write_text("{not json")
    tmp_path.chmod(0o500)
    try:
        with capture_logs() as logs:
            assert statefile.load(path) == {}
    finally:
        tmp_path.chmod(0o700)
    [event] = [e for e in logs if e["event"] == "state.unreadable"]
    assert event["moved_to"] is None and event["move_error"]


def test_a_missing_file_is_an_empty_book(tmp_path) -> None:
    assert statefile.load(tmp_path / "absent.json") == {}


def test_what_is_owed_survives_a_restart(tmp_path) -> None:
    book = AlertBook(4 * 3600, 300)
    book.update(T0, analyze(shop_volume()).firing, [])
    path = tmp_path / "state.json"
    statefile.save(list(book), path)
    [alert] = statefile.load(path).values()
    assert alert.outbox is Owed.FIRING and not alert.notified
