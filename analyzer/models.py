"""Frozen types that the pipeline stages exchange: resources, findings and their vocabulary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any


class ResourceType(StrEnum):
    VOLUME = "volume"
    INSTANCE = "instance"
    DB_INSTANCE = "db_instance"


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.CRITICAL: 2}


class Bottleneck(StrEnum):
    BURST_CREDITS = "burst_credits"
    VOLUME_IOPS = "volume_iops"
    VOLUME_THROUGHPUT = "volume_throughput"
    INSTANCE_IOPS = "instance_iops"
    INSTANCE_THROUGHPUT = "instance_throughput"
    INSTANCE_BURST_CREDITS = "instance_burst_credits"
    MEMORY = "memory"


class Unit(StrEnum):
    IOPS = "iops"
    BYTES_PER_SECOND = "bytes_per_second"
    PERCENT = "percent"


class Measure(StrEnum):
    """The normalized signals of a resource, per second where they are rates."""

    IOPS = "iops"
    READ_IOPS = "read_iops"
    WRITE_IOPS = "write_iops"
    THROUGHPUT = "throughput"
    READ_THROUGHPUT = "read_throughput"
    WRITE_THROUGHPUT = "write_throughput"
    AVG_IO_SIZE = "avg_io_size"
    LATENCY = "latency"
    ACTIVE_IOPS = "active_iops"
    QUEUE_LENGTH = "queue_length"
    BURST_BALANCE = "burst_balance"
    IO_BALANCE = "io_balance"
    BYTE_BALANCE = "byte_balance"
    IOPS_EXCEEDED = "iops_exceeded"
    THROUGHPUT_EXCEEDED = "throughput_exceeded"
    FREEABLE_MEMORY = "freeable_memory"


class Status(StrEnum):
    """What a fetch produced: data, nothing at all, or a failure (never confused)."""

    OK = "ok"
    NO_DATA = "no_data"
    ERROR = "error"


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, slots=True)
class ResourceRef:
    resource_type: ResourceType
    resource_id: str
    region: str


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
    availability_zone: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(ResourceType.VOLUME, self.volume_id, self.region)

    @property
    def active(self) -> bool:
        """CloudWatch publishes volume metrics only while a volume is attached and in use."""
        return self.state == "in-use" and self.attached_to is not None

    def describe(self) -> str:
        where = f" on {self.attached_to}" if self.attached_to else " detached"
        return f"{self.volume_type} {self.size_gib:,} GiB{where}"


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

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(ResourceType.INSTANCE, self.instance_id, self.region)

    @property
    def active(self) -> bool:
        return self.state == "running"

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
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(ResourceType.DB_INSTANCE, self.db_instance_id, self.region)

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
class NextBottleneck:
    """The limit that would cap the workload once the finding's own limit is lifted."""

    bottleneck: Bottleneck
    limit: float
    unit: Unit
    resource_id: str
    headroom: float | None
    """How many times today's rate the workload could grow before it hits this limit."""


@dataclass(frozen=True, slots=True)
class Remedy:
    """One way to lift a finding's limit, with the resource's monthly price after it."""

    action: str
    monthly_cost: float | None = None
    monthly_delta: float | None = None
    currency: str = "USD"

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Remedy:
        """A remedy back from its report form (alerts keep findings as report rows)."""
        return cls(
            row["action"],
            row.get("monthly_cost"),
            row.get("monthly_cost_delta"),
            row.get("currency", "USD"),
        )

    def text(self) -> str:
        """`Move to gp3 …: −$1.00/month`: the action and, where priced, what it costs."""
        cost = self.cost_text()
        return f"{self.action}: {cost}" if cost else self.action

    def cost_text(self) -> str:
        """`+$12.50/month`, `−$1.00/month`; empty where the change is not priced."""
        if self.monthly_delta is None:
            return ""
        sign = "+" if self.monthly_delta > 0 else "−" if self.monthly_delta < 0 else "±"
        symbol = "$" if self.currency == "USD" else f"{self.currency} "
        return f"{sign}{symbol}{abs(self.monthly_delta):,.2f}/month"


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: Severity
    resource: ResourceRef
    bottleneck: Bottleneck
    summary: str
    observed: float
    limit: float
    unit: Unit
    seconds_to_empty: float | None = None
    next_bottleneck: NextBottleneck | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    remedies: tuple[Remedy, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "evidence", _frozen(self.evidence))

    @property
    def key(self) -> tuple[str, str, str]:
        """Alerts are keyed by rule and resource."""
        return (self.rule, self.resource.region, self.resource.resource_id)
