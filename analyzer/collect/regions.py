"""A region as the analyzer reads it: its Describe* calls and its metric data."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.collect.aws import Clients
from analyzer.collect.boundaries import Describer, MetricData
from analyzer.collect.cloudwatch import CloudWatch
from analyzer.collect.describe import Ec2Rds


@dataclass(frozen=True, slots=True)
class Region:
    name: str
    describe: Describer
    metrics: MetricData


def connect(name: str, clients: Clients | None = None) -> Region:
    """A region through boto3's standard chain (or through these clients)."""
    clients = clients or Clients.for_region(name)
    return Region(name, Ec2Rds(clients), CloudWatch(clients.cloudwatch, name))
