from datetime import UTC, datetime, timedelta

import pytest

from analyzer.collect.window import aligned, floor_to

NOW = datetime(2026, 11, 21, 12, 7, 42, tzinfo=UTC)


@pytest.mark.parametrize(
    ("period", "lookback", "settle", "start", "end"),
    [
        (60, 3 * 3600, 120, "09:05", "12:05"),
        (300, 3 * 3600, 120, "09:05", "12:05"),
        (60, 600, 0, "11:57", "12:07"),
        (300, 600, 0, "11:55", "12:05"),
        (60, 0, 120, "12:04", "12:05"),  # never less than one period
    ],
)
def test_windows_cover_whole_periods_before_the_settle_delay(period, lookback, settle, start, end):
    window = aligned(NOW, period, lookback, settle)
    assert window.start.strftime("%H:%M") == start
    assert window.end.strftime("%H:%M") == end
    assert window.start.timestamp() % period == 0
    assert window.end.timestamp() % period == 0
    assert window.end <= NOW - timedelta(seconds=settle)


def test_floor_to_converts_to_utc():
    local = datetime(2026, 11, 21, 13, 7, 42, tzinfo=UTC).astimezone()
    assert floor_to(local, 60) == datetime(2026, 11, 21, 13, 7, tzinfo=UTC)


def test_period_must_be_positive():
    with pytest.raises(ValueError):
        aligned(NOW, 0, 60, 0)
