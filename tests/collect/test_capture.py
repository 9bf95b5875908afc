"""A node's capture: JSON lines of log pages (EBS NVMe statistics, Amazon EBS User Guide, "Amazon
EBS detailed performance statistics"), failed reads, CloudWatch's BurstBalance readings and the
node's inventory, written as read and read back whole, or refused saying where and why."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import pytest

from analyzer.collect.capture import Capture, Read, Reading, Writer, read, volume_id
from analyzer.collect.logpage import INSTANCE_STORE_MAGIC, Bin, Histogram, Stats, pack
from analyzer.errors import ConfigError, UnreadableError
from analyzer.model.resources import Instance, InstanceType, Inventory, Volume

T = 1_764_150_000.0
M5 = InstanceType("m5.large", 3_600, 18_750, 81.25e6, 593.75e6, nitro=True)
INVENTORY = Inventory(
    "us-east-1",
    (Volume("vol-0abc", "us-east-1", "gp2", 50, "in-use", attached_to="i-1"),),
    (Instance("i-1", "us-east-1", "m5.large", "running", True, ("vol-0abc",), M5),),
)
STATS = Stats(
    read_ops=10,
    write_ops=20,
    read_bytes=40_960,
    write_bytes=81_920,
    queue_length=3,
    read_latency=Histogram((Bin(0, 100, 7), Bin(100, 200, 3))),
    write_latency=Histogram((Bin(0, 1_000, 20),)),
)


def _written(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _page(stats: Stats = STATS, **kwargs: int) -> str:
    return base64.b64encode(pack(stats, **kwargs)).decode("ascii")


def test_what_the_writer_writes_reads_back_as_it_was(tmp_path: Path) -> None:
    out = io.StringIO()
    writer = Writer(out)
    writer.inventory(T, INVENTORY)
    writer.page(T + 5, "vol0abc", pack(STATS))
    writer.error(T + 10, "vol-0abc", "nvme1n1: Permission denied")
    writer.balance(T + 30, "vol-0abc", 73.5)
    writer.page(T + 15, "vol-0abc", pack(Stats(read_ops=11)))
    path = tmp_path / "capture.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    capture = read(path)
    assert capture.inventory == INVENTORY
    assert capture.reads == [
        Read(T + 5, "vol-0abc", STATS),
        Read(T + 10, "vol-0abc", None, "nvme1n1: Permission denied"),
        Read(T + 15, "vol-0abc", Stats(read_ops=11)),
    ]
    assert capture.balances == [Reading(T + 30, "vol-0abc", 73.5)]
    assert capture.end == T + 15
    assert capture.volume_ids() == ["vol-0abc"]


def test_the_writer_writes_one_whole_line_a_call_and_flushes_it() -> None:
    """A node stopped mid-capture leaves every line it wrote whole."""

    class Flushes(io.StringIO):
        flushed: list[str]

        def flush(self) -> None:
            self.flushed.append(self.getvalue())

    out = Flushes()
    out.flushed = []
    writer = Writer(out)
    writer.page(T, "vol-0abc", pack(STATS))
    writer.balance(T + 1, "vol-0abc", 50)
    assert len(out.flushed) == 2
    assert all(text.endswith("\n") for text in out.flushed)
    assert [json.loads(line) for line in out.getvalue().splitlines()][1] == {
        "t": T + 1,
        "serial": "vol-0abc",
        "burst_balance": 50,
    }


@pytest.mark.parametrize(
    ("serial", "expected"),
    [
        ("vol0abc", "vol-0abc"),  # as the NVMe serial gives it
        ("vol-0abc", "vol-0abc"),
        (" vol0abc\n", "vol-0abc"),
        ("vol01234567890abcdef0", "vol-01234567890abcdef0"),
    ],
)
def test_a_serial_with_or_without_its_dash_is_the_volume_id(serial: str, expected: str) -> None:
    assert volume_id(serial) == expected


def test_reads_and_balances_come_out_sorted_by_time(tmp_path: Path) -> None:
    path = _written(
        tmp_path / "c.jsonl",
        [
            json.dumps({"t": T + 10, "serial": "vol-2", "page": _page()}),
            json.dumps({"t": T + 5, "serial": "vol-1", "error": "gone"}),
            json.dumps({"t": T + 7, "serial": "vol-1", "page": _page()}),
            json.dumps({"t": T + 60, "serial": "vol-1", "burst_balance": 10}),
            json.dumps({"t": T + 30, "serial": "vol-1", "burst_balance": 20}),
        ],
    )
    capture = read(path)
    assert [r.t for r in capture.reads] == [T + 5, T + 7, T + 10]
    assert [b.percent for b in capture.balances] == [20.0, 10.0]
    assert capture.volume_ids() == ["vol-1", "vol-2"]
    assert capture.inventory is None


def test_blank_lines_are_skipped_and_do_not_shift_the_line_numbers(tmp_path: Path) -> None:
    path = _written(
        tmp_path / "c.jsonl",
        [json.dumps({"t": T, "serial": "vol-1", "page": _page()}), "", "  ", "{}"],
    )
    with pytest.raises(ConfigError, match=r"c\.jsonl:4: no `t`"):
        read(path)


BROKEN = [
    ("not json", "{nope", r":2: not a JSON object: Expecting property name"),
    ("a list", "[1, 2]", r":2: not a JSON object$"),
    ("a number", "3", r":2: not a JSON object$"),
    ("no t", '{"serial": "vol-1", "page": ""}', r":2: no `t` \(epoch seconds\)$"),
    ("t not a number", '{"t": "now", "serial": "vol-1"}', r":2: no `t`"),
    ("t a boolean", '{"t": true, "serial": "vol-1"}', r":2: no `t`"),
    ("t NaN", '{"t": NaN, "serial": "vol-1", "error": "x"}', r":2: no `t`"),
    ("t infinite", '{"t": Infinity, "serial": "vol-1", "error": "x"}', r":2: no `t`"),
    ("no serial", '{"t": 1, "page": ""}', r":2: no `serial` \(the volume id\)$"),
    ("blank serial", '{"t": 1, "serial": " ", "page": ""}', r":2: no `serial`"),
    ("serial not text", '{"t": 1, "serial": 7, "page": ""}', r":2: no `serial`"),
    ("page not base64", '{"t": 1, "serial": "vol0abc", "page": "***"}', ""),
    ("page not text", '{"t": 1, "serial": "vol-0abc", "page": 12}', ""),
    (
        "no known key",
        '{"t": 1, "serial": "vol-0abc", "pages": ""}',
        r":2: none of `page`, `error`, `burst_balance` or `inventory`$",
    ),
    (
        "balance not a number",
        '{"t": 1, "serial": "vol-0abc", "burst_balance": "full"}',
        r":2: `burst_balance` is not a number$",
    ),
    (
        "balance NaN",
        '{"t": 1, "serial": "vol-0abc", "burst_balance": NaN}',
        r":2: `burst_balance` is not a number$",
    ),
    ("broken inventory", '{"t": 1, "inventory": {}}', r":2: a broken inventory: KeyError: "),
    (
        "inventory of the wrong shape",
        '{"t": 1, "inventory": {"region": "r", "volumes": [["vol-1"]]}}',
        r":2: a broken inventory: TypeError: ",
    ),
    (
        "inventory not an object",
        '{"t": 1, "inventory": [1]}',
        r":2: a broken inventory: TypeError: ",
    ),
]


@pytest.mark.parametrize(
    ("line", "message"), [(b[1], b[2]) for b in BROKEN], ids=[b[0] for b in BROKEN]
)
def test_a_broken_line_is_refused_naming_the_file_and_the_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = _written(
        tmp_path / "c.jsonl", [json.dumps({"t": T, "serial": "vol-1", "page": _page()}), line]
    )
    with pytest.raises(ConfigError) as raised:
        read(path)
    text = str(raised.value)
    assert text.startswith(f"{path}:2")
    assert "\n" not in text
    if message:
        assert re.search(message, text), text


@pytest.mark.parametrize(
    ("encoded", "why"),
    [
        ("***", "`page` is not base64"),
        ("é", "`page` is not base64"),
        (12, "`page` is not base64 text"),
    ],
    ids=["symbols", "not ascii", "a number"],
)
def test_a_page_that_is_not_base64_is_refused_naming_the_volume(
    tmp_path: Path, encoded: object, why: str
) -> None:
    path = _written(
        tmp_path / "c.jsonl", [json.dumps({"t": T, "serial": "vol0abc", "page": encoded})]
    )
    with pytest.raises(ConfigError) as raised:
        read(path)
    assert str(raised.value) == f"{path}:1 (vol-0abc): {why}"


@pytest.mark.parametrize(
    ("page", "reason"),
    [
        (_page(size=100), "log page is 100 bytes, not 4,096 (a short read)"),
        (
            _page(magic=INSTANCE_STORE_MAGIC),
            "magic 0xEC2C0D7E is an instance store volume's, not EBS",
        ),
        (base64.b64encode(bytes(4096)).decode(), "magic 0x00000000 is not an EBS statistics page"),
    ],
    ids=["short", "instance-store", "zeros"],
)
def test_a_page_parse_refuses_is_that_volumes_failed_read_and_no_others(
    tmp_path: Path, page: str, reason: str
) -> None:
    """As when the node reads it live: that volume's read failed, saying where and why; the
    other volume's pages, and that volume's next one, are read."""
    path = _written(
        tmp_path / "c.jsonl",
        [
            json.dumps({"t": T, "serial": "vol0abc", "page": _page()}),
            json.dumps({"t": T, "serial": "vol0def", "page": _page()}),
            json.dumps({"t": T + 5, "serial": "vol0abc", "page": page}),
            json.dumps({"t": T + 5, "serial": "vol0def", "page": _page()}),
            json.dumps({"t": T + 10, "serial": "vol0abc", "page": _page()}),
        ],
    )
    capture = read(path)
    assert [r for r in capture.reads if r.volume_id == "vol-0abc"] == [
        Read(T, "vol-0abc", STATS),
        Read(T + 5, "vol-0abc", None, f"{path}:3 (vol-0abc): {reason}"),
        Read(T + 10, "vol-0abc", STATS),
    ]
    assert [r for r in capture.reads if r.volume_id == "vol-0def"] == [
        Read(T, "vol-0def", STATS),
        Read(T + 5, "vol-0def", STATS),
    ]


def test_a_file_whose_every_page_is_refused_says_why(tmp_path: Path) -> None:
    lines = [
        json.dumps({"t": T + i, "serial": "vol0abc", "page": _page(magic=INSTANCE_STORE_MAGIC)})
        for i in range(2)
    ]
    path = _written(tmp_path / "c.jsonl", lines)
    with pytest.raises(UnreadableError) as raised:
        read(path)
    assert str(raised.value) == (
        f"{path}: no log page in it could be read: {path}:1 (vol-0abc): magic 0xEC2C0D7E is an "
        "instance store volume's, not EBS"
    )


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    path = _written(tmp_path / "c.jsonl", [])
    with pytest.raises(UnreadableError, match=r"c\.jsonl: no log page in it$"):
        read(path)


def test_a_file_without_a_page_is_refused(tmp_path: Path) -> None:
    out = io.StringIO()
    writer = Writer(out)
    writer.inventory(T, INVENTORY)
    writer.balance(T + 30, "vol-0abc", 73.5)
    path = tmp_path / "c.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    with pytest.raises(UnreadableError, match=r"c\.jsonl: no log page in it$"):
        read(path)


def test_a_file_of_failed_reads_only_is_refused(tmp_path: Path) -> None:
    """Every read failed: no page in it could be read, and the first failure says why."""
    out = io.StringIO()
    Writer(out).error(T, "vol-0abc", "nvme1n1: Permission denied")
    path = tmp_path / "c.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    with pytest.raises(UnreadableError) as raised:
        read(path)
    assert str(raised.value) == (
        f"{path}: no log page in it could be read: nvme1n1: Permission denied"
    )


def test_a_capture_with_no_readable_page_exits_as_the_help_says(tmp_path: Path, capsys) -> None:
    """`node --help`: 3 where no NVMe page could be read; 2 is for a command line refused."""
    from analyzer.cli import main

    path = _written(tmp_path / "c.jsonl", [])
    assert main(["node", "--replay", str(path), "--once"]) == UnreadableError.exit_code == 3
    assert "no log page in it" in capsys.readouterr().err


def test_a_missing_file_or_one_not_text_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.jsonl: cannot read a capture: "):
        read(tmp_path / "nope.jsonl")
    binary = tmp_path / "c.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match=r"c\.jsonl: not a capture \(not UTF-8 text\)$"):
        read(binary)


def test_a_capture_without_reads_has_no_end() -> None:
    assert Capture().end is None
