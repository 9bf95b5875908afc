"""The EBS statistics page read field by field, from pages built here with `struct` at the
published offsets (not only with `pack`: a mistake `pack` and `parse` shared would pass a
round trip), and the published figures pinned."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer.collect import logpage
from analyzer.collect.logpage import (
    EBS_MAGIC,
    INSTANCE_STORE_MAGIC,
    Bin,
    Histogram,
    PageError,
    Stats,
    pack,
    parse,
)

WHERE = "vol-0abc (/dev/nvme1n1)"
COUNTERS = (
    100,  # read ops
    200,  # write ops
    1_024,  # read bytes
    2_048,  # write bytes
    5_000,  # read time, µs
    6_000,  # write time, µs
    10,  # volume IOPS exceeded, µs
    20,  # volume throughput exceeded, µs
    30,  # instance IOPS exceeded, µs
    2**64 - 1,  # instance throughput exceeded, µs: the largest a uint64 holds
    7,  # queue length
)
READ_BINS = ((0, 100, 5), (100, 200, 3), (200, 300, 2))
WRITE_BINS = ((0, 1_000, 9),)


def _page(
    magic: int = EBS_MAGIC,
    after_magic: int = 0,
    read_count: int = len(READ_BINS),
    write_count: int = len(WRITE_BINS),
) -> bytearray:
    """A page laid out as ebsnvme's `nvme_get_amzn_stats_logpage` reads it, byte by byte."""
    page = bytearray(4096)
    struct.pack_into("<II", page, 0, magic, after_magic)
    struct.pack_into("<11Q", page, 8, *COUNTERS)
    for offset, count, bins in ((512, read_count, READ_BINS), (2056, write_count, WRITE_BINS)):
        struct.pack_into("<Q", page, offset, count)
        for i, (lower, upper, n) in enumerate(bins):
            # ebsnvme's bin: uint64 lower, uint64 upper, uint32 count, uint32 reserved.
            struct.pack_into("<QQII", page, offset + 8 + 24 * i, lower, upper, n, 0)
    return page


def test_a_page_is_read_field_by_field() -> None:
    stats = parse(bytes(_page()), WHERE)
    assert stats.read_ops == 100
    assert stats.write_ops == 200
    assert stats.read_bytes == 1_024
    assert stats.write_bytes == 2_048
    assert stats.read_time_us == 5_000
    assert stats.write_time_us == 6_000
    assert stats.volume_iops_exceeded_us == 10
    assert stats.volume_throughput_exceeded_us == 20
    assert stats.instance_iops_exceeded_us == 30
    assert stats.instance_throughput_exceeded_us == 2**64 - 1
    assert stats.queue_length == 7
    assert stats.read_latency == Histogram((Bin(0, 100, 5), Bin(100, 200, 3), Bin(200, 300, 2)))
    assert stats.write_latency == Histogram((Bin(0, 1_000, 9),))


def test_bins_past_the_bin_count_are_not_read() -> None:
    page = _page(read_count=1, write_count=0)
    stats = parse(bytes(page))
    assert stats.read_latency.bins == (Bin(0, 100, 5),)
    assert stats.write_latency.bins == ()


def test_the_reserved_areas_are_not_read() -> None:
    """AWS may fill them; the counters around them stay where they were."""
    page = _page()
    page[96:512] = b"\xff" * 416
    page[3600:4096] = b"\xff" * 496
    assert parse(bytes(page)) == parse(bytes(_page()))


def test_pack_writes_the_page_a_struct_built_one_is() -> None:
    stats = parse(bytes(_page()))
    assert pack(stats) == bytes(_page())


@pytest.mark.parametrize(
    ("page", "message"),
    [
        (b"\0" * 100, f"{WHERE}: log page is 100 bytes, not 4,096 (a short read)"),
        (b"", f"{WHERE}: log page is 0 bytes, not 4,096 (a short read)"),
        (b"\0" * 4100, f"{WHERE}: log page is 4,100 bytes, not 4,096"),
        (
            bytes(_page(magic=INSTANCE_STORE_MAGIC)),
            f"{WHERE}: magic 0xEC2C0D7E is an instance store volume's, not EBS",
        ),
        (
            bytes(_page(magic=0x12345678)),
            f"{WHERE}: magic 0x12345678 is not an EBS statistics page",
        ),
        (
            bytes(_page(after_magic=3)),
            f"{WHERE}: the 4 bytes after the magic read 0x00000003, not zero: a layout of the "
            "statistics page this analyzer does not read",
        ),
        (
            bytes(_page(read_count=80)),
            f"{WHERE}: read latency histogram says 80 bins, at most 64 fit",
        ),
        (
            bytes(_page(write_count=65)),
            f"{WHERE}: write latency histogram says 65 bins, at most 64 fit",
        ),
    ],
    ids=["short", "empty", "long", "instance-store", "unknown-magic", "not-zero", "80", "65"],
)
def test_a_page_it_does_not_read_is_refused_saying_where_and_why(page: bytes, message: str) -> None:
    with pytest.raises(PageError) as raised:
        parse(page, WHERE)
    assert str(raised.value) == message
    assert "\n" not in message


def test_without_a_where_the_message_is_the_reason_alone() -> None:
    with pytest.raises(PageError, match=r"^log page is 100 bytes"):
        parse(b"\0" * 100)


def test_a_page_of_zeros_is_refused_not_read_as_an_idle_volume() -> None:
    with pytest.raises(PageError, match="magic 0x00000000 is not an EBS statistics page"):
        parse(bytes(4096))


def test_pack_makes_the_pages_parse_refuses() -> None:
    with pytest.raises(PageError, match="short read"):
        parse(pack(Stats(), size=100))
    with pytest.raises(PageError, match="instance store"):
        parse(pack(Stats(), magic=INSTANCE_STORE_MAGIC))
    too_long = Histogram(tuple(Bin(i, i + 1, 1) for i in range(65)))
    with pytest.raises(ValueError, match="65 bins"):
        pack(Stats(read_latency=too_long))


def test_the_published_figures() -> None:
    """Each as its source gives it (named beside it in analyzer/collect/logpage.py)."""
    assert logpage.PAGE_BYTES == 4096  # CW agent, ebsnvme
    assert logpage.LOG_ID == 0xD0  # ebsnvme, CW agent
    assert logpage.EBS_MAGIC == 0x3C23B510  # ebsnvme, CSI driver, CW agent
    assert logpage.INSTANCE_STORE_MAGIC == 0xEC2C0D7E  # CW agent
    assert logpage.MAX_BINS == 64
    # Offsets: 8 bytes of magic, 11 uint64 counters, 416 reserved, two histograms of a uint64
    # bin count and 64 bins of three uint64, 496 reserved to the end (ebsnvme's layout).
    assert logpage.COUNTERS_AT == 8
    assert logpage.RESERVED_AT == 8 + 11 * 8 == 96
    assert logpage.READ_HISTOGRAM_AT == 96 + 416 == 512
    assert logpage.HISTOGRAM_BYTES == 8 + 64 * 24 == 1544
    assert logpage.WRITE_HISTOGRAM_AT == 512 + 1544 == 2056
    assert logpage.TAIL_AT == 2056 + 1544 == 3600
    assert logpage.TAIL_AT + 496 == logpage.PAGE_BYTES


def test_the_fields_are_the_pages_in_order() -> None:
    assert logpage.COUNTER_FIELDS == (
        "read_ops",
        "write_ops",
        "read_bytes",
        "write_bytes",
        "read_time_us",
        "write_time_us",
        "volume_iops_exceeded_us",
        "volume_throughput_exceeded_us",
        "instance_iops_exceeded_us",
        "instance_throughput_exceeded_us",
        "queue_length",
    )


UINT64 = st.integers(min_value=0, max_value=2**64 - 1)
BINS = st.lists(st.builds(Bin, UINT64, UINT64, UINT64), max_size=64).map(tuple).map(Histogram)


@given(
    counters=st.tuples(*[UINT64] * 11),
    read_latency=BINS,
    write_latency=BINS,
)
def test_parse_reads_back_what_pack_wrote(
    counters: tuple[int, ...], read_latency: Histogram, write_latency: Histogram
) -> None:
    stats = Stats(*counters, read_latency=read_latency, write_latency=write_latency)
    page = pack(stats)
    assert len(page) == 4096
    assert parse(page) == stats
