"""The log format."""

import pytest

from analyzer import settings
from analyzer.errors import ConfigError


def test_the_log_format_is_auto_json_or_console(monkeypatch):
    assert settings.load().log_format == "auto"
    monkeypatch.setenv("EBS_ANALYZER_LOG_FORMAT", "json")
    assert settings.load().log_format == "json"
    with pytest.raises(ConfigError, match=r"--log-format: Input should be 'auto', 'json' or"):
        settings.load({"log_format": "xml"})
