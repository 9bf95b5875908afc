"""The normalized signals a resource has."""

from __future__ import annotations

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
