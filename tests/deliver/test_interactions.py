"""Slack's interactive requests: the v0 signature, the five-minute window, a replay, the
payload of a click on the Apply button."""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from analyzer.deliver.interactions import Click, Interactions, outcome_message, parse
from analyzer.deliver.seen import Seen

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


def _headers(body: bytes, stamp: float | str = NOW, secret: str = SECRET) -> dict[str, str]:
    # Slack API, "Verifying requests from Slack": v0= HMAC-SHA256 of v0:timestamp:body.
    stamp = stamp if isinstance(stamp, str) else str(int(stamp))
    base = f"v0:{stamp}:".encode() + body
    signature = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}


class _Clicks:
    def __init__(self) -> None:
        self.got: list[Click] = []

    def __call__(self, click: Click) -> None:
        self.got.append(click)


def _handler(**kwargs) -> tuple[Interactions, _Clicks]:
    clicks = _Clicks()
    return Interactions(SECRET, clicks, clock=lambda: NOW, **kwargs), clicks


def _answered(handler: Interactions, headers: dict[str, str], body: bytes) -> tuple[int, list]:
    """The status, and the events logged while answering."""
    with capture_logs() as logs:
        status, _ = handler.handle(headers, body)
    return status, [e["event"] for e in logs]


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


def _with_signature(signature: str) -> dict[str, str]:
    return {**_headers(_body()), "X-Slack-Signature": signature}


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        (_with_signature("v0=" + "é" * 64), "a signature that is not ASCII"),
        (_with_signature("v0=" + "0" * 63 + "\u0660"), "a digit that is not ASCII"),
        (_with_signature(_headers(_body())["X-Slack-Signature"].upper()), "upper case"),
        (_with_signature(_headers(_body())["X-Slack-Signature"] + "0"), "one digit more"),
        (_headers(_body(), stamp="\uff11" * 10), "full-width digits int() would take"),
        (_headers(_body(), stamp=f" {int(NOW)}"), "a space int() would take"),
        (_headers(_body(), stamp=f"+{int(NOW)}"), "a sign int() would take"),
        (_headers(_body(), stamp="9" * 5000), "more digits than int() reads"),
        ({"X-Slack-Request-Timestamp": str(int(NOW))}, "a timestamp without a signature"),
    ],
)
def test_headers_that_are_not_what_slack_sends_are_401_with_one_line(headers, why) -> None:
    handler, clicks = _handler()
    assert _answered(handler, headers, _body()) == (401, ["slack.refused"]), why
    handler.drain()
    assert clicks.got == []


def _form(payload: str) -> bytes:
    return urlencode({"payload": payload}).encode()


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (_body(actions=5), "actions a number"),
        (_body(actions=[1, "x"]), "actions a list of non-objects"),
        (_body(actions={"action_id": "ebs-analyzer.apply"}), "actions an object"),
        (_body(actions=None), "no actions"),
        (_body(user="U1"), "user a string"),
        (_body(user={"id": 7}), "user.id a number"),
        (_form("{broken"), "payload not JSON"),
        (_form("[" * 50_000 + "]" * 50_000), "payload nested past the parser's depth"),
        (_form("1" * 5000), "a number with more digits than int() reads"),
        (b"payload=\xff\xfe", "a body that is not UTF-8"),
        (b"\x00\x01\x02", "not a form"),
        (b"nothing=here", "a form without payload"),
        (b"", "an empty body"),
    ],
)
def test_a_signed_body_of_the_wrong_shape_is_400_with_one_line(body, why) -> None:
    handler, clicks = _handler()
    assert _answered(handler, _headers(body), body) == (400, ["slack.unreadable"]), why
    handler.drain()
    assert clicks.got == []


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_keys = st.sampled_from(["type", "actions", "user", "response_url", "action_id", "value", "id"])


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_keys, _json | st.just("block_actions") | st.just(HOOK), max_size=6),
    st.lists(st.dictionaries(_keys, _json | st.just("ebs-analyzer.apply")), max_size=2),
)
def test_parse_says_click_none_or_why_whatever_the_payload(payload, actions) -> None:
    payload.setdefault("type", "block_actions")
    if actions:
        payload["actions"] = actions
    body = _form(json.dumps(payload))
    try:
        click = parse(body)
    except ValueError:
        return
    assert click is None or isinstance(click, Click)


def test_a_replay_after_a_restart_is_known_from_the_persisted_record() -> None:
    order: list[str] = []
    saved: list[list[dict]] = []
    first = Seen()
    handler = Interactions(
        SECRET,
        lambda click: order.append("click"),
        clock=lambda: NOW,
        seen=first,
        changed=lambda: (order.append("saved"), saved.append(first.records())),
    )
    body = _body()
    headers = _headers(body)
    assert handler.handle(headers, body) == (200, "")
    handler.drain()
    assert order == ["saved", "click"]  # persisted before the click is handed over
    (record,) = saved[-1]
    assert set(record) == {"sha256", "at"} and record["at"] == NOW
    assert headers["X-Slack-Signature"][3:] not in json.dumps(saved)  # a digest, not it
    # Restarted a minute later, with the record read back: the same request does nothing.
    restarted, clicks = _handler(seen=Seen.from_records(json.loads(json.dumps(saved[-1])), NOW))
    assert _answered(restarted, headers, body) == (200, ["slack.replayed"])
    restarted.drain()
    assert clicks.got == []


def test_a_failure_to_persist_the_record_is_said_and_the_click_goes_on() -> None:
    def failing() -> None:
        raise OSError("disk full")

    handler, clicks = _handler(changed=failing)
    body = _body()
    with capture_logs() as logs:
        assert handler.handle(_headers(body), body) == (200, "")
        handler.drain()
    assert [e["event"] for e in logs] == ["slack.seen_not_saved"]
    assert [c.fix_id for c in clicks.got] == ["vol-1:type=gp3"]


def test_the_answer_does_not_wait_on_the_record_being_saved() -> None:
    import threading

    saving, release = threading.Event(), threading.Event()

    def slow() -> None:
        saving.set()
        release.wait(5)

    handler, clicks = _handler(changed=slow)
    body = _body()
    assert handler.handle(_headers(body), body) == (200, "")  # answered while it saves
    assert saving.wait(5) and clicks.got == []
    release.set()
    handler.drain()
    assert len(clicks.got) == 1
