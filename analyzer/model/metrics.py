"""The metric catalogue: each CloudWatch metric the analyzer reads, in one table.

A metric's namespace, the statistic to request, its CloudWatch unit, when a resource has it,
and what it feeds: either a measure as it is (a gauge such as BurstBalance), or a part that
normalization combines (the read and write sums of ops, bytes and time). The queries, the
normalization and the simulator all read this table; no other module spells a metric name.
Sources: DOMAIN.md, "CloudWatch" (the AWS/EBS, AWS/EC2 and AWS/RDS metric references).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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


class Namespace(StrEnum):
    EBS = "AWS/EBS"
    EC2 = "AWS/EC2"
    RDS = "AWS/RDS"

    @property
    def dimension(self) -> str:
        return _DIMENSIONS[self]


_DIMENSIONS = {
    Namespace.EBS: "VolumeId",
    Namespace.EC2: "InstanceId",
    Namespace.RDS: "DBInstanceIdentifier",
}


class When(StrEnum):
    """Which resources have a metric: asking for one a resource cannot have costs money."""

    ALWAYS = "always"
    BUCKET = "bucket"
    """Storage with a burst bucket (gp2, st1, sc1; RDS gp2)."""
    NITRO = "nitro"
    """Volumes on, and instances of, Nitro types (the "exceeded" checks)."""
    EBS_BURST = "ebs_burst"
    """Instance types (and RDS classes) whose EBS baseline is below their maximum."""


@dataclass(frozen=True, slots=True)
class Metric:
    namespace: Namespace
    name: str
    statistic: str
    unit: str
    """CloudWatch's unit for it."""
    feeds: Measure | Part
    when: When = When.ALWAYS


_E, _C, _R = Namespace.EBS, Namespace.EC2, Namespace.RDS
CATALOGUE: tuple[Metric, ...] = (
    Metric(_E, "VolumeReadOps", "Sum", "Count", Part.READ_OPS),
    Metric(_E, "VolumeWriteOps", "Sum", "Count", Part.WRITE_OPS),
    Metric(_E, "VolumeReadBytes", "Sum", "Bytes", Part.READ_BYTES),
    Metric(_E, "VolumeWriteBytes", "Sum", "Bytes", Part.WRITE_BYTES),
    Metric(_E, "VolumeTotalReadTime", "Sum", "Seconds", Part.READ_TIME),
    Metric(_E, "VolumeTotalWriteTime", "Sum", "Seconds", Part.WRITE_TIME),
    Metric(_E, "VolumeIdleTime", "Sum", "Seconds", Part.IDLE_TIME),
    Metric(_E, "VolumeQueueLength", "Average", "Count", Measure.QUEUE_LENGTH),
    Metric(_E, "BurstBalance", "Average", "Percent", Measure.BURST_BALANCE, When.BUCKET),
    Metric(_E, "VolumeIOPSExceededCheck", "Maximum", "None", Measure.IOPS_EXCEEDED, When.NITRO),
    Metric(
        _E,
        "VolumeThroughputExceededCheck",
        "Maximum",
        "None",
        Measure.THROUGHPUT_EXCEEDED,
        When.NITRO,
    ),
    Metric(_C, "EBSReadOps", "Sum", "Count", Part.READ_OPS),
    Metric(_C, "EBSWriteOps", "Sum", "Count", Part.WRITE_OPS),
    Metric(_C, "EBSReadBytes", "Sum", "Bytes", Part.READ_BYTES),
    Metric(_C, "EBSWriteBytes", "Sum", "Bytes", Part.WRITE_BYTES),
    Metric(_C, "EBSIOBalance%", "Average", "Percent", Measure.IO_BALANCE, When.EBS_BURST),
    Metric(_C, "EBSByteBalance%", "Average", "Percent", Measure.BYTE_BALANCE, When.EBS_BURST),
    Metric(
        _C, "InstanceEBSIOPSExceededCheck", "Maximum", "None", Measure.IOPS_EXCEEDED, When.NITRO
    ),
    Metric(
        _C,
        "InstanceEBSThroughputExceededCheck",
        "Maximum",
        "None",
        Measure.THROUGHPUT_EXCEEDED,
        When.NITRO,
    ),
    Metric(_R, "ReadIOPS", "Average", "Count/Second", Part.READ_RATE),
    Metric(_R, "WriteIOPS", "Average", "Count/Second", Part.WRITE_RATE),
    Metric(_R, "ReadThroughput", "Average", "Bytes/Second", Part.READ_BYTE_RATE),
    Metric(_R, "WriteThroughput", "Average", "Bytes/Second", Part.WRITE_BYTE_RATE),
    Metric(_R, "ReadLatency", "Average", "Seconds", Part.READ_LATENCY),
    Metric(_R, "WriteLatency", "Average", "Seconds", Part.WRITE_LATENCY),
    Metric(_R, "DiskQueueDepth", "Average", "Count", Measure.QUEUE_LENGTH),
    Metric(_R, "FreeableMemory", "Average", "Bytes", Measure.FREEABLE_MEMORY),
    Metric(_R, "BurstBalance", "Average", "Percent", Measure.BURST_BALANCE, When.BUCKET),
    Metric(_R, "EBSIOBalance%", "Average", "Percent", Measure.IO_BALANCE, When.EBS_BURST),
    Metric(_R, "EBSByteBalance%", "Average", "Percent", Measure.BYTE_BALANCE, When.EBS_BURST),
)
"""In the order they are requested."""

_BY_NAME = {(m.namespace, m.name): m for m in CATALOGUE}
_BY_FEED = {(m.namespace, m.feeds): m for m in CATALOGUE}


def of(namespace: Namespace) -> tuple[Metric, ...]:
    return tuple(m for m in CATALOGUE if m.namespace is namespace)


def named(namespace: Namespace | str, name: str) -> Metric:
    """The metric of this name; KeyError for one the analyzer does not read."""
    return _BY_NAME[(Namespace(namespace), name)]


def feeding(namespace: Namespace, feeds: Measure | Part) -> Metric | None:
    """The metric of a namespace that feeds this measure or part, if the namespace has one."""
    return _BY_FEED.get((namespace, feeds))


def gauges(namespace: Namespace) -> tuple[Metric, ...]:
    """The metrics taken as measures just as CloudWatch gives them."""
    return tuple(m for m in of(namespace) if isinstance(m.feeds, Measure))
