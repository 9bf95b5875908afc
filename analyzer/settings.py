"""One frozen settings model, fed by flags, EBS_ANALYZER_* variables and an optional YAML file.

Precedence: a flag beats its variable, which beats the file. Unknown keys in the file are
errors, and every error names the flag, variable or file the bad value came from. Secrets (the
webhook, an Alertmanager's password or token) are handed to the log's redaction as soon as
they are known, and no error repeats them.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

import structlog
from botocore.loaders import create_loader
from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from analyzer import redaction
from analyzer.collect.shards import WHOLE, Shard, ordinal
from analyzer.deliver.auth import (
    Credentials,
    alertmanager_endpoint,
    read_secret,
)
from analyzer.deliver.slack import webhook_problem
from analyzer.errors import ConfigError
from analyzer.model.findings import Severity
from analyzer.model.units import parse_duration
from analyzer.yamlfile import Location, explain, keys_of, nearest, read_yaml

ENV_PREFIX = "EBS_ANALYZER_"

log = structlog.get_logger(__name__)

Seconds = Annotated[float, BeforeValidator(parse_duration)]


def _split(value: Any) -> Any:
    """A list written as text (a flag or a variable): its comma-separated parts."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


List = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_split)]
"""A list of text: a YAML list, or text with its items separated by commas."""


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


ACCOUNT_ID = re.compile(r"\d{12}")
ROLE_ARN = re.compile(r"arn:aws[a-z-]*:iam::(\d{12}):role/[\w+=,.@/-]+")
ROLE_NAME = re.compile(r"[\w+=,.@/-]{1,64}")


def _account_id(value: Any) -> Any:
    """Twelve digits, written as a string: YAML reads an unquoted id as a number, and one
    that starts with 0 loses it (or turns octal)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if len(str(value)) == 12:
            return str(value)
        raise ValueError(f'{value} is not 12 digits: quote account ids ("011111111111")')
    if not isinstance(value, str) or not ACCOUNT_ID.fullmatch(value):
        raise ValueError(f"{value!r} is not an AWS account id (12 digits, quoted)")
    return value


AccountId = Annotated[str, BeforeValidator(_account_id)]


def _region_names(value: tuple[str, ...]) -> tuple[str, ...]:
    for item in value:
        if not REGION.fullmatch(item):
            raise ValueError(f"{item!r} is not an AWS region's name{_region_hint(item)}")
        if item not in _known_regions():
            # Well formed: a region newer than this botocore, or a slip (`eu-centrl-1`).
            log.warning(
                "settings.region_unknown",
                region=item,
                reason=f"not a region this botocore knows{_region_hint(item)}",
            )
    return value


class AccountEntry(BaseModel):
    """One account to watch, as `accounts:` lists it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: AccountId
    name: str | None = None
    """Shown beside the id (the `account_name` label)."""
    role_arn: str | None = None
    """The role assumed to read it; none for the account the daemon runs in."""
    external_id: SecretStr | None = None
    """Passed when assuming the role, as its trust policy requires. Never logged."""
    regions: tuple[str, ...] = ()
    """Empty: the top-level `region`."""
    tags: dict[str, str] = Field(default_factory=dict)
    """Carried with the account (as an Organization's account tags are)."""
    budget: float | None = Field(default=None, gt=0)
    """This account's share of the monthly GetMetricData budget, in dollars."""

    _check_regions = field_validator("regions")(_region_names)

    @model_validator(mode="after")
    def _role_of_this_account(self) -> AccountEntry:
        if self.role_arn is None:
            return self
        match = ROLE_ARN.fullmatch(self.role_arn)
        if match is None:
            raise ValueError(
                f"role_arn {self.role_arn!r} is not an IAM role's ARN "
                f"(arn:aws:iam::{self.id}:role/NAME)"
            )
        if match.group(1) != self.id:
            raise ValueError(f"role_arn names account {match.group(1)}, not this entry's {self.id}")
        return self


class MemberFilter(BaseModel):
    """Which of an Organization's accounts an `include` or `exclude` names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ids: tuple[AccountId, ...] = ()
    names: tuple[str, ...] = ()
    ous: tuple[str, ...] = ()
    """Organizational unit ids (`ou-…`): an account anywhere below one matches."""
    tags: dict[str, str] = Field(default_factory=dict)


class OrganizationSettings(BaseModel):
    """Watch the active accounts of the AWS Organization the daemon's credentials can list
    (the management account, or a delegated administrator)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role_name: str = "ebs-analyzer"
    """The role assumed in each member account (deploy/accounts/ creates it)."""
    external_id: SecretStr | None = None
    include: MemberFilter = MemberFilter()
    """Empty: every active account."""
    exclude: MemberFilter = MemberFilter()

    @field_validator("role_name")
    @classmethod
    def _role_name(cls, value: str) -> str:
        if not ROLE_NAME.fullmatch(value) or value.startswith("arn:"):
            raise ValueError(f"{value!r} is not an IAM role's name (the ARN goes in accounts:)")
        return value


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
        populate_by_name=True,
    )

    region: List = ()
    """AWS regions to watch; empty means the SDK's region."""
    tag: List = ()
    """Only resources with these tags (Key=Value or Key), and what they are attached to."""
    rules: List = ()
    """Rule directories, in order; empty means the shipped rules."""
    lookback: Seconds = Field(default=3600.0, gt=0, le=15 * 86400.0)
    """History fetched on the first cycle, so that it can already forecast."""
    settle_delay: Seconds = Field(default=120.0, ge=0, le=3600.0)
    """The newest minutes are often incomplete in CloudWatch: leave them out."""
    forecast_window: Seconds | None = None
    """No longer used, and accepted with a warning: every output reads one time to empty per
    resource, over the `rate_window` of the `credit_forecast` rule that applies to it."""
    prices: Path | None = None
    """A price file for the proposed fixes (default: the shipped us-east-1 prices)."""
    pricing_api: bool = True
    """Ask the AWS Price List for instance, RDS class and RDS storage prices the price file
    does not list; off, those options are priced by the file alone, or unpriced."""

    # The daemon
    listen: str = "0.0.0.0:9877"
    """HOST:PORT for /metrics, /healthz and /readyz."""
    interval: Seconds = Field(default=60.0, ge=1, le=86400.0)
    """Seconds between analysis cycles."""
    inventory_interval: Seconds = Field(default=600.0, ge=1, le=86400.0)
    """Seconds between inventory refreshes (Describe* calls)."""
    overlap: Seconds = Field(default=300.0, ge=0, le=3600.0)
    """After the first backfill, each cycle fetches what is new plus this much again, for
    datapoints that arrive late."""
    polling: Literal["adaptive", "full"] = "adaptive"
    """adaptive: each resource on the cadence and with the metrics of its tier (hot, active,
    idle); full: every metric of every resource every interval."""
    active_cadence: Seconds = Field(default=300.0, ge=60, le=3600.0)
    """Between polls of an active resource: I/O that matters, far from every limit."""
    idle_cadence: Seconds = Field(default=600.0, ge=60, le=3600.0)
    """Between polls of an idle resource: quiet, not draining, its bucket full."""
    hot_utilization: float = Field(default=0.7, gt=0, le=1)
    """A rate at this share of a limit in force makes a resource hot."""
    quiet_utilization: float = Field(default=0.3, gt=0, le=1)
    """Below this share of every limit (and not draining) a resource may be idle."""
    hot_empty_within: Seconds = Field(default=3 * 3600.0, gt=0, le=86400.0)
    """A bucket that will be empty within this makes its resource hot."""
    low_balance_percent: float = Field(default=50.0, ge=0, le=100)
    """A bucket below this makes its resource hot (refilling, it would empty fast)."""
    budget: float | None = Field(default=None, gt=0)
    """The monthly GetMetricData budget in dollars: the active and idle cadences stretch (the
    hot one never) so that the projected bill stays under it."""
    state_file: Path | None = None
    """Where alert state is kept across restarts (none: alerts start afresh)."""
    dry_run: bool = False
    """Log notifications instead of sending them."""
    repeat_interval: Seconds = Field(default=4 * 3600.0, ge=60)
    """An unchanged firing alert is sent again after this long."""
    notify_severity: Severity = Severity.WARNING
    """The least severity sent to Slack (or the log in a dry run): an `info` alert (a burst
    the resource's own record or past days say will end with credits left) is still on
    /metrics, in reports and posted to Alertmanager, and is sent once it escalates."""
    resolve_after: Seconds = Field(default=300.0, ge=0, le=86400.0)
    """A firing alert resolves once its condition has been gone this long (and two cycles)."""
    slack_webhook_url: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "slack_webhook_url", "SLACK_WEBHOOK_URL", "EBS_ANALYZER_SLACK_WEBHOOK_URL"
        ),
    )
    """The Slack incoming webhook; SLACK_WEBHOOK_URL works too. Never logged."""
    slack_webhook_file: Path | None = None
    """A file holding the webhook URL (a mounted secret)."""
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
    log_format: Literal["auto", "json", "console"] = "auto"
    """auto: console on a terminal, JSON lines elsewhere."""
    node_coverage_url: str | None = None
    """The Prometheus that scrapes the node agents (its HTTP API base, `http://prometheus:9090`):
    asked each cycle which volumes a node read in the last three minutes, whose rates the
    daemon then leaves to the node (it still asks CloudWatch what only CloudWatch has). Unset:
    every volume from CloudWatch; Prometheus unreachable or answering off its contract: the
    same, warned."""
    cloudwatch_agent_namespace: str | None = Field(default=None, min_length=1, max_length=255)
    """Where the CloudWatch agent publishes its EBS NVMe metrics (`diskio_ebs_*`; the agent's
    default namespace is `CWAgent`): asked of ListMetrics at each inventory refresh, and read
    in place of a volume's AWS/EBS metrics where the agent publishes them. The same price per
    metric, and the exceeded checks in seconds of each minute, not just whether. Needs
    `cloudwatch:ListMetrics`. Unset: AWS/EBS only."""

    # Accounts
    accounts: tuple[AccountEntry, ...] = ()
    """Accounts to watch, each through its role (see docs/configuration.md#accounts); none
    and no `organization`: the account the daemon runs in."""
    organization: OrganizationSettings | None = None
    """Watch the Organization's active accounts the filters keep, through `role_name`; an
    account also in `accounts` is read as that entry says."""
    # Shards
    shard: int | None = Field(default=None, ge=0)
    """This process's shard, from 0; unset with `total_shards` above 1, the ordinal of the
    StatefulSet pod it runs in (the end of its host name)."""
    total_shards: int = Field(default=1, ge=1, le=1000)
    """Split the resources over this many processes by a stable hash: an instance with its
    volumes, an RDS instance with its storage, each in one shard."""
    monitoring_account: bool = False
    """The daemon runs in a CloudWatch monitoring account the watched accounts are linked to:
    metrics are read there (AccountId in each query), Describe calls through the roles."""

    @field_validator("alertmanager_url")
    @classmethod
    def _urls(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        credentials = _credentials(info.data)
        return tuple(alertmanager_endpoint(item, credentials) for item in value)

    @field_validator("node_coverage_url")
    @classmethod
    def _prometheus(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value.rstrip("/")

    @field_validator("region")
    @classmethod
    def _regions(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _region_names(value)

    @field_validator("accounts")
    @classmethod
    def _accounts_once(cls, value: tuple[AccountEntry, ...]) -> tuple[AccountEntry, ...]:
        seen: set[str] = set()
        for entry in value:
            if entry.id in seen:
                raise ValueError(f"account {entry.id} is listed twice")
            seen.add(entry.id)
        return value

    @field_validator("tag")
    @classmethod
    def _tags(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            if not item.partition("=")[0].strip():
                raise ValueError(f"{item!r} is not Key=Value or Key")
        return value

    @model_validator(mode="after")
    def _tiers_in_order(self) -> Settings:
        if self.active_cadence > self.idle_cadence:
            raise ValueError(
                f"active_cadence ({self.active_cadence:g} s) must not be longer than "
                f"idle_cadence ({self.idle_cadence:g} s)"
            )
        if self.quiet_utilization >= self.hot_utilization:
            raise ValueError(
                f"quiet_utilization ({self.quiet_utilization:g}) must be below "
                f"hot_utilization ({self.hot_utilization:g})"
            )
        return self

    @model_validator(mode="after")
    def _shard_in_total(self) -> Settings:
        if self.shard is not None and self.shard >= self.total_shards:
            raise ValueError(
                f"shard ({self.shard}) must be below total_shards ({self.total_shards}): "
                "shards count from 0"
            )
        return self

    def sharding(self) -> Shard:
        """The shard this process watches: the whole where there is one."""
        if self.total_shards == 1:
            return WHOLE
        if self.shard is not None:
            return Shard(self.shard, self.total_shards)
        name = os.environ.get("POD_NAME") or socket.gethostname()
        found = ordinal(name)
        if found is None or found >= self.total_shards:
            raise ConfigError(
                f"total_shards is {self.total_shards} but no shard is given, and the host "
                f"name {name!r} ends in no StatefulSet ordinal below it: set --shard "
                "(EBS_ANALYZER_SHARD)"
            )
        return Shard(found, self.total_shards)

    @field_validator("listen", mode="before")
    @classmethod
    def _port_alone(cls, value: Any) -> Any:
        """`listen: 9877` in YAML is a number: checked as the text it was written as."""
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("listen")
    @classmethod
    def _listen(cls, value: str) -> str:
        host, sep, port = value.rpartition(":")
        if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
            raise ValueError(
                f"{value!r} is not HOST:PORT: write the address and the port, such as "
                f"0.0.0.0:{port if port.isdigit() else 9877} (every interface) or "
                "127.0.0.1:9877"
            )
        if ":" in host and not (host.startswith("[") and host.endswith("]")):
            raise ValueError(f"{value!r}: an IPv6 address is written in brackets, [::1]:9877")
        if host.startswith("["):
            try:
                ipaddress.IPv6Address(host[1:-1])
            except ValueError:
                raise ValueError(f"{value!r}: {host} is not an IPv6 address") from None
        return value

    @property
    def rule_dirs(self) -> list[Path]:
        return [Path(p) for p in self.rules]

    @property
    def listen_address(self) -> tuple[str, int]:
        host, _, port = self.listen.rpartition(":")
        return host.strip("[]") or "0.0.0.0", int(port)

    def webhook_url(self) -> str | None:
        """The webhook from the setting, or from the file that holds it, checked: a webhook
        the HTTP client would refuse fails the start, not every cycle."""
        if self.slack_webhook_url is not None:
            url = self.slack_webhook_url.get_secret_value().strip() or None
            origin = "slack_webhook_url"
        elif self.slack_webhook_file is None:
            return None
        else:
            try:
                url = read_secret(self.slack_webhook_file, "Slack webhook") or None
            except OSError as exc:
                raise ConfigError(str(exc)) from None
            origin = f"{self.slack_webhook_file}"
        if url is not None:
            problem = webhook_problem(url)
            if problem is not None:
                raise ConfigError(f"{origin}: not a usable Slack webhook: {problem}")
        return url

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


REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d+")
"""An AWS region's name: `us-east-1`, `eu-central-2`, `us-gov-west-1`."""


@cache
def _known_regions() -> frozenset[str]:
    """The regions botocore's endpoint data names, in every partition: read from the data
    itself, not through a session, which would read the AWS profile (and refuse a missing one
    before the settings are even loaded)."""
    endpoints = create_loader().load_data("endpoints")
    return frozenset(region for p in endpoints["partitions"] for region in p["regions"])


def _region_hint(name: str) -> str:
    """`(such as us-east-1; did you mean 'us-east-1'?)`, from the regions botocore knows."""
    guess = nearest(name, sorted(_known_regions() - {name}))
    return f" (such as us-east-1; did you mean {guess!r}?)" if guess else " (such as us-east-1)"


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
    field = Settings.model_fields.get(str(location[0])) if len(location) == 1 else None
    if field is None or problem.get("type") not in BOUNDS:
        return None
    if not any(getattr(m, "func", None) is parse_duration for m in field.metadata):
        return None
    key, words = BOUNDS[problem["type"]]
    bound = float(problem.get("ctx", {}).get(key, 0))
    return f"must be {words} {_as_written(bound)} ({bound:,.0f} s)"


def _as_written(seconds: float) -> str:
    """A bound as a setting is written: `15d`, `1m`, `90s`."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


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
    so that one that cannot be read fails the start rather than every post."""
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
