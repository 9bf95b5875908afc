"""Byte and time units, and how they read in a sentence.

Volume limits are quoted by AWS in MiB/s and instance limits in MB/s; inside the analyzer every
rate is bytes/s or ops/s, and the text names the unit the limit was quoted in.
"""

from __future__ import annotations

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


def _number(value: float) -> str:
    if value >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:,.1f}"
