"""What a bucket's past days hold: its daily minima, and its balance through each day.

Both come from CloudWatch's long history at a coarse period (`collect/past.py`): the minima of
every bucket, the balance through the day only of the buckets whose minima show a drain. Rules
read them (`credit_trend` the minima, `credit_forecast` the day profile); nothing here calls
AWS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
import numpy.typing as npt

from analyzer.model.metrics import Measure
from analyzer.model.series import Series

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class Grid:
    """A balance's mean over regular periods from `start`, oldest first, NaN where CloudWatch
    had no datapoint. Four bytes a value and no timestamps: two weeks of 5-minute periods take
    16 KiB."""

    start: datetime
    period_s: int
    values: npt.NDArray[np.float32]

    @classmethod
    def of(cls, series: Series, start: datetime, end: datetime, period_s: int) -> Grid:
        """The series' datapoints on the periods from `start` to `end`, each period the mean
        of the datapoints that start in it (one each from a request at this period)."""
        count = max(int((end - start).total_seconds() // period_s), 0)
        sums = np.zeros(count)
        seen = np.zeros(count)
        base = start.timestamp()
        for at, value in series.points():
            index = int((at.timestamp() - base) // period_s)
            if 0 <= index < count:
                sums[index] += value
                seen[index] += 1
        with np.errstate(invalid="ignore"):
            values = (sums / seen).astype(np.float32)
        return cls(start, period_s, values)

    def __len__(self) -> int:
        return len(self.values)

    @property
    def end(self) -> datetime:
        return self.start + timedelta(seconds=self.period_s * len(self.values))

    def at(self, moments: Floats) -> Floats:
        """The balance at each moment (seconds since the epoch), read linearly between the
        middles of the periods; NaN off the grid and beside a period without data."""
        if not len(self.values):
            return np.full(moments.shape, np.nan)
        middles = self.start.timestamp() + self.period_s * (np.arange(len(self.values)) + 0.5)
        found = np.interp(moments, middles, self.values.astype(np.float64))
        outside = (moments < middles[0]) | (moments > middles[-1])
        return np.where(outside, np.nan, found)


@dataclass(frozen=True, slots=True)
class Past:
    """A resource's past days, as far as they were fetched."""

    minima: Mapping[Measure, Series] = field(default_factory=dict)
    """Each balance's minimum per whole UTC day, the last two weeks."""
    days: Mapping[Measure, Grid] = field(default_factory=dict)
    """Each balance's 5-minute mean over the last two weeks, where its minima show a drain."""

    def __bool__(self) -> bool:
        return bool(self.minima or self.days)


NO_PAST = Past()
