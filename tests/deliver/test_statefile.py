"""The state file: typed alerts in, the same alerts out; what cannot be read is set aside."""

from __future__ import annotations

import json
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
    assert loaded == list(book.alerts.values())
    [alert] = loaded
    assert alert.finding.remedies and alert.finding.next_bottleneck is not None
    assert alert.finding.window_s == 300.0
    assert alert.absent_since == T0 + timedelta(minutes=5)


def test_a_file_written_by_version_0_1_is_read() -> None:
    [alert] = statefile.load(GOLDEN / "state_v1.json")
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
        ('"a string"', "document"),
        ('{"version": 1, "alerts": "oops"}', "alerts"),
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
        assert statefile.load(path) == []
    [event] = [e for e in logs if e["event"] == "state.unreadable"]
    assert why in event["error"]
    assert not path.exists() and (tmp_path / "state.json.unreadable").exists()


def test_a_file_that_cannot_be_moved_aside_does_not_crash(tmp_path, monkeypatch) -> None:
    path = tmp_path / "state.json"
    path.write_text("{not json")

    def refuse(self, target):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(type(path), "replace", refuse)
    with capture_logs() as logs:
        assert statefile.load(path) == []
    [event] = [e for e in logs if e["event"] == "state.unreadable"]
    assert event["moved_to"] is None and event["move_error"] == "Permission denied"


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({"state": "firing"}, "alerts.0.since"),
        ({"state": "gone", "since": "x", "finding": {}}, "alerts.0"),
        ("oops", "alerts.0"),
    ],
)
def test_an_entry_that_is_not_an_alert_is_set_aside_alone(tmp_path, entry, why) -> None:
    """The good alerts load; the bad entry is logged, and the file as it was is kept."""
    path = tmp_path / "state.json"
    statefile.save(list(book_with_an_alert()), path)
    document = json.loads(path.read_text())
    good = document["alerts"][0]
    document["alerts"] = [entry, good]
    path.write_text(json.dumps(document))
    with capture_logs() as logs:
        loaded = statefile.load(path)
    assert len(loaded) == 1
    [event] = [e for e in logs if e["event"] == "state.entry_skipped"]
    assert event["error"].startswith(why)
    assert json.loads((tmp_path / "state.json.rejected").read_text())["alerts"][0] == entry


@pytest.mark.parametrize(
    ("field", "value"),
    [("last_sent", "yesterday"), ("finding", "oops"), ("absent_cycles", -1)],
)
def test_a_wrongly_typed_field_is_caught_on_load(tmp_path, field, value) -> None:
    """It used to load, then fail every cycle silently."""
    path = tmp_path / "state.json"
    statefile.save(list(book_with_an_alert()), path)
    document = json.loads(path.read_text())
    document["alerts"][0][field] = value
    path.write_text(json.dumps(document))
    with capture_logs() as logs:
        assert statefile.load(path) == []
    [event] = [e for e in logs if e["event"] == "state.entry_skipped"]
    assert event["error"].startswith(f"alerts.0.{field}")


def test_a_missing_file_is_an_empty_book(tmp_path) -> None:
    assert statefile.load(tmp_path / "absent.json") == []


def test_what_is_owed_survives_a_restart(tmp_path) -> None:
    book = AlertBook(4 * 3600, 300)
    book.update(T0, analyze(shop_volume()).firing, [])
    path = tmp_path / "state.json"
    statefile.save(list(book), path)
    [alert] = statefile.load(path)
    assert alert.outbox is Owed.FIRING and not alert.notified
