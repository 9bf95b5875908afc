"""Text kept compressed: the same text back, whole or in pieces, and as one gzip member."""

from __future__ import annotations

import gzip
import zlib

from hypothesis import given
from hypothesis import strategies as st

from analyzer.deliver import deflated
from analyzer.deliver.deflated import Deflated


def exposition_like(lines: int) -> list[bytes]:
    """Family-sized parts of gauge lines, as /metrics has them."""
    return [
        b"".join(
            f'ebs_analyzer_volume_iops{{region="us-east-1",volume_id="vol-{family:02d}{n:06d}"}} '
            f"{n * 7.25}\n".encode()
            for n in range(lines)
        )
        for family in range(8)
    ]


def one_gzip_member(data: bytes) -> bytes:
    """The text of `data`, which must be a single gzip member and nothing after it."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    text = inflate.decompress(data) + inflate.flush()
    assert inflate.eof and inflate.unused_data == b""
    return text


@given(st.lists(st.binary(max_size=2_000), max_size=8), st.binary(max_size=500))
def test_the_text_comes_back_whole_in_pieces_and_gzipped(parts: list[bytes], tail: bytes) -> None:
    text = Deflated.of(parts).followed_by(tail)
    whole = b"".join(parts) + tail
    assert text.text() == whole
    assert text.length == len(whole)
    assert one_gzip_member(b"".join(text.gzip())) == whole
    assert gzip.decompress(b"".join(text.gzip())) == whole


def test_a_large_text_is_kept_in_a_tenth_and_inflated_across_many_pieces() -> None:
    parts = exposition_like(20_000)
    text = Deflated.of(parts)
    whole = b"".join(parts)
    assert len(text.blocks) < len(whole) / 10
    assert len(text.blocks) > 3 * deflated.PIECE_BYTES
    assert all(len(piece) > 0 for piece in text.pieces())
    assert text.text() == whole


def test_gzip_sends_the_kept_blocks_themselves_and_compresses_only_the_tail() -> None:
    text = Deflated.of(exposition_like(2_000))
    pieces = text.followed_by(b"ebs_analyzer_up 1.0\n").gzip()
    assert pieces[1] is text.blocks
    assert pieces[0] == deflated.GZIP_HEADER
    assert one_gzip_member(b"".join(pieces)).endswith(b"\nebs_analyzer_up 1.0\n")


def test_a_tail_follows_a_tail() -> None:
    text = Deflated.of([b"a 1\n"]).followed_by(b"b 2\n").followed_by(b"c 3\n")
    assert text.text() == b"a 1\nb 2\nc 3\n"
    assert one_gzip_member(b"".join(text.gzip())) == b"a 1\nb 2\nc 3\n"


def test_nothing_is_an_empty_text_and_an_empty_gzip_member() -> None:
    text = Deflated.of([])
    assert text.text() == b"" and text.length == 0
    assert one_gzip_member(b"".join(text.gzip())) == b""
