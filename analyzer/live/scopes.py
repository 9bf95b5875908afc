"""Every scope the daemon watches: where it is read, and what it holds.

A scope is an account's region (`scope_of`), or a region of the daemon's own account where no
account is configured. Each is read through a region connected once: with the daemon's own
credentials, or through the account's role, its metrics read in the monitoring account where
the settings say so. Its inventory is described account by account, all of an account's
regions or none: an account that fails keeps the inventory it had (its alerts hold) and is
described again on its own schedule (`retry`); its scopes never described are dark. A refresh
and a retry run on threads of their own beside the cycle, so each swaps in a new dict whole
while holding a lock, and a cycle goes on with the dict it took.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import structlog

from analyzer.collect import inventory, shards
from analyzer.collect.accounts import Account
from analyzer.collect.agent_metrics import AgentDiscovery
from analyzer.collect.aws import NO_REGION, Clients, default_region
from analyzer.collect.inventory import InstanceTypeCache, TagFilter
from analyzer.collect.regions import Region, connect, connect_as
from analyzer.errors import AwsAccessError, AwsCallError, ConfigError
from analyzer.live.watched import Watched
from analyzer.model.resources import Inventory, scope_of
from analyzer.settings import Settings

log = structlog.get_logger(__name__)


@dataclass
class Scopes:
    settings: Settings
    accounts: Watched
    connect: Callable[[str], Region] = connect
    """How a region is read: boto3's standard chain unless a test or the demo says else."""
    connect_account: Callable[[Account, str], Region] | None = None
    """How an account's region is read: through its role (`Watched.session`) unless a test
    or the demo says else."""
    types: InstanceTypeCache = field(default_factory=InstanceTypeCache)
    agent: AgentDiscovery | None = None
    """Which volumes the CloudWatch agent publishes for (`cloudwatch_agent_namespace`); made
    from the settings unless given."""
    dark: frozenset[str] = frozenset()
    """Scopes of accounts that failed before any inventory of theirs was found."""
    _regions: dict[str, Region] = field(default_factory=dict, repr=False)
    """By scope."""
    _monitoring: dict[str, Clients] = field(default_factory=dict, repr=False)
    """The monitoring account's clients, by region, where metrics are read there."""
    _inventories: dict[str, Inventory] = field(default_factory=dict, repr=False)
    _swapping: threading.Lock = field(default_factory=threading.Lock, repr=False)
    """Held while a refresh or an account's retry swaps in the inventories."""

    def __post_init__(self) -> None:
        if self.agent is None and self.settings.cloudwatch_agent_namespace:
            self.agent = AgentDiscovery(self.settings.cloudwatch_agent_namespace)

    def regions(self) -> list[str]:
        """The regions the settings name, else the SDK's default one."""
        if self.settings.region:
            return list(dict.fromkeys(self.settings.region))
        region = default_region()
        if not region:
            raise ConfigError(NO_REGION)
        return [region]

    def targets(self) -> list[tuple[Account | None, str]]:
        """Every (account, region) to read: the daemon's own account (None) in each region
        when no account is configured; else each account in its regions (or the top-level
        ones)."""
        regions = self.regions()
        if not self.accounts.configured:
            return [(None, r) for r in regions]
        found = self.accounts.resolve(regions[0])
        return [pair for a in found for pair in _places(a, regions)]

    def inventories(self) -> dict[str, Inventory]:
        """What the last refresh found, by scope (the region where there are no accounts)."""
        return self._inventories

    def at(self, where: str) -> Region:
        """The region a scope is read through: connected when its inventory was described
        (the daemon's own account's region is connected on first use)."""
        return self._regions.get(where) or self.connected(where)

    def connected(self, region: str, account: Account | None = None) -> Region:
        """A region of an account (the daemon's own where None), connected once."""
        where = scope_of(account.id, region) if account else region
        if where not in self._regions:
            self._regions[where] = (
                self.connect(region) if account is None else self._connect_account(account, region)
            )
        return self._regions[where]

    def _connect_account(self, account: Account, region: str) -> Region:
        if self.connect_account is not None:
            return self.connect_account(account, region)
        if account.role_arn is None:
            self.accounts.check_own(account, self.regions()[0])
        member = self.accounts.session(account, self.regions()[0])
        monitoring = None
        if self.settings.monitoring_account:
            # One CloudWatch client per region reads every account's metrics.
            if region not in self._monitoring:
                self._monitoring[region] = Clients.for_region(region)
            monitoring = self._monitoring[region]
        return connect_as(account, region, member, monitoring)

    def _discover(self, account: Account | None, region: str) -> Inventory:
        tags = [TagFilter.parse(t) for t in self.settings.tag]
        where = self.connected(region, account)
        found = inventory.discover(
            where.describe,
            self.types,
            tags,
            account_id=account.id if account else "",
            account_name=(account.name or "") if account else "",
        )
        if self.agent is not None and where.listing is not None:
            found = self.agent.discover(found, where.listing)
        return shards.kept(found, self.settings.sharding())

    def refresh(self, now: datetime) -> dict[str, Inventory]:
        """Describe every account's regions again; resources that are gone drop out of the
        next cycle. Where there are accounts, one that fails keeps the inventory it had (its
        alerts hold) and is described again on its own schedule (`retry`); the refresh
        fails only when every account does. `now`: what a failing account's retry is
        scheduled from."""
        fresh: dict[str, Inventory] = {}
        failures: list[Exception] = []
        by_account: dict[str, list[tuple[Account, str]]] = {}
        for account, region in self.targets():
            if account is None:
                fresh[region] = self._discover(None, region)
            else:
                by_account.setdefault(account.id, []).append((account, region))
        for pairs in by_account.values():
            found = self._describe_account(pairs, now)
            if isinstance(found, Exception):
                failures.append(found)
                continue
            fresh.update(found)
        if by_account and len(failures) == len(by_account):
            raise failures[0]
        self._swap(fresh, [s for pairs in by_account.values() for s in _scopes(pairs)])
        log.info(
            "inventory.refreshed",
            regions=len(fresh),
            accounts=len(by_account) or None,
            failed_accounts=len(failures) or None,
            volumes=sum(len(i.volumes) for i in fresh.values()),
            instances=sum(len(i.instances) for i in fresh.values()),
        )
        return self._inventories

    def _describe_account(
        self, pairs: list[tuple[Account, str]], now: datetime
    ) -> dict[str, Inventory] | Exception:
        """One account's regions, all or none: an account that fails in one region is
        failing (its role, its permissions), and keeps what it had everywhere."""
        account = pairs[0][0]
        try:
            found = {scope_of(a.id, r): self._discover(a, r) for a, r in pairs}
        except (AwsAccessError, AwsCallError) as exc:
            self.accounts.failed(account, exc, now)
            return exc
        self.accounts.answered(account)
        return found

    def _swap(self, fresh: dict[str, Inventory], scopes: list[str]) -> None:
        """Take in a refresh: a scope it has replaces the one kept; one it lacks (its account
        failed) keeps what it had, or is dark where it had nothing."""
        with self._swapping:
            old = self._inventories
            kept = {s: old[s] for s in scopes if s not in fresh and s in old}
            self.dark = frozenset(s for s in scopes if s not in fresh and s not in kept)
            self._inventories = {**fresh, **kept}

    def retry(self, now: datetime) -> list[str]:
        """Describe again the failing accounts whose retry time has come; the ids of those
        that answered."""
        due = self.accounts.due(now)
        if not due:
            return []
        regions = self.regions()
        fresh: dict[str, Inventory] = {}
        back: list[str] = []
        for account in due:
            found = self._describe_account(_places(account, regions), now)
            if not isinstance(found, Exception):
                fresh.update(found)
                back.append(account.id)
        if back:
            with self._swapping:
                self._inventories = {**self._inventories, **fresh}
                self.dark = frozenset(s for s in self.dark if s not in fresh)
        return back


def _scopes(pairs: list[tuple[Account, str]]) -> list[str]:
    return [scope_of(a.id, r) for a, r in pairs]


def _places(account: Account, regions: list[str]) -> list[tuple[Account, str]]:
    """Where an account is read: its own regions, or the top-level ones."""
    return [(account, r) for r in (account.regions or regions)]
