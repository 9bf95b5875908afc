"""A node's capture: what it read, as JSON lines, to be replayed and judged offline as `record`
and `backtest` do for CloudWatch.

Each line is one object with `t`, the epoch seconds it was read at, and one of:

    {"t": 1764150000.0, "inventory": {...}}                   the node's volumes and instance
    {"t": 1764150005.0, "serial": "vol-0abc…", "page": "…"}  a log page, base64 of its 4,096 bytes
    {"t": 1764150005.0, "serial": "vol-0abc…", "error": "…"} a read that failed, and why
    {"t": 1764150030.0, "serial": "vol-0abc…", "burst_balance": 73.5}   CloudWatch's reading

A serial is the volume id, with or without its dash (the NVMe serial has none). The inventory
line comes first where the node could describe its volumes; without one, a replay describes the
serials through EC2. A page the node could not read (another magic, an instance store volume's;
a short read) is that volume's failed read, as it is when the node reads it live: the rest of
the capture is still read.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from analyzer.collect import recording
from analyzer.collect.logpage import PageError, Stats, parse
from analyzer.errors import ConfigError, UnreadableError
from analyzer.model.resources import Inventory


def volume_id(serial: str) -> str:
    """`vol0abc` (as NVMe gives it) or `vol-0abc` → `vol-0abc`."""
    serial = serial.strip()
    if serial.startswith("vol") and not serial.startswith("vol-"):
        return f"vol-{serial[3:]}"
    return serial


@dataclass(frozen=True, slots=True)
class Read:
    t: float
    volume_id: str
    stats: Stats | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Reading:
    """CloudWatch's BurstBalance of a volume, as the node last fetched it."""

    t: float
    volume_id: str
    percent: float


@dataclass
class Capture:
    inventory: Inventory | None = None
    reads: list[Read] = field(default_factory=list)
    balances: list[Reading] = field(default_factory=list)

    @property
    def end(self) -> float | None:
        """The time of the last page read."""
        return max((r.t for r in self.reads), default=None)

    def every(self) -> int:
        """The seconds between one volume's reads, as they mostly were (1 to 60)."""
        last: dict[str, float] = {}
        gaps: Counter[int] = Counter()
        for read in self.reads:
            if read.volume_id in last:
                gaps[round(read.t - last[read.volume_id])] += 1
            last[read.volume_id] = read.t
        usual = gaps.most_common(1)[0][0] if gaps else 5
        return min(max(usual, 1), 60)

    def volume_ids(self) -> list[str]:
        return sorted({r.volume_id for r in self.reads})


class Writer:
    """Appends to a capture file, one line at a time, flushed: a node stopped mid-capture
    leaves every line it wrote whole."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def _line(self, document: dict[str, Any]) -> None:
        self.out.write(json.dumps(document, separators=(",", ":")) + "\n")
        self.out.flush()

    def inventory(self, t: float, inventory: Inventory) -> None:
        self._line({"t": t, "inventory": recording.inventory_document(inventory)})

    def page(self, t: float, serial: str, page: bytes) -> None:
        self._line({"t": t, "serial": serial, "page": base64.b64encode(page).decode("ascii")})

    def error(self, t: float, serial: str, reason: str) -> None:
        self._line({"t": t, "serial": serial, "error": reason})

    def balance(self, t: float, serial: str, percent: float) -> None:
        self._line({"t": t, "serial": serial, "burst_balance": percent})


def read(path: Path) -> Capture:
    """The capture at `path`; a line that is not one is a ConfigError naming the file, the line
    and what is wrong with it."""
    capture = Capture()
    try:
        with path.open(encoding="utf-8") as source:
            for number, line in enumerate(source, 1):
                if line.strip():
                    _take(capture, line, f"{path}:{number}")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read a capture: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a capture (not UTF-8 text)") from None
    if not capture.reads:
        raise UnreadableError(f"{path}: no log page in it")
    if not any(r.stats is not None for r in capture.reads):
        reason = next(r.error for r in capture.reads)
        raise UnreadableError(f"{path}: no log page in it could be read: {reason}")
    capture.reads.sort(key=lambda r: r.t)
    capture.balances.sort(key=lambda r: r.t)
    return capture


def _take(capture: Capture, line: str, where: str) -> None:
    try:
        document = json.loads(line)
    except ValueError as exc:
        raise ConfigError(f"{where}: not a JSON object: {exc}") from None
    if not isinstance(document, dict):
        raise ConfigError(f"{where}: not a JSON object")
    t = document.get("t")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        raise ConfigError(f"{where}: no `t` (epoch seconds)")
    if "inventory" in document:
        try:
            capture.inventory = recording.inventory_from(document["inventory"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: a broken inventory: {type(exc).__name__}: {exc}") from None
        return
    serial = document.get("serial")
    if not isinstance(serial, str) or not serial.strip():
        raise ConfigError(f"{where}: no `serial` (the volume id)")
    vid = volume_id(serial)
    if "page" in document:
        capture.reads.append(_read(float(t), vid, document["page"], f"{where} ({vid})"))
    elif "error" in document:
        capture.reads.append(Read(float(t), vid, None, str(document["error"])))
    elif "burst_balance" in document:
        percent = document["burst_balance"]
        if (
            isinstance(percent, bool)
            or not isinstance(percent, int | float)
            or not math.isfinite(percent)
        ):
            raise ConfigError(f"{where}: `burst_balance` is not a number")
        capture.balances.append(Reading(float(t), vid, float(percent)))
    else:
        raise ConfigError(f"{where}: none of `page`, `error`, `burst_balance` or `inventory`")


def _read(t: float, vid: str, encoded: object, where: str) -> Read:
    """The page's statistics, or why the node could not read them. Text that is not a page at
    all (not base64) is a broken capture, refused."""
    if not isinstance(encoded, str):
        raise ConfigError(f"{where}: `page` is not base64 text")
    try:
        page = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(f"{where}: `page` is not base64") from None
    try:
        return Read(t, vid, parse(page, where))
    except PageError as exc:
        return Read(t, vid, None, str(exc))
