"""What a resource reads like this cycle: its rates, the limits in force, its balance, the time
to empty and to full, and whether any of it can be trusted.

A reading is worked out once per resource per cycle, in the analysis stage
(`analyze/reading.py`). The JSON report, `/metrics`, the terminal report, Slack and the alert
book all read it and compute nothing, so no two of them can disagree about the same resource.
Its fields are named as the JSON report names them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from analyzer.model.kubernetes import Node
from analyzer.model.metrics import Measure
from analyzer.model.resources import Initialization, ResourceRef, StorageVolume


class Condition(StrEnum):
    """A reading's `status`: the fetch's outcome, and what the data says of the model."""

    OK = "ok"
    NO_DATA = "no_data"
    ERROR = "error"
    STALE = "stale"
    """Asked for, but CloudWatch had no recent data: its values are withheld."""
    IMPAIRED = "impaired"
    """AWS reports its I/O stalled (a volume's stalled-I/O check, an instance's attached-EBS
    status check)."""
    INITIALIZING = "initializing"
    """A volume still fetching its blocks from a snapshot."""
    MODEL_MISMATCH = "model_mismatch"
    """The data contradicts a modelled limit."""
    NODE_AGENT = "node_agent"
    """Its rates are read by a node agent (`node_coverage_url`), not by this daemon: only what
    CloudWatch alone has is judged here; the node's own /metrics has the rest."""

    @property
    def had_data(self) -> bool:
        """The cycle had its data, whatever it says."""
        return self in _HAD_DATA


_HAD_DATA = frozenset(
    {Condition.OK, Condition.MODEL_MISMATCH, Condition.IMPAIRED, Condition.INITIALIZING}
)


@dataclass(frozen=True, slots=True)
class VolumeDetails:
    volume_type: str
    size_gib: int
    multi_attach: bool
    attachments: tuple[str, ...]
    latency_seconds: float | None
    initialization: Initialization | None
    modified: str | None = None
    """Its modification of the last day, in words, and which limits hold: `modified gp2 50 GiB
    → gp3 … at 09:12 UTC (optimizing), in effect: …`; None where there was none."""


@dataclass(frozen=True, slots=True)
class InstanceDetails:
    instance_type: str
    volume_ids: tuple[str, ...]
    detailed_monitoring: bool
    node: Node | None = None
    """The node group, NodePool or Auto Scaling group that launched it, where it is a
    cluster's node."""


@dataclass(frozen=True, slots=True)
class DbDetails:
    engine: str
    instance_class: str
    storage_type: str
    allocated_gib: int
    stripes: int
    additional_volumes: tuple[StorageVolume, ...]
    storage_iops_limit: float | None
    storage_throughput_limit_bytes_per_second: float | None
    class_iops_limit: float | None
    class_throughput_limit_bytes_per_second: float | None
    class_burst_balance_percent: float | None
    dedicated_log_volume: bool
    log_volume_iops: float | None
    log_volume_iops_limit: float | None
    freeable_memory_bytes: float | None
    memory_bytes: float | None
    latency_seconds: float | None


Details = VolumeDetails | InstanceDetails | DbDetails


@dataclass(frozen=True, slots=True)
class Reading:
    ref: ResourceRef
    name: str | None
    attached_to: str | None
    """A volume's instance (its first, if Multi-Attach); None for other resources."""
    iops: float | None
    throughput_bytes_per_second: float | None
    iops_limit: float | None
    """The lowest IOPS limit in force: an RDS instance's storage or its class, whichever is
    lower."""
    throughput_limit_bytes_per_second: float | None
    burst_balance_percent: float | None
    """A volume's (or an RDS instance's storage's) BurstBalance; an instance's lower EBS
    balance."""
    seconds_to_empty: float | None
    """From the resource's outlook: the bucket that empties first."""
    seconds_to_full: float | None
    """Until every refilling bucket is full again at the present rate."""
    avg_io_size_bytes: float | None
    status: Condition
    data_age_seconds: float | None
    iops_utilization: float | None
    throughput_utilization: float | None
    state: str
    """The resource's own state, as AWS describes it (in-use, running, available…)."""
    details: Details
    limits_approximate: bool = False
    model_mismatch: tuple[str, ...] = ()
    error: str | None = None
    notes: tuple[str, ...] = ()
    balances: Mapping[Measure, float] = field(default_factory=dict)
    """Each bucket's balance at the data end, percent: its reading, or while a volume idles
    (no reading published, its rates still are) the most it can have refilled to. What an
    alert held until a bucket refills weighs; empty where nothing recent was read."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "balances", MappingProxyType(dict(self.balances)))
