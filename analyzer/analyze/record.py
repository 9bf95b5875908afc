"""Pure: how a bucket's drains usually end, learned from its own past, and what that says of
the drain under way.

A drain runs from a peak of the balance down to a trough, and ends when the bucket has earned
back a good part of what it spent (`RECOVER_POINTS`, or `RECOVER_SHARE` of the fall, whichever
is more): a pause of a minute between two bursts does not part them, a refill does. The
record holds the credits each drain of the past two weeks spent (in points of the balance),
from the 5-minute means fetched for the day profile; a drain that emptied the bucket spent
*at least* that much, since it would have gone on (a censored observation).

The chance that a drain which has spent `spent` points goes on to spend `peak` (all there was
when it began) is the product-limit (Kaplan–Meier) estimate P(S ≥ peak) / P(S ≥ spent) over
the record, drawn towards `spent / peak` (a Pareto tail of index 1: a drain that has spent
half of what there was is as likely as not to spend the rest) with the weight of
`PRIOR_WEIGHT` drains, so that a thin record says little and an empty one leaves the prior.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from analyzer.model.past import Grid

RECOVER_POINTS = 5.0
"""A drain ends once the balance is this many points above its trough, or"""
RECOVER_SHARE = 0.5
"""this share of its fall, whichever is more."""
LEAST_SPEND = 1.0
"""Points: a smaller dip is noise, not a drain."""
EMPTY_AT = 1.0
"""Percent: a drain down to here emptied the bucket."""
PRIOR_WEIGHT = 2.0
"""How many drains the prior weighs, against the record's own."""
LEAST_DRAINS = 1
"""A record of fewer drains has no say: the physics forecast decides alone, as it does for a
bucket that has not drained at all."""
DAYS = 14

Floats = npt.NDArray[np.float64]


def drains(values: Floats) -> tuple[list[tuple[float, float]], tuple[float, float] | None]:
    """The (peak, trough) of each drain in `values` (oldest first, NaN where no datapoint:
    a gap ends a drain), and the drain still open at the end, if any."""
    done: list[tuple[float, float]] = []
    peak: float | None = None
    trough = 0.0
    for value in values.tolist():
        if math.isnan(value):  # no datapoint: what came before is over
            if peak is not None and peak - trough >= LEAST_SPEND:
                done.append((peak, trough))
            peak = None
        elif peak is None or (value > peak and trough == peak):
            peak = trough = value
        elif value < trough:
            trough = value
        elif value > trough + max(RECOVER_POINTS, RECOVER_SHARE * (peak - trough)):
            if peak - trough >= LEAST_SPEND:
                done.append((peak, trough))
            peak = trough = value
    return done, (peak, trough) if peak is not None else None


def drain_began(values: Floats) -> int | None:
    """Where the drain open at the end of `values` began: the index of its peak, by the rules
    of `drains`, except that a missing datapoint (a volume idle for a while) does not part it.
    None where `values` has no datapoint."""
    peak: int | None = None
    trough = 0.0
    for index, value in enumerate(values.tolist()):
        if math.isnan(value):
            continue
        if peak is None or (value > values[peak] and trough == values[peak]):
            peak, trough = index, value
        elif value < trough:
            trough = value
        elif value > trough + max(RECOVER_POINTS, RECOVER_SHARE * (values[peak] - trough)):
            peak, trough = index, value
    return peak


@dataclass(frozen=True, slots=True)
class Chance:
    """What the record says of a drain under way."""

    chance: float
    """That it goes on to empty the bucket."""
    peak: float
    """The balance it began at."""
    spent: float
    """Points spent so far."""
    at_risk: int
    """Drains in the record that spent at least as much."""
    went_on: int
    """Of those, the ones that spent `peak` or emptied the bucket."""
    drains: int
    """Drains in the record."""


@dataclass(frozen=True, slots=True)
class Record:
    """The credits each past drain spent, in points, and whether it emptied the bucket."""

    spends: Floats
    emptied: npt.NDArray[np.bool_]

    def __len__(self) -> int:
        return len(self.spends)

    def survival(self, points: float) -> float:
        """P(a drain spends at least `points`), product-limit over the record."""
        ended = np.sort(self.spends[~self.emptied])
        ended = ended[ended < points]
        out = 1.0
        for value in np.unique(ended):
            at_risk = np.count_nonzero(self.spends >= value)
            out *= 1.0 - np.count_nonzero(ended == value) / at_risk
        return out

    def chance(self, peak: float, spent: float) -> Chance:
        """The chance that a drain which began at `peak` and has spent `spent` points empties
        the bucket."""
        spent = min(max(spent, 0.0), peak)
        prior = min(1.0, max(spent, LEAST_SPEND / 2) / max(peak, LEAST_SPEND))
        at_risk = int(np.count_nonzero(self.spends >= spent))
        went_on = int(
            np.count_nonzero((self.spends >= peak) | (self.emptied & (self.spends >= spent)))
        )
        if at_risk == 0:
            return Chance(prior, peak, spent, 0, 0, len(self))
        so_far = self.survival(spent)
        measured = self.survival(peak) / so_far if so_far > 0 else 1.0
        blended = (at_risk * measured + PRIOR_WEIGHT * prior) / (at_risk + PRIOR_WEIGHT)
        return Chance(blended, peak, spent, at_risk, went_on, len(self))


_RECORDS: weakref.WeakKeyDictionary[Grid, dict[int, Record]] = weakref.WeakKeyDictionary()


def record_of(grid: Grid, until: datetime) -> Record:
    """The drains of the two weeks of `grid` before `until` (worked out once per grid and
    cut-off: a fetched grid serves every cycle until the next fetch)."""
    end = min(len(grid), max(int((until - grid.start).total_seconds() // grid.period_s), 0))
    kept = _RECORDS.setdefault(grid, {})
    found = kept.get(end)
    if found is None:
        begin = max(end - DAYS * 86_400 // grid.period_s, 0)
        done, _ = drains(grid.values[begin:end].astype(np.float64))
        spends = np.array([p - t for p, t in done], dtype=np.float64)
        emptied = np.array([t <= EMPTY_AT for _, t in done], dtype=np.bool_)
        found = kept[end] = Record(spends, emptied)
    return found
