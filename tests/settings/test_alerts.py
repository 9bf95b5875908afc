"""How alerts live and what is sent of them."""

import pytest

from analyzer import settings
from analyzer.errors import ConfigError


def test_alerts_resolve_repeat_and_notify_as_set(monkeypatch):
    from analyzer.model.findings import Severity

    loaded = settings.load()
    assert (loaded.resolve_after, loaded.repeat_interval) == (300, 4 * 3600)
    assert (loaded.notify_severity, loaded.dry_run, loaded.state_file) == (
        Severity.WARNING,
        False,
        None,
    )
    monkeypatch.setenv("EBS_ANALYZER_NOTIFY_SEVERITY", "info")
    assert settings.load().notify_severity is Severity.INFO
    with pytest.raises(ConfigError, match="Input should be 'info', 'warning' or 'critical'"):
        settings.load({"notify_severity": "loud"})
