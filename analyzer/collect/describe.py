"""The boto3 adapter for the Describe* calls: paginated, parsed into the model's types.

Instance types are asked for in batches of 100; one unknown type fails a whole batch, so that
batch is asked for again one type at a time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from analyzer.collect import progress
from analyzer.collect.aws import Clients, calling
from analyzer.collect.reply import OffContract, Reply
from analyzer.errors import AwsCallError
from analyzer.model.resources import (
    DbInstance,
    Initialization,
    Instance,
    InstanceType,
    Modification,
    StorageVolume,
    Volume,
    config_text,
)
from analyzer.model.units import MB, MIB

TYPES_PER_CALL = 100
GONE_INSTANCE_STATES = frozenset({"terminated", "shutting-down"})
GONE_VOLUME_STATES = frozenset({"deleting", "deleted"})
UNUSED_STORAGE = frozenset({"CREATING", "DELETING", "NOT-IN-USE"})
"""Additional storage volumes that hold no data being read or written yet, or any more."""


MAX_PAGES = 1_000
"""Describe pages of up to 1,000 items: a million volumes is beyond any account's quota."""


def _only(name: str, ids: Sequence[str] | None) -> dict[str, Any]:
    return {} if ids is None else {"Filters": [{"Name": name, "Values": list(ids)}]}


class Ec2Rds:
    """`Describer` over boto3's EC2 and RDS clients of one region."""

    def __init__(self, clients: Clients, where: str | None = None) -> None:
        self._clients = clients
        self.where = where or clients.region
        """What messages name: the region, or an account's scope (`111111111111/us-east-1`)."""

    @property
    def region(self) -> str:
        return self._clients.region

    def _pages(self, service: str, operation: str, **kwargs: Any) -> list[dict[str, Any]]:
        """Every page of a Describe call, at most `MAX_PAGES` (more is a loop, not data)."""
        client = self._clients.client(service)
        pages = []
        with progress.step(f"{operation} in {self.where}", unit="pages") as describing:
            for page in islice(client.get_paginator(operation).paginate(**kwargs), MAX_PAGES + 1):
                pages.append(page)
                describing.advance()
        if len(pages) > MAX_PAGES:
            raise ValueError(f"more than {MAX_PAGES} pages")
        return pages

    def volumes(self) -> list[Volume]:
        return self.volumes_of(None)

    def volumes_of(self, ids: Sequence[str] | None) -> list[Volume]:
        """Only these (a node's own volumes; None: all), by a filter that, unlike `VolumeIds`,
        leaves out an id gone since instead of failing the call."""
        with calling("ec2:DescribeVolumes", self.where):
            pages = self._pages("ec2", "describe_volumes", **_only("volume-id", ids))
            return [
                parse_volume(v, self.region)
                for v in _entries(pages, "Volumes")
                if v.text("State", None) not in GONE_VOLUME_STATES
            ]

    def instances(self) -> list[Instance]:
        return self.instances_of(None)

    def instances_of(self, ids: Sequence[str] | None) -> list[Instance]:
        """Only these (a node's own instance; None: all)."""
        with calling("ec2:DescribeInstances", self.where):
            pages = self._pages("ec2", "describe_instances", **_only("instance-id", ids))
            return [
                parse_instance(i, self.region)
                for r in _entries(pages, "Reservations")
                for i in r.each("Instances")
                if i.member("State").text("Name", None) not in GONE_INSTANCE_STATES
            ]

    def instance_types(self, names: Sequence[str]) -> list[InstanceType]:
        return [
            info
            for start in range(0, len(names), TYPES_PER_CALL)
            for info in self._types(list(names[start : start + TYPES_PER_CALL]))
        ]

    def _types(self, names: list[str]) -> list[InstanceType]:
        try:
            with calling("ec2:DescribeInstanceTypes", self.where):
                pages = self._pages("ec2", "describe_instance_types", InstanceTypes=names)
                return [parse_instance_type(t) for t in _entries(pages, "InstanceTypes")]
        except AwsCallError as exc:
            if exc.code != "InvalidInstanceType":
                raise
        if len(names) == 1:
            return []
        return [info for name in names for info in self._types([name])]

    def offered_instance_types(self) -> list[InstanceType]:
        with calling("ec2:DescribeInstanceTypes", self.where):
            pages = self._pages("ec2", "describe_instance_types")
            return [
                parse_instance_type(t)
                for t in _entries(pages, "InstanceTypes")
                if "on-demand" in (t.texts("SupportedUsageClasses") or ["on-demand"])
            ]

    def orderable_db_classes(self, engine: str) -> set[str]:
        with calling("rds:DescribeOrderableDBInstanceOptions", self.where):
            pages = self._pages(
                "rds",
                "describe_orderable_db_instance_options",
                Engine=engine,
                Vpc=True,
                PaginationConfig={"PageSize": 1_000},
            )
            return {
                o.text("DBInstanceClass") for o in _entries(pages, "OrderableDBInstanceOptions")
            }

    def volume_modifications(self) -> dict[str, list[Modification]]:
        with calling("ec2:DescribeVolumesModifications", self.where):
            pages = self._pages("ec2", "describe_volumes_modifications")
            found: dict[str, list[Modification]] = {}
            for raw in _entries(pages, "VolumesModifications"):
                found.setdefault(raw.text("VolumeId"), []).append(parse_modification(raw))
        for mods in found.values():
            mods.sort(key=lambda m: m.started, reverse=True)
        return found

    def volume_initializations(self) -> dict[str, Initialization]:
        with calling("ec2:DescribeVolumeStatus", self.where):
            pages = self._pages("ec2", "describe_volume_status")
            found: dict[str, Initialization] = {}
            for raw in _entries(pages, "VolumeStatuses"):
                initialization = parse_initialization(raw)
                if initialization is not None:
                    found[raw.text("VolumeId")] = initialization
            return found

    def db_instances(self) -> list[DbInstance]:
        with calling("rds:DescribeDBInstances", self.where):
            pages = self._pages("rds", "describe_db_instances")
            return [
                parse_db_instance(d, self.region)
                for d in _entries(pages, "DBInstances")
                if not d.text("Engine", "").startswith("aurora")
                and d.text("StorageType", None) != "aurora"
            ]


def _entries(pages: list[dict[str, Any]], key: str) -> list[Reply]:
    """The items of every page's `key` list, each checked to be a structure."""
    return [item for page in pages for item in Reply(page).each(key)]


def _reply(raw: Mapping[str, Any] | Reply, where: str) -> Reply:
    """The parsers take an answer's item as botocore gives it (the simulator and the tests
    call them so) or already wrapped."""
    return raw if isinstance(raw, Reply) else Reply(raw, where)


def _tags(raw: Reply, key: str = "Tags") -> dict[str, str]:
    return {t.text("Key"): t.text("Value", "") for t in raw.each(key)}


def parse_instance_type(raw: Mapping[str, Any] | Reply) -> InstanceType:
    """An InstanceTypes item. Every type has `EbsInfo`; only EBS-optimized ones have
    `EbsOptimizedInfo`, whose limits are the analysis's facts."""
    item = _reply(raw, "InstanceTypes[]")
    if item.member("EbsInfo").empty:
        raise OffContract(f"InstanceTypes[] {item.text('InstanceType', '?')}: EbsInfo: missing")
    ebs = item.member("EbsInfo").member("EbsOptimizedInfo")

    def mb(key: str) -> float | None:
        value = ebs.number(key)
        return value * MB if value is not None else None

    memory = item.member("MemoryInfo").integer("SizeInMiB", None)
    return InstanceType(
        name=item.text("InstanceType"),
        baseline_iops=ebs.number("BaselineIops"),
        maximum_iops=ebs.number("MaximumIops"),
        baseline_throughput_bps=mb("BaselineThroughputInMBps"),
        maximum_throughput_bps=mb("MaximumThroughputInMBps"),
        memory_bytes=memory * MIB if memory is not None else None,
        nitro=item.text("Hypervisor", None) == "nitro" or bool(item.flag("BareMetal")),
        bare_metal=item.flag("BareMetal"),
        vcpus=item.member("VCpuInfo").integer("DefaultVCpus", None),
        architectures=tuple(item.member("ProcessorInfo").texts("SupportedArchitectures")),
        current_generation=item.flag("CurrentGeneration"),
    )


def parse_modification(raw: Mapping[str, Any] | Reply) -> Modification:
    """A VolumeModification (Amazon EC2 API Reference): its target and original values (the
    original ones are the limits in force while it is `modifying`), its start and end."""
    item = _reply(raw, "VolumesModifications[]")

    def config(prefix: str) -> dict[str, Any]:
        return {
            "volume_type": item.text(f"{prefix}VolumeType", None),
            "size_gib": item.integer(f"{prefix}Size", None),
            "iops": item.integer(f"{prefix}Iops", None),
            "throughput_mibps": item.integer(f"{prefix}Throughput", None),
        }

    fields, original = config("Target"), config("Original")
    ended = item.moment("EndTime") if "EndTime" in item.present() else None
    return Modification(
        state=item.text("ModificationState", "unknown"),
        started=_utc(item.moment("StartTime")),
        progress=item.integer("Progress", None),
        target=config_text(fields),
        target_fields=tuple((k, v) for k, v in fields.items() if v is not None),
        original_fields=tuple((k, v) for k, v in original.items() if v is not None),
        ended=_utc(ended) if ended is not None else None,
    )


def _utc(moment: datetime) -> datetime:
    """botocore gives timestamps with their zone; a recorded answer may not: UTC then."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_initialization(raw: Mapping[str, Any] | Reply) -> Initialization | None:
    """A volume status's initialization, while it is under way: its `initialization-state`
    detail says `initializing`, or AWS gives its progress below 100 % (Amazon EC2 API
    Reference, VolumeStatusItem, InitializationStatusDetails)."""
    item = _reply(raw, "VolumeStatuses[]")
    details = {
        d.text("Name", ""): d.text("Status", "")
        for d in item.member("VolumeStatus").each("Details")
    }
    progress_of = item.member("InitializationStatusDetails")
    progress = progress_of.integer("Progress", None)
    state = details.get("initialization-state")
    under_way = state == "initializing" or (
        state is None and progress is not None and progress < 100
    )
    if not under_way:
        return None
    return Initialization(
        progress=progress,
        seconds_left=progress_of.integer("EstimatedTimeToCompleteInSeconds", None),
        kind=progress_of.text("InitializationType", "default"),
    )


def parse_volume(raw: Mapping[str, Any] | Reply, region: str) -> Volume:
    item = _reply(raw, "Volumes[]")
    attached = [
        instance
        for a in item.each("Attachments")
        if a.text("State", None) in ("attached", "attaching")
        and (instance := a.text("InstanceId", None))
    ]
    return Volume(
        volume_id=item.text("VolumeId"),
        region=region,
        volume_type=item.text("VolumeType", "standard"),
        size_gib=item.integer("Size"),
        state=item.text("State", "unknown"),
        iops=item.integer("Iops", None),
        throughput_mibps=item.integer("Throughput", None),
        attached_to=attached[0] if attached else None,
        availability_zone=item.text("AvailabilityZone", ""),
        tags=_tags(item),
        multi_attach=bool(item.flag("MultiAttachEnabled")),
        also_attached_to=tuple(attached[1:]),
        created=_utc(item.moment("CreateTime")) if "CreateTime" in item.present() else None,
    )


def parse_instance(
    raw: Mapping[str, Any] | Reply,
    region: str,
    types: Mapping[str, InstanceType] | None = None,
    volume_ids: tuple[str, ...] = (),
) -> Instance:
    item = _reply(raw, "Reservations[].Instances[]")
    monitoring = item.member("Monitoring").text("State", "disabled")
    instance_type = item.text("InstanceType")
    return Instance(
        instance_id=item.text("InstanceId"),
        region=region,
        instance_type=instance_type,
        state=item.member("State").text("Name", "unknown"),
        detailed_monitoring=monitoring in ("enabled", "pending"),
        volume_ids=volume_ids,
        type_info=(types or {}).get(instance_type),
        tags=_tags(item),
    )


def parse_db_instance(
    raw: Mapping[str, Any] | Reply, region: str, types: Mapping[str, InstanceType] | None = None
) -> DbInstance:
    item = _reply(raw, "DBInstances[]")
    klass = item.text("DBInstanceClass")
    return DbInstance(
        db_instance_id=item.text("DBInstanceIdentifier"),
        region=region,
        engine=item.text("Engine", ""),
        instance_class=klass,
        storage_type=item.text("StorageType", "gp2"),
        allocated_gib=item.integer("AllocatedStorage", 0),
        state=item.text("DBInstanceStatus", "unknown"),
        iops=item.integer("Iops", None),
        throughput_mibps=item.integer("StorageThroughput", None),
        class_info=(types or {}).get(klass.removeprefix("db.")),
        multi_az=bool(item.flag("MultiAZ")),
        tags=_tags(item, "TagList"),
        additional_volumes=tuple(
            StorageVolume(
                name=v.text("VolumeName"),
                storage_type=v.text("StorageType", "gp3").lower(),
                allocated_gib=v.integer("AllocatedStorage", 0),
                iops=v.integer("IOPS", None),
                throughput_mibps=v.integer("StorageThroughput", None),
            )
            for v in item.each("AdditionalStorageVolumes")
            if v.text("StorageVolumeStatus", "ACTIVE").upper() not in UNUSED_STORAGE
        ),
        dedicated_log_volume=bool(item.flag("DedicatedLogVolume")),
        pending=tuple(item.member("PendingModifiedValues").present()),
        cluster=item.text("DBClusterIdentifier", None),
    )
