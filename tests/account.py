"""Builds a simulated account in moto: resources through the EC2 API, metric data from the
simulator through PutMetricData (moto stores and aggregates it like CloudWatch)."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from analyzer.collect import describe as inventory
from analyzer.collect.aws import Clients
from analyzer.model import metrics
from analyzer.model.resources import InstanceType, Volume
from analyzer.sim.datapoints import Datapoints, namespace_of, quiet_past
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.scenario import QUIET_DAYS
from analyzer.sim.workloads import Demand

REGION = "us-east-1"
AMI = "ami-12c6146b"


class Account:
    """`quiet_days`: each balance put has that many quiet days before its first point, as a
    resource that existed before its simulation (0: new with its first point)."""

    def __init__(
        self, region: str = REGION, endpoint_url: str | None = None, quiet_days: float = QUIET_DAYS
    ) -> None:
        self.region = region
        self.quiet_days = quiet_days
        self._put: set[tuple[str, str]] = set()
        self.ec2 = boto3.client("ec2", region_name=region, endpoint_url=endpoint_url)
        self.cloudwatch = boto3.client("cloudwatch", region_name=region, endpoint_url=endpoint_url)

    @property
    def clients(self) -> Clients:
        """The analyzer's own clients, as the code under test builds them."""
        return Clients.for_region(self.region)

    def instance(self, instance_type: str, detailed: bool = False, **tags: str) -> str:
        kwargs: dict[str, Any] = {"Monitoring": {"Enabled": detailed}}
        if tags:
            kwargs["TagSpecifications"] = [
                {
                    "ResourceType": "instance",
                    "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
                }
            ]
        result = self.ec2.run_instances(
            ImageId=AMI,
            MinCount=1,
            MaxCount=1,
            InstanceType=instance_type,
            Placement={"AvailabilityZone": f"{self.region}a"},
            **kwargs,
        )
        instance_id: str = result["Instances"][0]["InstanceId"]
        return instance_id

    def volume(
        self,
        volume_type: str,
        size: int,
        attach_to: str | None = None,
        device: str = "/dev/sdf",
        **extra: int,
    ) -> str:
        result = self.ec2.create_volume(
            AvailabilityZone=f"{self.region}a", Size=size, VolumeType=volume_type, **extra
        )
        volume_id: str = result["VolumeId"]
        if attach_to:
            self.ec2.attach_volume(VolumeId=volume_id, InstanceId=attach_to, Device=device)
        return volume_id

    def daily_replica(self, instance_class: str) -> datetime:
        """Incident 3: the MySQL replica `orders-replica` on gp2 200 GiB, read at 3,000 IOPS of
        16 KiB from 09:00 to 13:00 (80 otherwise), 50 writes a second, 1.5 GiB of memory free.
        Simulated from midnight of the day it returns for 35 hours; from 20:00 on in moto."""
        from analyzer.collect.describe import parse_db_instance
        from analyzer.model.units import GIB, KIB
        from analyzer.sim.rds import DatabaseSimulation, SimDatabase
        from analyzer.sim.workloads import daily

        raw = boto3.client("rds", region_name=self.region).create_db_instance(
            DBInstanceIdentifier="orders-replica",
            Engine="mysql",
            DBInstanceClass=instance_class,
            AllocatedStorage=200,
            StorageType="gp2",
            MasterUsername="admin",
            MasterUserPassword="password123",
        )["DBInstance"]
        ec2_type = instance_class.removeprefix("db.")
        db = parse_db_instance(raw, self.region, {ec2_type: self.instance_type(ec2_type)})
        day = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)
        reads = daily(low=80, high=3_000, busy_from_h=9, busy_to_h=13)
        sim = DatabaseSimulation(
            SimDatabase(db, reads, lambda _t: 50, 16 * KIB, lambda _t: 1.5 * GIB), day
        )
        data = sim.run(35 * 60)
        cutoff = day + timedelta(hours=20)
        self.put({k: [(t, v) for t, v in pts if t >= cutoff] for k, pts in data.items()})
        return day

    def instance_type(self, name: str) -> InstanceType:
        """The type's limits as the API reports them."""
        raw = self.ec2.describe_instance_types(InstanceTypes=[name])["InstanceTypes"][0]
        return inventory.parse_instance_type(raw)

    def described_volume(self, volume_id: str) -> Volume:
        raw = self.ec2.describe_volumes(VolumeIds=[volume_id])["Volumes"][0]
        return inventory.parse_volume(raw, self.region)

    def modify_volume(self, volume_id: str, at: datetime, **changes: Any) -> None:
        """ModifyVolume at `at`, as AWS stamps it (moto stamps the wall clock): through the
        simulated account's own recording (`sim/modifications.py`), the simulation held in
        CloudWatch already, so nothing else follows."""
        stamped_at(at, self.region)
        self.ec2.modify_volume(VolumeId=volume_id, **changes)

    def simulation(
        self,
        instance_id: str,
        volumes: dict[str, Demand],
        start: datetime,
        detailed: bool = False,
        balances: dict[str, float] | None = None,
        resizes: dict[str, list[tuple[float, int]]] | None = None,
    ) -> Simulation:
        raw = self.ec2.describe_instances(InstanceIds=[instance_id])
        type_name = raw["Reservations"][0]["Instances"][0]["InstanceType"]
        sims = [
            SimVolume(
                self.described_volume(vid),
                demand,
                (balances or {}).get(vid, 100.0),
                (resizes or {}).get(vid, ()),
            )
            for vid, demand in volumes.items()
        ]
        return Simulation(
            SimInstance(instance_id, self.instance_type(type_name), sims, detailed), start
        )

    def put(self, data: Datapoints) -> None:
        """Published as AWS publishes each metric: under its own dimension set, the
        per-attachment ones under the volume's instance too (and not at all for a volume
        attached to none)."""
        attached = {
            v["VolumeId"]: v["Attachments"][0]["InstanceId"]
            for v in self.ec2.describe_volumes()["Volumes"]
            if len(v.get("Attachments", [])) == 1 and not v.get("MultiAttachEnabled")
        }
        by_namespace: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for (resource_id, name), points in data.items():
            namespace, _ = namespace_of(name, resource_id)
            dims = metrics.dimensions(
                metrics.named(namespace, name), resource_id, attached.get(resource_id)
            )
            if dims is None:
                continue
            before: list[tuple[datetime, float]] = []
            if name in metrics.BALANCES and points and (resource_id, name) not in self._put:
                first = min(t for t, _ in points)
                since = first - timedelta(days=self.quiet_days)
                before = quiet_past(first, self.quiet_days, since, first)
            self._put.add((resource_id, name))
            for stamp, value in [*before, *points]:
                by_namespace[namespace].append(
                    {
                        "MetricName": name,
                        "Dimensions": [{"Name": n, "Value": v} for n, v in dims],
                        "Timestamp": stamp,
                        "Value": value,
                    }
                )
        for namespace, items in by_namespace.items():
            for start in range(0, len(items), 1000):
                self.cloudwatch.put_metric_data(
                    Namespace=namespace, MetricData=items[start : start + 1000]
                )


def stamped_at(at: datetime, region: str = REGION) -> None:
    """Every ModifyVolume in moto's default account from now on is stamped at `at` (AWS stamps
    the moment of the call; moto the wall clock, days after a test's simulated present)."""
    from moto.core.models import DEFAULT_ACCOUNT_ID

    from analyzer.sim import modifications

    modifications.install()
    modifications.follow(DEFAULT_ACCOUNT_ID, region, _Stamped(at))


class _Stamped:
    """A simulated account whose present is `at` and whose metrics are already published."""

    def __init__(self, at: datetime) -> None:
        self.present = at

    def modify_volume(self, volume_id: str, at: datetime, **config: Any) -> None:
        """The simulation that follows the change ran before, under `Account.simulation`."""
