"""The credentials every Alertmanager is sent (more in tests/deliver/test_auth.py)."""

import pytest

from analyzer import settings
from analyzer.errors import ConfigError


def test_every_alertmanager_is_sent_the_credentials_of_the_settings(monkeypatch):
    monkeypatch.setenv("EBS_ANALYZER_ALERTMANAGER_URL", "http://am:9093, http://am2:9093")
    monkeypatch.setenv("EBS_ANALYZER_ALERTMANAGER_BEARER_TOKEN", "am-t0ken")
    urls = settings.load().alertmanager_url
    assert urls == ("http://am:9093", "http://am2:9093")
    assert [url.credentials.header() for url in urls] == ["Bearer am-t0ken"] * 2


def test_alertmanager_credentials_of_two_kinds_are_refused(monkeypatch):
    monkeypatch.setenv("EBS_ANALYZER_ALERTMANAGER_BEARER_TOKEN", "am-t0ken")
    monkeypatch.setenv("EBS_ANALYZER_ALERTMANAGER_BASIC_AUTH", '{"username": "ebs"}')
    with pytest.raises(ConfigError) as info:
        settings.load({"alertmanager_url": ["http://am:9093"]})
    assert str(info.value) == (
        "--alertmanager-url: alertmanager_basic_auth and alertmanager_bearer_token are both "
        "set: keep one"
    )
