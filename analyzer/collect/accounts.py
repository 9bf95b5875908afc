"""The accounts the analyzer watches: its own, the ones listed, and an Organization's active
members kept by the filters; each read through a session that assumes its role.

The role is assumed by botocore's own credential machinery (`AssumeRoleCredentialFetcher`
behind `DeferredRefreshableCredentials`, the pair botocore builds for a profile's
`role_arn`): the first call assumes it, and the credentials are refreshed before they expire,
with the external id given and the session named after the analyzer. No key is copied out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import botocore.session
from botocore.credentials import (
    AssumeRoleCredentialFetcher,
    CredentialResolver,
    Credentials,
    DeferredRefreshableCredentials,
)

from analyzer.collect.aws import calling, client_config

SESSION_NAME = "ebs-analyzer"
"""The role session's name: what CloudTrail shows as the caller in each member account."""

ORGANIZATIONS_REGION = "us-east-1"
"""AWS Organizations is served from one region (AWS Organizations endpoints: us-east-1 for
the commercial partition)."""


@dataclass(frozen=True, slots=True)
class Account:
    """One account to watch, and how to reach it."""

    id: str
    name: str | None = None
    role_arn: str | None = None
    """None: the daemon's own credentials (the account it runs in)."""
    external_id: str | None = field(default=None, repr=False)
    regions: tuple[str, ...] = ()
    """Empty: the top-level regions."""
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """`prod (111111111111)`, or the id alone."""
        return f"{self.name} ({self.id})" if self.name else self.id


@dataclass(frozen=True, slots=True)
class Member:
    """An account as the Organization lists it."""

    id: str
    name: str
    ous: tuple[str, ...]
    """The organizational units above it, nearest first (the root left out)."""
    tags: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Filter:
    """Which members an `include` or `exclude` names: each key given must match (a list
    matches any of its values; tags must all match)."""

    ids: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    ous: tuple[str, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)

    def empty(self) -> bool:
        return not (self.ids or self.names or self.ous or self.tags)

    def matches(self, member: Member) -> bool:
        return (
            (not self.ids or member.id in self.ids)
            and (not self.names or member.name in self.names)
            and (not self.ous or any(ou in self.ous for ou in member.ous))
            and all(member.tags.get(k) == v for k, v in self.tags.items())
        )


def kept(members: Iterable[Member], include: Filter, exclude: Filter) -> list[Member]:
    """The members `include` names (all, where it names none) that `exclude` does not."""
    return [
        m
        for m in members
        if (include.empty() or include.matches(m)) and (exclude.empty() or not exclude.matches(m))
    ]


def members(client: Any) -> list[Member]:
    """The Organization's active accounts, each with its OUs and tags (management account or
    delegated administrator credentials)."""
    found: list[Member] = []
    with calling("organizations:ListAccounts", ORGANIZATIONS_REGION):
        pages = list(client.get_paginator("list_accounts").paginate())
    parents: dict[str, str | None] = {}
    for page in pages:
        for raw in page["Accounts"]:
            # `State` replaced `Status`, retired on 9 September 2026 (the Account shape of
            # the Organizations API): read either.
            if raw.get("State", raw.get("Status")) != "ACTIVE":
                continue
            account_id = str(raw["Id"])
            ous = _ous_on_paths(raw.get("Paths")) or _ous(client, account_id, parents)
            found.append(
                Member(account_id, str(raw.get("Name", "")), ous, _tags(client, account_id))
            )
    return found


def _ous_on_paths(paths: Any) -> tuple[str, ...]:
    """The OUs of an account's `Paths` (`o-…/r-…/ou-a/ou-b/`), nearest first, where the
    answer gives them; empty where it does not (then they are asked for, parent by parent)."""
    found: list[str] = []
    for path in paths if isinstance(paths, list) else []:
        parts = [p for p in str(path).split("/") if p.startswith("ou-")]
        found += [ou for ou in reversed(parts) if ou not in found]
    return tuple(found)


def _ous(client: Any, child: str, parents: dict[str, str | None]) -> tuple[str, ...]:
    """The OUs above `child`, nearest first; `parents` remembers each OU's parent."""
    out: list[str] = []
    parent = _parent(client, child)
    while parent is not None:
        out.append(parent)
        if parent not in parents:
            parents[parent] = _parent(client, parent)
        parent = parents[parent]
    return tuple(out)


def _parent(client: Any, child: str) -> str | None:
    """The OU `child` sits in; None under the root."""
    with calling("organizations:ListParents", ORGANIZATIONS_REGION):
        found = client.list_parents(ChildId=child)["Parents"]
    for parent in found:
        if parent.get("Type") == "ORGANIZATIONAL_UNIT":
            return str(parent["Id"])
    return None


def _tags(client: Any, account_id: str) -> dict[str, str]:
    tags: dict[str, str] = {}
    with calling("organizations:ListTagsForResource", ORGANIZATIONS_REGION):
        paginator = client.get_paginator("list_tags_for_resource")
        for page in paginator.paginate(ResourceId=account_id):
            tags.update({str(t["Key"]): str(t["Value"]) for t in page.get("Tags", [])})
    return tags


def own_id(base: botocore.session.Session, region: str) -> str:
    """The account the daemon's own credentials belong to."""
    sts = base.create_client("sts", region_name=region, config=client_config())
    with calling("sts:GetCallerIdentity", region):
        return str(sts.get_caller_identity()["Account"])


def role_arn(account_id: str, role_name: str, partition: str = "aws") -> str:
    """The member role an Organization's account is read through."""
    return f"arn:{partition}:iam::{account_id}:role/{role_name}"


class _Assumed:
    """A credential provider that always answers with one assumed role's credentials."""

    METHOD = "assume-role"
    CANONICAL_NAME = "AssumeRole"

    def __init__(self, credentials: Credentials) -> None:
        self._credentials = credentials

    def load(self) -> Credentials:
        return self._credentials


def assumed_session(
    base: botocore.session.Session,
    role: str,
    external_id: str | None = None,
    region: str | None = None,
    clock: Callable[[], Any] | None = None,
) -> botocore.session.Session:
    """A botocore session whose credentials are `role`, assumed from `base`'s own credentials
    on first use and refreshed before they expire."""
    extra: dict[str, Any] = {"RoleSessionName": SESSION_NAME}
    if external_id:
        extra["ExternalId"] = external_id

    def sts_client(service: str, **kwargs: Any) -> Any:
        return base.create_client(service, region_name=region, config=client_config(), **kwargs)

    fetcher = AssumeRoleCredentialFetcher(
        sts_client, base.get_credentials(), role, extra_args=extra
    )
    refreshing = (
        DeferredRefreshableCredentials(fetcher.fetch_credentials, _Assumed.METHOD)
        if clock is None
        else DeferredRefreshableCredentials(fetcher.fetch_credentials, _Assumed.METHOD, clock)
    )
    member = botocore.session.Session()
    member.register_component("credential_provider", CredentialResolver([_Assumed(refreshing)]))
    # The service models, parsed once for the base session, are the same for every account.
    member.register_component("data_loader", base.get_component("data_loader"))
    return member
