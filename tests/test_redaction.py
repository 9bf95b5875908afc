"""Secrets out of every line written: values registered or read from the environment, in the
forms they take in a line, and whatever has the shape of a credential."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer import redaction
from analyzer.redaction import REDACTED, redact, scrub, secret, secrets_from_environment

WEBHOOK = "https://hooks.slack.com/services/T0001/B0002/abcdefghijklmnopqrstuvwx"


@pytest.fixture(autouse=True)
def no_known_secrets(monkeypatch):
    """Each test starts with no registered secret, and leaves none behind."""
    monkeypatch.setattr(redaction, "_secrets", set())


@pytest.mark.parametrize(
    ("line", "clean"),
    [
        (
            "connect to postgres://admin:hunter22@db.internal:5432/app",
            f"connect to postgres://{REDACTED}@db.internal:5432/app",
        ),
        (
            "GET https://example.com/hook?id=7&token=s3cr3tvalue&x=1",
            f"GET https://example.com/hook?id=7&token={REDACTED}&x=1",
        ),
        (
            "https://bucket.s3.amazonaws.com/k?X-Amz-Signature=abcdef0123",
            f"https://bucket.s3.amazonaws.com/k?X-Amz-Signature={REDACTED}",
        ),
        (f"posting to {WEBHOOK} failed", f"posting to https://hooks.slack.com/{REDACTED}"),
        ("404 on services/T0001/B0002/abcdefgh", f"404 on services/{REDACTED}"),
        ("Authorization: Bearer abcdEFGH1234", f"Authorization: Bearer {REDACTED}"),
        ("Authorization: Basic dXNlcjpwYXNz", f"Authorization: Basic {REDACTED}"),
    ],
)
def test_what_has_the_shape_of_a_credential_is_redacted_whatever_its_value(line, clean):
    assert scrub(line) == clean


@pytest.mark.parametrize(
    "line",
    [
        "vol-0abc: BurstBalance 40% → 0 in 24 min",
        "https://monitoring.us-east-1.amazonaws.com/?Action=GetMetricData",
        "the bearer of bad news",  # a word, not an Authorization header
    ],
)
def test_a_line_without_a_secret_is_left_as_it_is(line):
    assert scrub(line) == line


def test_a_registered_secret_is_redacted_in_the_forms_it_takes_in_a_line():
    secret(" p@ss word/1 \n")
    assert scrub("password is p@ss word/1") == f"password is {REDACTED}"
    assert scrub("sent p%40ss%20word%2F1") == f"sent {REDACTED}"
    # The pieces a stray space split it into.
    assert scrub("user p@ss then word/1") == f"user {REDACTED} then {REDACTED}"


def test_a_registered_url_is_redacted_by_its_path_and_last_segment_too():
    secret("https://alerts.example.com/hook/x9y8z7w6")
    assert scrub("POST https://alerts.example.com/hook/x9y8z7w6") == f"POST {REDACTED}"
    assert scrub("404 for /hook/x9y8z7w6") == f"404 for {REDACTED}"
    assert scrub("unknown hook x9y8z7w6") == f"unknown hook {REDACTED}"


def test_values_shorter_than_four_characters_are_not_redacted_by_value():
    secret("abc")
    assert scrub("abc def") == "abc def"


@pytest.mark.parametrize(
    ("name", "value", "hidden"),
    [
        ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG", True),
        ("AWS_SESSION_TOKEN", "FwoGZXIvYXdzEBYaDH", True),
        ("SLACK_WEBHOOK_URL", WEBHOOK, True),
        ("db_password", "correcthorse", True),  # the name is read in any case
        ("SLACK_WEBHOOK_URL_FILE", "/run/secrets/slack-hook", False),  # a path to one
        ("ANALYZER_TOKEN", "yes1234", False),  # under eight characters: likely a flag
        ("AWS_REGION", "eu-central-1-long", False),  # no word that names a secret
    ],
)
def test_environment_variables_whose_names_say_secret(name, value, hidden):
    secrets_from_environment({name: value})
    assert (value not in scrub(f"echo {value}")) is hidden


def test_a_longer_secret_goes_before_a_shorter_one_inside_it():
    secret("abcd")
    secret("abcdefgh")
    assert scrub("key abcdefgh") == f"key {REDACTED}"


@given(st.text(alphabet=st.characters(codec="ascii"), max_size=40))
def test_a_registered_secret_never_survives_in_a_line(noise):
    redaction._secrets.clear()
    secret("Zq7-Secret-Value")
    assert "Zq7-Secret-Value" not in scrub(noise + "Zq7-Secret-Value" + noise)


def test_a_log_event_is_scrubbed_field_by_field_and_secret_keys_wholly():
    secret("hunter22hunter")
    event = {
        "event": "slack post failed",
        "webhook_url": "anything at all",
        "Authorization": "x",
        "error": "401 with hunter22hunter",
        "attempts": 3,
        "ok": False,
        "detail": {"url": "postgres://u:p@h/db", "tries": [1, "hunter22hunter"]},
    }
    assert redact(None, "error", event) == {
        "event": "slack post failed",
        "webhook_url": REDACTED,
        "Authorization": REDACTED,
        "error": f"401 with {REDACTED}",
        "attempts": 3,
        "ok": False,
        "detail": {"url": f"postgres://{REDACTED}@h/db", "tries": [1, REDACTED]},
    }


def test_an_object_is_kept_unless_its_repr_shows_a_secret():
    class Shown:
        def __init__(self, text):
            self.text = text

        def __repr__(self):
            return f"Shown({self.text})"

    secret("hunter22hunter")
    plain = Shown("nothing")
    event = redact(None, "info", {"plain": plain, "leaky": Shown("hunter22hunter")})
    assert event["plain"] is plain
    assert event["leaky"] == f"Shown({REDACTED})"
