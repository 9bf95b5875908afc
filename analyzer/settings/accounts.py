"""The accounts watched: each one listed with its role, an Organization's, and whether the
daemon runs in a CloudWatch monitoring account they are linked to."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from analyzer.settings.regions import region_names

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

    _check_regions = field_validator("regions")(region_names)

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


class Accounts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    accounts: tuple[AccountEntry, ...] = ()
    """Accounts to watch, each through its role (see docs/configuration.md#accounts); none
    and no `organization`: the account the daemon runs in."""
    organization: OrganizationSettings | None = None
    """Watch the Organization's active accounts the filters keep, through `role_name`; an
    account also in `accounts` is read as that entry says."""

    @field_validator("accounts")
    @classmethod
    def _accounts_once(cls, value: tuple[AccountEntry, ...]) -> tuple[AccountEntry, ...]:
        seen: set[str] = set()
        for entry in value:
            if entry.id in seen:
                raise ValueError(f"account {entry.id} is listed twice")
            seen.add(entry.id)
        return value


class MonitoringAccount(BaseModel):
    """A model apart from `Accounts`, so that the setting keeps its place after the shards'
    in the settings' order (the order problems are named in, and the chart's schema lists)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    monitoring_account: bool = False
    """The daemon runs in a CloudWatch monitoring account the watched accounts are linked to:
    metrics are read there (AccountId in each query), Describe calls through the roles."""
