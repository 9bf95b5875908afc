"""Slack: Block Kit messages that read on a phone, and the webhook that sends them.

One message per cycle for the alerts that fire (or fire again), one starting with "Resolved"
for those that cleared. Retries come from slack_sdk's retry handlers: HTTP 429 honouring
Retry-After (up to a bound: a longer wait is left to the next cycle), 5xx and connection
errors with backoff. The webhook URL never appears in a log line: it is handed to the log's
redaction, which also knows the shape of a Slack webhook, and a URL the HTTP client would
refuse is refused at start, without being repeated.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from slack_sdk.http_retry import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    RetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.models.blocks import ActionsBlock, ButtonElement, ConfirmObject
from slack_sdk.webhook import WebhookClient

from analyzer import redaction
from analyzer.analyze.alerts import Alert, Owed
from analyzer.deliver.auth import UNPRINTABLE
from analyzer.deliver.text import APPLY
from analyzer.errors import ConfigError
from analyzer.model import units
from analyzer.model.units import format_rate

MAX_ALERTS_PER_MESSAGE = 20
"""Slack allows 50 blocks a message; each alert takes two."""

ICONS = {
    "critical": ":red_circle:",
    "warning": ":large_orange_circle:",
    "info": ":large_blue_circle:",
}


class DeliveryError(Exception):
    """A message could not be delivered; the alerts stay owed. `retry_after_s`: the wait
    the receiver asked for (HTTP 429 with Retry-After), to be honoured across cycles."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def _since(alert: Alert, now: datetime) -> str:
    start = alert.firing_since or alert.since
    return units.duration((now - start).total_seconds())


def _firing_section(alert: Alert, now: datetime, apply: str = APPLY) -> str:
    f = alert.finding
    kind = f.owner
    severity = alert.severity.value
    head = f"{ICONS.get(severity, '')} *{severity.upper()}* · `{alert.rule}`"
    if alert.outbox is Owed.REPEAT:
        head += f" · still firing after {_since(alert, now)}"
    facts = [
        f"*Bottleneck:* {f.bottleneck.value.replace('_', ' ')}",
        f"*Observed:* {format_rate(f.observed, f.unit, kind)}",
        f"*{'Baseline' if f.is_credits else 'Limit'}:* {format_rate(f.limit, f.unit, kind)}",
    ]
    if f.seconds_to_empty is not None:
        empty = round(f.seconds_to_empty, 1)
        facts.append("*Empty:* now" if empty == 0 else f"*→ 0 in* {units.duration(empty)}")
    if f.resource.account_id:
        head += f" · account {f.resource.account}"
    lines = [head, f.summary, " · ".join(facts)]
    if f.next_bottleneck is not None:
        lines.append(f"*Next:* {f.next_bottleneck.text()}")
    for n, remedy in enumerate(f.remedies[:FIXES_SHOWN]):
        lines.append(f"*{'or' if n else 'Fix'}:* {remedy.text()}")
        if remedy.fix_id is not None:
            lines.append(f"`{apply} {remedy.fix_id}`")
    return "\n".join(lines)


FIXES_SHOWN = 3
"""The cheapest options, and the joint fix where there is one: the rest are in the report."""


def _resolved_section(alert: Alert, now: datetime) -> str:
    ref = alert.finding.resource
    account = f" · account {ref.account}" if ref.account_id else ""
    return (
        f":white_check_mark: *Resolved* · `{alert.rule}`{account}\n{alert.cleared(now)}\n"
        f"was: {alert.finding.summary}"
    )


def _context(now: datetime) -> dict[str, Any]:
    stamp = now.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": f"ebs-bottleneck-analyzer · {stamp}"}],
    }


def _blocks(
    title: str,
    sections: Sequence[str],
    now: datetime,
    actions: Sequence[dict[str, Any] | None] = (),
) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": title[:150]}}
    ]
    for n, text in enumerate(sections[:MAX_ALERTS_PER_MESSAGE]):
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}})
        action = actions[n] if n < len(actions) else None
        if action is not None:
            blocks.append(action)
        blocks.append({"type": "divider"})
    if len(sections) > MAX_ALERTS_PER_MESSAGE:
        more = len(sections) - MAX_ALERTS_PER_MESSAGE
        blocks.append(
            {
                "type": "section",
                "text": {
                    "type": "mrkdwn",
                    "text": f"…and {more} more: see /metrics or `ebs-analyzer once`",
                },
            }
        )
    blocks.append(_context(now))
    return blocks


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


Buttons = Callable[[Alert], str | None]
"""The fix_id an alert's Apply button carries; None for no button (outside the apply scope,
or no fix applied in place)."""
APPLY_ACTION_ID = "ebs-analyzer.apply"
"""The Apply button's action_id: the only action `POST /slack/actions` answers."""


def apply_button(fix_id: str, index: int) -> dict[str, Any]:
    """An Apply button whose value is the fix, behind Slack's own confirmation dialog."""
    button = ButtonElement(
        text="Apply this fix",
        action_id=APPLY_ACTION_ID,
        value=fix_id,
        style="primary",
        confirm=ConfirmObject(
            title="Apply this fix?",
            text=f"`{fix_id}`: read afresh, checked against the guards, then modified in place.",
            confirm="Apply",
            deny="Cancel",
        ),
    )
    return ActionsBlock(block_id=f"apply-{index}", elements=[button]).to_dict()


def firing_message(
    alerts: Sequence[Alert], now: datetime, buttons: Buttons | None = None, apply: str = APPLY
) -> dict[str, Any]:
    """The firing alerts in one message; each fix with a fix_id says `{apply} FIX_ID`, the
    command that applies it where these resources are."""
    ordered = sorted(alerts, key=lambda a: (-a.severity.rank, a.rule, a.resource_id))
    title = f"{_plural(len(ordered), 'storage bottleneck')} on AWS"
    preview = " · ".join(
        f"{a.severity.value.upper()} {a.finding.summary.rstrip('.')}" for a in ordered[:3]
    )
    return {
        "text": f"{title}: {preview}"[:3000],
        "blocks": _blocks(
            title,
            [_firing_section(a, now, apply) for a in ordered],
            now,
            [_button(a, n, buttons) for n, a in enumerate(ordered)],
        ),
    }


def _button(alert: Alert, index: int, buttons: Buttons | None) -> dict[str, Any] | None:
    fix = buttons(alert) if buttons is not None else None
    return apply_button(fix, index) if fix else None


def resolved_message(alerts: Sequence[Alert], now: datetime) -> dict[str, Any]:
    ordered = sorted(alerts, key=lambda a: (a.rule, a.resource_id))
    names = ", ".join(f"{a.rule} on {a.finding.resource.named}" for a in ordered[:5])
    title = f"Resolved: {_plural(len(ordered), 'storage bottleneck')}"
    return {
        "text": f"Resolved: {names}"[:3000],
        "blocks": _blocks(title, [_resolved_section(a, now) for a in ordered], now),
    }


def messages(
    owed: Sequence[Alert], now: datetime, buttons: Buttons | None = None, apply: str = APPLY
) -> list[tuple[list[Alert], dict[str, Any]]]:
    """The messages a cycle sends, each with the alerts it speaks for."""
    firing = [a for a in owed if a.outbox in (Owed.FIRING, Owed.REPEAT)]
    resolved = [a for a in owed if a.outbox is Owed.RESOLVED]
    out = []
    if resolved:  # older news first: an alert may have cleared and fired again since
        out.append((resolved, resolved_message(resolved, now)))
    if firing:
        out.append((firing, firing_message(firing, now, buttons, apply)))
    return out


class ServerErrorRetryHandler(RetryHandler):
    """Retries HTTP 5xx answers with backoff."""

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        return response is not None and 500 <= response.status_code < 600


class BoundedRateLimitRetryHandler(RateLimitErrorRetryHandler):
    """Honours Retry-After, unless it asks to wait longer than a cycle should block."""

    def __init__(self, max_retry_count: int, max_wait_s: float) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait_s = max_wait_s

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code != 429:
            return False
        for name, values in response.headers.items():
            if name.lower() == "retry-after":
                try:
                    return float(values[0]) <= self.max_wait_s
                except (ValueError, IndexError):
                    return True
        return True


def _retry_after(headers: Any) -> float | None:
    """Seconds from a Retry-After header (seconds, as Slack sends it); None without one."""
    for name, value in dict(headers or {}).items():
        if name.lower() == "retry-after":
            try:
                return max(float(value[0] if isinstance(value, list) else value), 0.0)
            except (ValueError, IndexError, TypeError):
                return None
    return None


def quiet_logger() -> logging.Logger:
    """slack_sdk logs request URLs at debug level: keep its logger above that."""
    logger = logging.getLogger("analyzer.slack.webhook")
    logger.setLevel(logging.WARNING)
    return logger


class SlackChannel:
    name = "slack"

    def __init__(self, url: str, timeout_s: int = 20, max_wait_s: float = 30.0) -> None:
        redaction.secret(url)
        problem = webhook_problem(url)
        if problem is not None:
            raise ConfigError(f"slack_webhook_url: not a usable Slack webhook: {problem}")
        self._client = WebhookClient(
            url,
            timeout=timeout_s,
            logger=quiet_logger(),
            retry_handlers=[
                BoundedRateLimitRetryHandler(max_retry_count=2, max_wait_s=max_wait_s),
                ServerErrorRetryHandler(max_retry_count=2),
                ConnectionErrorRetryHandler(max_retry_count=1),
            ],
        )

    def send(self, message: dict[str, Any], alerts: Sequence[Alert], now: datetime) -> None:
        try:
            response = self._client.send_dict(message)
        except Exception as exc:  # any transport failure: the alerts stay owed
            raise DeliveryError(f"{type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            body = str(response.body)[:200]
            raise DeliveryError(
                f"Slack answered HTTP {response.status_code}: {body}",
                _retry_after(response.headers) if response.status_code == 429 else None,
            )

    def __repr__(self) -> str:
        return "SlackChannel(url=[webhook])"


LOOPBACK = ("localhost", "127.0.0.1", "::1")


def webhook_problem(url: str) -> str | None:
    """What makes a webhook URL unusable, in words that do not repeat it (it is a secret);
    None for a good one. Plain http only to this host: a local relay, or a test's stand-in."""
    redaction.secret(url)
    if UNPRINTABLE.search(url):
        return "it holds a space or a control character (pasted with the secret?)"
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return "it does not parse as a URL"
    if parts.scheme not in ("https", "http"):
        return "it is not an https:// URL"
    if not parts.hostname:
        return "it names no host"
    if parts.scheme == "http" and parts.hostname not in LOOPBACK:
        return "it is not an https:// URL (plain http only to localhost)"
    if parts.username is not None or parts.password is not None:
        return "it holds user:password@"
    return None
