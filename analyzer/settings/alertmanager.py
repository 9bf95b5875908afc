"""The Alertmanagers alerts are posted to, the credentials each is sent, and the runbook
their alerts link."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from analyzer.deliver.auth import Credentials, alertmanager_endpoint
from analyzer.settings.values import List


class BasicAuth(BaseModel):
    """Prometheus's basic_auth: a username, and a password given or read from a file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    username: str
    password: SecretStr | None = None
    password_file: Path | None = None

    @model_validator(mode="after")
    def _one_password(self) -> BasicAuth:
        if self.password is not None and self.password_file is not None:
            raise ValueError("set password or password_file, not both")
        return self


class Alertmanager(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    alertmanager_basic_auth: BasicAuth | None = None
    """Basic auth for every Alertmanager, as Prometheus's `basic_auth`: `username`, and
    `password` or `password_file` (read again for every request)."""
    alertmanager_bearer_token: SecretStr | None = None
    """A bearer token for every Alertmanager. Never logged."""
    alertmanager_bearer_token_file: Path | None = None
    """A file holding the bearer token (read again for every request)."""
    alertmanager_url: List = ()
    """Alertmanagers to post alerts to (each member of an HA pair), as `http://host:9093`;
    Slack, where set, still gets its messages. `http://user:password@host:9093` is sent as
    basic auth."""
    runbook_url: str | None = None
    """Where docs/metrics.md is served for your team (a wiki, the repository's web view):
    alerts to Alertmanager link its Alerts section (`#alerts`)."""

    @field_validator("alertmanager_url")
    @classmethod
    def _urls(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        credentials = _credentials(info.data)
        return tuple(alertmanager_endpoint(item, credentials) for item in value)


def _credentials(data: Mapping[str, Any]) -> Credentials | None:
    """The credentials the settings give every Alertmanager; ValueError for two kinds."""
    basic: BasicAuth | None = data.get("alertmanager_basic_auth")
    token: SecretStr | None = data.get("alertmanager_bearer_token")
    token_file: Path | None = data.get("alertmanager_bearer_token_file")
    given = [
        name
        for name, value in (
            ("alertmanager_basic_auth", basic),
            ("alertmanager_bearer_token", token),
            ("alertmanager_bearer_token_file", token_file),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise ValueError(f"{' and '.join(given)} are both set: keep one")
    if basic is not None:
        return Credentials("Basic", basic.username, basic.password, basic.password_file)
    if token is not None or token_file is not None:
        return Credentials("Bearer", secret=token, secret_file=token_file)
    return None
