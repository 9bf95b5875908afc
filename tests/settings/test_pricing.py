"""Where the fixes' prices come from."""

from pathlib import Path

import pytest

from analyzer import settings
from analyzer.errors import ConfigError


def test_the_price_list_is_asked_unless_turned_off(tmp_path, monkeypatch):
    assert settings.load().pricing_api is True
    assert settings.load().prices is None
    path = tmp_path / "config.yaml"
    path.write_text("prices: /etc/ebs-analyzer/prices.yaml\npricing_api: false\n")
    loaded = settings.load({}, path)
    assert (loaded.prices, loaded.pricing_api) == (Path("/etc/ebs-analyzer/prices.yaml"), False)
    monkeypatch.setenv("EBS_ANALYZER_PRICING_API", "maybe")
    with pytest.raises(ConfigError, match="EBS_ANALYZER_PRICING_API: Input should be a valid"):
        settings.load()
