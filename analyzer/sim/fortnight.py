"""Incident 3 over a fortnight: the replica as the AWS API describes it, and its datapoints.

The replica is described by moto; its datapoints come from the simulator, minute by minute as
CloudWatch would hold them. `scripts/record-incidents` writes them as the recording shipped in
`analyzer/data/recordings/`, and the tests replay them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from analyzer.collect.aws import Clients
from analyzer.collect.describe import parse_db_instance, parse_instance_type
from analyzer.model.resources import DbInstance, Inventory
from analyzer.model.units import GIB, KIB
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.datapoints import Datapoints
from analyzer.sim.rds import DatabaseSimulation, SimDatabase
from analyzer.sim.scenario import FORTNIGHT_START, REGION, REPLICA_WRITES, replica_reads

FORTNIGHT_END = FORTNIGHT_START + timedelta(days=11, hours=20)
"""Friday evening of the second week, hours after the bucket ran empty."""
KEEP_S = 15 * 86_400.0
"""The simulated CloudWatch keeps what the fortnight holds, as CloudWatch keeps 15 days."""


def create_replica() -> DbInstance:
    """The MySQL replica `orders-replica` on gp2 800 GiB and db.m5.2xlarge, created in moto
    (its mock must be active) and described as the AWS API describes it."""
    import boto3

    rds = boto3.client("rds", region_name=REGION)
    raw = rds.create_db_instance(
        DBInstanceIdentifier="orders-replica",
        Engine="mysql",
        DBInstanceClass="db.m5.2xlarge",
        AllocatedStorage=800,
        StorageType="gp2",
        MasterUsername="admin",
        MasterUserPassword="password123",
    )["DBInstance"]
    ec2 = boto3.client("ec2", region_name=REGION)
    described = ec2.describe_instance_types(InstanceTypes=["m5.2xlarge"])["InstanceTypes"][0]
    return parse_db_instance(raw, REGION, {"m5.2xlarge": parse_instance_type(described)})


def replica_fortnight() -> tuple[Inventory, Datapoints]:
    """Incident 3 over a fortnight (`scenario.REPLICA_BUSY_IOPS`) on `create_replica()`'s
    replica, with 1.5 GiB of memory free."""
    db = create_replica()
    sim = DatabaseSimulation(
        SimDatabase(db, replica_reads, lambda _t: REPLICA_WRITES, 16 * KIB, lambda _t: 1.5 * GIB),
        FORTNIGHT_START,
    )
    data = sim.run(int((FORTNIGHT_END - FORTNIGHT_START).total_seconds() // 60))
    return Inventory(REGION, db_instances=(db,)), data


@contextmanager
def metrics_from(data: Datapoints) -> Iterator[None]:
    """Every region's GetMetricData answered from `data`, kept whole (a fortnight of minutes is
    far beyond what moto's CloudWatch aggregates in reasonable time); the other services stay
    as they are."""
    cloud = SimulatedCloudWatch(data, keep_s=KEEP_S)
    plain = vars(Clients)["for_region"]

    def for_region(cls: type[Clients], /, region: str, **overrides: Any) -> Clients:
        found: Clients = plain.__func__(cls, region, **{"cloudwatch": cloud, **overrides})
        return found

    setattr(Clients, "for_region", classmethod(for_region))  # noqa: B010
    try:
        yield
    finally:
        setattr(Clients, "for_region", plain)  # noqa: B010
