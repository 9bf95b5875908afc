"""Delivery through a real HTTP receiver: Retry-After honoured across cycles, the book saved
after each message sent."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from structlog.testing import capture_logs

from analyzer.deliver import slack
from analyzer.deliver.notify import ConsoleChannel, Dispatcher
from analyzer.deliver.slack import SlackChannel
from tests.deliver.test_slack import book_with_alerts
from tests.receiver import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def test_a_retry_after_longer_than_a_cycle_is_honoured_by_the_next_cycles(receiver) -> None:
    """Slack asks for 120 s: the cycle a minute later sends nothing, the one after it does."""
    book, now = book_with_alerts()
    dispatcher = Dispatcher(SlackChannel(receiver.url, timeout_s=5))
    receiver.answer((429, {"Retry-After": "120"}))
    assert dispatcher.deliver(book, now) == 0
    assert len(receiver.requests) == 1  # not retried within the cycle: 120 s is too long
    with capture_logs() as logs:
        assert dispatcher.deliver(book, now + timedelta(seconds=60)) == 0
    assert len(receiver.requests) == 1
    # (Only this dispatcher's events: a daemon another test left running may log too.)
    assert [e["event"] for e in logs if e["event"].startswith("notification.")] == [
        "notification.deferred"
    ]
    assert dispatcher.deliver(book, now + timedelta(seconds=121)) == 1
    assert len(receiver.requests) == 2
    assert book.owed() == []


def test_the_book_is_saved_after_each_message_sent(receiver) -> None:
    """A crash after a POST and before the save sends that one message again, no more."""
    book, now = book_with_alerts()
    saves: list[list[str]] = []

    def save() -> None:
        saves.append(sorted(a.outbox.value for a in book.owed()))

    dispatcher = Dispatcher(SlackChannel(receiver.url, timeout_s=5))
    assert dispatcher.deliver(book, now, save) == 1  # both firing alerts in one message
    assert saves == [[]]
    [first, *_] = [a.finding for a in book]
    other = replace(first, rule="another-rule")
    book.update(now + timedelta(minutes=10), [], [])
    book.update(now + timedelta(minutes=16), [other], [])
    saves.clear()
    assert dispatcher.deliver(book, now + timedelta(minutes=16), save) == 2
    # After the first message the second is still owed; after the second, nothing is.
    assert len(saves) == 2 and saves[0] != [] and saves[1] == []


def test_the_console_says_each_new_day_before_its_alerts() -> None:
    """The demo at --speed 1800 passes a simulated day in under a minute: its times alone
    would blur the days."""
    book, now = book_with_alerts()
    out = io.StringIO()
    console = ConsoleChannel(out)
    alerts = book.owed()
    console.send({}, alerts, now)
    console.send({}, alerts, now + timedelta(hours=1))
    console.send({}, [], now + timedelta(days=1))
    console.send({}, alerts, now + timedelta(days=1, minutes=1))
    lines = out.getvalue().splitlines()
    days = [line for line in lines if line.startswith("── ")]
    assert days == [
        f"── {now:%a %d %b %Y} (UTC) ──",
        f"── {now + timedelta(days=1):%a %d %b %Y} (UTC) ──",
    ]
    assert lines[0] == days[0] and lines[1].startswith(f"{now:%H:%M}  FIRING")


def test_the_console_shows_each_fix_it_can_apply_with_the_command_that_applies_it() -> None:
    """As the Slack message does under each fix with a fix_id: the demo's console names the
    command that applies it where the alerts come from, the demo's own."""
    book, now = book_with_alerts()
    out = io.StringIO()
    alerts = book.owed()
    ConsoleChannel(out, apply="ebs-analyzer demo --once --apply").send({}, alerts, now)
    lines = out.getvalue().splitlines()
    wanted = [
        f"             apply: ebs-analyzer demo --once --apply {remedy.fix_id}"
        for alert in alerts
        for remedy in alert.finding.remedies[: slack.FIXES_SHOWN]
        if remedy.fix_id is not None
    ]
    assert len(wanted) >= 2 and [line for line in lines if "apply:" in line] == wanted
    # Each under its fix, the first fix always shown, the others where they can be applied.
    for n, line in enumerate(lines):
        if "apply:" in line:
            assert lines[n - 1].startswith(("        fix: ", "        or:  "))
    fixes = [line for line in lines if line.startswith("        fix: ")]
    assert len(fixes) == len(alerts)


def test_a_slack_message_names_the_command_its_dispatcher_was_given() -> None:
    """The demo's messages, where the demo posts to Slack, name the demo's own command."""
    book, now = book_with_alerts()
    sent: list[dict] = []

    class _Channel:
        name = "slack"

        def send(self, message, alerts, now) -> None:
            sent.append(message)

    dispatcher = Dispatcher(_Channel())  # type: ignore[arg-type]
    dispatcher.apply = "ebs-analyzer demo --once --apply"
    assert dispatcher.deliver(book, now) >= 1
    text = json.dumps(sent)
    assert "`ebs-analyzer demo --once --apply vol-" in text
    assert "`ebs-analyzer apply " not in text


def test_the_console_prints_a_message_of_no_alert_as_plain_text() -> None:
    """The savings digest (or a fix the policy applied) in the demo: its text, without
    Slack's markup, under the time."""
    out = io.StringIO()
    now = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    message = {"text": "*Savings this week: $293.80 a month*\n• `vol-1`: io2 → io2", "blocks": []}
    ConsoleChannel(out).send(message, [], now)
    assert out.getvalue().splitlines() == [
        f"{now:%H:%M}  Savings this week: $293.80 a month",
        "        • vol-1: io2 → io2",
    ]
