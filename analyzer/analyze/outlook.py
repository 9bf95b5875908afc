"""Each resource's credit outlook, worked out once per cycle with the windows of its rule.

The windows come from the first enabled `credit_forecast` rule that applies to the resource
(the kind's defaults where none does: `RuleSet.forecast_windows`). The outlook at the
snapshot's data end is kept on the resource's state; the forecast rule reads it, and works it
out afresh only for the earlier moments its `for` looks back through, with the same windows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from analyzer.analyze.forecast import bucket_forecast, trend_forecast
from analyzer.model.layers import Bucket
from analyzer.model.metrics import Measure
from analyzer.model.outlook import ForecastWindows, Outlook
from analyzer.model.series import recent, window_evidence
from analyzer.model.state import EMPTY_BALANCE_PERCENT, ResourceState, Snapshot


def with_outlooks(
    snapshot: Snapshot, windows_for: Callable[[ResourceState], ForecastWindows]
) -> Snapshot:
    """The snapshot with each resource's forecast windows and its outlook at the data end."""
    states = [
        with_outlook(bare, windows_for(bare), snapshot.data_end, snapshot.generated_at)
        for bare in snapshot.resources
    ]
    return replace(snapshot, resources=tuple(states))


def with_outlook(
    bare: ResourceState, windows: ForecastWindows, data_end: datetime, generated_at: datetime
) -> ResourceState:
    """One resource with its forecast windows and its outlook at `data_end`, counted from
    `generated_at`."""
    current = bare.has_recent_data(data_end)
    if not current and bare.outlook is None and bare.windows == windows:
        return bare  # nothing recent: no outlook, as it stands
    state = replace(bare, windows=windows)
    return replace(state, outlook=outlook(state, data_end, generated_at) if current else None)


def outlook_at(state: ResourceState, snapshot: Snapshot, at: datetime) -> Outlook | None:
    """The outlook with the data complete by `at`: the one kept on the state at the data end;
    earlier (a rule's `for`), worked out with the same windows, counted from as far after
    `at` as the report time is after the data end."""
    if at == snapshot.data_end:
        return state.outlook
    return outlook(state, at, at + (snapshot.generated_at - snapshot.data_end))


def outlook(state: ResourceState, at: datetime, reference: datetime) -> Outlook | None:
    """Seconds from `reference` until the first of the resource's buckets is empty, using the
    data complete by `at`.

    None when no bucket is draining, when a balance is missing, or when it is already empty
    (then the exhausted rule speaks).
    """
    found = [o for b in state.buckets() if (o := _bucket_outlook(state, b, at, reference))]
    return min(found, key=lambda o: o.seconds_to_empty, default=None)


def _bucket_outlook(
    state: ResourceState, bucket: Bucket, at: datetime, reference: datetime
) -> Outlook | None:
    windows = state.windows
    balance = state.in_force(bucket.balance)
    current = state.balance(bucket.balance, at)
    if current is None or current <= EMPTY_BALANCE_PERCENT:
        return None
    rates = recent(state.in_force(bucket.rate), at, windows.rate_s)
    rate = rates.mean()
    if rate is None:
        return None
    evidence: dict[str, Any] = {
        **window_evidence(rates, windows.rate_s),
        "balance_percent": current,
        "baseline": bucket.baseline,
        "burst": bucket.burst,
    }
    model = bucket.model
    typed: dict[str, Any] = {}
    if model is not None:
        forecast = bucket_forecast(
            model,
            balance,
            state.in_force(Measure.IOPS),
            state.in_force(Measure.THROUGHPUT),
            at,
            reference,
            windows.rate_s,
        )
        if forecast is None or forecast.seconds_to_empty is None:
            return None
        evidence.update(
            model="bucket",
            capacity=model.capacity,
            credits=model.credits(current),
            charged_rate=forecast.consumption,
            drain_per_second=forecast.drain,
            rate_read_from=forecast.read_from.isoformat() if forecast.read_from else None,
        )
        typed["charged_rate"] = forecast.consumption
        if forecast.read_from is not None and rates.timestamps[0] < forecast.read_from:
            # The load changed within the window: the drain is read from the new load.
            since = rates.between(forecast.read_from, at).mean()
            evidence["rate_since_change"] = since
            typed |= {"read_from": forecast.read_from, "rate_since_change": since}
        seconds = forecast.seconds_to_empty
        if forecast.charge_range is not None:
            at_most = model.seconds_to_empty(forecast.balance_percent, forecast.charge_range[1])
            elapsed = (reference - forecast.balance_at).total_seconds()
            unmerged = max(at_most - elapsed, 0.0) if at_most else None
            evidence.update(
                charged_rate_range=list(forecast.charge_range),
                seconds_to_empty_if_unmerged=unmerged,
            )
            typed["seconds_if_unmerged"] = unmerged
    else:
        trend = trend_forecast(balance, at, reference, windows.trend_s)
        if trend is None or trend.seconds_to_empty is None:
            return None
        evidence.update(model="trend", slope_percent_per_minute=trend.slope_percent_per_s * 60)
        seconds = trend.seconds_to_empty
    return Outlook(seconds, bucket, rate, current, evidence, **typed)
