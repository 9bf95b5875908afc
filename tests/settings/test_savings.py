"""How much headroom a cut keeps, and when an unattached volume is worth a word."""

import pytest

from analyzer import settings
from analyzer.errors import ConfigError


def test_the_defaults_keep_a_fifth_above_the_peak_and_name_a_week_idle() -> None:
    loaded = settings.load()
    assert loaded.savings_headroom == 1.2
    assert loaded.unattached_after == 7 * 86_400.0


def test_they_come_from_the_environment_and_a_duration_is_read_as_one(monkeypatch) -> None:
    monkeypatch.setenv("EBS_ANALYZER_SAVINGS_HEADROOM", "1.5")
    monkeypatch.setenv("EBS_ANALYZER_UNATTACHED_AFTER", "30d")
    loaded = settings.load()
    assert (loaded.savings_headroom, loaded.unattached_after) == (1.5, 30 * 86_400.0)


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("EBS_ANALYZER_SAVINGS_HEADROOM", "1", "greater than 1"),
        ("EBS_ANALYZER_SAVINGS_HEADROOM", "0.8", "greater than 1"),
        ("EBS_ANALYZER_UNATTACHED_AFTER", "10m", "must be at least 1h"),
    ],
)
def test_a_wrong_setting_is_one_line_naming_its_variable(monkeypatch, name, value, says) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        settings.load()
    assert name in str(info.value) and says in str(info.value)
    assert "\n" not in str(info.value)


def test_a_bare_off_in_yaml_turns_the_digest_off(tmp_path) -> None:
    """YAML reads `savings_digest: off` as false: it means what it was written as."""
    config = tmp_path / "config.yaml"
    config.write_text("region: [us-east-1]\nsavings_digest: off\n")
    assert settings.load(config_file=config).savings_digest == "off"
    assert settings.load({"region": ["us-east-1"], "savings_digest": True}).savings_digest == (
        "weekly"
    )
