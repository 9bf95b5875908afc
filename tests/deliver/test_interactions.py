"""Slack's interactive requests: the v0 signature, the five-minute window, a replay, the
payload of a click on the Apply button."""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import urlencode

import pytest

from analyzer.deliver.interactions import Click, Interactions, outcome_message, parse

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
NOW = 1_764_300_000.0
HOOK = "https://hooks.slack.com/actions/T1/123/abc"


def _body(**payload) -> bytes:
    base = {
        "type": "block_actions",
        "user": {"id": "U1", "username": "ana"},
        "response_url": HOOK,
        "actions": [{"action_id": "ebs-analyzer.apply", "value": "vol-1:type=gp3"}],
    }
    return urlencode({"payload": json.dumps({**base, **payload})}).encode()


def _headers(body: bytes, stamp: float = NOW, secret: str = SECRET) -> dict[str, str]:
    # Slack API, "Verifying requests from Slack": v0= HMAC-SHA256 of v0:timestamp:body.
    base = f"v0:{int(stamp)}:".encode() + body
    signature = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": str(int(stamp)), "X-Slack-Signature": signature}


class _Clicks:
    def __init__(self) -> None:
        self.got: list[Click] = []

    def __call__(self, click: Click) -> None:
        self.got.append(click)


def _handler() -> tuple[Interactions, _Clicks]:
    clicks = _Clicks()
    return Interactions(SECRET, clicks, clock=lambda: NOW), clicks


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        ({}, "no signature"),
        (_headers(_body(), secret="another"), "another secret"),
        (_headers(_body(), stamp=NOW - 301), "older than five minutes"),
        (_headers(_body(), stamp=NOW + 301), "later than five minutes"),
        ({"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=00"}, "no number"),
    ],
)
def test_a_request_slack_did_not_sign_now_is_401_and_does_nothing(headers, why) -> None:
    handler, clicks = _handler()
    assert handler.handle(headers, _body())[0] == 401, why
    handler.drain()
    assert clicks.got == []


def test_a_signed_click_is_answered_at_once_and_handed_over_once() -> None:
    handler, clicks = _handler()
    body = _body()
    headers = _headers(body, stamp=NOW - 299)  # within the window
    assert handler.handle(headers, body) == (200, "")
    # Recorded and sent again within the window: a valid signature, and nothing done.
    assert handler.handle(headers, body) == (200, "")
    handler.drain()
    assert clicks.got == [Click("U1", "vol-1:type=gp3", HOOK, "ana")]


def test_a_body_changed_after_signing_is_refused() -> None:
    handler, clicks = _handler()
    headers = _headers(_body())
    assert handler.handle(headers, _body(user={"id": "U2"}))[0] == 401
    handler.drain()
    assert clicks.got == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (_body(type="view_submission"), None),
        (_body(actions=[{"action_id": "other", "value": "x"}]), None),
        (b"payload=%5B1%5D", ValueError),
        (b"nothing=here", ValueError),
        (_body(response_url="https://attacker.example/hook"), ValueError),
        (_body(response_url="http://hooks.slack.com/actions/x"), ValueError),
        (_body(user={}), ValueError),
        (_body(actions=[{"action_id": "ebs-analyzer.apply"}]), ValueError),
    ],
)
def test_only_a_click_on_the_apply_button_with_a_slack_response_url_is_a_click(body, expected):
    if expected is ValueError:
        with pytest.raises(ValueError):
            parse(body)
    else:
        assert parse(body) is expected


def test_an_unreadable_payload_is_400() -> None:
    handler, _ = _handler()
    body = b"payload=%7Bbroken"
    assert handler.handle(_headers(body), body)[0] == 400


def test_the_outcome_is_posted_beside_the_alert_not_over_it() -> None:
    message = outcome_message(["*Apply* `vol-1:type=gp3`", "applied"])
    assert message["replace_original"] is False and message["response_type"] == "in_channel"
    assert message["text"] == "*Apply* `vol-1:type=gp3`\napplied"
