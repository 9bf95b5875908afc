"""Text kept compressed, sent gzipped as it is or inflated a piece at a time.

A large fleet's /metrics text is megabytes of labels repeated line after line, kept from one
cycle to the next and sent on every scrape. Kept as raw deflate blocks it takes a tenth of
that; Prometheus asks for gzip (`Accept-Encoding: gzip`), and a gzip answer is those very
blocks between a header and a trailer, so a scrape compresses only what it adds (RFC 1952:
the trailer's CRC-32 and length are over the whole text, and a CRC-32 can be carried on from
the one of the text before).
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

LEVEL = 1
"""zlib's fastest level: the text shrinks tenfold or more at it, and a cycle compresses its
whole text once."""
RAW = -zlib.MAX_WBITS
"""Deflate blocks without zlib's header or trailer: gzip has its own."""
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
"""Deflate, no flags, no modification time, no extra flags, operating system unknown."""
PIECE_BYTES = 65_536
"""Compressed bytes inflated at a time when the plain text is asked for."""


@dataclass(frozen=True, slots=True)
class Deflated:
    blocks: bytes
    """Raw deflate blocks, none of them the last, ending on a byte boundary (a sync flush):
    more blocks can follow them in the same stream."""
    crc: int
    """The CRC-32 of the text the blocks hold."""
    size: int
    """The length in bytes of the text the blocks hold."""
    tail: bytes = b""
    """Text that follows, kept as it is: a few lines added at each scrape."""

    @classmethod
    def of(cls, parts: Iterable[bytes]) -> Deflated:
        """The text these parts make, compressed as each arrives: it is never held whole."""
        squeeze = zlib.compressobj(LEVEL, zlib.DEFLATED, RAW)
        out = io.BytesIO()
        crc = size = 0
        for part in parts:
            out.write(squeeze.compress(part))
            crc = zlib.crc32(part, crc)
            size += len(part)
        out.write(squeeze.flush(zlib.Z_SYNC_FLUSH))
        return cls(out.getvalue(), crc, size)

    def followed_by(self, tail: bytes) -> Deflated:
        """This text with `tail` after it (the blocks shared, not copied)."""
        return Deflated(self.blocks, self.crc, self.size, self.tail + tail)

    @property
    def length(self) -> int:
        """The whole text's length in bytes, the tail's included."""
        return self.size + len(self.tail)

    def pieces(self) -> Iterator[bytes]:
        """The whole text, a piece at a time."""
        inflate = zlib.decompressobj(RAW)
        view = memoryview(self.blocks)
        for start in range(0, len(view), PIECE_BYTES):
            piece = inflate.decompress(view[start : start + PIECE_BYTES])
            if piece:
                yield piece
        rest = inflate.flush()
        if rest:
            yield rest
        if self.tail:
            yield self.tail

    def text(self) -> bytes:
        return b"".join(self.pieces())

    def gzip(self) -> list[bytes]:
        """The whole text as one gzip member, in pieces to send one after the other: the
        blocks are among them as they are, not copied; only the tail is compressed now."""
        squeeze = zlib.compressobj(LEVEL, zlib.DEFLATED, RAW)
        end = squeeze.compress(self.tail) + squeeze.flush()
        trailer = struct.pack("<II", zlib.crc32(self.tail, self.crc), self.length & 0xFFFFFFFF)
        return [GZIP_HEADER, self.blocks, end, trailer]
