"""Describe* calls → Volume and Instance, with each instance type's EBS limits.

Every Describe call is paginated. Instance types are looked up in batches of 100 and cached
for the life of the process: their limits do not change between cycles.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from analyzer.collect.aws import Clients, calling
from analyzer.errors import AwsAccessError, AwsCallError
from analyzer.model.resources import DbInstance, Instance, InstanceType, Volume
from analyzer.model.units import MB, MIB

log = structlog.get_logger(__name__)
TYPES_PER_CALL = 100
GONE_INSTANCE_STATES = frozenset({"terminated", "shutting-down"})
GONE_VOLUME_STATES = frozenset({"deleting", "deleted"})


@dataclass(frozen=True, slots=True)
class TagFilter:
    """`Key=Value` or `Key` (any value). Filters on the same key are alternatives."""

    key: str
    value: str | None

    @classmethod
    def parse(cls, text: str) -> TagFilter:
        key, sep, value = text.partition("=")
        if not key.strip():
            raise ValueError(f"tag filter {text!r}: expected Key=Value or Key")
        return cls(key.strip(), value.strip() if sep else None)


def tags_match(tags: Mapping[str, str], filters: Sequence[TagFilter]) -> bool:
    """Every key must match; several values of one key are alternatives, as in AWS filters."""
    by_key: dict[str, list[str | None]] = {}
    for f in filters:
        by_key.setdefault(f.key, []).append(f.value)
    for key, values in by_key.items():
        if key not in tags:
            return False
        if None not in values and tags[key] not in values:
            return False
    return True


@dataclass(frozen=True, slots=True)
class Inventory:
    region: str
    volumes: tuple[Volume, ...] = ()
    instances: tuple[Instance, ...] = ()
    db_instances: tuple[DbInstance, ...] = ()


class InstanceTypeCache:
    """EBS limits per (region, type), fetched once."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], InstanceType] = {}

    def get(self, clients: Clients, names: Iterable[str]) -> dict[str, InstanceType]:
        region = clients.region
        missing = sorted({n for n in names if (region, n) not in self._known})
        for start in range(0, len(missing), TYPES_PER_CALL):
            for info in _describe_types(clients, missing[start : start + TYPES_PER_CALL]):
                self._known[(region, info.name)] = info
        return {n: self._known[(region, n)] for n in names if (region, n) in self._known}


def _describe_types(clients: Clients, names: list[str]) -> list[InstanceType]:
    try:
        with calling("ec2:DescribeInstanceTypes", clients.region):
            pages = clients.ec2.get_paginator("describe_instance_types").paginate(
                InstanceTypes=names
            )
            return [parse_instance_type(t) for page in pages for t in page["InstanceTypes"]]
    except AwsCallError as exc:
        if exc.code != "InvalidInstanceType":
            raise
    # One unknown type fails the whole batch: look the others up one by one.
    if len(names) == 1:
        return []
    return [info for name in names for info in _describe_types(clients, [name])]


def parse_instance_type(raw: Mapping[str, Any]) -> InstanceType:
    ebs = raw.get("EbsInfo", {}).get("EbsOptimizedInfo") or {}

    def mb(key: str) -> float | None:
        value = ebs.get(key)
        return float(value) * MB if value is not None else None

    def num(key: str) -> float | None:
        value = ebs.get(key)
        return float(value) if value is not None else None

    memory = raw.get("MemoryInfo", {}).get("SizeInMiB")
    return InstanceType(
        name=raw["InstanceType"],
        baseline_iops=num("BaselineIops"),
        maximum_iops=num("MaximumIops"),
        baseline_throughput_bps=mb("BaselineThroughputInMBps"),
        maximum_throughput_bps=mb("MaximumThroughputInMBps"),
        memory_bytes=int(memory) * MIB if memory is not None else None,
        nitro=raw.get("Hypervisor") == "nitro" or bool(raw.get("BareMetal")),
    )


def _tags(raw: Mapping[str, Any]) -> dict[str, str]:
    return {t["Key"]: t.get("Value", "") for t in raw.get("Tags", []) or []}


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
    )


def parse_instance(
    raw: Mapping[str, Any],
    region: str,
    types: Mapping[str, InstanceType],
    volume_ids: tuple[str, ...],
) -> Instance:
    monitoring = raw.get("Monitoring", {}).get("State", "disabled")
    return Instance(
        instance_id=raw["InstanceId"],
        region=region,
        instance_type=raw["InstanceType"],
        state=raw.get("State", {}).get("Name", "unknown"),
        detailed_monitoring=monitoring in ("enabled", "pending"),
        volume_ids=volume_ids,
        type_info=types.get(raw["InstanceType"]),
        tags=_tags(raw),
    )


def parse_db_instance(
    raw: Mapping[str, Any], region: str, types: Mapping[str, InstanceType]
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
        class_info=types.get(klass.removeprefix("db.")),
        tags={t["Key"]: t.get("Value", "") for t in raw.get("TagList", []) or []},
    )


def discover_db(
    clients: Clients, types: InstanceTypeCache, tag_filters: Sequence[TagFilter] = ()
) -> tuple[DbInstance, ...]:
    """RDS instances on EBS storage (Aurora's storage is not EBS and is left out).

    Without permission for rds:DescribeDBInstances the EBS analysis goes on without RDS.
    """
    try:
        with calling("rds:DescribeDBInstances", clients.region):
            raw = [
                d
                for page in clients.rds.get_paginator("describe_db_instances").paginate()
                for d in page["DBInstances"]
                if not d.get("Engine", "").startswith("aurora") and d.get("StorageType") != "aurora"
            ]
    except AwsAccessError as exc:
        log.warning("rds.skipped", region=clients.region, error=str(exc))
        return ()
    dbs = [
        d
        for d in raw
        if not tag_filters
        or tags_match(
            {t["Key"]: t.get("Value", "") for t in d.get("TagList", []) or []}, tag_filters
        )
    ]
    known = types.get(clients, {d["DBInstanceClass"].removeprefix("db.") for d in dbs})
    parsed = [parse_db_instance(d, clients.region, known) for d in dbs]
    return tuple(sorted(parsed, key=lambda d: d.db_instance_id))


def discover(
    clients: Clients,
    types: InstanceTypeCache,
    tag_filters: Sequence[TagFilter] = (),
    with_rds: bool = True,
) -> Inventory:
    """Volumes and instances of one region.

    With tag filters, a volume is in scope when it or its instance matches, and an instance
    when it or one of its volumes does: an instance's EBS cap is shared by all its volumes.
    """
    region = clients.region
    with calling("ec2:DescribeVolumes", region):
        raw_volumes = [
            v
            for page in clients.ec2.get_paginator("describe_volumes").paginate()
            for v in page["Volumes"]
            if v.get("State") not in GONE_VOLUME_STATES
        ]
    with calling("ec2:DescribeInstances", region):
        raw_instances = [
            i
            for page in clients.ec2.get_paginator("describe_instances").paginate()
            for r in page["Reservations"]
            for i in r["Instances"]
            if i.get("State", {}).get("Name") not in GONE_INSTANCE_STATES
        ]
    volumes = [parse_volume(v, region) for v in raw_volumes]
    if tag_filters:
        matching_instances = {
            i["InstanceId"] for i in raw_instances if tags_match(_tags(i), tag_filters)
        }
        volumes = [
            v
            for v in volumes
            if tags_match(v.tags, tag_filters) or v.attached_to in matching_instances
        ]
        with_volumes = {v.attached_to for v in volumes}
        raw_instances = [
            i
            for i in raw_instances
            if i["InstanceId"] in matching_instances or i["InstanceId"] in with_volumes
        ]
    by_instance: dict[str, list[str]] = {}
    for v in volumes:
        if v.attached_to:
            by_instance.setdefault(v.attached_to, []).append(v.volume_id)
    known_types = types.get(clients, {i["InstanceType"] for i in raw_instances})
    instances = [
        parse_instance(i, region, known_types, tuple(sorted(by_instance.get(i["InstanceId"], []))))
        for i in raw_instances
    ]
    return Inventory(
        region,
        tuple(sorted(volumes, key=lambda v: v.volume_id)),
        tuple(sorted(instances, key=lambda i: i.instance_id)),
        discover_db(clients, types, tag_filters) if with_rds else (),
    )
