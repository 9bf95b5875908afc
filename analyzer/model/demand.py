"""What a resource asked of its storage over its past days, a period at a time."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]
DAY_S = 86_400


@dataclass(frozen=True, slots=True, eq=False)
class Demand:
    """IOPS and bytes per second, a period at a time from `start`, oldest first. `floor`
    marks the periods whose demand is only a floor: held back then by the resource's own
    limits, and counted at the rate before they bound (`analyze/held.py`)."""

    start: datetime
    period_s: int
    iops: Floats
    bps: Floats
    floor: Flags

    @classmethod
    def seen(cls, start: datetime, period_s: int, iops: Floats, bps: Floats) -> Demand:
        """The rates as CloudWatch shows them: zero where it had no datapoint (it publishes
        none while a volume is idle), no floor yet."""
        iops = np.nan_to_num(np.asarray(iops, dtype=np.float64), nan=0.0)
        bps = np.nan_to_num(np.asarray(bps, dtype=np.float64), nan=0.0)
        return cls(start, period_s, iops, bps, np.zeros(len(iops), dtype=np.bool_))

    @property
    def days(self) -> float:
        return len(self.iops) * self.period_s / DAY_S


@dataclass(frozen=True, slots=True)
class LongPast:
    """A volume's past as read for savings: its stretches, finest first, each a `Demand` of
    per-period peaks; the first and the newest moment it showed any I/O."""

    read_at: datetime
    stretches: tuple[Demand, ...]
    first_seen: datetime | None
    last_active: datetime | None

    @property
    def days(self) -> float:
        """How far back its data goes: the window the findings are proven over."""
        if self.first_seen is None:
            return 0.0
        return (self.read_at - self.first_seen).total_seconds() / 86_400
