"""Delivering what the alert book owes: to Slack, or to the log in a dry run."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any, Protocol, TextIO

import structlog

from analyzer.analyze.alerts import Alert, AlertBook, Owed
from analyzer.deliver import slack
from analyzer.deliver.slack import DeliveryError
from analyzer.deliver.text import APPLY

log = structlog.get_logger(__name__)
Record = Callable[[str, str], None]
"""Counts a delivery attempt: (channel, outcome)."""


class Channel(Protocol):
    name: str

    def send(self, message: dict[str, Any], alerts: Sequence[Alert], now: datetime) -> None:
        """Deliver the message (about these alerts) or raise DeliveryError."""


class LogChannel:
    """Dry runs, and daemons without a webhook: the payload goes to the log."""

    name = "log"

    def send(self, message: dict[str, Any], alerts: Sequence[Alert], now: datetime) -> None:
        log.info("notification.logged", text=message["text"], blocks=message["blocks"])


class ConsoleChannel:
    """The demo: a few readable lines per alert on stdout as it fires, repeats or resolves,
    under the date of its day (at high speed, simulated days pass in minutes). A firing alert
    shows its first fix, and every other fix the Slack message shows that can be applied; each
    that can be applied with the command `apply` names, as `{apply} FIX_ID`."""

    name = "console"

    def __init__(self, out: TextIO | None = None, apply: str = APPLY) -> None:
        self._out = out
        self._apply = apply
        self._day: date | None = None

    def send(self, message: dict[str, Any], alerts: Sequence[Alert], now: datetime) -> None:
        out = self._out or sys.stdout
        now = now.astimezone(UTC)
        if not alerts:
            # A message of no alert (the savings digest, a fix applied by the policy): its
            # text, without Slack's markup.
            plain = str(message.get("text", "")).replace("*", "").replace("`", "")
            for n, line in enumerate(plain.splitlines()):
                print(f"{now:%H:%M}  {line}" if n == 0 else f"        {line}", file=out)
            out.flush()
            return
        if now.date() != self._day:
            self._day = now.date()
            print(f"── {now:%a %d %b %Y} (UTC) ──", file=out)
        stamp = now.strftime("%H:%M")
        for alert in alerts:
            finding = alert.finding
            if alert.outbox is Owed.RESOLVED:
                print(f"{stamp}  RESOLVED  {alert.rule:<32} {alert.cleared(now)}", file=out)
                continue
            word = "REPEAT" if alert.outbox is Owed.REPEAT else "FIRING"
            print(f"{stamp}  {word:<8}  {alert.severity.value.upper():<8} {alert.rule}", file=out)
            print(f"        {finding.summary}", file=out)
            shown = finding.remedies[: slack.FIXES_SHOWN]
            for n, remedy in enumerate(shown):
                if n and remedy.fix_id is None:
                    continue
                print(f"        {'or: ' if n else 'fix:'} {remedy.text()}", file=out)
                if remedy.fix_id is not None:
                    print(f"             apply: {self._apply} {remedy.fix_id}", file=out)
        out.flush()


class Dispatcher:
    def __init__(self, channel: Channel, record: Record | None = None) -> None:
        self.channel = channel
        self._record = record or (lambda _channel, _outcome: None)
        self.not_before: datetime | None = None
        """The receiver asked to wait until then (HTTP 429 with Retry-After)."""
        self.buttons: slack.Buttons | None = None
        """The Apply button each firing alert carries, where fixes are approved in Slack."""
        self.apply = APPLY
        """The command a message names under each fix that has a fix_id: the demo's own
        over its simulated accounts."""

    def deliver(
        self, book: AlertBook, now: datetime, save: Callable[[], None] | None = None
    ) -> int:
        """Send what the book owes; what fails stays owed for the next cycle, and nothing is
        sent before a wait the receiver asked for is over. After each message delivered the
        book is saved (`save`), so a crash sends again at most the one message in flight.
        Returns the number of messages delivered."""
        owed = book.owed()
        if owed and self.not_before is not None and now < self.not_before:
            log.info(
                "notification.deferred",
                channel=self.channel.name,
                until=self.not_before.isoformat(),
                alerts=len(owed),
            )
            return 0
        self.not_before = None
        sent = 0
        for alerts, message in slack.messages(owed, now, self.buttons, self.apply):
            try:
                self.channel.send(message, alerts, now)
            except DeliveryError as exc:
                self._record(self.channel.name, "error")
                log.warning(
                    "notification.failed",
                    channel=self.channel.name,
                    error=str(exc),
                    alerts=len(alerts),
                    retry_after_s=exc.retry_after_s,
                )
                if exc.retry_after_s is not None:
                    self.not_before = now + timedelta(seconds=exc.retry_after_s)
                    break
                continue
            self._record(self.channel.name, "success")
            book.delivered(alerts, now)
            if save is not None:
                save()
            sent += 1
        return sent


def channel_for(
    webhook_url: str | None,
    dry_run: bool,
    fallback: Channel | None = None,
    interval_s: float = 60.0,
) -> Channel:
    """Slack when a webhook is set (and this is no dry run); otherwise the fallback or the log.
    A request to Slack times out well within the interval (half of it, at most 20 s)."""
    if webhook_url and not dry_run:
        return slack.SlackChannel(webhook_url, timeout_s=max(int(min(20.0, interval_s / 2)), 1))
    if dry_run:
        return LogChannel()
    return fallback or LogChannel()
