"""Pure: how long a burst bucket lasts at the rate it is being drained now.

Volume buckets follow the model (credits = BurstBalance × capacity, drain = consumption −
baseline). Instance EBS buckets have no published size, so their forecast follows the trend of
EBSIOBalance% / EBSByteBalance% instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from analyzer.model.limits import CreditBucket
from analyzer.model.series import Series, is_recent, latest_balance


@dataclass(frozen=True, slots=True)
class CreditForecast:
    balance_percent: float
    """The newest BurstBalance reading."""
    balance_at: datetime
    """The middle of the period that reading averages."""
    consumption: float
    """What the bucket is charged per second, averaged over the rate window."""
    drain: float
    """Credits lost per second (negative while filling)."""
    seconds_to_empty: float | None
    """From the forecast's reference time; None while the bucket is not draining."""
    read_from: datetime | None = None
    """Where the rate was read from: the window's start, or where the load changed in it."""
    charge_range: tuple[float, float] | None = None
    """st1/sc1 where the data cannot tell merged from unmerged I/O: the least and the most the
    bucket may be charged (`consumption` is the least)."""


def bucket_forecast(
    bucket: CreditBucket,
    balance: Series,
    iops: Series,
    throughput: Series,
    at: datetime,
    reference: datetime,
    rate_window_s: float,
) -> CreditForecast | None:
    """Seconds from `reference` until the bucket is empty, using data complete by `at`.

    The drain is the mean consumption over the last `rate_window_s` seconds, so that one noisy
    minute neither raises nor cancels a forecast. The credits are projected from the moment of
    the last BurstBalance reading to `reference` at that drain.
    """
    reading = latest_balance(balance, at)
    if reading is None:
        return None
    balance_at, percent = reading
    charge = _present_charge(bucket, balance, iops, throughput, at, rate_window_s)
    if charge is None:
        return None
    consumption, start, undecided = charge
    drain = bucket.drain(consumption)
    seconds = bucket.seconds_to_empty(percent, consumption)
    if seconds is not None:
        elapsed = (reference - balance_at).total_seconds()
        seconds = max(seconds - elapsed, 0.0)
    return CreditForecast(percent, balance_at, consumption, drain, seconds, start, undecided)


def seconds_to_full(
    bucket: CreditBucket,
    balance: Series,
    iops: Series,
    throughput: Series,
    at: datetime,
    rate_window_s: float,
) -> float | None:
    """Seconds until a bucket that is refilling is full at the present rate (read as the drain
    is); None where it is full, draining, or not read."""
    reading = latest_balance(balance, at)
    if reading is None or reading[1] >= 100.0:
        return None
    charge = _present_charge(bucket, balance, iops, throughput, at, rate_window_s)
    if charge is None:
        return None
    drain = bucket.drain(charge[0])
    if drain >= 0:
        return None
    return (bucket.capacity - bucket.credits(reading[1])) / -drain


def _present_charge(
    bucket: CreditBucket,
    balance: Series,
    iops: Series,
    throughput: Series,
    at: datetime,
    rate_window_s: float,
) -> tuple[float, datetime, tuple[float, float] | None] | None:
    """What the bucket is charged per second now, the mean over the rate window from where
    the load last changed in it, where that is, and the range it lies in where the data
    cannot tell; None without rates.

    st1/sc1 may be charged anything between their bytes (merged sequential I/O) and a MiB per
    operation (small random I/O). The balance itself tells which: its fall over the window is
    the drain AWS charged, taken within that range. With too few readings to fit a fall, the
    least charge decides and the range is returned with it.
    """
    start = drain_began(bucket, iops, throughput, at, rate_window_s)
    mean_iops = iops.between(start, at).mean()
    mean_bps = throughput.between(start, at).mean()
    if mean_iops is None and mean_bps is None:
        return None
    low, high = bucket.charge_range(mean_iops or 0.0, mean_bps or 0.0)
    if high <= low:
        return low, start, None
    charged = _charged_by_balance(bucket, balance, start, at, rate_window_s)
    if charged is None:
        return low, start, (low, high)
    return min(max(charged, low), high), start, None


MIN_BALANCE_READINGS = 3
"""The fewest balance readings whose fall is read as the drain AWS charged."""


def _charged_by_balance(
    bucket: CreditBucket, balance: Series, start: datetime, at: datetime, rate_window_s: float
) -> float | None:
    """The charge the balance's fall shows: over the readings since `start`, or over the
    whole rate window where those are too few."""
    for since in (start, at - timedelta(seconds=rate_window_s)):
        readings = balance.between(since, at)
        if len(readings) >= MIN_BALANCE_READINGS:
            slope = _slope(readings)
            if slope is not None:
                return bucket.baseline - slope / 100.0 * bucket.capacity
    return None


MIN_REGIME_PERIODS = 2
"""A rate seen for fewer periods than this is not yet a regime of its own."""
EXPLAINED = 0.8
"""Two stretches of the window are two regimes when their two means account for this share of
the charges' spread over the window..."""
LEVEL_CHANGE = 1.1
"""...and one mean is at least this many times the other: not noise around one level."""


def drain_began(
    bucket: CreditBucket, iops: Series, throughput: Series, at: datetime, rate_window_s: float
) -> datetime:
    """Where the rate window's drain is read from: its start, or where the load changed
    within it, the first whole period of the new load.

    The heuristic (one change point): the window's charges per period are split where two
    means fit them best, and the split is taken when those two means explain most of the
    spread (`EXPLAINED`) and differ by more than noise (`LEVEL_CHANGE`). A burst that began
    within the window, averaged with the quiet periods before it, understates the drain, badly
    where the baseline is close to the burst rate (a large gp2 volume four minutes into a
    burst looked five times further from empty than it was); a burst that ended within it
    overstates it. The new stretch loses its first period when it
    is longer than `MIN_REGIME_PERIODS`, since the load may have changed within that period.
    """
    start = _rates_end(iops, throughput, at) - timedelta(seconds=rate_window_s)
    ops = dict(iops.between(start, at).points())
    data = dict(throughput.between(start, at).points())
    stamps = sorted(ops.keys() | data.keys())
    charges = [bucket.consumption(ops.get(t, 0.0), data.get(t, 0.0)) for t in stamps]
    split = _change_point(charges)
    if split is None:
        return start
    return stamps[split + 1] if len(stamps) - split > MIN_REGIME_PERIODS else stamps[split]


def _rates_end(iops: Series, throughput: Series, at: datetime) -> datetime:
    """The end of the rates' newest period complete by `at`, where the rate window ends (as
    `series.recent` reads it): a sum's newest minute may come a minute after the balance's."""
    ends = [
        last[0] + timedelta(seconds=series.period_s)
        for series in (iops, throughput)
        if is_recent(series, at) and (last := series.until(at).last()) is not None
    ]
    return max(ends, default=at)


def _change_point(values: list[float]) -> int | None:
    """The index where the last stretch of a different level begins, if there is one."""
    best: tuple[float, int] | None = None
    for k in range(1, len(values) - MIN_REGIME_PERIODS + 1):
        cost = _spread(values[:k]) + _spread(values[k:])
        if best is None or cost < best[0]:
            best = (cost, k)
    if best is None:
        return None
    cost, k = best
    before, after = _mean(values[:k]), _mean(values[k:])
    low, high = min(before, after), max(before, after)
    explained = _spread(values) - cost >= EXPLAINED * _spread(values)
    return k if explained and high > 0 and high >= LEVEL_CHANGE * low else None


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _spread(values: list[float]) -> float:
    mean = _mean(values)
    return sum((v - mean) ** 2 for v in values)


@dataclass(frozen=True, slots=True)
class TrendForecast:
    balance_percent: float
    slope_percent_per_s: float
    seconds_to_empty: float | None


def trend_forecast(
    balance: Series, at: datetime, reference: datetime, window_s: float
) -> TrendForecast | None:
    """Least-squares slope of a balance over the window, extended to zero.

    Needs at least two readings; a flat or rising balance does not forecast an empty one.
    """
    recent = balance.between(at - timedelta(seconds=window_s), at)
    if len(recent) < 2:
        return None
    slope = _slope(recent)
    if slope is None:
        return None
    newest_at, newest = latest_balance(recent, at) or (recent.timestamps[-1], recent.values[-1])
    if slope >= 0:
        return TrendForecast(newest, slope, None)
    elapsed = (reference - newest_at).total_seconds()
    return TrendForecast(newest, slope, max(newest / -slope - elapsed, 0.0))


def _slope(series: Series) -> float | None:
    """The least-squares slope of a series per second; None where all its points share one
    time."""
    xs = [(t - series.timestamps[0]).total_seconds() for t in series.timestamps]
    ys = list(series.values)
    mean_x = sum(xs) / len(xs)
    mean_y = sum(ys) / len(ys)
    var = sum((x - mean_x) ** 2 for x in xs)
    if var == 0:
        return None
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / var
