"""Where the rules are read from."""

from pathlib import Path

from analyzer import settings


def test_rule_directories_keep_their_order():
    assert settings.load().rule_dirs == []
    assert settings.load({"rules": ["site", "team"]}).rule_dirs == [Path("site"), Path("team")]
