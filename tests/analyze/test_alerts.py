"""The alert lifecycle as a table: each row a sequence of cycles, and what the book says after
each. No AWS, no simulator, no HTTP: findings are made by hand, delivery is a call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta

import pytest

from analyzer.analyze.alerts import AlertBook, AlertState, Owed
from analyzer.deliver import statefile
from analyzer.model.findings import Bottleneck, Credit, Finding, Remedy, RemedyKind, Severity
from analyzer.model.metrics import Measure
from analyzer.model.reading import Reading
from analyzer.model.resources import ResourceRef, ResourceType
from analyzer.model.units import Unit
from tests.fakes import reading, reads
from tests.helpers import T0

REPEAT_S = 4 * 3600
RESOLVE_S = 300

WARNING = Finding(
    rule="gp2-burst-exhaustion",
    severity=Severity.WARNING,
    resource=ResourceRef(ResourceType.VOLUME, "vol-1", "us-east-1"),
    bottleneck=Bottleneck.BURST_CREDITS,
    summary="vol-1: BurstBalance 40% → 0 in 24 min",
    observed=1_500.0,
    limit=150.0,
    unit=Unit.IOPS,
    seconds_to_empty=1_450.0,
)
CRITICAL = replace(WARNING, severity=Severity.CRITICAL)
INFO = replace(WARNING, severity=Severity.INFO)
LEAST = Severity.WARNING
"""The channels' floor in the table (the daemon's default `notify_severity`)."""


@dataclass(frozen=True)
class Step:
    """One cycle: `minute` after T0, what fires and what is pending, whether the channel
    takes what is owed; then the alert's state and what it still owes (None: no alert)."""

    minute: float
    firing: tuple[Finding, ...] = ()
    pending: tuple[Finding, ...] = ()
    deliver: bool = True
    state: AlertState | None = None
    owed: Owed | None = None
    sent: int = 0
    """Messages the channel has taken about this alert so far."""


F, P, R = AlertState.FIRING, AlertState.PENDING, AlertState.RESOLVED

TABLE = {
    "pending, then firing once `for` has held": [
        Step(0, pending=(WARNING,), state=P),
        Step(1, pending=(WARNING,), state=P),
        Step(2, firing=(WARNING,), state=F, sent=1),
    ],
    "pending that clears is forgotten, never sent": [
        Step(0, pending=(WARNING,), state=P),
        Step(1, state=None),
    ],
    "an unchanged firing alert is sent once, then again after the repeat interval": [
        Step(0, firing=(WARNING,), state=F, sent=1),
        Step(60, firing=(WARNING,), state=F, sent=1),
        Step(239, firing=(WARNING,), state=F, sent=1),
        Step(240, firing=(WARNING,), state=F, sent=2),
        Step(241, firing=(WARNING,), state=F, sent=2),
    ],
    "a severity change is sent at once": [
        Step(0, firing=(WARNING,), state=F, sent=1),
        Step(1, firing=(CRITICAL,), state=F, sent=2),
        Step(2, firing=(CRITICAL,), state=F, sent=2),
    ],
    "one absent cycle neither resolves nor re-sends": [
        Step(0, firing=(WARNING,), state=F, sent=1),
        Step(10, state=F, sent=1),
        Step(11, firing=(WARNING,), state=F, sent=1),
        Step(30, state=F, sent=1),
        Step(31, firing=(WARNING,), state=F, sent=1),
    ],
    "gone for resolve_after and two cycles: resolved, sent, then forgotten": [
        Step(0, firing=(WARNING,), state=F, sent=1),
        Step(1, state=F, sent=1),
        Step(3, state=F, sent=1),
        Step(6, state=None, sent=2),
    ],
    "two quick absent cycles are not enough time": [
        Step(0, firing=(WARNING,), state=F, sent=1),
        Step(1, state=F, sent=1),
        Step(2, state=F, sent=1),
        Step(6.5, state=None, sent=2),
    ],
    "a failed delivery stays owed and goes out with the next cycle": [
        Step(0, firing=(WARNING,), deliver=False, state=F, owed=Owed.FIRING),
        Step(1, firing=(WARNING,), deliver=False, state=F, owed=Owed.FIRING),
        Step(2, firing=(WARNING,), state=F, sent=1),
    ],
    "an alert that fired and cleared while the channel was down is still announced": [
        Step(0, firing=(WARNING,), deliver=False, state=F, owed=Owed.FIRING),
        Step(1, deliver=False, state=F, owed=Owed.FIRING),
        Step(6, deliver=False, state=R, owed=Owed.RESOLVED),
        Step(7, state=None, sent=1),
    ],
    "an undelivered resolution stays owed": [
        Step(0, firing=(WARNING,), state=F, sent=1),
        Step(1, state=F, sent=1),
        Step(6, deliver=False, state=R, owed=Owed.RESOLVED, sent=1),
        Step(7, state=None, sent=2),
    ],
    "an info alert fires, shows and resolves without a message": [
        Step(0, firing=(INFO,), state=F),
        Step(240, firing=(INFO,), state=F),
        Step(241, state=F),
        Step(246, state=None),
    ],
    "an info alert is sent once it escalates to a warning": [
        Step(0, firing=(INFO,), state=F),
        Step(1, firing=(WARNING,), state=F, sent=1),
        Step(2, firing=(WARNING,), state=F, sent=1),
        Step(3, state=F, sent=1),
        Step(8, state=None, sent=2),
    ],
    "a warning that drops to info before its message got out is not sent": [
        Step(0, firing=(WARNING,), deliver=False, state=F, owed=Owed.FIRING),
        Step(1, firing=(INFO,), state=F),
        Step(2, state=F),
        Step(7, state=None),
    ],
    "a sent warning that drops to info says so, and resolves": [
        Step(0, firing=(WARNING,), state=F, sent=1),
        Step(1, firing=(INFO,), state=F, sent=2),
        Step(2, firing=(INFO,), state=F, sent=2),
        Step(3, state=F, sent=2),
        Step(8, state=None, sent=3),
    ],
    "firing again after resolving is a new alert": [
        Step(0, firing=(WARNING,), state=F, sent=1),
        Step(1, state=F, sent=1),
        Step(6, state=None, sent=2),
        Step(7, firing=(WARNING,), state=F, sent=3),
    ],
}


@pytest.mark.parametrize("restart", [False, True], ids=["running", "restarted every cycle"])
@pytest.mark.parametrize("name", list(TABLE))
def test_lifecycle(name: str, restart: bool, tmp_path) -> None:
    """Each row, and each row again with the daemon restarted after every cycle (the book
    saved to the state file and read back): a restart changes nothing."""
    book = AlertBook(REPEAT_S, RESOLVE_S, LEAST)
    sent = 0
    for step in TABLE[name]:
        now = T0 + timedelta(minutes=step.minute)
        book.update(now, step.firing, step.pending)
        if step.deliver and (owed := book.owed()):
            book.delivered(owed, now)
            sent += len(owed)
        if restart:
            statefile.save(list(book), tmp_path / "state.json")
            book = AlertBook(REPEAT_S, RESOLVE_S, LEAST)
            book.restore(statefile.load(tmp_path / "state.json"))
        alert = book.alerts.get(WARNING.key)
        where = f"{name}, minute {step.minute}"
        assert (alert.state if alert else None) == step.state, where
        assert (alert.outbox if alert else None) == step.owed, where
        assert sent == step.sent, where


def test_the_alert_keeps_the_latest_finding_and_when_it_began() -> None:
    book = AlertBook(REPEAT_S, RESOLVE_S)
    book.update(T0, [WARNING], [])
    later = replace(WARNING, summary="vol-1: BurstBalance 30% → 0 in 18 min")
    book.update(T0 + timedelta(minutes=1), [later], [])
    [alert] = book.firing()
    assert alert.finding.summary == later.summary
    assert alert.since == alert.firing_since == T0


def test_even_without_resolve_after_one_absent_cycle_does_not_resolve() -> None:
    book = AlertBook(REPEAT_S, resolve_after_s=0)
    book.update(T0, [WARNING], [])
    book.delivered(book.owed(), T0)
    book.update(T0 + timedelta(minutes=1), [], [])
    assert book.alerts[WARNING.key].state is AlertState.FIRING
    book.update(T0 + timedelta(minutes=2), [], [])
    assert book.alerts[WARNING.key].state is AlertState.RESOLVED


def test_steady_names_the_limits_of_alerts_that_fire_and_are_still_found() -> None:
    """A resource is steady while every alert of it fires with its finding still found: one
    pending, or one clearing, and the next minutes decide something about it."""
    cap = replace(
        WARNING,
        rule="volume-iops-cap",
        resource=ResourceRef(ResourceType.VOLUME, "vol-2", "us-east-1"),
        bottleneck=Bottleneck.VOLUME_IOPS,
    )
    other = replace(cap, rule="volume-throughput-cap", bottleneck=Bottleneck.VOLUME_THROUGHPUT)
    book = AlertBook(REPEAT_S, RESOLVE_S)
    book.update(T0, [WARNING, cap], [other])
    # vol-2 has a pending alert: not steady.
    assert book.steady() == {("us-east-1", "vol-1"): {Bottleneck.BURST_CREDITS}}
    book.update(T0 + timedelta(minutes=1), [cap, other], [])
    # vol-1's warning is no longer found: clearing, not steady.
    assert book.steady() == {
        ("us-east-1", "vol-2"): {Bottleneck.VOLUME_IOPS, Bottleneck.VOLUME_THROUGHPUT}
    }
    book.update(T0 + timedelta(minutes=2), [WARNING, cap, other], [])
    assert set(book.steady()) == {("us-east-1", "vol-1"), ("us-east-1", "vol-2")}
    # A rule whose condition moves with the days names nothing the next minutes can change.
    assert book.steady(daily={"gp2-burst-exhaustion"})[("us-east-1", "vol-1")] == set()


def test_a_resolved_message_says_what_cleared_and_when() -> None:
    cap = replace(
        WARNING,
        rule="volume-iops-cap",
        bottleneck=Bottleneck.VOLUME_IOPS,
        limit=3_000.0,
        observed=3_000.0,
        seconds_to_empty=None,
    )
    book = AlertBook(REPEAT_S, RESOLVE_S)
    book.update(T0, [cap], [])
    book.delivered(book.owed(), T0)
    for minute in (34, 35, 40):
        book.update(T0 + timedelta(minutes=minute), [], [])
    [alert] = list(book)
    text = alert.cleared(T0 + timedelta(minutes=40))
    assert text == (
        "vol-1: no longer pinned at its 3,000 IOPS cap; cleared 12:34 UTC after firing for 34 min."
    )
    assert "→ 0" not in text


def test_a_forecast_resolved_at_zero_is_still_a_forecast() -> None:
    """A forecast whose time to empty reached 0 before it cleared is not an exhausted bucket."""
    at_zero = replace(WARNING, seconds_to_empty=0.0)
    exhausted = replace(
        WARNING,
        rule="volume-burst-credits-exhausted",
        seconds_to_empty=0.0,
        evidence={"pinned_datapoints": 10},
        credit=Credit(Measure.BURST_BALANCE, empty=True),
    )
    book = AlertBook(REPEAT_S, RESOLVE_S)
    book.update(T0, [at_zero, exhausted], [])
    texts = {a.rule: a.cleared(T0 + timedelta(minutes=5)) for a in book}
    assert "no longer forecast to run out" in texts["gp2-burst-exhaustion"]
    assert "no longer held at its baseline" in texts["volume-burst-credits-exhausted"]


def test_a_cleared_credit_alert_says_when_the_bucket_is_full_again() -> None:
    """Read from the cycle that resolves it, kept through a restart, said once."""
    exhausted = replace(
        WARNING,
        rule="volume-burst-credits-exhausted",
        seconds_to_empty=0.0,
        evidence={"pinned_datapoints": 10},
        credit=Credit(Measure.BURST_BALANCE, empty=True),
    )
    asked: list[tuple[str, str]] = []

    def read(region: str, resource_id: str) -> Reading | None:
        asked.append((region, resource_id))
        return reading(seconds_to_full=5_400.0)

    book = AlertBook(REPEAT_S, RESOLVE_S)
    book.update(T0, [exhausted], [], read=read)
    book.delivered(book.owed(), T0)
    for minute in (10, 11, 16):
        book.update(T0 + timedelta(minutes=minute), [], [], read=read)
    assert asked == [("us-east-1", "vol-1")]  # once, when it resolves
    [alert] = statefile.decode(statefile.encode(list(book)))
    assert alert.cleared(T0 + timedelta(minutes=16)).endswith(
        "cleared 12:10 UTC after firing for 10 min; credits full again in 90 min at the "
        "present rate."
    )


def _sized(iops: float, action: str) -> Finding:
    return replace(
        WARNING,
        evidence={"fix_sized_for": {"iops": iops, "mib_per_second": iops * 16 / 1024}},
        sized_for={"iops": iops, "mib_per_second": iops * 16 / 1024},
        remedies=(Remedy(action, 100.0, 10.0, kind=RemedyKind.MODIFY),),
    )


def test_a_firing_alert_keeps_its_fix_until_the_need_moves_by_a_fifth() -> None:
    """One volume used to get 3,600, then 6,000, then 3,000 IOPS within half an hour."""
    book = AlertBook(REPEAT_S, RESOLVE_S)
    book.update(T0, [_sized(3_600, "Provision 3,600 IOPS")], [])
    book.delivered(book.owed(), T0)
    book.update(T0 + timedelta(minutes=1), [_sized(3_000, "Provision 3,000 IOPS")], [])
    [alert] = list(book)
    assert [r.action for r in alert.finding.remedies] == ["Provision 3,600 IOPS"]
    assert alert.finding.evidence["fix_sized_for"]["iops"] == 3_600
    book.update(T0 + timedelta(minutes=2), [_sized(4_200, "Provision 4,200 IOPS")], [])
    assert [r.action for r in alert.finding.remedies] == ["Provision 3,600 IOPS"]
    book.update(T0 + timedelta(minutes=3), [_sized(6_000, "Provision 6,000 IOPS")], [])
    assert [r.action for r in alert.finding.remedies] == ["Provision 6,000 IOPS"]


def test_an_alert_not_yet_sent_takes_the_newest_fix() -> None:
    book = AlertBook(REPEAT_S, RESOLVE_S)
    book.update(T0, [_sized(3_600, "Provision 3,600 IOPS")], [])
    book.update(T0 + timedelta(minutes=1), [_sized(3_000, "Provision 3,000 IOPS")], [])
    [alert] = list(book)
    assert [r.action for r in alert.finding.remedies] == ["Provision 3,000 IOPS"]


@pytest.mark.parametrize("restart", [False, True], ids=["in one run", "across a restart"])
def test_an_owed_resolution_is_not_overwritten_when_the_alert_fires_again(
    tmp_path, restart
) -> None:
    """Slack is down while an alert clears and fires again: the receiver used to see
    "Firing, Firing". It sees Firing, Resolved, Firing, in that order."""
    from analyzer.deliver import slack

    book = AlertBook(REPEAT_S, RESOLVE_S)
    book.update(T0, [WARNING], [])
    heard = [m["text"].split(":")[0] for _, m in slack.messages(book.owed(), T0)]
    book.delivered(book.owed(), T0)
    for minute in (1, 7):  # cleared; Slack down, so the "Resolved" stays owed
        book.update(T0 + timedelta(minutes=minute), [], [])
    book.update(T0 + timedelta(minutes=8), [WARNING], [])  # fires again, Slack still down
    if restart:
        statefile.save(list(book), tmp_path / "state.json")
        book = AlertBook(REPEAT_S, RESOLVE_S)
        book.restore(statefile.load(tmp_path / "state.json"))
    now = T0 + timedelta(minutes=9)
    for alerts, message in slack.messages(book.owed(), now):
        heard.append(message["text"].split(":")[0])
        book.delivered(alerts, now)
    assert heard == ["1 storage bottleneck on AWS", "Resolved", "1 storage bottleneck on AWS"]
    assert book.owed() == [] and [a.state for a in book] == [AlertState.FIRING]


HELD = replace(
    WARNING,
    evidence={
        "balance_percent": 15.0,
        "holds_until_percent": 35.0,
        "holds_balance": "burst_balance",
    },
    credit=Credit(Measure.BURST_BALANCE, balance_percent=15.0, holds_until_percent=35.0),
)


def _level(balance: float | None) -> Callable[[str, str], Reading | None]:
    """vol-1's reading, its BurstBalance at `balance` (None: not read)."""
    found = {} if balance is None else {Measure.BURST_BALANCE: balance}
    return reads(reading(balances=found))


def test_a_credit_warning_holds_while_its_bucket_stays_below_its_level(tmp_path) -> None:
    """The bucket hovers between 15 % and 33 % between bursts: the condition comes and goes,
    the alert holds (through a restart too) until the bucket refills past 35 %, says
    meanwhile what it holds for, and its resolved message says what released it."""
    balances = {0: 15.0, 10: 25.0, 40: 33.0, 70: 18.0, 71: 22.0, 100: 36.0, 103: 37.0, 106: 38.0}
    book = AlertBook(REPEAT_S, RESOLVE_S)
    states, texts = {}, []
    for minute, balance in balances.items():
        now = T0 + timedelta(minutes=minute)
        book.update(now, [HELD] if balance < 20 else [], [], read=_level(balance))
        texts += [
            a.cleared(now) if a.outbox is Owed.RESOLVED else a.finding.summary for a in book.owed()
        ]
        book.delivered(book.owed(), now)
        alert = book.alerts.get(HELD.key)
        states[minute] = alert.state if alert else None
        if minute == 40:
            assert alert is not None and alert.finding.seconds_to_empty is None
            assert alert.finding.summary == (
                "Held until the balance refills past 35% (now 33%). Last forecast: "
                "vol-1: BurstBalance 40% → 0 in 24 min"
            )
        statefile.save(list(book), tmp_path / "state.json")
        book = AlertBook(REPEAT_S, RESOLVE_S)
        book.restore(statefile.load(tmp_path / "state.json"))
    assert states == {0: F, 10: F, 40: F, 70: F, 71: F, 100: F, 103: F, 106: None}
    assert texts == [
        HELD.summary,
        "vol-1: refilled past 35% (38% now) and no longer forecast to run out of burst credits "
        "within the rule's horizon; cleared 13:40 UTC after firing for 100 min.",
    ]


def test_a_milder_finding_does_not_replace_a_held_warning() -> None:
    """At 25 %, held until 35 %, the rule says only `info` (a burst like the many before it):
    the warning holds, and Slack hears nothing of the info."""
    book = AlertBook(REPEAT_S, RESOLVE_S)
    book.update(T0, [HELD], [], read=_level(15.0))
    book.delivered(book.owed(), T0)
    info = replace(
        HELD,
        severity=Severity.INFO,
        evidence={"balance_percent": 25.0},
        credit=Credit(Measure.BURST_BALANCE, balance_percent=25.0),
    )
    for minute in range(1, 20):
        book.update(T0 + timedelta(minutes=minute), [info], [], read=_level(25.0))
        assert book.owed() == []
    [alert] = book.firing()
    assert alert.severity is Severity.WARNING
    assert alert.finding.summary.startswith("Held until the balance refills past 35% (now 25%)")


def test_without_a_level_or_a_reading_the_hold_does_not_keep_an_alert() -> None:
    """Neither does it claim a refill: the resource is gone, or its balance no longer read."""
    for level in (None, _level(None), reads()):
        book = AlertBook(REPEAT_S, RESOLVE_S)
        book.update(T0, [HELD], [], read=level)
        book.delivered(book.owed(), T0)
        for minute in (1, 6):
            book.update(T0 + timedelta(minutes=minute), [], [], read=level)
        [alert] = list(book)
        assert alert.state is AlertState.RESOLVED
        assert alert.cleared(T0 + timedelta(minutes=6)).startswith(
            "vol-1: no longer forecast to run out"
        )


def test_a_warning_never_below_its_level_names_no_refill() -> None:
    assert HELD.credit is not None
    above = replace(
        HELD,
        evidence={**HELD.evidence, "balance_percent": 40.0},
        credit=replace(HELD.credit, balance_percent=40.0),
    )
    book = AlertBook(REPEAT_S, RESOLVE_S)
    book.update(T0, [above], [], read=_level(40.0))
    book.delivered(book.owed(), T0)
    for minute in (1, 6):
        book.update(T0 + timedelta(minutes=minute), [], [], read=_level(41.0))
    [alert] = list(book)
    assert alert.cleared(T0).startswith("vol-1: no longer forecast to run out")


def test_an_alert_below_the_floor_is_not_repeated() -> None:
    """A sent warning that dropped to info is said once, not every repeat interval."""
    book = AlertBook(REPEAT_S, RESOLVE_S, LEAST)
    sent = 0
    for minute, finding in ((0, WARNING), (5, INFO), (245, INFO), (485, INFO)):
        now = T0 + timedelta(minutes=minute)
        book.update(now, [finding], [])
        sent += len(book.owed())
        book.delivered(book.owed(), now)
    assert sent == 2


def test_a_claims_alert_is_logged_by_its_claim_first():
    from structlog.testing import capture_logs

    from tests.helpers import analyze, as_claim, shop_volume

    analysis = analyze(as_claim(shop_volume()), shop_volume("vol-2", "i-2"))
    book = AlertBook(4 * 3600, 300)
    with capture_logs() as logs:
        book.update(analysis.snapshot.generated_at, analysis.firing, [])
    firing = [e for e in logs if e["event"] == "alert.firing"]
    assert len(firing) == 2
    [claimed] = [e for e in firing if e["resource"] == "vol-1"]
    assert list(claimed)[:2] == ["claim", "rule"]
    assert claimed["claim"] == "db/data-postgres-0"
    [plain] = [e for e in firing if e["resource"] == "vol-2"]
    assert "claim" not in plain
