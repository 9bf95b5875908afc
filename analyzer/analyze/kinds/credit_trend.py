"""Rule kind `credit_trend`: a bucket's daily minimum falling towards zero, days ahead.

A daily drain (incident 3 of SPEC.md) refills overnight, so no forecast of the next hour sees
it coming until the day it empties; its daily minimum does, sliding down for days. The rule
fits a line through the balance's minima of the last whole days of the same kind as the
newest (weekdays, or weekend days, where at least `min_days` of them exist) and fires when the
line reaches zero within `within`, falling at least `min_fall` points a day. Where the
balance through those days was fetched and its days do not drain at the same hours (bursts at
other hours each day, `profile.drain_alike`), the minima are the lows of random bursts and
their slope is chance: no trend. Days are alike by when they drain, not by how deep: a drain
that deepens each day is the very trend the rule is for.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import Field

from analyzer.analyze.kinds.base import RuleBase
from analyzer.analyze.profile import drain_alike
from analyzer.model.findings import TREND_HORIZON, Credit, Finding
from analyzer.model.layers import buckets_of
from analyzer.model.metrics import Measure
from analyzer.model.resources import ResourceType
from analyzer.model.series import Series
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import PositiveDuration, Unit

DAY_S = 86_400.0


def _weekend(moment: datetime) -> bool:
    return moment.weekday() >= 5


def daily_minima(series: Series, min_days: int) -> list[tuple[datetime, float]]:
    """The minima of the days of the same kind as the newest (weekday or weekend), where at
    least `min_days` exist; all of them otherwise."""
    points = series.points()
    if not points:
        return []
    kind = _weekend(points[-1][0])
    alike = [(t, v) for t, v in points if _weekend(t) == kind]
    return alike if len(alike) >= min_days else points


def slope_per_day(points: list[tuple[datetime, float]]) -> float:
    """Least squares through (day, minimum): points a day."""
    xs = [(t - points[0][0]).total_seconds() / DAY_S for t, _ in points]
    ys = [v for _, v in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    if spread == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread


class CreditTrend(RuleBase):
    """Fires when a bucket's daily minimum trends to zero within `within`."""

    kind: Literal["credit_trend"] = "credit_trend"
    min_days: int = Field(default=3, ge=2, le=14)
    """Whole days of the same kind the line is fitted through (the newest ones)."""
    within: PositiveDuration = 7 * DAY_S
    min_fall: float = Field(default=2.0, gt=0)
    """Points of balance a day, at least: a flat series with noise is not a trend."""

    supported: ClassVar[frozenset[ResourceType]] = frozenset(ResourceType)
    reads_past: ClassVar[bool] = True
    daily: ClassVar[bool] = True

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        for bucket in buckets_of(state.ref.resource_type, state.envelope, state.class_envelope):
            found = self._trend(state, bucket.balance)
            if found is None:
                continue
            minima, slope, days = found
            grid = state.days(bucket.balance)
            if grid is not None and drain_alike(grid, minima[-1][0]) is False:
                continue  # bursts at other hours each day: their minima wander, no trend
            shown = ", ".join(f"{v:.0f}%" for _, v in minima)
            return self.finding(
                state,
                bucket.bottleneck,
                self.min_days * DAY_S,
                summary=(
                    f"{state.label}: the daily minimum of {bucket.name} is falling about "
                    f"{-slope:.0f} points a day ({shown} on the last {len(minima)} "
                    f"{'weekend days' if _weekend(minima[-1][0]) else 'days'}): empty within "
                    f"{days:.0f} day{'s' if round(days) != 1 else ''} at this pace."
                ),
                observed=minima[-1][1],
                limit=0.0,
                unit=Unit.PERCENT,
                seconds_to_empty=days * DAY_S,
                evidence={
                    "forecast": "trend",
                    "daily_minima": [
                        {"day": t.date().isoformat(), "percent": round(v, 1)} for t, v in minima
                    ],
                    "points_per_day": round(slope, 2),
                    "days_to_empty": round(days, 1),
                    TREND_HORIZON: self.within,
                },
                credit=Credit(bucket.balance, horizon_s=self.within),
            )
        return None

    def _trend(
        self, state: ResourceState, balance: Measure
    ) -> tuple[list[tuple[datetime, float]], float, float] | None:
        series = state.minima(balance)
        if series is None:
            return None
        minima = daily_minima(series, self.min_days)[-self.min_days :]
        if len(minima) < self.min_days:
            return None
        slope = slope_per_day(minima)
        if slope > -self.min_fall:
            return None
        newest = minima[-1][1]
        if newest <= 0:
            return None  # already empty: `credits_exhausted` says so
        days = newest / -slope
        if days * DAY_S > self.within:
            return None
        return minima, slope, days
