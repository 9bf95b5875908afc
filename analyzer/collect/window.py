"""Pure window math: which whole periods to ask CloudWatch for, given an injected clock."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta


@dataclass(frozen=True, slots=True)
class Window:
    """Whole periods in [start, end); `end` lies at least the settle delay before now."""

    start: datetime
    end: datetime
    period_s: int

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()

    @property
    def periods(self) -> int:
        return int(self.seconds // self.period_s)


def floor_to(moment: datetime, period_s: int) -> datetime:
    epoch = moment.astimezone(UTC).timestamp()
    return datetime.fromtimestamp(epoch - epoch % period_s, UTC)


def aligned(now: datetime, period_s: int, lookback_s: float, settle_s: float) -> Window:
    """The newest minute is often incomplete, so the window stops `settle_s` before `now`.

    Both ends fall on multiples of `period_s` (CloudWatch aligns periods to the epoch), and the
    window always covers at least one period.
    """
    if period_s <= 0:
        raise ValueError("period must be positive")
    end = floor_to(now - timedelta(seconds=settle_s), period_s)
    start = floor_to(end - timedelta(seconds=max(lookback_s, period_s)), period_s)
    return Window(start, end, period_s)
