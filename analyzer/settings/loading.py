"""The settings, composed of their groups, and loaded: from flags, EBS_ANALYZER_* variables
and a YAML file, with every error naming the flag, variable or file a bad value came from."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

import structlog
from pydantic import ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from analyzer import redaction
from analyzer.errors import ConfigError
from analyzer.model.units import as_written, parse_duration
from analyzer.settings.accounts import Accounts, MonitoringAccount
from analyzer.settings.agents import Agents
from analyzer.settings.alertmanager import Alertmanager
from analyzer.settings.alerts import Alerts
from analyzer.settings.applying import Applying
from analyzer.settings.listener import Listener
from analyzer.settings.logs import Logs
from analyzer.settings.polling import Polling
from analyzer.settings.pricing import Pricing
from analyzer.settings.reading import Reading
from analyzer.settings.rules import Rules
from analyzer.settings.savings import Savings
from analyzer.settings.scope import Scope
from analyzer.settings.shards import Shards
from analyzer.settings.slack import Slack
from analyzer.yamlfile import Location, explain, keys_of, read_yaml

ENV_PREFIX = "EBS_ANALYZER_"

log = structlog.get_logger(__name__)


class Settings(
    MonitoringAccount,
    Shards,
    Accounts,
    Agents,
    Logs,
    Alertmanager,
    Savings,
    Applying,
    Slack,
    Alerts,
    Polling,
    Listener,
    Pricing,
    Reading,
    Rules,
    Scope,
    BaseSettings,
):
    """Every setting, a group of them from each base. pydantic takes the fields of the last
    base first, so the groups are listed last first: read from the bottom up, they are in the
    order problems are named in and the chart's schema lists the settings. A check that reads
    two groups' settings goes in the group that owns the decision, or here, saying why."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
        populate_by_name=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: tuple[PydanticBaseSettingsSource, ...] = (init_settings, env_settings)
        if settings_cls.model_config.get("yaml_file"):
            sources += (YamlConfigSettingsSource(settings_cls),)
        return sources


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _origin(name: str, flags: Mapping[str, Any], config_file: Path | None) -> str:
    if name in flags:
        return _flag(name)
    env = ENV_PREFIX + name.upper()
    if env in os.environ:
        return env
    if config_file is not None:
        return f"{config_file}: {name}"
    return name


BOUNDS = {
    "less_than_equal": ("le", "at most"),
    "less_than": ("lt", "below"),
    "greater_than_equal": ("ge", "at least"),
    "greater_than": ("gt", "above"),
}


def _bound_of_duration(problem: Any) -> str | None:
    """A duration out of its bounds, said as one is written (`must be at most 15d`), not in
    seconds alone."""
    location: tuple[Any, ...] = tuple(problem.get("loc") or ())
    field = Settings.model_fields.get(str(location[0])) if location else None
    if field is None or problem.get("type") not in BOUNDS:
        return None
    # A duration, or a duration that may be unset (its bounds then checked on the duration).
    metadata = [*field.metadata, *(m for a in get_args(field.annotation) for m in _meta(a))]
    if not any(getattr(m, "func", None) is parse_duration for m in metadata):
        return None
    key, words = BOUNDS[problem["type"]]
    bound = float(problem.get("ctx", {}).get(key, 0))
    return f"must be {words} {as_written(bound)} ({bound:,.0f} s)"


def _meta(annotation: Any) -> tuple[Any, ...]:
    return tuple(getattr(annotation, "__metadata__", ()))


def _check_file(config_file: Path) -> None:
    document = read_yaml(config_file)
    if document is not None and not isinstance(document, dict):
        raise ConfigError(f"{config_file}: expected a mapping of settings")


def load(flags: Mapping[str, Any] | None = None, config_file: Path | None = None) -> Settings:
    """Settings from flags (only those given), the environment and the file."""
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    cls: type[Settings] = Settings
    if config_file is not None:
        _check_file(config_file)
        config = {**Settings.model_config, "yaml_file": config_file}
        cls = type("Settings", (Settings,), {"model_config": config})
    try:
        loaded = cls(**given)
    except ValidationError as exc:

        def place(location: Location) -> str:
            """A setting by where it was given (`--flag`, `EBS_ANALYZER_…`, `file: key`)."""
            where = _origin(str(location[0]) if location else "settings", given, config_file)
            return ".".join([where, *(str(part) for part in location[1:])])

        message = explain(
            exc,
            place,
            {"extra_forbidden": "unknown setting"},
            known=keys_of(Settings),
            word=_bound_of_duration,
        )
        raise ConfigError(redaction.scrub(message)) from None
    _check_secrets(loaded)
    if loaded.forecast_window is not None:
        log.warning(
            "settings.ignored",
            setting=_origin("forecast_window", given, config_file),
            reason="no longer used: the time to empty uses the rate_window of the "
            "credit_forecast rule that applies to each resource (set it in a rule file)",
        )
    return loaded


def _check_secrets(loaded: Settings) -> None:
    """Secrets given in the settings go to the log's redaction; secret files are read once,
    so that one that cannot be read fails the start rather than every post. The secrets are
    three groups' (accounts, Slack, Alertmanager): they are checked here, on the whole."""
    external = [a.external_id for a in loaded.accounts]
    if loaded.organization is not None:
        external.append(loaded.organization.external_id)
    for value in (loaded.slack_webhook_url, loaded.alertmanager_bearer_token, *external):
        if value is not None:
            redaction.secret(value.get_secret_value())
    basic = loaded.alertmanager_basic_auth
    if basic is not None and basic.password is not None:
        redaction.secret(basic.password.get_secret_value())
    for url in loaded.alertmanager_url:
        credentials = getattr(url, "credentials", None)
        if credentials is None:
            continue
        try:
            credentials.header()
        except OSError as exc:
            raise ConfigError(str(exc)) from None
