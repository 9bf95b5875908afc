"""Slack's interactive requests: a click on a fix's Apply button, verified as Slack signs it,
answered at once, and its outcome posted to the interaction's `response_url` once known.

Slack signs each request with the app's signing secret: `v0=` and the HMAC-SHA256 of
`v0:TIMESTAMP:BODY`, in `X-Slack-Signature`, the timestamp in `X-Slack-Request-Timestamp`
(Slack API, "Verifying requests from Slack"), and a timestamp more than five minutes from the
clock is refused. The signature is checked over the body's bytes, as Slack computes it, and
headers that are not what Slack sends (not ASCII, not a number, not 64 hex digits) are
refused before any comparison. A valid signature does not stop a request recorded and sent
again within those five minutes: each signature is remembered (`seen.Seen`, which the owner
may persist), and a second request bearing one does nothing. Slack expects an answer within
three seconds, so the click's work runs on a worker and the request is answered 200 at once.
Whatever a request carries, it is answered with a status and one log line: 401
`slack.refused`, 200 `slack.replayed`, or 400 `slack.unreadable` with the reason.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import structlog
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler
from slack_sdk.webhook import WebhookClient

from analyzer.deliver.seen import WINDOW_S, Seen, digest
from analyzer.deliver.slack import (
    APPLY_ACTION_ID,
    LOOPBACK,
    BoundedRateLimitRetryHandler,
    ServerErrorRetryHandler,
    quiet_logger,
)

log = structlog.get_logger(__name__)

RESPONSE_HOSTS = ("hooks.slack.com",)
"""Where a response_url may point: Slack's own hooks over https (or plain http to this host, a
local relay or a test's stand-in, as a webhook may), never anywhere a payload says."""
_STAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class Click:
    """A click on an Apply button, by whom, on which fix, and where to answer."""

    user: str
    fix_id: str
    response_url: str
    user_name: str = ""


class Interactions:
    """`POST /slack/actions`: verified, checked for a replay, parsed, answered; a click is
    handed to `on_click` on a worker.

    `seen`: the signatures already taken (read back from the state file, say); a new one
    by default. `changed`: called on the click's worker before `on_click`, once its
    signature is in `seen`, so that the owner can persist `seen.records()` before anything
    is done: a restart then knows the request, and the answer to Slack does not wait on
    the write. (A request that is no click does nothing, and is saved with the next.)"""

    def __init__(
        self,
        signing_secret: str,
        on_click: Callable[[Click], None],
        clock: Callable[[], float] = time.time,
        workers: int = 2,
        seen: Seen | None = None,
        changed: Callable[[], None] | None = None,
    ) -> None:
        self._secret = signing_secret.encode()
        self._clock = clock
        self._on_click = on_click
        self.seen = seen if seen is not None else Seen()
        self._changed = changed
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="slack-action")

    def handle(self, headers: Mapping[str, str], body: bytes) -> tuple[int, str]:
        """The HTTP status and body to answer with."""
        lower = {k.lower(): v for k, v in headers.items()}
        stamp = lower.get("x-slack-request-timestamp")
        signature = lower.get("x-slack-signature")
        now = self._clock()
        refused = self._refusal(stamp, signature, body, now)
        if refused is not None or signature is None:
            log.warning("slack.refused", reason=refused or "no signature")
            return 401, "invalid signature or timestamp\n"
        if not self.seen.add(signature, now):
            log.warning("slack.replayed", sha256=digest(signature)[:12])
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

    def _refusal(
        self, stamp: str | None, signature: str | None, body: bytes, now: float
    ) -> str | None:
        """Why a request is not one Slack signed within the window, or None."""
        if stamp is None or signature is None:
            return "no signature or no timestamp"
        if _STAMP.fullmatch(stamp) is None:
            return "the timestamp is not a number of seconds"
        if abs(now - int(stamp)) > WINDOW_S:
            return "the timestamp is not within five minutes"
        if _SIGNATURE.fullmatch(signature) is None:
            return "the signature is not v0= and 64 hex digits"
        mac = hmac.new(self._secret, b"v0:" + stamp.encode() + b":" + body, hashlib.sha256)
        if not hmac.compare_digest(f"v0={mac.hexdigest()}".encode(), signature.encode()):
            return "the signature does not match"
        return None

    def _saved(self) -> None:
        if self._changed is None:
            return
        try:
            self._changed()
        except Exception as exc:  # this process still knows the signature: go on
            log.warning("slack.seen_not_saved", error=f"{type(exc).__name__}: {exc}")

    def _run(self, click: Click) -> None:
        self._saved()
        try:
            self._on_click(click)
        except Exception:  # a click's failure is its own: the daemon goes on
            log.exception("slack.action_failed", fix_id=click.fix_id, user=click.user)

    def drain(self) -> None:
        """Wait for the clicks being handled (tests; a stop)."""
        self._pool.shutdown(wait=True)


def parse(body: bytes) -> Click | None:
    """A click on the Apply button from a form-encoded `payload`; None for any other
    interaction; ValueError, saying why, for a body that is not one (whatever its shape)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the body is not UTF-8") from None
    form = parse_qs(text)
    if "payload" not in form:
        raise ValueError("no payload field")
    try:
        payload = json.loads(form["payload"][0])
    except (ValueError, RecursionError):
        raise ValueError("the payload is not JSON") from None
    if not isinstance(payload, dict):
        raise ValueError("payload is not an object")
    if payload.get("type") != "block_actions":
        return None
    actions = payload.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, dict) for a in actions):
        raise ValueError("actions is not a list of objects")
    user = payload.get("user")
    if not isinstance(user, dict) or not isinstance(user.get("id"), str):
        raise ValueError("no user.id")
    ours = [a for a in actions if a.get("action_id") == APPLY_ACTION_ID]
    if not ours:
        return None
    value, url = ours[0].get("value"), payload.get("response_url")
    if not isinstance(value, str) or not value:
        raise ValueError("the action has no value")
    if not isinstance(url, str) or not usable_response_url(url):
        raise ValueError("no response_url on Slack's hooks")
    names = (user.get("username"), user.get("name"))
    name = next((n for n in names if isinstance(n, str) and n), "")
    return Click(user["id"], value, url, name)


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
