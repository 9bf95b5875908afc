"""The EBS NVMe detailed performance statistics: log page 0xD0, read field by field.

On a Nitro instance every EBS volume answers the NVMe admin command "Get Log Page" for log
0xD0 with cumulative counters since attachment: operations, bytes, time spent, the time the
volume's and the instance's IOPS and throughput limits held I/O back, the queue length now,
and a read and a write latency histogram (Amazon EBS User Guide, "Amazon EBS detailed
performance statistics",
https://docs.aws.amazon.com/ebs/latest/userguide/nvme-detailed-performance-stats.html).

AWS publishes the counters' meanings, not the bytes; the layout below is the one its own
three readers agree on, and each figure names them:
- ebsnvme:    amazonlinux/amazon-ec2-utils `ebsnvme`, `nvme_get_amzn_stats_logpage`
- CSI driver: kubernetes-sigs/aws-ebs-csi-driver `pkg/metrics/nvme.go`, `EBSMetrics`
- CW agent:   aws/amazon-cloudwatch-agent `receiver/awsnvmereceiver/internal/ebs/scraper.go`

Everything is little-endian (`binary.LittleEndian` in the CSI driver and the CW agent; ctypes
on x86-64 and arm64 in ebsnvme). There is no version field: ebsnvme reads a uint32 magic and
four reserved bytes, the CSI driver and the CW agent read one uint64 and compare it with the
magic, so a page whose four bytes after the magic are not zero is refused by both; it is
refused here too, rather than read as a layout nobody has published.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, fields

PAGE_BYTES = 4096
"""The page's length: ebsnvme's `sizeof(nvme_get_amzn_stats_logpage)`, the CW agent's
`make([]byte, 4096) // 4096 bytes is the length of the log page`."""
LOG_ID = 0xD0
"""ebsnvme `AMZN_NVME_STATS_LOGPAGE_ID`; CW agent `internal/nvme/constants.go` `logID`."""
EBS_MAGIC = 0x3C23B510
"""ebsnvme `AMZN_NVME_STATS_MAGIC`; CSI driver `parseLogPage`; CW agent `ebsMagic`."""
INSTANCE_STORE_MAGIC = 0xEC2C0D7E
"""What an instance store volume's page starts with (CW agent
`internal/instancestore/scraper.go` `instanceStoreMagic`, a uint32): a different layout."""
MAX_BINS = 64
"""Bins a histogram has room for: `bins[64]` in all three readers."""

# Offsets, in bytes from the start of the page.
MAGIC_AT = 0  # uint32 magic, then uint32 reserved (ebsnvme `_magic`, `_reserved0 c_char*4`)
COUNTERS_AT = 8  # 11 uint64 counters, in Stats' order (all three readers)
RESERVED_AT = 96  # 416 reserved bytes (ebsnvme `_reserved1`, CSI `ReservedArea [416]byte`)
READ_HISTOGRAM_AT = 512  # ebsnvme `read_io_latency_histogram`; CSI `ReadLatency`
WRITE_HISTOGRAM_AT = 2056  # ebsnvme `write_io_latency_histogram`; CSI `WriteLatency`
TAIL_AT = 3600  # 496 reserved bytes to the end (ebsnvme `_reserved2 c_char*496`)

_HEAD = struct.Struct("<II")  # magic, reserved
_COUNTERS = struct.Struct("<11Q")
_BIN_COUNT = struct.Struct("<Q")  # `num_bins c_uint64` (ebsnvme), `BinCount uint64` (CSI)
# A bin is lower, upper, count as uint64 (CSI driver, CW agent). ebsnvme reads the count as a
# uint32 and four reserved bytes: the same value, little-endian, while a count fits 32 bits.
_BIN = struct.Struct("<3Q")
HISTOGRAM_BYTES = _BIN_COUNT.size + MAX_BINS * _BIN.size  # 1,544


@dataclass(frozen=True, slots=True)
class Bin:
    """Operations that completed in [lower_us, upper_us) microseconds, since attachment."""

    lower_us: int
    upper_us: int
    count: int


@dataclass(frozen=True, slots=True)
class Histogram:
    """A latency histogram: only the bins the page says are in use, in the page's order."""

    bins: tuple[Bin, ...] = ()


@dataclass(frozen=True, slots=True)
class Stats:
    """One volume's page: counters cumulative since attachment (times in microseconds),
    except `queue_length`, a point-in-time gauge. The counter fields are in the page's order."""

    read_ops: int = 0
    write_ops: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    read_time_us: int = 0
    write_time_us: int = 0
    volume_iops_exceeded_us: int = 0
    volume_throughput_exceeded_us: int = 0
    instance_iops_exceeded_us: int = 0
    instance_throughput_exceeded_us: int = 0
    queue_length: int = 0
    read_latency: Histogram = Histogram()
    write_latency: Histogram = Histogram()


COUNTER_FIELDS = tuple(f.name for f in fields(Stats) if f.type in (int, "int"))
"""The counters' names, in the page's order (the eleven before the histograms)."""


class PageError(ValueError):
    """A page this analyzer does not read; the message says which device and why."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(f"{where}: {why}" if where else why)


def parse(page: bytes, where: str = "") -> Stats:
    """The statistics on an EBS volume's page 0xD0, `where` naming the device in errors
    (`vol-0abc (/dev/nvme1n1)`). Refuses a page of another length, another magic or with a
    histogram too long to fit, rather than read counters at the wrong offsets."""
    if len(page) != PAGE_BYTES:
        short = " (a short read)" if len(page) < PAGE_BYTES else ""
        raise PageError(where, f"log page is {len(page):,} bytes, not {PAGE_BYTES:,}{short}")
    magic, reserved = _HEAD.unpack_from(page, MAGIC_AT)
    if magic == INSTANCE_STORE_MAGIC:
        raise PageError(where, f"magic 0x{magic:08X} is an instance store volume's, not EBS")
    if magic != EBS_MAGIC:
        raise PageError(where, f"magic 0x{magic:08X} is not an EBS statistics page")
    if reserved:
        raise PageError(
            where,
            f"the 4 bytes after the magic read 0x{reserved:08X}, not zero: a layout of the "
            "statistics page this analyzer does not read",
        )
    (
        read_ops,
        write_ops,
        read_bytes,
        write_bytes,
        read_time_us,
        write_time_us,
        volume_iops_exceeded_us,
        volume_throughput_exceeded_us,
        instance_iops_exceeded_us,
        instance_throughput_exceeded_us,
        queue_length,
    ) = _COUNTERS.unpack_from(page, COUNTERS_AT)
    return Stats(
        read_ops=read_ops,
        write_ops=write_ops,
        read_bytes=read_bytes,
        write_bytes=write_bytes,
        read_time_us=read_time_us,
        write_time_us=write_time_us,
        volume_iops_exceeded_us=volume_iops_exceeded_us,
        volume_throughput_exceeded_us=volume_throughput_exceeded_us,
        instance_iops_exceeded_us=instance_iops_exceeded_us,
        instance_throughput_exceeded_us=instance_throughput_exceeded_us,
        queue_length=queue_length,
        read_latency=_histogram(page, READ_HISTOGRAM_AT, "read", where),
        write_latency=_histogram(page, WRITE_HISTOGRAM_AT, "write", where),
    )


def _histogram(page: bytes, offset: int, name: str, where: str) -> Histogram:
    (count,) = _BIN_COUNT.unpack_from(page, offset)
    if count > MAX_BINS:
        raise PageError(
            where, f"{name} latency histogram says {count} bins, at most {MAX_BINS} fit"
        )
    first = offset + _BIN_COUNT.size
    return Histogram(
        tuple(Bin(*_BIN.unpack_from(page, first + i * _BIN.size)) for i in range(count))
    )


def pack(stats: Stats, *, magic: int = EBS_MAGIC, size: int = PAGE_BYTES) -> bytes:
    """The page `parse` reads `stats` from, reserved bytes zero: for tests, captures and a
    simulated node. `magic` and `size` make the pages it refuses (another volume's magic, a
    short read: the page cut at `size`, or padded with zeros past 4,096)."""
    page = bytearray(max(size, PAGE_BYTES))
    _HEAD.pack_into(page, MAGIC_AT, magic, 0)
    _COUNTERS.pack_into(page, COUNTERS_AT, *(getattr(stats, name) for name in COUNTER_FIELDS))
    for offset, histogram in (
        (READ_HISTOGRAM_AT, stats.read_latency),
        (WRITE_HISTOGRAM_AT, stats.write_latency),
    ):
        if len(histogram.bins) > MAX_BINS:
            raise ValueError(f"a histogram of {len(histogram.bins)} bins: at most {MAX_BINS} fit")
        _BIN_COUNT.pack_into(page, offset, len(histogram.bins))
        first = offset + _BIN_COUNT.size
        for i, b in enumerate(histogram.bins):
            _BIN.pack_into(page, first + i * _BIN.size, b.lower_us, b.upper_us, b.count)
    return bytes(page[:size])
