"""What the inventory finds: volumes, instances and their types, RDS instances."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from analyzer.model.kubernetes import Claim, Node, claim_of, node_of


class ResourceType(StrEnum):
    VOLUME = "volume"
    INSTANCE = "instance"
    DB_INSTANCE = "db_instance"


def scope_of(account_id: str, region: str) -> str:
    """Where a resource lives, as the analyzer keys it: `111111111111/us-east-1`, or the
    region alone for the account the daemon runs in when no account is configured. Resource
    ids repeat between accounts (an RDS instance's identifier is its owner's choice), so
    every key of the inventories, the polling, the readings, the alerts and the state file
    is (scope, id)."""
    return f"{account_id}/{region}" if account_id else region


@dataclass(frozen=True, slots=True)
class ResourceRef:
    resource_type: ResourceType
    resource_id: str
    region: str
    account_id: str = ""
    """The account that owns it; empty when the daemon watches its own account unnamed."""
    account_name: str = field(default="", compare=False)
    """Shown beside the id where known; not part of what the resource is."""
    claim: Claim | None = field(default=None, compare=False)
    """The PersistentVolumeClaim a volume was provisioned for (its CSI driver's tags): the
    name it is known by in its cluster, shown first; not part of what the resource is."""

    @property
    def scope(self) -> str:
        return scope_of(self.account_id, self.region)

    @property
    def named(self) -> str:
        """`PVC db/data-postgres-0 (vol-0abc)` for a claim's volume, the id alone otherwise."""
        if self.claim is None:
            return self.resource_id
        return f"{self.claim.text()} ({self.resource_id})"

    @property
    def account(self) -> str:
        """`prod (111111111111)`, the id alone, or empty for the daemon's own account
        unnamed."""
        if self.account_name:
            return f"{self.account_name} ({self.account_id})"
        return self.account_id


@dataclass(frozen=True, slots=True)
class Modification:
    """A ModifyVolume, as DescribeVolumesModifications reports it."""

    state: str
    """modifying, optimizing, completed or failed."""
    started: datetime
    progress: int | None = None
    target: str = ""
    """What it changes the volume to, in words: `io2 1,000 GiB, 20,000 IOPS`."""
    target_fields: tuple[tuple[str, Any], ...] = ()
    """The same, field by field (volume_type, size_gib, iops, throughput_mibps), as AWS gave
    them."""
    original_fields: tuple[tuple[str, Any], ...] = ()
    """What the volume was before, field by field as `target_fields` (AWS's `Original*`)."""
    ended: datetime | None = None
    """When it completed or failed (AWS's `EndTime`)."""

    @property
    def under_way(self) -> bool:
        """Performance lies between the old and the new values until it completes."""
        return self.state in ("modifying", "optimizing")

    @property
    def in_effect(self) -> bool:
        """Whether the volume's limits are the new ones: from `optimizing` on.

        Amazon EBS User Guide, "Monitor the progress of Amazon EBS volume modifications":
        "While the volume is in the optimizing state, your volume performance is in between
        the source and target configuration specifications. Transitional volume performance
        will be no less than the source volume performance", and "Size increases take effect
        once the volume modification reaches the optimizing state". So while it is
        `modifying` the old limits hold; from `optimizing` on the old ones no longer bind
        and the new ones are what the volume is held to (no more than them, and, for a
        performance change still optimizing, possibly somewhat less: a finding on the new
        limits then errs towards silence, never towards a false alarm)."""
        return self.state in ("optimizing", "completed")

    @property
    def effective(self) -> datetime:
        """The moment from which its limits hold, where it is in effect: its `StartTime`.

        AWS reports when a modification started and, once completed, when it ended, but not
        when it reached `optimizing`; that usually takes a few seconds (the same page), so
        the start is the nearest moment AWS gives. The end would be hours late for a
        performance change (optimizing lasts "a few minutes to a few hours"), during which
        the old limits no longer bind. Datapoints are cut at this moment: a minute that
        starts before it is judged, if at all, by the limits before."""
        return self.started

    def text(self) -> str:
        """`gp2 50 GiB → gp3 50 GiB 3,000 IOPS 125 MiB/s at 09:12 UTC (completed)`; `to gp3 …`
        where AWS did not say what the volume was."""
        before = config_text(dict(self.original_fields))
        after = config_text({**dict(self.original_fields), **dict(self.target_fields)})
        if before and after != before:
            change = f"{before} → {after}"
        else:  # what it was is not known (or it changed nothing AWS reports)
            change = f"to {self.target or after or 'new values'}"
        return f"{change} at {self.started.astimezone(UTC):%H:%M} UTC ({self.state})"


def config_text(config: Mapping[str, Any]) -> str:
    """A volume's configuration in words, as DescribeVolumesModifications' fields give it:
    `io2 1,000 GiB 20,000 IOPS`."""
    size, iops, throughput = (config.get(k) for k in ("size_gib", "iops", "throughput_mibps"))
    return " ".join(
        part
        for part in (
            config.get("volume_type"),
            f"{size:,} GiB" if size else None,
            f"{iops:,} IOPS" if iops else None,
            f"{throughput:,} MiB/s" if throughput else None,
        )
        if part
    )


@dataclass(frozen=True, slots=True)
class Initialization:
    """A volume created from a snapshot still fetching its blocks, as DescribeVolumeStatus
    reports it (`InitializationStatusDetails`): the first read of a block not yet fetched is
    slow, whatever the volume's type or size."""

    progress: int | None = None
    """Percent done."""
    seconds_left: int | None = None
    """AWS's estimate of the time to complete."""
    kind: str = "default"
    """default, or provisioned-rate (Amazon EBS Provisioned Rate for Volume Initialization)."""


@dataclass(frozen=True, slots=True)
class AgentMetrics:
    """A volume's `diskio_ebs_*` metrics as ListMetrics shows the CloudWatch agent publishing
    them: CloudWatch answers a query only with this exact dimension set."""

    namespace: str
    dimensions: tuple[tuple[str, str], ...]
    names: tuple[str, ...]
    """The agent's metric names it has, sorted."""


@dataclass(frozen=True, slots=True)
class Volume:
    volume_id: str
    region: str
    volume_type: str
    size_gib: int
    state: str
    iops: int | None = None
    throughput_mibps: int | None = None
    attached_to: str | None = None
    """The instance it is attached to; the first of them for a Multi-Attach volume."""
    availability_zone: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)
    multi_attach: bool = False
    """io1/io2 attached to up to 16 Nitro instances at once."""
    also_attached_to: tuple[str, ...] = ()
    """A Multi-Attach volume's other instances."""
    modifications: tuple[Modification, ...] = ()
    """Its modifications AWS still reports, newest first."""
    initialization: Initialization | None = None
    """Set while a volume created from a snapshot is still initializing."""
    account_id: str = ""
    account_name: str = ""
    agent: AgentMetrics | None = None
    """The CloudWatch agent's NVMe metrics CloudWatch holds for it, where it has them."""
    created: datetime | None = None
    """When it was created (DescribeVolumes' `CreateTime`): how long an unattached volume
    can have sat idle."""

    @property
    def scope(self) -> str:
        return scope_of(self.account_id, self.region)

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(
            ResourceType.VOLUME,
            self.volume_id,
            self.region,
            self.account_id,
            self.account_name,
            self.claim,
        )

    @property
    def claim(self) -> Claim | None:
        """The PersistentVolumeClaim the EBS CSI driver provisioned it for, from its tags."""
        return claim_of(self.tags)

    @property
    def instance_ids(self) -> tuple[str, ...]:
        """Every instance it is attached to."""
        first = (self.attached_to,) if self.attached_to else ()
        return first + self.also_attached_to

    @property
    def active(self) -> bool:
        """CloudWatch publishes volume metrics only while a volume is attached and in use."""
        return self.state == "in-use" and self.attached_to is not None

    def describe(self) -> str:
        where = f" on {', '.join(self.instance_ids)}" if self.attached_to else " detached"
        return f"{self.volume_type} {self.size_gib:,} GiB{where}"

    @property
    def latest_modification(self) -> Modification | None:
        """Its latest modification that did not fail (a failed one changed nothing)."""
        made = [m for m in self.modifications if m.state != "failed"]
        return max(made, key=lambda m: m.started, default=None)

    @property
    def modification_in_effect(self) -> Modification | None:
        """The modification its limits date from: its latest `optimizing` or `completed`."""
        made = [m for m in self.modifications if m.in_effect]
        return max(made, key=lambda m: m.started, default=None)

    @property
    def limits_since(self) -> datetime | None:
        """The moment from which the limits of its configuration in force hold: the start of
        its latest modification in effect (`Modification.effective`); None where AWS reports
        none. While the latest is still `modifying`, the one before it, if AWS reports it."""
        latest = self.modification_in_effect
        return latest.effective if latest is not None else None

    def before_change(self) -> Volume | None:
        """Its configuration before the modification its limits date from (`limits_since`),
        where AWS reports what that was; None otherwise."""
        latest = self.modification_in_effect
        if latest is None or not latest.original_fields:
            return None
        return self._before(latest)

    def _before(self, made: Modification) -> Volume:
        """The volume as it was before `made`, from its `Original*` values (IOPS or
        throughput it had none of before, a gp2 moved to gp3: none)."""
        was: dict[str, Any] = {
            k: None for k, _ in made.target_fields if k in ("iops", "throughput_mibps")
        }
        return replace(self, **(was | dict(made.original_fields)))

    def modification_note(self, at: datetime, within_s: float) -> str | None:
        """What its latest modification means for the limits it is judged by, where it
        started within `within_s` of `at`: `modified gp2 50 GiB → gp3 50 GiB 3,000 IOPS
        125 MiB/s at 09:12 UTC (optimizing), in effect: …`."""
        latest = self.latest_modification
        if latest is None or (at - latest.started).total_seconds() > within_s:
            return None
        if latest.in_effect:
            return (
                f"modified {latest.text()}, in effect: its limits are the new ones, and only "
                "its datapoints since are judged against them"
            )
        return f"being modified {latest.text()}: the limits before hold until it is optimizing"

    def in_force(self) -> Volume:
        """The volume as its limits are now: while its latest modification is still
        `modifying`, its configuration before (the modification's `Original*` fields; AWS
        describes the volume with the target values from the start); itself otherwise."""
        latest = self.latest_modification
        if latest is None or latest.state != "modifying" or not latest.original_fields:
            return self
        return self._before(latest)


@dataclass(frozen=True, slots=True)
class InstanceType:
    """The EBS limits of an EC2 instance type, as DescribeInstanceTypes reports them."""

    name: str
    baseline_iops: float | None = None
    maximum_iops: float | None = None
    baseline_throughput_bps: float | None = None
    maximum_throughput_bps: float | None = None
    memory_bytes: int | None = None
    nitro: bool | None = None
    vcpus: int | None = None
    architectures: tuple[str, ...] = ()
    """x86_64, arm64, …: what an AMI must be built for to run on it."""
    current_generation: bool | None = None
    bare_metal: bool | None = None
    """Bare metal (Nitro-based, without the hypervisor): no instance EBS exceeded checks."""

    @property
    def ebs_bursts(self) -> bool:
        """Whether the type runs at its maximum only while EBS burst credits last."""
        return (self.baseline_iops or 0) < (self.maximum_iops or 0) or (
            self.baseline_throughput_bps or 0
        ) < (self.maximum_throughput_bps or 0)


@dataclass(frozen=True, slots=True)
class Instance:
    instance_id: str
    region: str
    instance_type: str
    state: str
    detailed_monitoring: bool = False
    volume_ids: tuple[str, ...] = ()
    type_info: InstanceType | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    account_id: str = ""
    account_name: str = ""

    @property
    def scope(self) -> str:
        return scope_of(self.account_id, self.region)

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(
            ResourceType.INSTANCE, self.instance_id, self.region, self.account_id, self.account_name
        )

    @property
    def active(self) -> bool:
        return self.state == "running"

    @property
    def node(self) -> Node | None:
        """The node group, NodePool or Auto Scaling group that launched it, from its tags: a
        cluster node is replaced, not resized."""
        return node_of(self.tags)

    def describe(self) -> str:
        return self.instance_type


RDS_STOPPED = frozenset(
    {
        "stopped",
        "stopping",
        "creating",
        "deleting",
        "failed",
        "starting",
        "inaccessible-encryption-credentials",
        "incompatible-network",
        "incompatible-option-group",
        "incompatible-parameters",
        "incompatible-restore",
        "restore-error",
    }
)
"""DB instance states in which RDS publishes no storage metrics."""


@dataclass(frozen=True, slots=True)
class StorageVolume:
    """One of an RDS for Oracle or SQL Server instance's additional storage volumes
    (`AdditionalStorageVolumes`: RDSDBDATA2 to RDSDBDATA4, gp3 or io2, 20 GiB to 64 TiB; Amazon
    RDS API Reference, AdditionalStorageVolume). Its limits add to the instance's storage."""

    name: str
    storage_type: str
    allocated_gib: int
    iops: int | None = None
    throughput_mibps: int | None = None


@dataclass(frozen=True, slots=True)
class DbInstance:
    """An RDS instance: its storage (all its striped volumes) and its instance class."""

    db_instance_id: str
    region: str
    engine: str
    instance_class: str
    storage_type: str
    allocated_gib: int
    state: str
    iops: int | None = None
    throughput_mibps: int | None = None
    class_info: InstanceType | None = None
    """The EBS limits and memory of EC2 type X, for class db.X."""
    multi_az: bool = False
    """A standby in a second zone: RDS bills the class and the storage twice."""
    tags: Mapping[str, str] = field(default_factory=dict)
    additional_volumes: tuple[StorageVolume, ...] = ()
    """Oracle and SQL Server: storage volumes beside the primary one, in use."""
    pending: tuple[str, ...] = ()
    """The changes RDS holds for the next maintenance window (`PendingModifiedValues`, by
    name): a modification applied immediately applies them too."""
    dedicated_log_volume: bool = False
    """A Dedicated Log Volume (DLV) holds the database's transaction logs, apart from its
    storage, with limits of its own."""
    cluster: str | None = None
    """The Multi-AZ DB cluster it is a member of: its storage is the cluster's, changed on the
    cluster, not on the instance."""
    account_id: str = ""
    account_name: str = ""

    @property
    def scope(self) -> str:
        return scope_of(self.account_id, self.region)

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(
            ResourceType.DB_INSTANCE,
            self.db_instance_id,
            self.region,
            self.account_id,
            self.account_name,
        )

    @property
    def active(self) -> bool:
        return self.state not in RDS_STOPPED

    @property
    def ec2_type(self) -> str:
        return self.instance_class.removeprefix("db.")

    @property
    def attached_to(self) -> None:
        return None

    def describe(self) -> str:
        return (
            f"{self.engine} {self.instance_class}, {self.storage_type} {self.allocated_gib:,} GiB"
        )


@dataclass(frozen=True, slots=True)
class Inventory:
    """What one region of one account holds."""

    region: str
    volumes: tuple[Volume, ...] = ()
    instances: tuple[Instance, ...] = ()
    db_instances: tuple[DbInstance, ...] = ()
    account_id: str = ""
    account_name: str = ""

    @property
    def scope(self) -> str:
        return scope_of(self.account_id, self.region)
