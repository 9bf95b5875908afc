"""A region as the analyzer reads it: its Describe* calls and its metric data, in the account
the daemon runs in or in one it reaches through a role."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import botocore.session

from analyzer.collect.accounts import Account
from analyzer.collect.agent_metrics import Lister
from analyzer.collect.aws import Clients, session
from analyzer.collect.boundaries import Describer, MetricData
from analyzer.collect.changes import Changer, Ec2RdsChanges
from analyzer.collect.cloudwatch import CloudWatch
from analyzer.collect.describe import Ec2Rds
from analyzer.model.resources import scope_of


@dataclass(frozen=True, slots=True)
class Region:
    name: str
    describe: Describer
    metrics: MetricData
    account: Account | None = None
    """The account it belongs to; None for the daemon's own account when no account is
    configured."""
    listing: Lister | None = None
    """ListMetrics, where its metrics come from CloudWatch: which volumes the CloudWatch
    agent publishes for (`agent_metrics.py`)."""
    changes: Changer | None = None
    """The calls `apply` makes, where the region is reached through boto3."""

    @property
    def account_id(self) -> str:
        return self.account.id if self.account else ""

    @property
    def account_name(self) -> str:
        return (self.account.name or "") if self.account else ""

    @property
    def scope(self) -> str:
        return scope_of(self.account_id, self.name)


def connect(name: str, clients: Clients | None = None) -> Region:
    """A region through boto3's standard chain (or through these clients)."""
    clients = clients or Clients.for_region(name)
    metrics = CloudWatch(clients.cloudwatch, name)
    return Region(name, Ec2Rds(clients), metrics, listing=metrics, changes=Ec2RdsChanges(clients))


def connect_as(
    account: Account,
    name: str,
    member: botocore.session.Session | None,
    monitoring: Clients | None = None,
    **overrides: Any,
) -> Region:
    """One account's region. `member`: the botocore session that assumes the account's role
    (None for the daemon's own account, read through the standard chain). With `monitoring`,
    the clients of the monitoring account in that region, the metrics are read there for the
    account (`AccountId` in each query); only the Describe calls go through the role.
    `overrides` stand in for services (cloudwatch=…), as `Clients.for_region` takes them."""
    where = scope_of(account.id, name)
    clients = (
        Clients.for_region(name, **overrides)
        if member is None
        else Clients(name, session(name, member), dict(overrides))
    )
    if monitoring is not None:
        metrics = CloudWatch(
            monitoring.cloudwatch, where, account_id=account.id, contain_refusals=True
        )
    else:
        metrics = CloudWatch(clients.cloudwatch, where, contain_refusals=True)
    changes = Ec2RdsChanges(clients, where)
    return Region(name, Ec2Rds(clients, where), metrics, account, metrics, changes)
