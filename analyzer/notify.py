"""Delivering what the alert book owes: to Slack, or to the log in a dry run."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

import structlog

from analyzer import slack
from analyzer.alerts import AlertBook
from analyzer.slack import DeliveryError

log = structlog.get_logger(__name__)

Record = Callable[[str, str], None]
"""Counts a delivery attempt: (channel, outcome)."""


class Channel(Protocol):
    name: str

    def send(self, message: dict[str, Any]) -> None:
        """Deliver or raise DeliveryError."""


class LogChannel:
    """Dry runs, and daemons without a webhook: the payload goes to the log."""

    name = "log"

    def send(self, message: dict[str, Any]) -> None:
        log.info("notification.logged", text=message["text"], blocks=message["blocks"])


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
                self.channel.send(message)
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


def channel_for(webhook_url: str | None, dry_run: bool) -> Channel:
    if webhook_url and not dry_run:
        return slack.SlackChannel(webhook_url)
    return LogChannel()
