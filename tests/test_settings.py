import re
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from analyzer import settings
from analyzer.errors import ConfigError


def test_defaults():
    config = settings.load()
    assert config.region == ()
    assert config.lookback == 3600
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


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ({"active_cadence": "20m"}, "active_cadence (1200 s) must not be longer than idle_cadence"),
        ({"quiet_utilization": 0.9}, "quiet_utilization (0.9) must be below hot_utilization"),
    ],
)
def test_the_tiers_must_stay_in_order(values, problem):
    with pytest.raises(ConfigError, match=re.escape(problem)):
        settings.load(values)


# --- the Slack webhook, checked at start --------------------------------------------------

TOKEN = "XyZsecretToken01"


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (f"https://hooks.slack.com/services/T01/B02/{TOKEN}\x07", "a space or a control character"),
        (f"https://hooks.slack.com/services/T01/B02/ {TOKEN}", "a space or a control character"),
        (f"hooks.slack.com/services/T01/B02/{TOKEN}", "not an https:// URL"),
        (f"http://hooks.slack.com/services/T01/B02/{TOKEN}", "plain http only to localhost"),
        (f"https:///services/T01/B02/{TOKEN}", "names no host"),
        (f"https://[hooks.slack.com/services/T01/B02/{TOKEN}", "does not parse as a URL"),
    ],
)
def test_a_bad_webhook_is_refused_without_repeating_it(monkeypatch, url, problem):
    monkeypatch.setenv("SLACK_WEBHOOK_URL", url)
    with pytest.raises(ConfigError) as info:
        settings.load().webhook_url()
    assert problem in str(info.value)
    assert str(info.value).startswith("slack_webhook_url: not a usable Slack webhook: ")
    assert TOKEN not in str(info.value) and "T01" not in str(info.value)


def test_a_bad_webhook_file_names_the_file_not_the_url(tmp_path):
    path = tmp_path / "webhook"
    path.write_text(f"https://hooks.slack.com/services/T01/B02/{TOKEN}\x00\n")
    with pytest.raises(ConfigError, match="webhook: not a usable Slack webhook") as info:
        settings.load({"slack_webhook_file": path}).webhook_url()
    assert TOKEN not in str(info.value)


def test_good_webhooks_pass(monkeypatch):
    for url in (
        f"https://hooks.slack.com/services/T01/B02/{TOKEN}\n",
        f"http://127.0.0.1:8080/services/T01/B02/{TOKEN}",
    ):
        monkeypatch.setenv("SLACK_WEBHOOK_URL", url)
        assert settings.load().webhook_url() == url.strip()


def test_run_with_a_bad_webhook_exits_2_in_one_line_without_it(monkeypatch, capsys):
    from analyzer.cli import main

    monkeypatch.setenv("SLACK_WEBHOOK_URL", f"https://hooks.slack.com/services/T01/B02/X {TOKEN}")
    assert main(["run", "--listen", "127.0.0.1:0", "--region", "us-east-1"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "ebs-analyzer: error: slack_webhook_url: not a usable Slack webhook: "
        "it holds a space or a control character (pasted with the secret?)\n"
    )


def test_a_well_formed_region_botocore_does_not_know_is_a_warning_with_a_guess() -> None:
    """A region newer than this botocore must still work; a slip is named."""
    with capture_logs() as logs:
        assert settings.load({"region": ["eu-centrl-1"]}).region == ("eu-centrl-1",)
    (said,) = [e for e in logs if e["event"] == "settings.region_unknown"]
    assert "did you mean 'eu-central-1'?" in said["reason"]


ACCOUNTS = """\
accounts:
  - id: "111111111111"
    name: prod
    role_arn: arn:aws:iam::111111111111:role/ebs-analyzer
    external_id: s3cret-external
    regions: [us-east-1]
    tags: {team: db}
  - id: 222222222222
organization:
  role_name: ebs-analyzer
  include: {ids: [], names: [], ous: [ou-ab12-cd34], tags: {}}
  exclude: {names: [sandbox]}
"""


def test_the_accounts_contract_loads(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(ACCOUNTS)
    loaded = settings.load({}, path)
    prod, other = loaded.accounts
    assert (prod.id, prod.name, prod.regions, prod.tags) == (
        "111111111111",
        "prod",
        ("us-east-1",),
        {"team": "db"},
    )
    assert prod.external_id is not None and "s3cret" not in repr(prod)
    assert other.id == "222222222222"  # a YAML number of twelve digits is read as the id
    assert loaded.organization is not None
    assert loaded.organization.include.ous == ("ou-ab12-cd34",)
    assert loaded.organization.exclude.names == ("sandbox",)


def test_the_external_id_never_reaches_the_log(tmp_path):
    from analyzer import redaction

    path = tmp_path / "config.yaml"
    path.write_text(ACCOUNTS)
    settings.load({}, path)
    assert "s3cret-external" not in redaction.scrub("assumed with s3cret-external")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "accounts:\n  - id: '111111111111'\n    nmae: prod\n",
            "accounts.0.nmae: unknown setting (did you mean 'name'?)",
        ),
        ("accounts:\n  - id: 11111111111\n", "not 12 digits: quote account ids"),
        ("accounts:\n  - id: '1111'\n", "'1111' is not an AWS account id"),
        (
            "accounts:\n  - id: '111111111111'\n    role_arn: arn:aws:iam::222222222222:role/x\n",
            "role_arn names account 222222222222, not this entry's 111111111111",
        ),
        (
            "accounts:\n  - id: '111111111111'\n    role_arn: ebs-analyzer\n",
            "is not an IAM role's ARN (arn:aws:iam::111111111111:role/NAME)",
        ),
        (
            "accounts:\n  - id: '111111111111'\n  - id: '111111111111'\n",
            "account 111111111111 is listed twice",
        ),
        ("accounts:\n  - id: '111111111111'\n    regions: [us-east]\n", "not an AWS region's name"),
        ("accounts:\n  - id: '111111111111'\n    budget: 0\n", "budget"),
        ("organization:\n  role_name: arn:aws:iam::1:role/x\n", "the ARN goes in accounts:"),
        (
            "organization:\n  include: {ou: [x]}\n",
            "organization.include.ou: unknown setting (did you mean 'ous'?)",
        ),
    ],
)
def test_a_wrong_account_setting_is_one_clear_line(tmp_path, text, message):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        settings.load({}, path)
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert str(path) in str(info.value)


def test_accounts_from_the_environment_as_json(monkeypatch):
    monkeypatch.setenv("EBS_ANALYZER_ACCOUNTS", '[{"id": "111111111111", "name": "prod"}]')
    assert settings.load().accounts[0].name == "prod"


def test_one_shard_is_the_whole_and_a_shard_names_its_part(monkeypatch):
    from analyzer.collect.shards import WHOLE, Shard

    assert settings.load().sharding() is WHOLE
    assert settings.load({"shard": 2, "total_shards": 3}).sharding() == Shard(2, 3)
    monkeypatch.setenv("EBS_ANALYZER_TOTAL_SHARDS", "4")
    monkeypatch.setenv("POD_NAME", "ebs-analyzer-3")
    assert settings.load().sharding() == Shard(3, 4)


def test_a_shard_beyond_the_total_or_no_ordinal_is_one_line(monkeypatch):
    with pytest.raises(ConfigError, match=r"shard \(3\) must be below total_shards \(3\)"):
        settings.load({"shard": 3, "total_shards": 3})
    monkeypatch.setenv("POD_NAME", "analyzer")
    with pytest.raises(ConfigError, match="ends in no StatefulSet ordinal below it: set --shard"):
        settings.load({"total_shards": 2}).sharding()


def test_node_coverage_is_off_unless_a_prometheus_is_named(tmp_path, monkeypatch):
    assert settings.load().node_coverage_url is None
    path = tmp_path / "config.yaml"
    path.write_text("node_coverage_url: http://prometheus:9090/\n")
    assert settings.load({}, path).node_coverage_url == "http://prometheus:9090"
    monkeypatch.setenv("EBS_ANALYZER_NODE_COVERAGE_URL", "https://prom.example:443")
    assert settings.load({}, path).node_coverage_url == "https://prom.example:443"
    monkeypatch.setenv("EBS_ANALYZER_NODE_COVERAGE_URL", "prometheus:9090")
    with pytest.raises(ConfigError, match=r"EBS_ANALYZER_NODE_COVERAGE_URL.*not an http"):
        settings.load({}, path)


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


def test_a_list_setting_is_a_yaml_list_or_text_with_commas(tmp_path, monkeypatch):
    path = tmp_path / "config.yaml"
    path.write_text("rules: [b, a]\nalertmanager_url: http://am:9093, http://am2:9093\n")
    loaded = settings.load({}, path)
    assert loaded.rules == ("b", "a")
    assert loaded.alertmanager_url == ("http://am:9093", "http://am2:9093")
    monkeypatch.setenv("EBS_ANALYZER_TAG", " team=db, ,env ")
    assert settings.load().tag == ("team=db", "env")


@pytest.mark.parametrize(
    ("name", "written", "seconds"),
    [("lookback", "1.5h", 5400), ("settle_delay", 90, 90), ("overlap", "500ms", 0.5)],
)
def test_a_duration_is_seconds_or_a_number_with_its_unit(name, written, seconds):
    assert getattr(settings.load({name: written}), name) == seconds


@pytest.mark.parametrize(("tag", "read"), [("team=db", ("team=db",)), ("env", ("env",))])
def test_a_tag_is_key_value_or_a_key_alone(tag, read):
    assert settings.load({"tag": [tag]}).tag == read


def test_rule_directories_keep_their_order():
    assert settings.load().rule_dirs == []
    assert settings.load({"rules": ["site", "team"]}).rule_dirs == [Path("site"), Path("team")]


def test_forecast_window_is_accepted_with_a_warning_that_names_where_it_was_set(
    tmp_path, monkeypatch
):
    path = tmp_path / "config.yaml"
    path.write_text("forecast_window: 1h\n")
    with capture_logs() as logs:
        assert settings.load({}, path).forecast_window == 3600
        monkeypatch.setenv("EBS_ANALYZER_FORECAST_WINDOW", "2h")
        settings.load({}, path)
    said = [e["setting"] for e in logs if e["event"] == "settings.ignored"]
    assert said == [f"{path}: forecast_window", "EBS_ANALYZER_FORECAST_WINDOW"]


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


@pytest.mark.parametrize(
    ("listen", "address"),
    [
        ("0.0.0.0:9877", ("0.0.0.0", 9877)),
        ("127.0.0.1:0", ("127.0.0.1", 0)),
        (":9000", ("0.0.0.0", 9000)),
        ("[::1]:80", ("::1", 80)),
        ("[::]:9877", ("::", 9877)),
    ],
)
def test_the_listen_address_is_a_host_and_a_port(listen, address):
    assert settings.load({"listen": listen}).listen_address == address


@pytest.mark.parametrize(
    ("listen", "message"),
    [
        ("::1:80", "--listen: '::1:80': an IPv6 address is written in brackets, [::1]:9877"),
        ("[zz]:80", "--listen: '[zz]:80': [zz] is not an IPv6 address"),
        ("localhost:65536", "--listen: 'localhost:65536' is not HOST:PORT"),
    ],
)
def test_a_listen_address_that_is_not_one_says_how_to_write_it(listen, message):
    with pytest.raises(ConfigError) as info:
        settings.load({"listen": listen})
    assert str(info.value).startswith(message)


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


def test_the_log_format_is_auto_json_or_console(monkeypatch):
    assert settings.load().log_format == "auto"
    monkeypatch.setenv("EBS_ANALYZER_LOG_FORMAT", "json")
    assert settings.load().log_format == "json"
    with pytest.raises(ConfigError, match=r"--log-format: Input should be 'auto', 'json' or"):
        settings.load({"log_format": "xml"})


def test_the_cloudwatch_agent_is_read_only_where_its_namespace_is_named(monkeypatch):
    assert settings.load().cloudwatch_agent_namespace is None
    monkeypatch.setenv("EBS_ANALYZER_CLOUDWATCH_AGENT_NAMESPACE", "CWAgent")
    assert settings.load().cloudwatch_agent_namespace == "CWAgent"
    with pytest.raises(ConfigError, match="--cloudwatch-agent-namespace: String should have"):
        settings.load({"cloudwatch_agent_namespace": ""})


def test_a_monitoring_account_is_off_unless_set(monkeypatch):
    assert settings.load().monitoring_account is False
    monkeypatch.setenv("EBS_ANALYZER_MONITORING_ACCOUNT", "true")
    assert settings.load().monitoring_account is True
