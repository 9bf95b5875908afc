"""The boto3 adapter for the Describe* calls: paginated, parsed into the model's types.

Instance types are asked for in batches of 100; one unknown type fails a whole batch, so that
batch is asked for again one type at a time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC
from itertools import islice
from typing import Any

from analyzer import progress
from analyzer.collect.aws import Clients, calling
from analyzer.errors import AwsCallError
from analyzer.model.resources import DbInstance, Instance, InstanceType, Modification, Volume
from analyzer.model.units import MB, MIB

TYPES_PER_CALL = 100
GONE_INSTANCE_STATES = frozenset({"terminated", "shutting-down"})
GONE_VOLUME_STATES = frozenset({"deleting", "deleted"})


MAX_PAGES = 1_000
"""Describe pages of up to 1,000 items: a million volumes is beyond any account's quota."""


class Ec2Rds:
    """`Describer` over boto3's EC2 and RDS clients of one region."""

    def __init__(self, clients: Clients) -> None:
        self._clients = clients

    @property
    def region(self) -> str:
        return self._clients.region

    def _pages(self, service: str, operation: str, **kwargs: Any) -> list[dict[str, Any]]:
        """Every page of a Describe call, at most `MAX_PAGES` (more is a loop, not data)."""
        client = self._clients.client(service)
        pages = []
        with progress.step(f"{operation} in {self.region}", unit="pages") as describing:
            for page in islice(client.get_paginator(operation).paginate(**kwargs), MAX_PAGES + 1):
                pages.append(page)
                describing.advance()
        if len(pages) > MAX_PAGES:
            raise ValueError(f"more than {MAX_PAGES} pages")
        return pages

    def volumes(self) -> list[Volume]:
        with calling("ec2:DescribeVolumes", self.region):
            pages = self._pages("ec2", "describe_volumes")
            return [
                parse_volume(v, self.region)
                for page in pages
                for v in page["Volumes"]
                if v.get("State") not in GONE_VOLUME_STATES
            ]

    def instances(self) -> list[Instance]:
        with calling("ec2:DescribeInstances", self.region):
            pages = self._pages("ec2", "describe_instances")
            return [
                parse_instance(i, self.region)
                for page in pages
                for r in page["Reservations"]
                for i in r["Instances"]
                if i.get("State", {}).get("Name") not in GONE_INSTANCE_STATES
            ]

    def instance_types(self, names: Sequence[str]) -> list[InstanceType]:
        return [
            info
            for start in range(0, len(names), TYPES_PER_CALL)
            for info in self._types(list(names[start : start + TYPES_PER_CALL]))
        ]

    def _types(self, names: list[str]) -> list[InstanceType]:
        try:
            with calling("ec2:DescribeInstanceTypes", self.region):
                pages = self._pages("ec2", "describe_instance_types", InstanceTypes=names)
                return [parse_instance_type(t) for page in pages for t in page["InstanceTypes"]]
        except AwsCallError as exc:
            if exc.code != "InvalidInstanceType":
                raise
        if len(names) == 1:
            return []
        return [info for name in names for info in self._types([name])]

    def offered_instance_types(self) -> list[InstanceType]:
        with calling("ec2:DescribeInstanceTypes", self.region):
            pages = self._pages("ec2", "describe_instance_types")
            return [
                parse_instance_type(t)
                for page in pages
                for t in page["InstanceTypes"]
                if "on-demand" in (t.get("SupportedUsageClasses") or ["on-demand"])
            ]

    def orderable_db_classes(self, engine: str) -> set[str]:
        with calling("rds:DescribeOrderableDBInstanceOptions", self.region):
            pages = self._pages(
                "rds",
                "describe_orderable_db_instance_options",
                Engine=engine,
                Vpc=True,
                PaginationConfig={"PageSize": 1_000},
            )
            return {
                o["DBInstanceClass"]
                for page in pages
                for o in page.get("OrderableDBInstanceOptions", []) or []
            }

    def volume_modifications(self) -> dict[str, list[Modification]]:
        with calling("ec2:DescribeVolumesModifications", self.region):
            pages = self._pages("ec2", "describe_volumes_modifications")
            found: dict[str, list[Modification]] = {}
            for page in pages:
                for raw in page.get("VolumesModifications", []) or []:
                    found.setdefault(raw["VolumeId"], []).append(parse_modification(raw))
        for mods in found.values():
            mods.sort(key=lambda m: m.started, reverse=True)
        return found

    def db_instances(self) -> list[DbInstance]:
        with calling("rds:DescribeDBInstances", self.region):
            pages = self._pages("rds", "describe_db_instances")
            return [
                parse_db_instance(d, self.region)
                for page in pages
                for d in page["DBInstances"]
                if not d.get("Engine", "").startswith("aurora") and d.get("StorageType") != "aurora"
            ]


def _tags(raw: Mapping[str, Any], key: str = "Tags") -> dict[str, str]:
    return {t["Key"]: t.get("Value", "") for t in raw.get(key, []) or []}


def parse_instance_type(raw: Mapping[str, Any]) -> InstanceType:
    ebs = raw.get("EbsInfo", {}).get("EbsOptimizedInfo") or {}

    def mb(key: str) -> float | None:
        value = ebs.get(key)
        return float(value) * MB if value is not None else None

    def num(key: str) -> float | None:
        value = ebs.get(key)
        return float(value) if value is not None else None

    memory = raw.get("MemoryInfo", {}).get("SizeInMiB")
    vcpus = raw.get("VCpuInfo", {}).get("DefaultVCpus")
    return InstanceType(
        name=raw["InstanceType"],
        baseline_iops=num("BaselineIops"),
        maximum_iops=num("MaximumIops"),
        baseline_throughput_bps=mb("BaselineThroughputInMBps"),
        maximum_throughput_bps=mb("MaximumThroughputInMBps"),
        memory_bytes=int(memory) * MIB if memory is not None else None,
        nitro=raw.get("Hypervisor") == "nitro" or bool(raw.get("BareMetal")),
        bare_metal=raw.get("BareMetal"),
        vcpus=int(vcpus) if vcpus is not None else None,
        architectures=tuple(raw.get("ProcessorInfo", {}).get("SupportedArchitectures") or ()),
        current_generation=raw.get("CurrentGeneration"),
    )


def parse_modification(raw: Mapping[str, Any]) -> Modification:
    target = " ".join(
        part
        for part in (
            raw.get("TargetVolumeType"),
            f"{raw['TargetSize']:,} GiB" if raw.get("TargetSize") else None,
            f"{raw['TargetIops']:,} IOPS" if raw.get("TargetIops") else None,
            f"{raw['TargetThroughput']:,} MiB/s" if raw.get("TargetThroughput") else None,
        )
        if part
    )
    started = raw["StartTime"]
    return Modification(
        state=raw.get("ModificationState", "unknown"),
        started=started if started.tzinfo else started.replace(tzinfo=UTC),
        progress=raw.get("Progress"),
        target=target,
    )


def parse_volume(raw: Mapping[str, Any], region: str) -> Volume:
    attached = [
        a["InstanceId"]
        for a in raw.get("Attachments", []) or []
        if a.get("State") in ("attached", "attaching") and a.get("InstanceId")
    ]
    return Volume(
        volume_id=raw["VolumeId"],
        region=region,
        volume_type=raw.get("VolumeType", "standard"),
        size_gib=int(raw["Size"]),
        state=raw.get("State", "unknown"),
        iops=raw.get("Iops"),
        throughput_mibps=raw.get("Throughput"),
        attached_to=attached[0] if attached else None,
        availability_zone=raw.get("AvailabilityZone", ""),
        tags=_tags(raw),
        multi_attach=bool(raw.get("MultiAttachEnabled")),
        also_attached_to=tuple(attached[1:]),
    )


def parse_instance(
    raw: Mapping[str, Any],
    region: str,
    types: Mapping[str, InstanceType] | None = None,
    volume_ids: tuple[str, ...] = (),
) -> Instance:
    monitoring = raw.get("Monitoring", {}).get("State", "disabled")
    return Instance(
        instance_id=raw["InstanceId"],
        region=region,
        instance_type=raw["InstanceType"],
        state=raw.get("State", {}).get("Name", "unknown"),
        detailed_monitoring=monitoring in ("enabled", "pending"),
        volume_ids=volume_ids,
        type_info=(types or {}).get(raw["InstanceType"]),
        tags=_tags(raw),
    )


def parse_db_instance(
    raw: Mapping[str, Any], region: str, types: Mapping[str, InstanceType] | None = None
) -> DbInstance:
    klass = raw["DBInstanceClass"]
    return DbInstance(
        db_instance_id=raw["DBInstanceIdentifier"],
        region=region,
        engine=raw.get("Engine", ""),
        instance_class=klass,
        storage_type=raw.get("StorageType", "gp2"),
        allocated_gib=int(raw.get("AllocatedStorage") or 0),
        state=raw.get("DBInstanceStatus", "unknown"),
        iops=raw.get("Iops"),
        throughput_mibps=raw.get("StorageThroughput"),
        class_info=(types or {}).get(klass.removeprefix("db.")),
        multi_az=bool(raw.get("MultiAZ")),
        tags=_tags(raw, "TagList"),
    )
