"""The Slack webhook alerts are sent to, given or read from a file, checked at start."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr

from analyzer import redaction
from analyzer.deliver.auth import read_secret
from analyzer.deliver.slack import webhook_problem
from analyzer.errors import ConfigError


class Slack(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    slack_webhook_url: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "slack_webhook_url", "SLACK_WEBHOOK_URL", "EBS_ANALYZER_SLACK_WEBHOOK_URL"
        ),
    )
    """The Slack incoming webhook; SLACK_WEBHOOK_URL works too. Never logged."""
    slack_webhook_file: Path | None = None
    """A file holding the webhook URL (a mounted secret)."""
    slack_signing_secret: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "slack_signing_secret", "SLACK_SIGNING_SECRET", "EBS_ANALYZER_SLACK_SIGNING_SECRET"
        ),
    )
    """The Slack app's signing secret: with `apply_approvers`, alerts carry an Apply button and
    `POST /slack/actions` takes its clicks. Never logged."""
    slack_signing_secret_file: Path | None = None
    """A file holding the signing secret (a mounted secret)."""

    def signing_secret(self) -> str | None:
        """The signing secret from the setting or its file; None where neither is set."""
        secret, _ = _given(
            self.slack_signing_secret,
            self.slack_signing_secret_file,
            "Slack signing secret",
            "slack_signing_secret",
        )
        if secret is not None:
            redaction.secret(secret)
        return secret

    def webhook_url(self) -> str | None:
        """The webhook from the setting, or from the file that holds it, checked: a webhook
        the HTTP client would refuse fails the start, not every cycle."""
        url, origin = _given(
            self.slack_webhook_url, self.slack_webhook_file, "Slack webhook", "slack_webhook_url"
        )
        if url is not None:
            problem = webhook_problem(url)
            if problem is not None:
                raise ConfigError(f"{origin}: not a usable Slack webhook: {problem}")
        return url


def _given(
    value: SecretStr | None, file: Path | None, what: str, name: str
) -> tuple[str | None, str]:
    """A secret given as the setting `name` (preferred) or in a file (a mounted secret), and
    where it came from: the setting's name, or the file. None where neither gives one."""
    if value is not None:
        return value.get_secret_value().strip() or None, name
    if file is None:
        return None, ""
    try:
        return read_secret(file, what) or None, str(file)
    except OSError as exc:
        raise ConfigError(str(exc)) from None
