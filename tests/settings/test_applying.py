"""What `apply` may change: its tag, the filters that widen its scope, its cost ceiling."""

import pytest

from analyzer import settings
from analyzer.errors import ConfigError


def test_the_defaults_opt_nothing_in_but_the_tag_and_cap_the_increase() -> None:
    loaded = settings.load()
    assert loaded.apply_tag == "ebs-analyzer/apply=allowed"
    assert loaded.apply_scope == () and loaded.apply_max_monthly_increase == 50.0


def test_the_scope_and_the_ceiling_come_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("EBS_ANALYZER_APPLY_SCOPE", "team=db,env=prod")
    monkeypatch.setenv("EBS_ANALYZER_APPLY_MAX_MONTHLY_INCREASE", "120")
    loaded = settings.load()
    assert loaded.apply_scope == ("team=db", "env=prod")
    assert loaded.apply_max_monthly_increase == 120.0


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("EBS_ANALYZER_APPLY_TAG", "ebs-analyzer/apply", "is not Key=Value"),
        ("EBS_ANALYZER_APPLY_SCOPE", "=db", "is not Key=Value or Key"),
        ("EBS_ANALYZER_APPLY_MAX_MONTHLY_INCREASE", "-5", "greater than or equal to 0"),
    ],
)
def test_a_wrong_setting_is_one_line_naming_its_variable(monkeypatch, name, value, says) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        settings.load()
    assert name in str(info.value) and says in str(info.value)
