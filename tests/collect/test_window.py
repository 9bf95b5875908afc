from datetime import UTC, datetime, timedelta

import pytest

from analyzer.collect.window import aligned, floor_to, read_end

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


def test_a_cycle_reads_up_to_the_newest_minute_published_within_its_bounds():
    """The newest minute CloudWatch has published, never earlier than the settle delay before
    the cycle, nor later than the minute under way."""
    now = datetime(2026, 11, 21, 12, 5, 20, tzinfo=UTC)
    minute = timedelta(minutes=1)
    at_five = now.replace(second=0)
    assert read_end(now, None, 120) == at_five - 2 * minute
    assert read_end(now, at_five - minute, 120) == at_five - minute
    assert read_end(now, at_five - 10 * minute, 120) == at_five - 2 * minute
    assert read_end(now, at_five + 3 * minute, 120) == at_five
