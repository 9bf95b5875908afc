"""No secret reaches the log, at any level: a daemon at debug level, an Alertmanager pair behind
basic auth (credentials in the URL), a Slack webhook and AWS keys in the environment, and every
delivery failing (a closed port, a host that does not resolve), so that every error path that
could quote a URL runs."""

from __future__ import annotations

import base64
import json
import logging
from datetime import timedelta
from urllib.parse import quote

import structlog
from prometheus_client import generate_latest

from analyzer import logs, settings
from analyzer.analyze import rules
from analyzer.live import daemon
from tests.live.test_daemon import START, Clock, account, cloudwatch  # noqa: F401 (fixtures)
from tests.test_cli import free_port

PASSWORD = "Pa55:w0rd/from-url"
TOKEN = "WebhookTok3nXYZ0123"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE1"


def test_a_daemon_at_debug_level_prints_no_secret(account, monkeypatch, capsys):  # noqa: F811
    _volume, clients = account
    closed = free_port()
    userinfo = f"ebs:{quote(PASSWORD, safe='')}@"
    webhook = f"http://127.0.0.1:{closed}/services/T0SEC/B0SEC/{TOKEN}"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    monkeypatch.setenv("SLACK_WEBHOOK_URL", webhook)
    monkeypatch.setenv(
        "EBS_ANALYZER_ALERTMANAGER_URL",
        f"http://{userinfo}127.0.0.1:{closed},http://{userinfo}am.invalid:9093",
    )
    logs.configure("debug", json_lines=True)
    try:
        config = settings.load({"region": ["us-east-1"], "listen": "127.0.0.1:0"})
        clock = Clock(START + timedelta(hours=3, seconds=30))
        process, server = daemon.build(config, rules.load(), clients, clock, process_metrics=False)
        server.stop()
        assert process.cycle()
        published = process.published()
        assert published is not None
        own = generate_latest(process.telemetry.registry)
        scraped = published.exposition.followed_by(own).text().decode()  # what /metrics serves
        # What a library or an exception would quote: the settings, the URLs as given.
        log = structlog.get_logger("test")
        log.debug("settings.loaded", settings=repr(config), env={"url": webhook + " "})
        logging.getLogger("slack_sdk").warning("Failed to send a request to %s", webhook)
        try:
            raise ValueError(f"bad URL {quote(webhook, safe='')!r}")
        except ValueError:
            log.exception("unexpected")
    finally:
        logs.configure("info", json_lines=True)
    err = capsys.readouterr().err
    events = [json.loads(line)["event"] for line in err.splitlines()]
    assert "alertmanager.failed" in events and "notification.failed" in events
    assert events.count("alertmanager.failed") == 2
    pair = base64.b64encode(f"ebs:{PASSWORD}".encode()).decode()
    for secret in (PASSWORD, quote(PASSWORD, safe=""), "w0rd", TOKEN, AWS_SECRET, pair):
        assert secret not in err, secret
        assert secret not in scraped, secret
