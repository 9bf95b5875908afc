"""Delivering what the alert book owes: to Slack, or to the log in a dry run."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TextIO

import structlog

from analyzer.deliver import slack
from analyzer.deliver.alerts import Alert, AlertBook, Owed
from analyzer.deliver.slack import DeliveryError

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
    """The demo: one readable line per alert on stdout as it fires, repeats or resolves."""

    name = "console"

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out

    def send(self, message: dict[str, Any], alerts: Sequence[Alert], now: datetime) -> None:
        out = self._out or sys.stdout
        stamp = now.astimezone(UTC).strftime("%H:%M")
        for alert in alerts:
            finding = alert.finding
            if alert.outbox is Owed.RESOLVED:
                print(f"{stamp}  RESOLVED  {alert.rule:<32} {alert.cleared(now)}", file=out)
                continue
            word = "REPEAT" if alert.outbox is Owed.REPEAT else "FIRING"
            print(f"{stamp}  {word:<8}  {alert.severity.value.upper():<8} {alert.rule}", file=out)
            print(f"        {finding.summary}", file=out)
            for remedy in finding.remedies[:1]:
                print(f"        fix: {remedy.text()}", file=out)
        out.flush()


class Dispatcher:
    def __init__(self, channel: Channel, record: Record | None = None) -> None:
        self.channel = channel
        self._record = record or (lambda _channel, _outcome: None)

    def deliver(self, book: AlertBook, now: datetime) -> int:
        """Send what the book owes; what fails stays owed for the next cycle. Returns the
        number of messages delivered."""
        sent = 0
        for alerts, message in slack.messages(book.owed(), now):
            try:
                self.channel.send(message, alerts, now)
            except DeliveryError as exc:
                self._record(self.channel.name, "error")
                log.warning(
                    "notification.failed",
                    channel=self.channel.name,
                    error=str(exc),
                    alerts=len(alerts),
                )
                continue
            self._record(self.channel.name, "success")
            book.delivered(alerts, now)
            sent += 1
        return sent


def channel_for(webhook_url: str | None, dry_run: bool, fallback: Channel | None = None) -> Channel:
    """Slack when a webhook is set (and this is no dry run); otherwise the fallback or the log."""
    if webhook_url and not dry_run:
        return slack.SlackChannel(webhook_url)
    if dry_run:
        return LogChannel()
    return fallback or LogChannel()
