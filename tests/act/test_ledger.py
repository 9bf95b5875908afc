"""The attempts kept: what a second click reads, a week of them at most."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from analyzer.act.ledger import MOST, Ledger
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
    for n in range(MOST + 10):
        ledger.record(_attempt(8 * 1440 + n))
    assert len(list(ledger)) == MOST


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
