"""Small builders shared by the tests."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from analyzer.models import Status
from analyzer.series import Series

T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def series(values: Sequence[float], start: datetime = T0, period_s: int = 60) -> Series:
    """A series with one value per period from `start`."""
    points = [(start + timedelta(seconds=i * period_s), v) for i, v in enumerate(values)]
    return Series.of(points, period_s, Status.OK if points else Status.NO_DATA)
