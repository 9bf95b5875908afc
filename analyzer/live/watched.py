"""The accounts a daemon watches, and how each answers.

Which (account, region) pairs to read: those `accounts:` lists and the Organization's active
members the filters keep (listed again at each inventory refresh, so that a new account is
picked up), each through a session that assumes its role, created once. Each account's health
is its own: a refusal, a throttled call or an unreachable role is that account's outcome, and
the account is described again on a schedule of its own (a minute, doubling up to the inventory
interval), while every other account goes on as before. An account whose every metric fails
in a cycle is failing too, as one whose inventory cannot be described.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import botocore.session
import structlog

from analyzer.collect import accounts as organization
from analyzer.collect.accounts import Account, Filter
from analyzer.collect.aws import ACCESS_CODES, client_config
from analyzer.errors import AwsAccessError, AwsCallError, ConfigError
from analyzer.model.state import FetchStats
from analyzer.settings import AccountEntry, MemberFilter, Settings

log = structlog.get_logger(__name__)

FIRST_RETRY_S = 60.0
THROTTLING = frozenset(
    {"Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequestsException"}
)
OUTCOMES = ("success", "denied", "throttled", "error")
"""An account's outcome: it answered; its role or a call was refused; throttled past botocore's
retries; anything else (unreachable, a 5xx, a malformed answer)."""


def outcome_of(exc: Exception) -> str:
    code = getattr(exc, "code", None)
    if code in THROTTLING:
        return "throttled"
    if isinstance(exc, AwsAccessError) and code is not None:
        return "denied"
    return "error"


def failure_of(reason: str, code: str | None) -> Exception:
    """A cycle's failed metrics as the error AWS's code names: a refusal where the code is
    one of access, else a failed call (throttled where the code says so)."""
    if code in ACCESS_CODES:
        return AwsAccessError(reason, code)
    return AwsCallError(reason, code)


@dataclass
class Health:
    """How an account last answered."""

    account: Account
    outcome: str = "success"
    error: str | None = None
    failures: int = 0
    """Failures in a row."""
    retry_at: datetime | None = None
    """When its inventory is described again, while it fails."""

    @property
    def up(self) -> bool:
        return self.outcome == "success"


def _filter(given: MemberFilter) -> Filter:
    return Filter(given.ids, given.names, given.ous, dict(given.tags))


def _listed(entry: AccountEntry) -> Account:
    external = entry.external_id.get_secret_value() if entry.external_id else None
    return Account(entry.id, entry.name, entry.role_arn, external, entry.regions, dict(entry.tags))


class Watched:
    """The accounts of the settings, resolved; each one's session and health."""

    def __init__(
        self,
        settings: Settings,
        base: Callable[[], botocore.session.Session] = botocore.session.get_session,
    ) -> None:
        self.settings = settings
        self._base_factory = base
        self._base: botocore.session.Session | None = None
        self._accounts: list[Account] = []
        self._sessions: dict[str, botocore.session.Session | None] = {}
        self._own: str | None = None
        self.health: dict[str, Health] = {}
        self.listeners: list[Callable[[Account, str], None]] = []
        """Told each outcome (`OUTCOMES`) of each account: the daemon's self-metrics."""

    @property
    def configured(self) -> bool:
        """Whether any account is configured; otherwise the daemon's own account, unnamed."""
        return bool(self.settings.accounts) or self.settings.organization is not None

    def base(self) -> botocore.session.Session:
        """The daemon's own credentials, from the standard chain: what every role is
        assumed from, and what a monitoring account reads metrics with."""
        if self._base is None:
            self._base = self._base_factory()
        return self._base

    def resolve(self, region: str) -> list[Account]:
        """The accounts to watch now: the listed ones, then the Organization's members the
        filters keep (the daemon's own account among them unless excluded). An Organization
        that cannot be listed keeps the members it had, said once per refresh; with none yet,
        the error is raised (the inventory fails, counted as such)."""
        listed = [_listed(e) for e in self.settings.accounts]
        found = {a.id: a for a in listed}
        org = self.settings.organization
        if org is not None:
            try:
                members = self._members(org.include, org.exclude, region)
            except (AwsAccessError, AwsCallError) as exc:
                if not self._accounts:
                    raise
                log.error("organization.list_failed", error=str(exc), kept=len(self._accounts))
                return self._accounts
            own = self._own_id(region)
            external = org.external_id.get_secret_value() if org.external_id else None
            for m in members:
                if m.id in found:
                    continue
                role = None if m.id == own else organization.role_arn(m.id, org.role_name)
                found[m.id] = Account(m.id, m.name or None, role, external, (), m.tags)
        self._accounts = list(found.values())
        for account in self._accounts:
            known = self.health.get(account.id)
            if known is None:
                self.health[account.id] = Health(account)
            else:
                known.account = account
        return self._accounts

    def _members(
        self, include: MemberFilter, exclude: MemberFilter, region: str
    ) -> list[organization.Member]:
        client = self.base().create_client(
            "organizations", region_name=organization.ORGANIZATIONS_REGION, config=client_config()
        )
        return organization.kept(organization.members(client), _filter(include), _filter(exclude))

    def _own_id(self, region: str) -> str | None:
        """The account of the daemon's own credentials (STS GetCallerIdentity, which needs no
        permission), asked once; None where it cannot be told."""
        if self._own is None:
            try:
                self._own = organization.own_id(self.base(), region)
            except (AwsAccessError, AwsCallError) as exc:
                log.warning("account.own_id_unknown", error=str(exc))
                return None
        return self._own

    def check_own(self, account: Account, region: str) -> None:
        """An account without a role is read with the daemon's own credentials: it must be
        the account they belong to, or its resources would be another's, mislabelled."""
        own = self._own_id(region)
        if account.role_arn is None and own is not None and own != account.id:
            raise ConfigError(
                f"accounts: {account.id} has no role_arn, and the daemon's credentials are "
                f"account {own}'s: give the role to assume in {account.id}"
            )

    def session(self, account: Account, region: str) -> botocore.session.Session | None:
        """The session an account is read through, created once: its role assumed from the
        daemon's own credentials (refreshed before they expire); None where it has no role
        (the daemon's own account, read through the standard chain). STS is called in
        `region`, the first watched: its regional endpoint."""
        if account.id not in self._sessions:
            self._sessions[account.id] = (
                None
                if account.role_arn is None
                else organization.assumed_session(
                    self.base(), account.role_arn, account.external_id, region
                )
            )
        return self._sessions[account.id]

    # --- health ---------------------------------------------------------------------------

    def failed(self, account: Account, exc: Exception, now: datetime) -> Health:
        """Count a failure; the account is described again after a wait that doubles."""
        health = self.health.setdefault(account.id, Health(account))
        health.outcome = outcome_of(exc)
        health.error = str(exc) or type(exc).__name__
        health.failures += 1
        wait = min(
            FIRST_RETRY_S * 2 ** (health.failures - 1), max(self.settings.inventory_interval, 60)
        )
        health.retry_at = now + timedelta(seconds=wait)
        self._tell(account, health.outcome)
        log.error(
            "account.failed",
            account_id=account.id,
            account_name=account.name,
            outcome=health.outcome,
            error=health.error,
            retry_in_s=round(wait),
        )
        return health

    def answered(self, account: Account) -> Health:
        health = self.health.setdefault(account.id, Health(account))
        if not health.up:
            log.info("account.restored", account_id=account.id, account_name=account.name)
        health.outcome, health.error, health.failures, health.retry_at = "success", None, 0, None
        self._tell(account, "success")
        return health

    def judge_metrics(
        self, account: Account, stats: FetchStats, clock: Callable[[], datetime]
    ) -> None:
        """An account whose every metric failed this cycle is failing (its role denied or
        deleted, its calls throttled): counted as its outcome, its inventory retried on its
        schedule. One that answered is back."""
        if not stats.metrics_requested:
            return
        if stats.outcome != "failed":
            self.answered(account)
            return
        reason = stats.errors[0] if stats.errors else "every metric failed"
        known = self.health.get(account.id)
        if known is not None and not known.up:
            return  # already failing: its retry schedule stands
        code = stats.codes[0] if stats.codes else None
        self.failed(account, failure_of(reason, code), clock())

    def _tell(self, account: Account, outcome: str) -> None:
        for listener in self.listeners:
            listener(account, outcome)

    def due(self, now: datetime) -> list[Account]:
        """The failing accounts whose retry time has come."""
        return [
            h.account for h in self.health.values() if h.retry_at is not None and h.retry_at <= now
        ]

    def named(self) -> dict[str, str]:
        """Each account's id → name, for messages and labels."""
        return {a.id: a.name or "" for a in self._accounts}
