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


MINUTE_S = 60
"""The finest period asked for: the data of a cycle ends with the newest settled minute."""


def data_end(now: datetime, settle_s: float, period_s: int = MINUTE_S) -> datetime:
    """The end of the newest complete period at `now`. The newest minute is often incomplete,
    so the data stops `settle_s` before `now`, on a multiple of `period_s` (CloudWatch aligns
    periods to the epoch)."""
    if period_s <= 0:
        raise ValueError("period must be positive")
    return floor_to(now - timedelta(seconds=settle_s), period_s)


def read_end(now: datetime, newest: datetime | None, settle_s: float) -> datetime:
    """The end of the newest minute a cycle at `now` reads: the end of the newest minute
    CloudWatch has published (`newest`), never earlier than `settle_s` before `now` (what is
    read when nothing newer has come), nor later than the minute under way."""
    settled = data_end(now, settle_s)
    if newest is None:
        return settled
    return max(settled, min(newest, data_end(now, 0.0)))


def aligned(now: datetime, period_s: int, lookback_s: float, settle_s: float) -> Window:
    """The last `lookback_s` of whole periods up to the end of the data at `now`: both ends
    fall on multiples of `period_s`, and the window always covers at least one period."""
    end = data_end(now, settle_s, period_s)
    start = floor_to(end - timedelta(seconds=max(lookback_s, period_s)), period_s)
    return Window(start, end, period_s)
