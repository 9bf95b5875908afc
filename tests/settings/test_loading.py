"""Settings loaded from flags, EBS_ANALYZER_* variables and a YAML file, in that order of
precedence, with every problem named where its value came from."""

from pathlib import Path

import pytest

from analyzer import settings
from analyzer.errors import ConfigError


def test_defaults():
    config = settings.load()
    assert config.region == ()
    assert config.lookback is None  # what the rules read, plus ten minutes
    assert config.settle_delay == 120


def test_flag_beats_environment_beats_file(tmp_path: Path, monkeypatch):
    path = tmp_path / "config.yaml"
    path.write_text("region: [eu-west-1]\nlookback: 2h\ntag: [team=db]\n")
    assert settings.load({}, path).region == ("eu-west-1",)
    monkeypatch.setenv("EBS_ANALYZER_REGION", "us-east-1, us-west-2")
    assert settings.load({}, path).region == ("us-east-1", "us-west-2")
    assert settings.load({"region": ["ap-south-1"]}, path).region == ("ap-south-1",)
    assert settings.load({}, path).lookback == 7200
    assert settings.load({}, path).tag == ("team=db",)


@pytest.mark.parametrize(
    ("flags", "env", "file", "message"),
    [
        ({"lookback": "soon"}, {}, None, "--lookback: 'soon' is not a duration"),
        (
            {},
            {"EBS_ANALYZER_LOOKBACK": "-5m"},
            None,
            "EBS_ANALYZER_LOOKBACK: '-5m' is not a duration",
        ),
        (
            {},
            {},
            "lookbak: 1h\n",
            "config.yaml: lookbak: unknown setting (did you mean 'lookback'?)",
        ),
        ({}, {}, "intervall: 60\n", "config.yaml: intervall: unknown setting (did you mean 'int"),
        ({}, {}, "cadence_of_the_moon: 1\n", "cadence_of_the_moon: unknown setting"),
        (
            {},
            {},
            "alertmanager_basic_auth: {username: a, pasword: b}\n",
            "alertmanager_basic_auth.pasword: unknown setting (did you mean 'password'?)",
        ),
        (
            {},
            {},
            "listen: 9877\n",
            "config.yaml: listen: '9877' is not HOST:PORT: write the address and the port",
        ),
        (
            {"listen": "9877"},
            {},
            None,
            "--listen: '9877' is not HOST:PORT: write the address and the port, such as "
            "0.0.0.0:9877 (every interface) or 127.0.0.1:9877",
        ),
        ({}, {}, "lookback: 30d\n", "config.yaml: lookback: must be at most 15d (1,296,000 s)"),
        ({"repeat_interval": "10s"}, {}, None, "--repeat-interval: must be at least 1m (60 s)"),
        (
            {"region": ["us-east"]},
            {},
            None,
            "--region: 'us-east' is not an AWS region's name (such as us-east-1; did you mean",
        ),
        ({}, {}, "- a list\n", "config.yaml: expected a mapping of settings"),
        ({}, {}, "region: [unclosed\n", "config.yaml: line 2: invalid YAML"),
        ({"tag": ["=x"]}, {}, None, "--tag: '=x' is not Key=Value or Key"),
    ],
)
def test_errors_say_where_the_bad_value_came_from(tmp_path, monkeypatch, flags, env, file, message):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    path = None
    if file is not None:
        path = tmp_path / "config.yaml"
        path.write_text(file)
    with pytest.raises(ConfigError) as info:
        settings.load(flags, path)
    assert message in str(info.value)


def test_unreadable_config_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        settings.load({}, tmp_path / "missing.yaml")


def test_every_problem_is_named_in_the_order_of_the_settings(tmp_path):
    """One line for all of them, whichever way each was given, in the settings' own order."""
    path = tmp_path / "config.yaml"
    path.write_text("region: [us-east]\n")
    with pytest.raises(ConfigError) as info:
        settings.load({"total_shards": 0, "lookback": "soon"}, path)
    assert str(info.value) == (
        f"{path}: region: 'us-east' is not an AWS region's name (such as us-east-1; did you "
        "mean 'us-east-2'?); --lookback: 'soon' is not a duration such as 90s, 15m, 1h; "
        "--total-shards: Input should be greater than or equal to 1"
    )
