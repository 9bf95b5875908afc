"""What an application asks of a volume over time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from analyzer.model.units import KIB


def constant(iops: float) -> Callable[[float], float]:
    return lambda _t: iops


def steps(*changes: tuple[float, float]) -> Callable[[float], float]:
    """Demand that changes at given seconds: steps((0, 100), (600, 1_500)) ."""
    ordered = sorted(changes)

    def demand(t: float) -> float:
        current = 0.0
        for start, value in ordered:
            if t >= start:
                current = value
        return current

    return demand


def daily(
    low: float, high: float, busy_from_h: float, busy_to_h: float, offset_s: float = 0.0
) -> Callable[[float], float]:
    """A daily cycle: `high` between the two hours of the day, `low` otherwise."""

    def demand(t: float) -> float:
        hour = ((t + offset_s) % 86400) / 3600
        return high if busy_from_h <= hour < busy_to_h else low

    return demand


def periodic(
    high: float, low: float, period_s: float, busy_s: float, busy_from_s: float = 0.0
) -> Callable[[float], float]:
    """A job that comes back every `period_s`: `high` for `busy_s` from `busy_from_s` (and
    every period before and after it), `low` between."""

    def demand(t: float) -> float:
        return high if (t - busy_from_s) % period_s < busy_s else low

    return demand


@dataclass(frozen=True)
class Demand:
    """What the application asks of one volume: IOPS over time, at one I/O size."""

    iops: Callable[[float], float]
    io_size_bytes: float = 16 * KIB
    read_fraction: float = 0.7
    sequential: bool = False
    """Contiguous I/O, which st1 and sc1 merge into 1 MiB operations."""
    held_s: float | None = None
    """Where known: `iops` asks one rate at every second of each whole period of this many
    seconds counted from `held_from_s` (a recorded series holds each value for its period)."""
    held_from_s: float = 0.0

    def held(self, begin: float, seconds: float) -> bool:
        """Whether `iops` is known to ask one rate at every second from `begin` for
        `seconds`, without asking it each second."""
        if self.held_s is None:
            return False
        last = begin + seconds - 1
        return (begin - self.held_from_s) // self.held_s == (last - self.held_from_s) // self.held_s
