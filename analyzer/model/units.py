"""Byte and time units, and how they read in a sentence.

Volume limits are quoted by AWS in MiB/s and instance limits in MB/s; inside the analyzer every
rate is bytes/s or ops/s, and the text names the unit the limit was quoted in.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from analyzer.model.resources import ResourceType


class Unit(StrEnum):
    IOPS = "iops"
    BYTES_PER_SECOND = "bytes_per_second"
    PERCENT = "percent"


KIB = 1024
MIB = 1024**2
GIB = 1024**3
TIB = 1024**4
MB = 1_000_000


def iops(value: float) -> str:
    return f"{value:,.0f} IOPS"


def mibps(bytes_per_second: float) -> str:
    return f"{_number(bytes_per_second / MIB)} MiB/s"


def mbps(bytes_per_second: float) -> str:
    return f"{_number(bytes_per_second / MB)} MB/s"


def size(num_bytes: float) -> str:
    if num_bytes >= MIB:
        return f"{_number(num_bytes / MIB)} MiB"
    return f"{_number(num_bytes / KIB)} KiB"


def duration(seconds: float) -> str:
    """27 min, 2 h 05 min, 3 d 4 h: coarse enough to read at a glance."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 120:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


def as_written(seconds: float) -> str:
    """A duration as a setting or a rule file writes it: `15d`, `1h`, `1m`, `90s`."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def _number(value: float) -> str:
    if value >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:,.1f}"


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


def parse_duration(value: Any) -> Any:
    """`90s`, `15m`, `1h`, `1d`, or a number of seconds."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 15m")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match:
            return float(match.group(1)) * _SECONDS[match.group(2)]
        raise ValueError(f"{value!r} is not a duration such as 90s, 15m, 1h")
    return value


Duration = Annotated[float, BeforeValidator(parse_duration), Field(ge=0)]
PositiveDuration = Annotated[float, BeforeValidator(parse_duration), Field(gt=0)]


def format_rate(value: float, unit: Unit, resource_type: ResourceType) -> str:
    """Throughput in the unit AWS quotes that limit in: MiB/s for volumes, MB/s for instances."""
    if unit is Unit.IOPS:
        return iops(value)
    if unit is Unit.PERCENT:
        return f"{value:.0f}%"
    return mibps(value) if resource_type is ResourceType.VOLUME else mbps(value)
