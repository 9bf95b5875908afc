"""The attempts kept: what a second click reads, a week of them at most."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from analyzer.act.ledger import DENIALS_FOLDED, MOST, MOST_ACTED, Ledger
from analyzer.model.applied import Attempt

T0 = datetime(2026, 11, 28, 12, tzinfo=UTC)


def _attempt(minutes: float, outcome: str = "applied", fix: str = "vol-1:type=gp3") -> Attempt:
    return Attempt(fix, "U1", "slack", T0 + timedelta(minutes=minutes), outcome)


def test_the_latest_applied_attempt_of_a_fix_is_found_since_a_moment() -> None:
    ledger = Ledger([_attempt(0, "refused"), _attempt(5), _attempt(9, fix="vol-2:type=gp3")])
    found = ledger.applied("vol-1:type=gp3", T0)
    assert found is not None and found.at == T0 + timedelta(minutes=5)
    assert ledger.applied("vol-1:type=gp3", T0 + timedelta(minutes=6)) is None
    assert ledger.applied("vol-3:type=gp3", T0) is None


def test_a_week_is_kept_and_no_more_than_the_bound() -> None:
    ledger = Ledger()
    ledger.record(_attempt(0))
    ledger.record(_attempt(7 * 1440 + 1))
    assert [a.at for a in ledger] == [T0 + timedelta(minutes=7 * 1440 + 1)]
    for n in range(MOST_ACTED + 10):
        ledger.record(_attempt(8 * 1440 + n / 100))
    assert len(list(ledger)) == MOST_ACTED


def test_refusals_never_evict_what_aws_was_asked_to_do_within_its_week() -> None:
    ledger = Ledger([_attempt(0), _attempt(1, "failed"), _attempt(2, "unknown")])
    for n in range(3 * MOST):
        ledger.record(_attempt(3 + n / 100, "refused", fix=f"vol-{n}:type=gp3"))
    kept = list(ledger)
    assert [a.outcome for a in kept[:3]] == ["applied", "failed", "unknown"]
    assert sum(a.outcome == "refused" for a in kept) == MOST
    assert ledger.applied("vol-1:type=gp3", T0) is not None
    assert len(ledger.made("vol-1")) == 2  # applied, and the one whose outcome is unknown


def test_a_users_repeated_denials_are_counted_on_one_record() -> None:
    ledger = Ledger([_attempt(0)])
    firsts = [
        ledger.denied(Attempt("vol-1:size=500", who, "slack", T0 + timedelta(seconds=n), "denied"))
        for n in range(600)
        for who in ("U9",)
    ]
    assert firsts[0] and not any(firsts[1:])
    [applied, denied] = list(ledger)
    assert applied.applied and (denied.who, denied.count) == ("U9", 600)
    # Another user's, or the same user's an hour later, is a record of its own.
    assert ledger.denied(Attempt("x:type=gp3", "U8", "slack", T0, "denied"))
    later = T0 + DENIALS_FOLDED + timedelta(seconds=1)
    assert ledger.denied(Attempt("x:type=gp3", "U9", "slack", later, "denied"))
    assert len(list(ledger)) == 4


def test_the_record_of_an_accepted_change_is_replaced_in_place_once_read_back() -> None:
    accepted = Attempt("vol-1:type=gp3", "U1", "slack", T0, "applied", settled=False)
    ledger = Ledger([accepted, _attempt(1, "refused")])
    assert ledger.unsettled() == [accepted]
    final = Attempt("vol-1:type=gp3", "U1", "slack", T0, "applied", state="optimizing")
    ledger.settle(accepted, final)
    assert next(iter(ledger)) == final and ledger.unsettled() == []


def test_the_daily_count_keys_on_the_start_aws_reported() -> None:
    started = T0 - timedelta(minutes=3)
    ledger = Ledger([Attempt("vol-1:type=gp3", "U1", "slack", T0, "applied", started=started)])
    assert ledger.made("vol-1") == [started]


def test_a_fix_being_applied_is_held_by_one_caller_at_a_time() -> None:
    ledger = Ledger()
    inside = threading.Event()
    release = threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with ledger.holding("vol-1:type=gp3") as mine:
            seen.append(mine)
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=first)
    thread.start()
    inside.wait(5)
    with ledger.holding("vol-1:type=gp3") as mine:
        seen.append(mine)
    with ledger.holding("vol-2:type=gp3") as other:
        seen.append(other)
    release.set()
    thread.join()
    with ledger.holding("vol-1:type=gp3") as mine:
        seen.append(mine)
    assert seen == [True, False, True, True]


def test_a_fix_tried_one_way_is_known_whatever_came_of_it() -> None:
    ledger = Ledger([_attempt(0, "refused")])
    assert ledger.tried("vol-1:type=gp3", T0, "slack")
    assert not ledger.tried("vol-1:type=gp3", T0, "policy")
    assert not ledger.tried("vol-1:type=gp3", T0 + timedelta(minutes=1), "slack")
