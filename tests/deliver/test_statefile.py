"""The state file: typed alerts in, the same alerts out; what cannot be read is set aside."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from analyzer.analyze.alerts import AlertBook, AlertState, Owed
from analyzer.deliver import statefile
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


def test_what_the_inventory_said_of_an_alert_survives_a_restart(tmp_path) -> None:
    """A volume's instance when its alert began (a move during the restart still ends it),
    and the sentence of a resolution the inventory caused, still owed."""
    book = book_with_an_alert()
    [alert] = book.alerts.values()
    alert.attached_to, alert.ended = "i-1", "vol-1 was detached from i-1"
    path = tmp_path / "state.json"
    statefile.save(list(book), path)
    [loaded] = statefile.load(path)
    assert (loaded.attached_to, loaded.ended) == ("i-1", "vol-1 was detached from i-1")


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


def saved_document(tmp_path) -> tuple[Path, dict[str, Any]]:
    path = tmp_path / "state.json"
    statefile.save(list(book_with_an_alert()), path)
    return path, json.loads(path.read_text())


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("last_sent", "2026-11-25T15:00:00"),
        ("since", "2026-11-25T15:00:00"),
        ("firing_since", "2026-11-25T15:00:00"),
        ("absent_since", "2026-11-25T15:00:00"),
    ],
)
def test_a_time_without_a_timezone_is_caught_on_load(tmp_path, field, value) -> None:
    """It used to load, then every cycle failed comparing it with the clock."""
    path, document = saved_document(tmp_path)
    document["alerts"][0][field] = value
    path.write_text(json.dumps(document))
    with capture_logs() as logs:
        assert statefile.load(path) == []
    [event] = [e for e in logs if e["event"] == "state.entry_skipped"]
    assert event["error"].startswith(f"alerts.0.{field}")
    assert "timezone" in event["error"]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("fix_sized_for", "oops"),
        ("fix_sized_for", {"iops": "3000"}),
        ("fix_sized_for", {"iops": True}),
        ("holds_until_percent", "50"),
        ("holds_balance", 3),
        ("balance_percent", [1]),
        ("window_seconds", "300"),
    ],
)
def test_evidence_of_another_type_than_it_is_read_as_is_caught_on_load(
    tmp_path, key, value
) -> None:
    path, document = saved_document(tmp_path)
    document["alerts"][0]["finding"]["evidence"][key] = value
    path.write_text(json.dumps(document))
    with capture_logs() as logs:
        assert statefile.load(path) == []
    [event] = [e for e in logs if e["event"] == "state.entry_skipped"]
    assert event["error"].startswith("alerts.0.finding.evidence")
    assert key in event["error"]


def test_evidence_of_the_types_it_is_read_as_loads(tmp_path) -> None:
    path, document = saved_document(tmp_path)
    document["alerts"][0]["finding"]["evidence"].update(
        {
            "fix_sized_for": {"iops": 3000, "mib_per_second": 125.5},
            "holds_until_percent": 50,
            "holds_balance": "BurstBalance",
            "balance_percent": None,
        }
    )
    path.write_text(json.dumps(document))
    [alert] = statefile.load(path)
    assert alert.finding.evidence["fix_sized_for"] == {"iops": 3000, "mib_per_second": 125.5}


@pytest.mark.parametrize(
    "content",
    ["[" * 100_000, '{"version": 1, "alerts": ' + "[" * 100_000 + "]" * 100_000 + "}"],
    ids=["unclosed", "closed"],
)
def test_brackets_nested_too_deep_are_set_aside(tmp_path, content) -> None:
    """It used to end the start in a RecursionError, and every restart after it."""
    path = tmp_path / "state.json"
    path.write_text(content)
    with capture_logs() as logs:
        assert statefile.load(path) == []
    [event] = [e for e in logs if e["event"] == "state.unreadable"]
    assert event["moved_to"] == str(tmp_path / "state.json.unreadable")
    assert not path.exists()


def test_a_file_too_large_is_set_aside_unread(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(statefile, "MAX_BYTES", 1000)
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"version": 1, "alerts": [], "pad": "x" * 2000}))
    with capture_logs() as logs:
        assert statefile.load(path) == []
    [event] = [e for e in logs if e["event"] == "state.unreadable"]
    assert "bytes, more than the 1000" in event["error"]
    assert (tmp_path / "state.json.unreadable").exists()


def test_a_symbolic_link_is_written_through_to_its_target(tmp_path) -> None:
    """It used to be replaced by a regular file: the target, on a persistent volume say, was
    never updated again."""
    volume = tmp_path / "volume"
    volume.mkdir()
    (volume / "state.json").write_text(json.dumps({"version": 1, "alerts": []}))
    link = tmp_path / "state.json"
    link.symlink_to(volume / "state.json")
    statefile.check_writable(link)
    statefile.save(list(book_with_an_alert()), link)
    assert link.is_symlink()
    assert len(json.loads((volume / "state.json").read_text())["alerts"]) == 1
    assert len(statefile.load(link)) == 1
    assert sorted(p.name for p in volume.iterdir()) == ["state.json"]  # no temporary left


def test_a_link_whose_target_is_missing_is_written_through(tmp_path) -> None:
    link = tmp_path / "state.json"
    link.symlink_to(tmp_path / "volume" / "state.json")
    assert statefile.load(link) == []
    statefile.check_writable(link)
    statefile.save(list(book_with_an_alert()), link)
    assert link.is_symlink() and (tmp_path / "volume" / "state.json").exists()


def test_an_unreadable_target_is_set_aside_beside_itself_and_the_link_kept(tmp_path) -> None:
    volume = tmp_path / "volume"
    volume.mkdir()
    (volume / "state.json").write_text("{not json")
    link = tmp_path / "state.json"
    link.symlink_to(volume / "state.json")
    assert statefile.load(link) == []
    assert (volume / "state.json.unreadable").exists() and link.is_symlink()


def test_a_loop_of_links_cannot_be_written(tmp_path) -> None:
    link = tmp_path / "state.json"
    link.symlink_to(tmp_path / "other.json")
    (tmp_path / "other.json").symlink_to(link)
    with pytest.raises(OSError, match="symbolic links"):
        statefile.check_writable(link)


def test_the_file_and_its_folder_reach_the_disk_around_the_rename(tmp_path, monkeypatch) -> None:
    synced: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(handle: int) -> None:
        synced.append("folder" if os.path.isdir(f"/proc/self/fd/{handle}") else "file")
        real_fsync(handle)

    def replace(source: Any, destination: Any) -> None:
        synced.append("rename")
        real_replace(source, destination)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    statefile.save(list(book_with_an_alert()), tmp_path / "state.json")
    assert synced == ["file", "rename", "folder"]


def test_the_receivers_deadline_survives_a_restart(tmp_path) -> None:
    path = tmp_path / "state.json"
    deadline = T0 + timedelta(seconds=90)
    statefile.save(list(book_with_an_alert()), path, not_before=deadline)
    state = statefile.load_state(path)
    assert state.not_before == deadline and len(state.alerts) == 1


@pytest.mark.parametrize("value", ["2026-11-25T15:00:00", "soon", [1]])
def test_a_deadline_that_cannot_be_read_is_dropped_alone(tmp_path, value) -> None:
    path, document = saved_document(tmp_path)
    document["not_before"] = value
    path.write_text(json.dumps(document))
    with capture_logs() as logs:
        state = statefile.load_state(path)
    assert state.not_before is None and len(state.alerts) == 1
    [event] = [e for e in logs if e["event"] == "state.entry_skipped"]
    assert event["error"].startswith("not_before")


def test_alerts_of_two_accounts_with_one_id_do_not_collide(tmp_path) -> None:
    """RDS identifiers are their owner's choice: `orders` in two accounts is two alerts, kept
    apart in the book and in the file, each with its account."""
    from tests.helpers import in_account

    prod = in_account(shop_volume(), "111111111111", "prod")
    staging = in_account(shop_volume(), "222222222222")
    analysis = analyze(prod, staging)
    book = AlertBook(4 * 3600, 300)
    book.update(T0, analysis.firing, [])
    assert len(book.alerts) == 2
    path = tmp_path / "state.json"
    statefile.save(list(book), path)
    document = json.loads(path.read_text())
    assert {a["account_id"] for a in document["alerts"]} == {"111111111111", "222222222222"}
    loaded = statefile.load(path)
    assert loaded == list(book.alerts.values())
    owners = {(a.finding.resource.account_id, a.finding.resource.account_name) for a in loaded}
    assert owners == {("111111111111", "prod"), ("222222222222", "")}
    assert len({a.key for a in loaded}) == 2


def test_the_attempts_to_apply_fixes_survive_a_restart_each_read_on_its_own(tmp_path) -> None:
    from analyzer.model.applied import Attempt

    at = datetime(2026, 11, 28, 9, tzinfo=UTC)
    kept = [
        Attempt(
            "vol-1:type=gp3",
            "U1",
            "slack",
            at,
            "applied",
            "done",
            {"volume_type": "gp2"},
            {"volume_type": "gp3"},
            "optimizing",
        ),
        Attempt("vol-2:type=gp3", "ana", "cli", at, "refused", "outside the apply scope"),
    ]
    path = tmp_path / "state.json"
    statefile.save([], path, None, kept)
    assert statefile.load_state(path).applied == kept
    document = json.loads(path.read_text())
    document["applied"].append({"fix_id": "vol-3", "at": "yesterday"})
    state, rejected = statefile.read_state(document)
    assert state.applied == kept and len(rejected) == 1 and rejected[0].startswith("applied.2")
    # A file written before fixes were applied has none.
    del document["applied"]
    assert statefile.read_state(document)[0].applied == []


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(min_size=0, max_size=2_500),
    state=st.sampled_from(
        ["storage-initialization", "storage-config-upgrade", "storage-optimization", "x" * 90]
    ),
    count=st.integers(min_value=1, max_value=10**6),
    settled=st.booleans(),
)
def test_every_attempt_the_daemon_writes_it_reads_back(text, state, count, settled) -> None:
    """An RDS status of 22 characters was written and then refused on reading: each text is
    cut to what reading allows on its way out, never the record."""
    from analyzer.model.applied import Attempt

    at = datetime(2026, 11, 28, 9, tzinfo=UTC)
    written = Attempt(
        f"db-1:type=gp3,{text[:20]}",
        text[:400] or "U1",
        "slack",
        at,
        "applied",
        text,
        state=state,
        started=at - timedelta(minutes=3),
        settled=settled,
        count=count,
    )
    state_read, rejected = statefile.read_state(
        json.loads(json.dumps(statefile.encode([], None, [written])))
    )
    assert rejected == []
    [read] = state_read.applied
    assert (read.started, read.settled, read.count, read.at) == (
        written.started,
        settled,
        count,
        at,
    )
    assert read.state is not None and written.state is not None
    assert written.state.startswith(read.state.rstrip("…"))
    assert written.reason.startswith(read.reason.rstrip("…"))


def test_an_alert_from_a_file_that_said_no_limits_was_judged_on_those_when_it_began(
    tmp_path,
) -> None:
    """A file written before findings said which limits they were judged under: a
    modification before the alert began is no news to it, and must not end it."""
    book = book_with_an_alert()
    path = tmp_path / "state.json"
    statefile.save(list(book), path)
    document = json.loads(path.read_text())
    del document["alerts"][0]["finding"]["limits_since"]
    state, rejected = statefile.read_state(document)
    [alert] = state.alerts
    assert rejected == [] and alert.finding.limits_since == alert.since
    # A file that says it (None: the volume as first described) keeps what it says.
    [kept] = statefile.load(path)
    assert kept.finding.limits_since is None


def test_a_limits_moment_without_a_timezone_is_refused_alone(tmp_path) -> None:
    """A naive time would load, then fail every cycle that compares it with the clock."""
    book = book_with_an_alert()
    path = tmp_path / "state.json"
    statefile.save(list(book), path)
    document = json.loads(path.read_text())
    document["alerts"][0]["finding"]["limits_since"] = "2026-11-21T08:00:00"
    state, rejected = statefile.read_state(document)
    assert state.alerts == [] and len(rejected) == 1
    assert rejected[0].startswith("alerts.0.finding.limits_since")


def test_the_long_pasts_are_kept_beside_the_state_file(tmp_path) -> None:
    """Thousands of volumes' figures are written when they change, apart from the alerts,
    which are written every cycle and after every message."""
    path = tmp_path / "state.json"
    section = '[{"scope":"us-east-1","volume_id":"vol-1","stretches":[]}]'
    statefile.save(list(book_with_an_alert()), path, savings_digest_at=T0)
    statefile.save_long_pasts(path, section)
    assert statefile.long_pasts_path(path) == tmp_path / "state.json.long-pasts"
    assert "long_pasts" not in json.loads(path.read_text())
    assert statefile.load_long_pasts(path) == json.loads(section)
    state = statefile.load_state(path)
    assert state.savings_digest_at == T0 and len(state.alerts) == 1


def test_long_pasts_that_cannot_be_read_are_set_aside_and_the_alerts_kept(tmp_path) -> None:
    path = tmp_path / "state.json"
    statefile.save(list(book_with_an_alert()), path)
    statefile.long_pasts_path(path).write_text("[{broken")
    with capture_logs() as logs:
        assert statefile.load_long_pasts(path) is None
    assert (tmp_path / "state.json.long-pasts.unreadable").exists()
    assert [e["event"] for e in logs] == ["state.unreadable"]
    assert len(statefile.load_state(path).alerts) == 1
    assert statefile.load_long_pasts(tmp_path / "none.json") is None


def test_a_digest_time_that_cannot_be_read_loses_nothing_else(tmp_path) -> None:
    path = tmp_path / "state.json"
    statefile.save(list(book_with_an_alert()), path)
    document = json.loads(path.read_text())
    document["savings_digest_at"] = "last tuesday"
    state, rejected = statefile.read_state(document)
    assert state.savings_digest_at is None and len(state.alerts) == 1
    assert rejected and rejected[0].startswith("savings_digest_at")
