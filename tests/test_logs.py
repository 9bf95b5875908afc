"""The log is one format: the libraries' own lines (botocore, any other) come out as JSON
beside the daemon's."""

from __future__ import annotations

import json
import logging
import os

import pytest
import structlog

from analyzer import logs, redaction


def test_library_lines_are_json_lines_too(capsys) -> None:
    logs.configure("info", json_lines=True)
    logging.getLogger("apscheduler.executors.default").warning(
        "Run time of job %r was missed by %s", "cycle", "0:00:05"
    )
    logging.getLogger("apscheduler.scheduler").info("Scheduler started")  # below WARNING
    structlog.get_logger().info("poll.completed", volumes=1)
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(e["event"], e["level"]) for e in lines] == [
        ("Run time of job 'cycle' was missed by 0:00:05", "warning"),
        ("poll.completed", "info"),
    ]
    assert lines[0]["logger"] == "apscheduler.executors.default"
    logs.configure("info", json_lines=True)  # again: one handler, not two
    assert sum(h.get_name() == logs.HANDLER for h in logging.getLogger().handlers) == 1


# --- secrets ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("POST http://ebs:hunter2-pw@am:9093/api/v2/alerts failed", "hunter2-pw"),
        ("GET https://x.example/a?b=1&token=tok-123456", "tok-123456"),
        ("GET https://x.example/a?key=k-987654321&b=1", "k-987654321"),
        ("https://blob.example/f?sv=1&sig=c2lnbmF0dXJl%3D", "c2lnbmF0dXJl"),
        ("https://hooks.slack.com/services/T01ABC/B02DEF/XyZsecretPath01", "XyZsecretPath01"),
        ("URL can't contain control characters. '/services/T01/B02/Xy Zsecret01'", "Zsecret01"),
        ("http%3A%2F%2Febs%3Ahunter2-pw%40am%3A9093", "hunter2-pw"),
        ("hooks.slack.com%2Fservices%2FT01%2FB02%2FXyZsecret01", "XyZsecret01"),
        ("Authorization: Basic ZWJzOmh1bnRlcjI=", "ZWJzOmh1bnRlcjI="),
        ("Authorization: Bearer eyJhbGciOi.eyJzdWIi.c2ln", "eyJhbGciOi"),
    ],
)
def test_secrets_are_scrubbed_by_their_shape(line: str, secret: str) -> None:
    assert secret not in redaction.scrub(line)
    assert "[redacted]" in redaction.scrub(line)


def test_a_known_secret_is_scrubbed_in_any_form_it_takes() -> None:
    """A webhook that is no Slack URL, pasted with a trailing space: whole, trimmed,
    percent-encoded, its path alone, its last segment alone."""
    url = "https://relay.example/notify/Zq8vK2pLm4Xw9 "
    redaction.secret(url)
    for shown in (
        url,
        f"<{url.strip()}>",
        "https%3A%2F%2Frelay.example%2Fnotify%2FZq8vK2pLm4Xw9",
        "POST /notify/Zq8vK2pLm4Xw9 HTTP/1.1",
        "token Zq8vK2pLm4Xw9 refused",
    ):
        assert "Zq8vK2pLm4Xw9" not in redaction.scrub(shown), shown


def test_words_that_only_look_like_secrets_stay() -> None:
    line = "basic authentication failed for volume vol-1 at http://am:9093/api/v2/alerts"
    assert redaction.scrub(line) == line


def test_every_value_of_every_line_is_scrubbed_at_debug_level_too(capsys, monkeypatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzSECRET1")
    monkeypatch.setenv("EBS_ANALYZER_SLACK_WEBHOOK_FILE", "/run/secrets/slack")
    logs.configure("debug", json_lines=True)
    log = structlog.get_logger()
    url = "http://ebs:hunter2-pw@am:9093"
    log.debug("request.sent", url=url, nested={"urls": [url, (url,)]}, key=os.environ)
    try:
        raise OSError(f"cannot reach {url}")
    except OSError:
        log.exception("push.failed")
    log.warning("wrapped", error=ValueError(url))
    logging.getLogger("urllib3.connectionpool").warning("Retrying %s", url)
    err = capsys.readouterr().err
    lines = [json.loads(line) for line in err.splitlines()]
    assert [e["event"] for e in lines] == [
        "request.sent",
        "push.failed",
        "wrapped",
        "Retrying http://[redacted]@am:9093",
    ]
    for secret in ("hunter2-pw", "wJalrXUtnFEMI", "bPxRfiCYzSECRET1"):
        assert secret not in err
    assert "/run/secrets/slack" in err  # a variable naming a file holds no secret
    assert "OSError: cannot reach http://[redacted]@am:9093" in lines[1]["exception"]
    logs.configure("info", json_lines=True)
