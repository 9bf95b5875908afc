"""The day profile: what a bucket's own past days say about the rest of today.

A daily drain (incident 3 of SPEC.md) follows the clock: the same hours drain the bucket every
working day, and the load eases at the same hour. The profile reads the balance of each of the
last two weeks' days at the moments ahead of now, shifted by whole days; takes the days of the
same kind as today (weekdays, or weekend days) where there are enough of them; and runs the
bucket forward from today's balance through the median of their changes, the drains scaled to
today's rate. Today's rate is compared with theirs over the last `window_s`: by the demand the
changes imply where the bucket's refill rate is known (the bucket model), by the changes
themselves where not (instance EBS buckets). A day that drains well above the past days, or
where they did not drain at all, departs from them: the profile has no say then.
"""

from __future__ import annotations

import math
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import numpy as np

from analyzer.model.past import Floats, Grid
from analyzer.model.series import Series, recent
from analyzer.model.state import EMPTY_BALANCE_PERCENT

DAY_S = 86_400.0
DAYS = 14
FULL_PERCENT = 99.5
"""At or above this a past day's bucket was full: its demand was at most the refill, unknown."""
MIN_DROP = 0.5
"""Points of balance: less over the compared window is no drain at all (noise, rounding)."""
PATTERN_SWING = 20.0
"""Points: past days share a pattern (a daily drain and refill) where their median balance
moves at least this far over the hours compared and ahead, and where they agree: where they
disagree most (the 90th percentile over those moments of the range between the highest and
the lowest day), they are at most half that swing apart. Bursts that fall at other hours each
day leave the median nearly flat, or the days far apart: the profile then has nothing to say
about today."""


SHAPE_SPREAD = 0.5
"""Days drain alike (`drain_alike`) where, over the moments they disagree most (the 90th
percentile), each day's share of its own swing lies within half a swing of the others'."""


@dataclass(frozen=True, slots=True)
class DayForecast:
    """The bucket through the hours ahead, as the past days of the same kind ran them."""

    days: tuple[date, ...]
    """The past days it rests on (the dates of the moments compared with now)."""
    kind: str
    """`weekdays`, `weekend days`, or `days` where there are too few of one kind."""
    balance: float
    """Today's balance now, where the forecast starts."""
    ratio: float
    """Today's rate over the compared window, as a multiple of the past days' at those hours;
    infinite where they did not drain and today does."""
    departs: bool
    """Today runs well above the past days (or drains where they did not): no say."""
    empties_at: datetime | None
    eases_at: datetime | None
    """Where the forecast bottoms out before the horizon: when the load usually eases."""
    left_percent: float
    """The lowest balance ahead (0 where it empties)."""
    swing: float = PATTERN_SWING
    """Points the past days' median balance moves over the moments compared and ahead."""
    spread: float = 0.0
    """Points between the past days at the same moments, where they disagree most."""

    @property
    def patterned(self) -> bool:
        """Whether the past days share a pattern the forecast can follow (`PATTERN_SWING`)."""
        return _shares_pattern(self.swing, self.spread)


def _weekend(moment: datetime) -> bool:
    return moment.weekday() >= 5


def day_forecast(
    grid: Grid,
    today: Series,
    at: datetime,
    *,
    refill_percent_per_s: float | None,
    min_days: int,
    horizon_s: float,
    window_s: float,
    departs_above: float,
    recent_s: float | None = None,
) -> DayForecast | None:
    """The profile's forecast from `at`; None without today's balance or without `min_days`
    past days that cover the moments compared and ahead."""
    stretch = recent(today, at, window_s).points()
    if not stretch:
        return None
    half = today.period_s / 2
    then_t = stretch[0][0].timestamp() + half
    now_t = stretch[-1][0].timestamp() + half
    span = now_t - then_t
    if span < window_s / 2:
        return None  # too little of today to compare: a rate from one point is no rate
    step = float(grid.period_s)
    ahead = now_t + step * np.arange(math.ceil(horizon_s / step) + 1)
    moments = np.concatenate(([then_t], ahead))
    offsets = DAY_S * np.arange(1, DAYS + 1)
    seen = grid.at((moments[None, :] - offsets[:, None]).ravel()).reshape(DAYS, len(moments))
    chosen = _same_kind(seen, at, min_days)
    if chosen is None:
        return None
    rows, kind = chosen
    past = seen[rows]
    days = tuple((at - timedelta(days=int(d) + 1)).date() for d in rows)

    balance = stretch[-1][1]
    refill = (refill_percent_per_s or 0.0) * span
    past_drop = float(np.median(past[:, 0] - past[:, 1]))
    today_drop = stretch[0][1] - balance
    if past_drop < MIN_DROP:
        ratio = 1.0 if today_drop < MIN_DROP else math.inf
    else:
        ratio = max(refill + today_drop, 0.0) / (refill + past_drop)

    # Before the first step, a day's drain is the one over the compared window.
    first = (past[:, 1] - past[:, 0]) * step / span
    changes = _changes(past[:, 1:], first)
    past_rate = past_drop / span
    if recent_s:
        # The past days' rate over the same last minutes, where it is the higher (their load
        # began within the window): a rate from 5-minute means, so never below the window's.
        before = grid.at(np.asarray(now_t - recent_s - offsets[rows], dtype=np.float64))
        past_rate = max(past_rate, float(np.nanmedian(before - past[:, 1])) / recent_s)
    lately = _lately(stretch, recent_s, now_t, half, refill_percent_per_s, past_rate)
    if not math.isfinite(ratio):
        scaled = changes
    elif refill_percent_per_s:
        # Today's demand is `ratio` x the past days' wherever theirs is known (below full):
        # a step that refilled a little on past days drains at a higher rate today.
        step_refill = refill_percent_per_s * step
        known = np.median(past[:, 1:-1], axis=0) < FULL_PERCENT
        scaled = np.where(known, step_refill - ratio * (step_refill - changes), changes)
    else:
        scaled = np.where(changes < 0, ratio * changes, changes)
    empties_at, eases_at, left = _run(balance, scaled, now_t, step)
    return DayForecast(
        days=days,
        kind=kind,
        balance=balance,
        ratio=ratio,
        departs=ratio > departs_above or lately > departs_above,
        empties_at=empties_at,
        eases_at=eases_at,
        left_percent=left,
        **_pattern(past),
    )


def _day_rows(grid: Grid, day: datetime, most: int) -> Floats | None:
    """The whole UTC days of `grid` up to `day`'s, a row each (at most `most`, of its kind
    where two or more are: weekdays, or weekend days); None with fewer than two such days."""
    per_day = int(DAY_S // grid.period_s)
    first = math.ceil((grid.start.timestamp()) / DAY_S) * DAY_S
    last = (math.floor(day.timestamp() / DAY_S) + 1) * DAY_S
    offset = int((first - grid.start.timestamp()) // grid.period_s)
    count = min(int((last - first) // DAY_S), (len(grid) - offset) // per_day)
    if count < 2:
        return None
    rows = grid.values[offset : offset + count * per_day].reshape(count, per_day)
    starts = [datetime.fromtimestamp(first + d * DAY_S, UTC) for d in range(count)]
    alike = [d for d in range(count) if _weekend(starts[d]) == _weekend(day)][-most:]
    chosen = alike if len(alike) >= 2 else list(range(count))[-most:]
    return rows[chosen].astype(np.float64)


_ALIKE: weakref.WeakKeyDictionary[Grid, dict[tuple[str, int, int], bool | None]] = (
    weakref.WeakKeyDictionary()
)
"""What `days_alike` and `drain_alike` found, by grid and then by question and UTC day: a
fetched grid serves every cycle until the next fetch, and the answer moves only with the day."""


def _kept(
    question: str, grid: Grid, day: datetime, most: int, work: Callable[[], bool | None]
) -> bool | None:
    answers = _ALIKE.setdefault(grid, {})
    key = (question, math.floor(day.timestamp() / DAY_S), most)
    if key not in answers:
        answers[key] = work()
    return answers[key]


def days_alike(grid: Grid, day: datetime, most: int = DAYS) -> bool | None:
    """Whether the whole UTC days of `grid` up to `day`'s (at most `most`, of its kind where
    two or more are: weekdays, or weekend days) share a pattern through the day
    (`PATTERN_SWING`); None with fewer than two such days."""
    return _kept("days", grid, day, most, lambda: _days_alike(grid, day, most))


def _days_alike(grid: Grid, day: datetime, most: int) -> bool | None:
    rows = _day_rows(grid, day, most)
    if rows is None:
        return None
    found = _pattern(rows)
    return _shares_pattern(found["swing"], found["spread"])


def drain_alike(grid: Grid, day: datetime, most: int = DAYS) -> bool | None:
    """Whether the same days drain at the same hours, however deep: each day's balance read
    as the share of its own swing it has fallen (0 at its lowest, 1 at its highest), and the
    days then compared as `days_alike` compares them. A drain that deepens day by day keeps
    its hours and so its shape; bursts at other hours each day do not. Days that barely move
    (less than `PATTERN_SWING` points) are not drains and are left out; None where fewer than
    two days remain."""
    return _kept("drain", grid, day, most, lambda: _drain_alike(grid, day, most))


def _drain_alike(grid: Grid, day: datetime, most: int) -> bool | None:
    rows = _day_rows(grid, day, most)
    if rows is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a day without data: all NaN
        low = np.nanmin(rows, axis=1, keepdims=True)
        high = np.nanmax(rows, axis=1, keepdims=True)
    swing = (high - low)[:, 0]
    drains = np.nan_to_num(swing) >= PATTERN_SWING
    if np.count_nonzero(drains) < 2:
        return None
    shapes = (rows[drains] - low[drains]) / swing[drains][:, None]
    found = _pattern(shapes)
    return bool(found["spread"] <= SHAPE_SPREAD)


def _shares_pattern(swing: float, spread: float) -> bool:
    """`PATTERN_SWING`: the median moves far enough, and the days agree on it."""
    return swing >= PATTERN_SWING and spread <= swing / 2


def _pattern(past: Floats) -> dict[str, float]:
    """How far the past days' median moves, and how far apart the days are (by rank over the
    days each moment holds: a sort, not a NaN-aware percentile per moment)."""
    held = np.count_nonzero(~np.isnan(past), axis=0)
    known = held > 0
    if not known.any():
        return {"swing": 0.0, "spread": 0.0}
    ordered = np.sort(past[:, known], axis=0)  # NaN last
    count = held[known]
    columns = np.arange(ordered.shape[1])
    median = ordered[(count - 1) // 2, columns]
    spread = ordered[count - 1, columns] - ordered[0, columns]
    return {
        "swing": float(median.max() - median.min()),
        "spread": float(np.percentile(spread, 90)),
    }


def _lately(
    stretch: list[tuple[datetime, float]],
    recent_s: float | None,
    now_t: float,
    half: float,
    refill_percent_per_s: float | None,
    past_rate: float,
) -> float:
    """Today's demand over its last `recent_s` against the past days' over the compared
    window: a burst of the last minutes, averaged away over the window, still departs."""
    if not recent_s or past_rate * recent_s <= 0:
        return 0.0
    tail = [
        (t.timestamp() + half, v) for t, v in stretch if t.timestamp() + half >= now_t - recent_s
    ]
    if len(tail) < 2:
        return 0.0
    span = tail[-1][0] - tail[0][0]
    refill = refill_percent_per_s or 0.0
    return max(refill + (tail[0][1] - tail[-1][1]) / span, 0.0) / (refill + past_rate)


def _same_kind(seen: Floats, at: datetime, min_days: int) -> tuple[list[int], str] | None:
    """The rows of the past days to read: those that cover every moment, of today's kind
    where at least `min_days` of them do, else of either kind."""
    covered = [d for d in range(DAYS) if not np.isnan(seen[d]).any()]
    weekend = _weekend(at)
    alike = [d for d in covered if _weekend(at - timedelta(days=d + 1)) == weekend]
    if len(alike) >= min_days:
        return alike, "weekend days" if weekend else "weekdays"
    if len(covered) >= min_days:
        return covered, "days"
    return None


def _changes(past: Floats, first: Floats | None = None) -> Floats:
    """The median change per step across the past days. A step that ends with a day's bucket
    empty tells only that its demand was above the refill: the day is taken to drain on as
    it did before (its last drain, or `first`, its drain before the first step)."""
    steps = np.diff(past, axis=1)
    empty = past[:, 1:] <= EMPTY_BALANCE_PERCENT
    if empty.any():
        drains = ~empty & (steps < 0)
        # Each step's latest drain at or before it, day by day (-1: none yet).
        latest = np.maximum.accumulate(np.where(drains, np.arange(steps.shape[1]), -1), axis=1)
        carried = np.take_along_axis(steps, np.maximum(latest, 0), axis=1)
        before = np.full(len(steps), np.nan)
        if first is not None:
            before = np.where(first < 0, first, np.nan)
        fallback = np.broadcast_to(before[:, None], steps.shape)
        steps = np.where(empty, np.where(latest >= 0, carried, fallback), steps)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a step no day tells: no change
            median = np.nanmedian(steps, axis=0)
        return np.nan_to_num(median, nan=0.0)
    return np.median(steps, axis=0)


def _run(
    balance: float, changes: Floats, now_t: float, step: float
) -> tuple[datetime | None, datetime | None, float]:
    """When the balance, stepped through `changes` from `now_t`, empties; where it bottoms
    out (None while still falling at the end); and how low it gets."""
    level = balance
    levels = [level]
    for change in changes:
        level = min(level + float(change), 100.0)
        levels.append(level)
    trough = int(np.argmin(levels))
    eases_at = None if trough == len(levels) - 1 else _moment(now_t + trough * step)
    empties_at = None
    for k in range(1, len(levels)):
        if levels[k] <= EMPTY_BALANCE_PERCENT < levels[k - 1]:
            share = (levels[k - 1] - EMPTY_BALANCE_PERCENT) / (levels[k - 1] - levels[k])
            empties_at = _moment(now_t + (k - 1 + share) * step)
            break
    if balance <= EMPTY_BALANCE_PERCENT:
        return None, eases_at, 0.0
    return empties_at, eases_at, max(levels[trough], 0.0)


def _moment(seconds: float) -> datetime:
    return datetime.fromtimestamp(round(seconds), tz=UTC)
