"""An Alertmanager behind basic auth or a bearer token, played by a local receiver: the
credentials arrive as an Authorization header, whether they came in the URL (what a user
tries first) or from settings that read them from a file, as Prometheus's basic_auth does."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest

from analyzer import settings
from analyzer.deliver.alertmanager import Alertmanager
from tests.deliver.test_alertmanager import firing_book
from tests.helpers import refusal
from tests.receiver import Receiver


@pytest.fixture
def am() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


def push(urls: tuple[str, ...] | list[str]) -> int:
    now = datetime.now(UTC)
    return Alertmanager(urls, 60).push(firing_book(now), now)


def test_credentials_in_the_url_are_sent_as_basic_auth(am: Receiver) -> None:
    password = "p@ss:w/rd"
    url = am.root.replace("http://", f"http://ebs:{quote(password, safe='')}@")
    assert push([url]) == 1
    [(path, headers)] = am.seen
    assert path == "/api/v2/alerts"
    assert headers["Authorization"] == basic("ebs", password)
    assert settings.load({"alertmanager_url": [url]}).alertmanager_url == (am.root,)


def test_the_password_file_is_read_for_every_post(am: Receiver, tmp_path: Path) -> None:
    secret = tmp_path / "am-password"
    secret.write_text("first-password\n")
    config = tmp_path / "config.yaml"
    config.write_text(
        f"alertmanager_url: [{am.root}]\n"
        f"alertmanager_basic_auth:\n  username: ebs\n  password_file: {secret}\n"
    )
    loaded = settings.load({}, config)
    assert push(loaded.alertmanager_url) == 1
    secret.write_text("rotated-password\n")
    assert push(loaded.alertmanager_url) == 1
    assert [headers["Authorization"] for _, headers in am.seen] == [
        basic("ebs", "first-password"),
        basic("ebs", "rotated-password"),
    ]


def test_a_password_and_a_bearer_token_from_the_environment(am, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EBS_ANALYZER_ALERTMANAGER_URL", am.root)
    monkeypatch.setenv("EBS_ANALYZER_ALERTMANAGER_BASIC_AUTH__USERNAME", "ebs")
    monkeypatch.setenv("EBS_ANALYZER_ALERTMANAGER_BASIC_AUTH__PASSWORD", "from-env")
    assert push(settings.load().alertmanager_url) == 1
    monkeypatch.delenv("EBS_ANALYZER_ALERTMANAGER_BASIC_AUTH__USERNAME")
    monkeypatch.delenv("EBS_ANALYZER_ALERTMANAGER_BASIC_AUTH__PASSWORD")
    token = tmp_path / "token"
    token.write_text("tok-123456\n")
    monkeypatch.setenv("EBS_ANALYZER_ALERTMANAGER_BEARER_TOKEN_FILE", str(token))
    assert push(settings.load().alertmanager_url) == 1
    assert [headers["Authorization"] for _, headers in am.seen] == [
        basic("ebs", "from-env"),
        "Bearer tok-123456",
    ]


def test_no_credentials_no_header(am: Receiver) -> None:
    assert push([am.root]) == 1
    assert "Authorization" not in am.seen[0][1]


def test_a_secret_file_that_goes_missing_fails_that_post_without_its_content(am, tmp_path):
    secret = tmp_path / "am-password"
    secret.write_text("gone-soon\n")
    loaded = settings.load(
        {
            "alertmanager_url": [am.root],
            "alertmanager_basic_auth": {"username": "ebs", "password_file": secret},
        }
    )
    secret.unlink()
    outcomes: list[tuple[str, str]] = []
    now = datetime.now(UTC)
    sink = Alertmanager(loaded.alertmanager_url, 60, lambda c, o: outcomes.append((c, o)))
    assert sink.push(firing_book(now), now) == 0
    assert outcomes == [("alertmanager", "error")]
    assert am.seen == []


@pytest.mark.parametrize(
    ("file", "message"),
    [
        (
            "alertmanager_basic_auth: {username: ebs, pasword_file: /x}\n",
            "config.yaml: alertmanager_basic_auth.pasword_file: unknown setting",
        ),
        (
            "alertmanager_basic_auth: {username: ebs, password: a, password_file: /x}\n",
            "config.yaml: alertmanager_basic_auth: set password or password_file, not both",
        ),
        (
            "alertmanager_basic_auth: {username: ebs, password_file: /no/such/file}\n"
            "alertmanager_url: [http://am:9093]\n",
            "/no/such/file: cannot read the Alertmanager password: No such file or directory",
        ),
        (
            "alertmanager_basic_auth: {username: ebs, password: a}\n"
            "alertmanager_url: ['http://ebs:s3cret-pw@am:9093']\n",
            "config.yaml: alertmanager_url: 'am:9093': credentials in the URL and in "
            "alertmanager_basic_auth",
        ),
        (
            "alertmanager_bearer_token_file: /x\nalertmanager_basic_auth: {username: ebs}\n"
            "alertmanager_url: [http://am:9093]\n",
            "alertmanager_basic_auth and alertmanager_bearer_token_file are both set",
        ),
        (
            "alertmanager_url: ['ebs:s3cret-pw@am:9093']\n",
            "config.yaml: alertmanager_url: 'am:9093' is not an http:// or https:// URL",
        ),
    ],
)
def test_a_bad_alertmanager_setting_is_one_line_without_the_secret(tmp_path, file, message):
    _, said = refusal(tmp_path, file)
    assert message in said
    assert "s3cret-pw" not in said
