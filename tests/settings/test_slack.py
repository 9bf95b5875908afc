"""The Slack webhook, checked at start, and never repeated in an error."""

import pytest

from analyzer import settings
from analyzer.errors import ConfigError

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
