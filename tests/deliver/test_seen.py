"""The record of signed Slack requests already taken: kept for the window, persisted as
digests, read back whatever a state file holds."""

from __future__ import annotations

import json

import pytest
from structlog.testing import capture_logs

from analyzer.deliver.seen import KEPT_S, MAX_RECORDS, Seen, digest

NOW = 1_764_300_000.0
SIGNATURE = "v0=" + "ab" * 32


def test_a_signature_is_new_once_within_the_window_and_let_go_of_after() -> None:
    seen = Seen()
    assert seen.add(SIGNATURE, NOW) is True
    assert seen.add(SIGNATURE, NOW + KEPT_S) is False
    assert seen.add("v0=" + "cd" * 32, NOW + KEPT_S + 1) is True
    assert len(seen) == 1  # the first was let go of past the window
    assert seen.add(SIGNATURE, NOW + KEPT_S + 2) is True


def test_the_record_keeps_digests_and_times_and_reads_back_the_same() -> None:
    seen = Seen()
    seen.add(SIGNATURE, NOW)
    seen.add("v0=" + "cd" * 32, NOW + 1)
    records = json.loads(json.dumps(seen.records()))
    assert records == [
        {"sha256": digest(SIGNATURE), "at": NOW},
        {"sha256": digest("v0=" + "cd" * 32), "at": NOW + 1},
    ]
    assert SIGNATURE[3:] not in json.dumps(records)
    again = Seen.from_records(records, NOW + 60)
    assert again.records() == records
    assert again.add(SIGNATURE, NOW + 60) is False


def test_entries_past_the_window_are_not_read_back() -> None:
    records = [{"sha256": digest(SIGNATURE), "at": NOW}]
    with capture_logs() as logs:
        assert Seen.from_records(records, NOW + KEPT_S + 1).records() == []
    assert logs == []  # old, not malformed: nothing to say


GOOD = {"sha256": "0" * 64, "at": NOW}


@pytest.mark.parametrize(
    ("records", "skipped"),
    [
        (None, 0),
        ([], 0),
        ({"sha256": "0" * 64, "at": NOW}, "all"),
        ("nonsense", "all"),
        ([GOOD, 5], 1),
        ([GOOD, None, "x", [1]], 3),
        ([GOOD, {"sha256": "0" * 64}], 1),
        ([GOOD, {"at": NOW}], 1),
        ([GOOD, {"sha256": "0" * 63, "at": NOW}], 1),
        ([GOOD, {"sha256": "A" * 64, "at": NOW}], 1),
        ([GOOD, {"sha256": "0" * 64 + "\n", "at": NOW}], 1),
        ([GOOD, {"sha256": 7, "at": NOW}], 1),
        ([GOOD, {"sha256": "1" * 64, "at": "yesterday"}], 1),
        ([GOOD, {"sha256": "1" * 64, "at": True}], 1),
        ([GOOD, {"sha256": "1" * 64, "at": float("nan")}], 1),
        ([GOOD, {"sha256": "1" * 64, "at": float("inf")}], 1),
        ([GOOD, {"sha256": "1" * 64, "at": NOW + 86_400}], 1),
    ],
)
def test_a_record_that_is_not_one_is_skipped_with_one_line(records, skipped) -> None:
    with capture_logs() as logs:
        seen = Seen.from_records(records, NOW)
    if skipped == 0:
        assert logs == [] and seen.records() == []
        return
    assert [e["event"] for e in logs] == ["slack.seen_skipped"]
    assert logs[0]["skipped"] == skipped
    if skipped != "all":
        assert seen.records() == [GOOD]
        assert all(isinstance(r, str) for r in logs[0]["reasons"])


def test_a_record_read_back_is_bounded() -> None:
    records = [{"sha256": f"{n:064x}", "at": NOW - n * 0.01} for n in range(MAX_RECORDS + 5)]
    with capture_logs() as logs:
        seen = Seen.from_records(records, NOW)
    assert len(seen) == MAX_RECORDS and logs[0]["skipped"] == 5
    assert seen.records()[-1] == {"sha256": "0" * 64, "at": NOW}  # the newest kept
