"""The metric catalogue: each CloudWatch metric the analyzer reads, in one table.

A metric's namespace, the statistic to request, its CloudWatch unit, when a resource has it,
and what it feeds: either a measure as it is (a gauge such as BurstBalance), or a part that
normalization combines (the read and write sums of ops, bytes and time), and the dimensions AWS
publishes it with. The queries, the normalization and the simulator all read this table; no
other module spells a metric name.
Sources: DOMAIN.md, "CloudWatch" (the AWS/EBS, AWS/EC2 and AWS/RDS metric references).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache


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
    IOPS_AT_CAP = "iops_at_cap"
    """Seconds of each period a volume's IOPS demand was above its limit (the CloudWatch
    agent's exceeded time, where it publishes it): `IOPS_EXCEEDED` says only whether."""
    THROUGHPUT_AT_CAP = "throughput_at_cap"
    FREEABLE_MEMORY = "freeable_memory"
    STALLED_IO = "stalled_io"
    """1 for a minute whose I/O AWS found stalled (a volume's VolumeStalledIOCheck)."""
    ATTACHED_EBS_FAILED = "attached_ebs_failed"
    """1 for a minute whose attached-EBS status check failed (an instance)."""
    LOG_IOPS = "log_iops"
    """An RDS instance's Dedicated Log Volume: its own I/O, apart from its storage's."""
    LOG_THROUGHPUT = "log_throughput"
    LOG_LATENCY = "log_latency"
    LOG_QUEUE_LENGTH = "log_queue_length"


class Part(StrEnum):
    """A metric that normalization combines with others into measures."""

    READ_OPS = "read_ops"
    """Sum per period."""
    WRITE_OPS = "write_ops"
    READ_BYTES = "read_bytes"
    WRITE_BYTES = "write_bytes"
    READ_TIME = "read_time"
    """Seconds spent on reads, summed per period."""
    WRITE_TIME = "write_time"
    IDLE_TIME = "idle_time"
    """Seconds of the period with no I/O."""
    READ_RATE = "read_rate"
    """Already per second (AWS/RDS)."""
    WRITE_RATE = "write_rate"
    READ_BYTE_RATE = "read_byte_rate"
    WRITE_BYTE_RATE = "write_byte_rate"
    READ_LATENCY = "read_latency"
    """Seconds per operation (AWS/RDS)."""
    WRITE_LATENCY = "write_latency"
    LOG_READ_RATE = "log_read_rate"
    """The same, of an RDS instance's Dedicated Log Volume."""
    LOG_WRITE_RATE = "log_write_rate"
    LOG_READ_BYTE_RATE = "log_read_byte_rate"
    LOG_WRITE_BYTE_RATE = "log_write_byte_rate"
    LOG_READ_LATENCY = "log_read_latency"
    LOG_WRITE_LATENCY = "log_write_latency"


class Namespace(StrEnum):
    EBS = "AWS/EBS"
    EC2 = "AWS/EC2"
    RDS = "AWS/RDS"
    AGENT = "CWAgent"
    """The CloudWatch agent's default namespace: a volume's NVMe statistics where the agent
    publishes them (`diskio_ebs_*`); a user may have configured another."""

    @property
    def dimension(self) -> Dimension:
        """The dimension each of its resources is named by."""
        return _DIMENSIONS[self]


class Dimension(StrEnum):
    VOLUME = "VolumeId"
    INSTANCE = "InstanceId"
    DB_INSTANCE = "DBInstanceIdentifier"


_DIMENSIONS = {
    Namespace.EBS: Dimension.VOLUME,
    Namespace.AGENT: Dimension.VOLUME,
    Namespace.EC2: Dimension.INSTANCE,
    Namespace.RDS: Dimension.DB_INSTANCE,
}

VOLUME_ON_INSTANCE = (Dimension.INSTANCE, Dimension.VOLUME)
"""The pair AWS publishes the per-attachment volume metrics with, and with nothing else: the
exceeded checks and the stalled-I/O check (Amazon CloudWatch User Guide, "Supported metrics
for resource tags for telemetry", AWS/EBS: each entry there is one combination published
together). CloudWatch matches a query's dimensions exactly, so the same metric asked with
`VolumeId` alone answers an empty series."""


class Tier(StrEnum):
    """How often, and how closely, the daemon watches a resource (see `analyze/tiers.py`).

    Each tier asks for its own metrics and those of the tiers below it."""

    IDLE = "idle"
    """Quiet: far from every limit, not draining, its bucket full. Watched for a change."""
    ACTIVE = "active"
    """I/O that matters, but far from every limit and no bucket emptying soon."""
    HOT = "hot"
    """An alert pending or firing, a bucket emptying soon or low, a rate near a limit."""

    @property
    def rank(self) -> int:
        return _TIER_RANK[self]


_TIER_RANK = {Tier.IDLE: 0, Tier.ACTIVE: 1, Tier.HOT: 2}


class When(StrEnum):
    """Which resources have a metric: asking for one a resource cannot have costs money."""

    ALWAYS = "always"
    BUCKET = "bucket"
    """Storage with a burst bucket (gp2, st1, sc1; RDS gp2)."""
    NITRO = "nitro"
    """Volumes on, and instances of, Nitro types (the "exceeded" checks); not Multi-Attach
    or magnetic (standard) volumes, for which AWS does not publish them."""
    UNCHECKED = "unchecked"
    """Volumes without the exceeded checks (on instances known not to be Nitro, Multi-Attach
    or magnetic): the busy time shows a cap reached for part of each minute."""
    EBS_BURST = "ebs_burst"
    """Instance types (and RDS classes) whose EBS baseline is below their maximum."""
    ATTACHED_NITRO = "attached_nitro"
    """Volumes attached to one Nitro instance, of any type (the stalled-I/O check). Not
    confirmed: the check's launch announcement (November 2023) says every volume attached to
    an instance; the EBS User Guide lists it beside the Nitro checks. Asked where both agree."""
    LOG_VOLUME = "log_volume"
    """RDS instances with a Dedicated Log Volume."""
    VIRTUALIZED_NITRO = "virtualized_nitro"
    """Instances of Nitro types that are not bare metal: AWS publishes the instance's EBS
    exceeded checks for these only."""


@dataclass(frozen=True, slots=True)
class Metric:
    namespace: Namespace
    name: str
    statistic: str
    unit: str
    """CloudWatch's unit for it."""
    feeds: Measure | Part
    when: When = When.ALWAYS
    tier: Tier | None = Tier.HOT
    """The lowest tier at which the daemon asks for it; None: only a full read (`once`),
    since no rule and no exported series needs it."""
    dimensions: tuple[Dimension, ...] = ()
    """The dimension set AWS publishes it with, where it is not the namespace's own one."""
    period_s: int | None = None
    """The period AWS publishes it at whatever the resource's monitoring (status checks: one
    minute); None: the resource's own."""
    scale: float = 1.0
    """Multiplies each value into the unit the analysis reads (the agent's microseconds into
    seconds)."""
    instead_of: str | None = None
    """The AWS/EBS metric it is asked in place of, where a volume has it (the agent's)."""

    @property
    def published_with(self) -> tuple[Dimension, ...]:
        """The names of the dimensions AWS publishes it with, all of them."""
        return self.dimensions or (self.namespace.dimension,)


_E, _C, _R = Namespace.EBS, Namespace.EC2, Namespace.RDS
_IDLE, _ACTIVE, _HOT, _FULL = Tier.IDLE, Tier.ACTIVE, Tier.HOT, None
_BUCKET, _NITRO, _BURST = When.BUCKET, When.NITRO, When.EBS_BURST
_VIRT, _ATTACHED, _LOG = When.VIRTUALIZED_NITRO, When.ATTACHED_NITRO, When.LOG_VOLUME
_STALLED = Measure.STALLED_IO
_EXCEEDED_IOPS, _EXCEEDED_BPS = Measure.IOPS_EXCEEDED, Measure.THROUGHPUT_EXCEEDED
_PAIR = VOLUME_ON_INSTANCE
_A, _US = Namespace.AGENT, 1e-6
CATALOGUE: tuple[Metric, ...] = (
    # A volume: its operations tell idle from busy; bytes, the bucket and the exceeded
    # checks are read once it matters; latency and queue only in a full read.
    Metric(_E, "VolumeReadOps", "Sum", "Count", Part.READ_OPS, tier=_IDLE),
    Metric(_E, "VolumeWriteOps", "Sum", "Count", Part.WRITE_OPS, tier=_IDLE),
    Metric(_E, "VolumeReadBytes", "Sum", "Bytes", Part.READ_BYTES, tier=_ACTIVE),
    Metric(_E, "VolumeWriteBytes", "Sum", "Bytes", Part.WRITE_BYTES, tier=_ACTIVE),
    Metric(_E, "VolumeTotalReadTime", "Sum", "Seconds", Part.READ_TIME, tier=_FULL),
    Metric(_E, "VolumeTotalWriteTime", "Sum", "Seconds", Part.WRITE_TIME, tier=_FULL),
    Metric(_E, "VolumeIdleTime", "Sum", "Seconds", Part.IDLE_TIME, When.UNCHECKED, _ACTIVE),
    Metric(_E, "VolumeQueueLength", "Average", "Count", Measure.QUEUE_LENGTH, tier=_FULL),
    Metric(_E, "BurstBalance", "Average", "Percent", Measure.BURST_BALANCE, _BUCKET, _ACTIVE),
    Metric(_E, "VolumeIOPSExceededCheck", "Maximum", "None", _EXCEEDED_IOPS, _NITRO, _HOT, _PAIR),
    Metric(
        _E, "VolumeThroughputExceededCheck", "Maximum", "None", _EXCEEDED_BPS, _NITRO, _HOT, _PAIR
    ),
    # Impairment is read where something is about to be said of a resource (the hot tier):
    # it keeps cap, credit and sizing findings off a volume whose I/O stopped.
    Metric(_E, "VolumeStalledIOCheck", "Maximum", "None", _STALLED, _ATTACHED, _HOT, _PAIR),
    # An instance: idle, its rates are the sum of its volumes'; its own metrics once busy.
    Metric(_C, "EBSReadOps", "Sum", "Count", Part.READ_OPS, tier=_ACTIVE),
    Metric(_C, "EBSWriteOps", "Sum", "Count", Part.WRITE_OPS, tier=_ACTIVE),
    Metric(_C, "EBSReadBytes", "Sum", "Bytes", Part.READ_BYTES, tier=_ACTIVE),
    Metric(_C, "EBSWriteBytes", "Sum", "Bytes", Part.WRITE_BYTES, tier=_ACTIVE),
    Metric(_C, "EBSIOBalance%", "Average", "Percent", Measure.IO_BALANCE, _BURST, _ACTIVE),
    Metric(_C, "EBSByteBalance%", "Average", "Percent", Measure.BYTE_BALANCE, _BURST, _ACTIVE),
    Metric(_C, "InstanceEBSIOPSExceededCheck", "Maximum", "None", _EXCEEDED_IOPS, _VIRT, _HOT),
    Metric(_C, "InstanceEBSThroughputExceededCheck", "Maximum", "None", _EXCEEDED_BPS, _VIRT, _HOT),
    # Status checks: one-minute whatever the monitoring, and free to publish (Amazon EC2 User
    # Guide, "Status checks for Amazon EC2 instances", attached EBS status checks: Nitro).
    Metric(
        _C,
        "StatusCheckFailed_AttachedEBS",
        "Maximum",
        "Count",
        Measure.ATTACHED_EBS_FAILED,
        _NITRO,
        _HOT,
        period_s=60,
    ),
    # An RDS instance: its rates are per second already.
    Metric(_R, "ReadIOPS", "Average", "Count/Second", Part.READ_RATE, tier=_IDLE),
    Metric(_R, "WriteIOPS", "Average", "Count/Second", Part.WRITE_RATE, tier=_IDLE),
    Metric(_R, "ReadThroughput", "Average", "Bytes/Second", Part.READ_BYTE_RATE, tier=_ACTIVE),
    Metric(_R, "WriteThroughput", "Average", "Bytes/Second", Part.WRITE_BYTE_RATE, tier=_ACTIVE),
    Metric(_R, "ReadLatency", "Average", "Seconds", Part.READ_LATENCY, tier=_FULL),
    Metric(_R, "WriteLatency", "Average", "Seconds", Part.WRITE_LATENCY, tier=_FULL),
    Metric(_R, "DiskQueueDepth", "Average", "Count", Measure.QUEUE_LENGTH, tier=_FULL),
    Metric(_R, "FreeableMemory", "Average", "Bytes", Measure.FREEABLE_MEMORY, tier=_ACTIVE),
    Metric(_R, "BurstBalance", "Average", "Percent", Measure.BURST_BALANCE, _BUCKET, _ACTIVE),
    Metric(_R, "EBSIOBalance%", "Average", "Percent", Measure.IO_BALANCE, _BURST, _ACTIVE),
    Metric(_R, "EBSByteBalance%", "Average", "Percent", Measure.BYTE_BALANCE, _BURST, _ACTIVE),
    # Its Dedicated Log Volume, where it has one (Amazon RDS User Guide, "Amazon CloudWatch
    # instance-level metrics for Amazon RDS": the *LogVolume metrics).
    Metric(_R, "ReadIOPSLogVolume", "Average", "Count/Second", Part.LOG_READ_RATE, _LOG, _ACTIVE),
    Metric(_R, "WriteIOPSLogVolume", "Average", "Count/Second", Part.LOG_WRITE_RATE, _LOG, _ACTIVE),
    Metric(
        _R,
        "ReadThroughputLogVolume",
        "Average",
        "Bytes/Second",
        Part.LOG_READ_BYTE_RATE,
        _LOG,
        _ACTIVE,
    ),
    Metric(
        _R,
        "WriteThroughputLogVolume",
        "Average",
        "Bytes/Second",
        Part.LOG_WRITE_BYTE_RATE,
        _LOG,
        _ACTIVE,
    ),
    Metric(_R, "ReadLatencyLogVolume", "Average", "Seconds", Part.LOG_READ_LATENCY, _LOG, _FULL),
    Metric(_R, "WriteLatencyLogVolume", "Average", "Seconds", Part.LOG_WRITE_LATENCY, _LOG, _FULL),
    Metric(
        _R, "DiskQueueDepthLogVolume", "Average", "Count", Measure.LOG_QUEUE_LENGTH, _LOG, _FULL
    ),
    # The CloudWatch agent's EBS NVMe metrics, asked in place of the AWS/EBS metric each
    # stands for where the agent publishes them for a volume (see `AGENT`).
    *(
        Metric(
            _A,
            name,
            statistic,
            "None",
            feeds,
            tier=tier,
            dimensions=_PAIR,
            scale=scale,
            instead_of=instead,
        )
        for name, statistic, feeds, tier, scale, instead in (
            ("diskio_ebs_total_read_ops", "Sum", Part.READ_OPS, _IDLE, 1.0, "VolumeReadOps"),
            ("diskio_ebs_total_write_ops", "Sum", Part.WRITE_OPS, _IDLE, 1.0, "VolumeWriteOps"),
            (
                "diskio_ebs_total_read_bytes",
                "Sum",
                Part.READ_BYTES,
                _ACTIVE,
                1.0,
                "VolumeReadBytes",
            ),
            (
                "diskio_ebs_total_write_bytes",
                "Sum",
                Part.WRITE_BYTES,
                _ACTIVE,
                1.0,
                "VolumeWriteBytes",
            ),
            (
                "diskio_ebs_total_read_time",
                "Sum",
                Part.READ_TIME,
                _FULL,
                _US,
                "VolumeTotalReadTime",
            ),
            (
                "diskio_ebs_total_write_time",
                "Sum",
                Part.WRITE_TIME,
                _FULL,
                _US,
                "VolumeTotalWriteTime",
            ),
            (
                "diskio_ebs_volume_queue_length",
                "Average",
                Measure.QUEUE_LENGTH,
                _FULL,
                1.0,
                "VolumeQueueLength",
            ),
            (
                "diskio_ebs_volume_performance_exceeded_iops",
                "Sum",
                Measure.IOPS_AT_CAP,
                _HOT,
                _US,
                "VolumeIOPSExceededCheck",
            ),
            (
                "diskio_ebs_volume_performance_exceeded_tp",
                "Sum",
                Measure.THROUGHPUT_AT_CAP,
                _HOT,
                _US,
                "VolumeThroughputExceededCheck",
            ),
        )
    ),
)
"""In the order they are requested."""

AGENT_SOURCE = (
    'Amazon CloudWatch User Guide, "Collect Amazon EBS NVMe driver metrics"; the agent\'s '
    "awsnvmereceiver and its cumulativetodelta processor"
)
"""Where the agent metrics above are described: the same counters as the volume's NVMe log
page (times in microseconds), published as their growth over each collection interval (so the
Sum over a period is the period's), unit None, dimension VolumeId plus whatever the agent's
`append_dimensions` adds (InstanceId in AWS's examples, the set the catalogue gives them and the
simulator publishes). Only what ListMetrics shows the agent publishing for a volume is asked,
with the exact dimension set it shows."""

BEYOND_NODE: frozenset[tuple[Namespace, str]] = frozenset(
    {
        (Namespace.EBS, "VolumeStalledIOCheck"),
        (Namespace.EC2, "StatusCheckFailed_AttachedEBS"),
        (Namespace.EC2, "EBSIOBalance%"),
        (Namespace.EC2, "EBSByteBalance%"),
    }
)
"""What a node agent cannot read from its volumes' NVMe statistics, so CloudWatch is still
asked for it where a node covers a volume (or every volume of an instance): AWS's own checks,
and the instance's EBS buckets (a node models a volume's BurstBalance, not its instance's)."""

_BY_NAME = {(m.namespace, m.name): m for m in CATALOGUE}
_BY_FEED = {(m.namespace, m.feeds): m for m in CATALOGUE}

BALANCES: frozenset[str] = frozenset(
    m.name
    for m in CATALOGUE
    if m.feeds in (Measure.BURST_BALANCE, Measure.IO_BALANCE, Measure.BYTE_BALANCE)
)
"""The metrics of a bucket's balance. AWS publishes none while a volume is idle, and its last
reading, however old, is what the bucket's refill since is worked out from
(`ResourceState.balance_at_most`): it is kept past every window that drops older points."""


@cache
def of(namespace: Namespace, tier: Tier | None = None) -> tuple[Metric, ...]:
    """The metrics of a namespace; with a tier, only those the daemon asks for at it."""
    return tuple(
        m
        for m in CATALOGUE
        if m.namespace is namespace
        and (tier is None or (m.tier is not None and m.tier.rank <= tier.rank))
    )


@cache
def agent_instead(name: str) -> Metric | None:
    """The agent's metric asked in place of this AWS/EBS metric, if it has one."""
    return next((m for m in of(Namespace.AGENT) if m.instead_of == name), None)


@cache
def beyond_node(namespace: Namespace) -> tuple[Metric, ...]:
    """The metrics of a namespace only CloudWatch has (`BEYOND_NODE`), in catalogue order."""
    return tuple(m for m in of(namespace) if (namespace, m.name) in BEYOND_NODE)


def dimensions(
    metric: Metric, resource_id: str, attached_to: str | None = None
) -> tuple[tuple[str, str], ...] | None:
    """The (name, value) pairs this metric of this resource is published with: `attached_to`
    is a volume's instance, for the metrics published per attachment. None where AWS publishes
    the metric for no such resource (a per-attachment metric of a volume not attached to one
    instance). A new tuple each call: `collect/queries.py` shares one among the metrics of a
    resource published with the same names."""
    values = {metric.namespace.dimension: resource_id}
    if attached_to is not None and metric.namespace in (Namespace.EBS, Namespace.AGENT):
        values[Dimension.INSTANCE] = attached_to
    if any(name not in values for name in metric.published_with):
        return None
    return tuple((name.value, values[name]) for name in metric.published_with)


def named(namespace: Namespace | str, name: str) -> Metric:
    """The metric of this name; KeyError for one the analyzer does not read."""
    return _BY_NAME[(Namespace(namespace), name)]


def feeding(namespace: Namespace, feeds: Measure | Part) -> Metric | None:
    """The metric of a namespace that feeds this measure or part, if the namespace has one."""
    return _BY_FEED.get((namespace, feeds))


@cache
def gauges(namespace: Namespace) -> tuple[Metric, ...]:
    """The metrics taken as measures just as CloudWatch gives them."""
    return tuple(m for m in of(namespace) if isinstance(m.feeds, Measure))
