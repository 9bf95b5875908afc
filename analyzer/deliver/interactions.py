"""Slack's interactive requests: a click on a fix's Apply button, verified as Slack signs it,
answered at once, and its outcome posted to the interaction's `response_url` once known.

Slack signs each request with the app's signing secret: `v0=` and the HMAC-SHA256 of
`v0:TIMESTAMP:BODY`, in `X-Slack-Signature`, the timestamp in `X-Slack-Request-Timestamp`
(Slack API, "Verifying requests from Slack"); slack_sdk's `SignatureVerifier` checks both,
and a timestamp more than five minutes from the clock. A valid signature does not stop a
request recorded and sent again within those five minutes: each signature is remembered for
the window, and a second request bearing one does nothing. Slack expects an answer within
three seconds, so the click's work runs on a worker and the request is answered 200 at once.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import structlog
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler
from slack_sdk.signature import Clock, SignatureVerifier
from slack_sdk.webhook import WebhookClient

from analyzer.deliver.slack import (
    APPLY_ACTION_ID,
    LOOPBACK,
    BoundedRateLimitRetryHandler,
    ServerErrorRetryHandler,
    quiet_logger,
)

log = structlog.get_logger(__name__)

WINDOW_S = 300
"""Slack's five minutes: an older (or later) timestamp is refused, a signature seen within
them is a replay."""
RESPONSE_HOSTS = ("hooks.slack.com",)
"""Where a response_url may point: Slack's own hooks over https (or plain http to this host, a
local relay or a test's stand-in, as a webhook may), never anywhere a payload says."""


@dataclass(frozen=True, slots=True)
class Click:
    """A click on an Apply button, by whom, on which fix, and where to answer."""

    user: str
    fix_id: str
    response_url: str
    user_name: str = ""


class _SecondsClock(Clock):
    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now

    def now(self) -> float:
        return self._now()


class Interactions:
    """`POST /slack/actions`: verified, checked for a replay, parsed, answered; a click is
    handed to `on_click` on a worker."""

    def __init__(
        self,
        signing_secret: str,
        on_click: Callable[[Click], None],
        clock: Callable[[], float] = time.time,
        workers: int = 2,
    ) -> None:
        self._verifier = SignatureVerifier(signing_secret, _SecondsClock(clock))
        self._clock = clock
        self._on_click = on_click
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="slack-action")

    def handle(self, headers: Mapping[str, str], body: bytes) -> tuple[int, str]:
        """The HTTP status and body to answer with."""
        lower = {k.lower(): v for k, v in headers.items()}
        stamp = lower.get("x-slack-request-timestamp")
        signature = lower.get("x-slack-signature")
        try:
            valid = self._verifier.is_valid(body, stamp, signature)
        except (ValueError, UnicodeDecodeError):
            valid = False
        if not valid:
            log.warning("slack.refused", reason="signature or timestamp not valid")
            return 401, "invalid signature or timestamp\n"
        assert signature is not None
        if self._replayed(signature):
            log.warning("slack.replayed", signature=signature[:12])
            return 200, ""
        try:
            click = parse(body)
        except ValueError as exc:
            log.warning("slack.unreadable", reason=str(exc))
            return 400, f"unreadable payload: {exc}\n"
        if click is None:
            return 200, ""  # another interaction: nothing of ours
        self._pool.submit(self._run, click)
        return 200, ""

    def _run(self, click: Click) -> None:
        try:
            self._on_click(click)
        except Exception:  # a click's failure is its own: the daemon goes on
            log.exception("slack.action_failed", fix_id=click.fix_id, user=click.user)

    def _replayed(self, signature: str) -> bool:
        now = self._clock()
        with self._lock:
            self._seen = {s: t for s, t in self._seen.items() if now - t <= 2 * WINDOW_S}
            if signature in self._seen:
                return True
            self._seen[signature] = now
            return False

    def drain(self) -> None:
        """Wait for the clicks being handled (tests; a stop)."""
        self._pool.shutdown(wait=True)


def parse(body: bytes) -> Click | None:
    """A click on the Apply button from a form-encoded `payload`; None for any other
    interaction; ValueError for a body that is not one."""
    form = parse_qs(body.decode("utf-8"), strict_parsing=False)
    if "payload" not in form:
        raise ValueError("no payload field")
    payload = json.loads(form["payload"][0])
    if not isinstance(payload, dict):
        raise ValueError("payload is not an object")
    if payload.get("type") != "block_actions":
        return None
    actions = payload.get("actions") or []
    ours = [a for a in actions if isinstance(a, dict) and a.get("action_id") == APPLY_ACTION_ID]
    if not ours:
        return None
    user = payload.get("user") or {}
    if not isinstance(user, dict) or not isinstance(user.get("id"), str):
        raise ValueError("no user.id")
    value, url = ours[0].get("value"), payload.get("response_url")
    if not isinstance(value, str) or not value:
        raise ValueError("the action has no value")
    if not isinstance(url, str) or not usable_response_url(url):
        raise ValueError("no response_url on Slack's hooks")
    name = user.get("username") or user.get("name") or ""
    return Click(user["id"], value, url, str(name))


def usable_response_url(url: str) -> bool:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "http":
        return host in LOOPBACK
    return parts.scheme == "https" and host in RESPONSE_HOSTS


Respond = Callable[[str, dict[str, Any]], None]


def respond(url: str, message: dict[str, Any]) -> None:
    """Post to a response_url (a webhook of its own, good for 30 minutes and five posts),
    with the channel's retries; a failure is logged: the outcome is in the log already."""
    client = WebhookClient(
        url,
        timeout=10,
        logger=quiet_logger(),
        retry_handlers=[
            BoundedRateLimitRetryHandler(max_retry_count=2, max_wait_s=10.0),
            ServerErrorRetryHandler(max_retry_count=2),
            ConnectionErrorRetryHandler(max_retry_count=1),
        ],
    )
    try:
        answer = client.send_dict(message)
    except Exception as exc:
        log.warning("slack.respond_failed", error=f"{type(exc).__name__}: {exc}")
        return
    if answer.status_code != 200:
        log.warning("slack.respond_failed", status=answer.status_code, body=str(answer.body)[:200])


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}}


def outcome_message(lines: list[str]) -> dict[str, Any]:
    """What the click's outcome says in the channel, beside the alert (not replacing it)."""
    text = "\n".join(lines)
    return {
        "response_type": "in_channel",
        "replace_original": False,
        "text": text[:3000],
        "blocks": [section(text)],
    }
