"""The two AWS boundaries the analyzer crosses, as small protocols.

Each has one boto3 adapter (`describe.Ec2Rds`, `cloudwatch.CloudWatch`); tests and the cycle
depend on the protocols, so a test fake is a few lines of typed Python, not an imitation of
boto3's response shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window
from analyzer.model.resources import (
    DbInstance,
    Initialization,
    Instance,
    InstanceType,
    Modification,
    Volume,
)
from analyzer.model.series import Series
from analyzer.model.state import FetchStats


class Describer(Protocol):
    """The Describe* calls of one region, parsed. Failures raise AwsAccessError (no access or
    unreachable) or AwsCallError (this call failed), naming the call."""

    @property
    def region(self) -> str: ...

    def volumes(self) -> list[Volume]:
        """Every volume that is not being deleted."""
        ...

    def instances(self) -> list[Instance]:
        """Every instance not terminated, without its type's limits or its volumes yet."""
        ...

    def instance_types(self, names: Sequence[str]) -> list[InstanceType]:
        """The EBS limits of these types; a type the region does not know is left out."""
        ...

    def offered_instance_types(self) -> list[InstanceType]:
        """Every type the region offers on demand, with its limits, memory and vCPUs."""
        ...

    def orderable_db_classes(self, engine: str) -> set[str]:
        """The DB instance classes RDS offers for `engine` in the region (in a VPC)."""
        ...

    def db_instances(self) -> list[DbInstance]:
        """RDS instances on EBS storage (not Aurora), without their class's limits yet."""
        ...

    def volume_modifications(self) -> dict[str, list[Modification]]:
        """By volume id, the modifications AWS reports, newest first."""
        ...

    def volume_initializations(self) -> dict[str, Initialization]:
        """By volume id, the volumes still initializing from a snapshot."""
        ...


class MetricData(Protocol):
    """GetMetricData for one region: every query ends as a series, with data, no data, or the
    error that failed it."""

    @property
    def region(self) -> str: ...

    def fetch(
        self, queries: Sequence[MetricQuery], window: Window
    ) -> tuple[dict[MetricQuery, Series], FetchStats]: ...
