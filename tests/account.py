"""Builds a simulated account in moto: resources through the EC2 API, metric data from the
simulator through PutMetricData (moto stores and aggregates it like CloudWatch)."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

import boto3

from analyzer.collect import describe as inventory
from analyzer.collect.aws import Clients
from analyzer.model.resources import InstanceType, Volume
from analyzer.sim.datapoints import Datapoints, namespace_of
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.workloads import Demand

REGION = "us-east-1"
AMI = "ami-12c6146b"


class Account:
    def __init__(self, region: str = REGION, endpoint_url: str | None = None) -> None:
        self.region = region
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

    def instance_type(self, name: str) -> InstanceType:
        """The type's limits as the API reports them."""
        raw = self.ec2.describe_instance_types(InstanceTypes=[name])["InstanceTypes"][0]
        return inventory.parse_instance_type(raw)

    def described_volume(self, volume_id: str) -> Volume:
        raw = self.ec2.describe_volumes(VolumeIds=[volume_id])["Volumes"][0]
        return inventory.parse_volume(raw, self.region)

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
        by_namespace: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for (resource_id, metric), points in data.items():
            namespace, dimension = namespace_of(metric, resource_id)
            for stamp, value in points:
                by_namespace[namespace].append(
                    {
                        "MetricName": metric,
                        "Dimensions": [{"Name": dimension, "Value": resource_id}],
                        "Timestamp": stamp,
                        "Value": value,
                    }
                )
        for namespace, items in by_namespace.items():
            for start in range(0, len(items), 1000):
                self.cloudwatch.put_metric_data(
                    Namespace=namespace, MetricData=items[start : start + 1000]
                )
