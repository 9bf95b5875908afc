"""Rule kind `credit_forecast`: a draining bucket that will be empty within the horizon.

Two forecasts speak (SPEC.md, Forecasts). The physics forecast is the resource's outlook,
worked out once per cycle with this rule's windows (see `analyze/outlook.py`): the finding, the
report row and the gauge give one time to empty. Volume buckets (gp2, st1, sc1) follow the
bucket model; instance EBS buckets (EBSIOBalance%, EBSByteBalance%) the trend of their balance.
The profile forecast (`analyze/profile.py`) runs the bucket through the rest of the day as the
resource's own past days ran it, at today's rate. Where today follows them, the profile decides:
it warns hours ahead of a day that will empty the bucket, and turns the physics forecast's
warning into `info` on a day that will end with credits left. Where today departs from them, or
no past days were fetched, the physics forecast decides alone. A missing balance never fires it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import Field

from analyzer.analyze.kinds.base import RuleBase
from analyzer.analyze.outlook import outlook_at
from analyzer.analyze.profile import DayForecast, day_forecast
from analyzer.model import units
from analyzer.model.findings import Finding, Severity
from analyzer.model.layers import Bucket
from analyzer.model.outlook import DEFAULT_RATE_WINDOW_S, DEFAULT_TREND_WINDOW_S, Outlook
from analyzer.model.resources import ResourceType
from analyzer.model.series import recent
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import PositiveDuration, format_rate


class CreditForecast(RuleBase):
    """Fires when a draining bucket will be empty within `horizon`."""

    kind: Literal["credit_forecast"] = "credit_forecast"
    horizon: PositiveDuration = 3600.0
    rate_window: PositiveDuration = DEFAULT_RATE_WINDOW_S
    """The drain is the mean rate over this window, so one noisy minute does not decide."""
    trend_window: PositiveDuration = DEFAULT_TREND_WINDOW_S
    """Instance balances: the slope is fitted over this window."""
    profile: bool = True
    """Let the resource's past days extend the forecast (and quieten it), where fetched."""
    profile_days: int = Field(default=3, ge=2, le=14)
    """Past days of the same kind as today (weekdays, weekend days) the profile needs; of
    either kind where there are fewer."""
    profile_horizon: PositiveDuration = Field(default=12 * 3600.0, le=17 * 3600.0)
    """How far ahead the profile looks. At most 17 h: the newest past day it reads is then
    seven hours old, so the past fetched every six hours always holds it (with an hour for
    CloudWatch's late datapoints and the last period's middle)."""
    profile_window: PositiveDuration = DEFAULT_TREND_WINDOW_S
    """Today's rate is compared with the past days' over this window."""
    departs_above: float = Field(default=1.2, gt=1.0)
    """Today departs from its past days when its rate is above this multiple of theirs at the
    same hours: then the physics forecast decides alone."""

    supported: ClassVar[frozenset[ResourceType]] = frozenset(ResourceType)

    @property
    def reads_past(self) -> bool:
        return self.profile

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        reference = at + (snapshot.generated_at - snapshot.data_end)
        found = outlook_at(state, snapshot, at)
        if found is not None and found.seconds_to_empty <= self.horizon:
            day = self._day(state, found.bucket, at)
            if day is not None and not day.departs and day.empties_at is None:
                return self._eased(state, found, day, at)
            return self._physics(state, found)
        emptying = [
            (bucket, day)
            for bucket in state.buckets()
            if (day := self._day(state, bucket, at)) is not None
            and not day.departs
            and day.empties_at is not None
            and (day.empties_at - at).total_seconds() <= self.profile_horizon
        ]
        if not emptying:
            return None
        bucket, day = min(emptying, key=lambda found: found[1].empties_at or at)
        return self._profiled(state, bucket, day, at, reference)

    def _day(self, state: ResourceState, bucket: Bucket, at: datetime) -> DayForecast | None:
        grid = state.past.days.get(bucket.balance) if self.profile else None
        if grid is None:
            return None
        model = bucket.model
        return day_forecast(
            grid,
            state.measure(bucket.balance),
            at,
            refill_percent_per_s=100.0 * model.baseline / model.capacity if model else None,
            min_days=self.profile_days,
            horizon_s=self.profile_horizon,
            window_s=self.profile_window,
            recent_s=self.rate_window,
            departs_above=self.departs_above,
        )

    def _physics(self, state: ResourceState, found: Outlook) -> Finding:
        bucket = found.bucket
        kind = bucket.owner
        summary = (
            f"{state.label}: {bucket.name} {found.balance_percent:.0f}% → 0 in "
            f"{units.duration(found.seconds_to_empty)} at "
            f"{format_rate(found.rate, bucket.unit, kind)}{_charged_more(found)}; "
            f"then throttled to {format_rate(bucket.baseline, bucket.unit, kind)}"
            f"{_if_unmerged(found.evidence)}."
        )
        return self.finding(
            state,
            bucket.bottleneck,
            state.windows.rate_s,
            summary=summary,
            observed=found.rate,
            limit=bucket.baseline,
            unit=bucket.unit,
            seconds_to_empty=found.seconds_to_empty,
            evidence={**found.evidence, "forecast": "physics"},
        )

    def _eased(
        self, state: ResourceState, found: Outlook, day: DayForecast, at: datetime
    ) -> Finding:
        """The recent rate would empty the bucket within the horizon, but the past days say
        the load eases first, and today follows them: `info`, not a warning."""
        bucket = found.bucket
        kind = bucket.owner
        eases = f" at {_clock(day.eases_at, at)}" if day.eases_at else ""
        summary = (
            f"{state.label}: {bucket.name} {found.balance_percent:.0f}% would reach 0 in "
            f"{units.duration(found.seconds_to_empty)} at "
            f"{format_rate(found.rate, bucket.unit, kind)}, but the load usually eases{eases} "
            f"and today follows the past {day.kind} ({_load(day)}): about "
            f"{day.left_percent:.0f}% left then."
        )
        return self.finding(
            state,
            bucket.bottleneck,
            state.windows.rate_s,
            severity=Severity.INFO,
            summary=summary,
            observed=found.rate,
            limit=bucket.baseline,
            unit=bucket.unit,
            seconds_to_empty=None,
            evidence={
                **found.evidence,
                **_profile_evidence(day),
                "physics_seconds_to_empty": found.seconds_to_empty,
            },
        )

    def _profiled(
        self,
        state: ResourceState,
        bucket: Bucket,
        day: DayForecast,
        at: datetime,
        reference: datetime,
    ) -> Finding:
        """The past days, run at today's rate, empty the bucket before the load eases."""
        assert day.empties_at is not None
        kind = bucket.owner
        seconds = max((day.empties_at - reference).total_seconds(), 0.0)
        eases = (
            f"the load usually eases at {_clock(day.eases_at, at)}"
            if day.eases_at
            else "the load usually lasts longer"
        )
        summary = (
            f"{state.label}: {bucket.name} {day.balance:.0f}% → empties at about "
            f"{_clock(day.empties_at, at)} (in {units.duration(seconds)}); {eases} "
            f"(past {day.kind}, same hours; {_load(day)}); then throttled to "
            f"{format_rate(bucket.baseline, bucket.unit, kind)}."
        )
        rate = recent(state.measure(bucket.rate), at, self.rate_window).mean()
        return self.finding(
            state,
            bucket.bottleneck,
            self.profile_window,
            summary=summary,
            observed=rate if rate is not None else 0.0,
            limit=bucket.baseline,
            unit=bucket.unit,
            seconds_to_empty=seconds,
            evidence={
                **_profile_evidence(day),
                "baseline": bucket.baseline,
                "burst": bucket.burst,
            },
        )


def _clock(moment: datetime, today: datetime) -> str:
    """16:35 UTC today (or tomorrow): to the nearest five minutes (what the past's five-minute
    means tell), the day named relative to `today`."""
    moment = datetime.fromtimestamp(round(moment.timestamp() / 300) * 300, tz=moment.tzinfo)
    days = (moment.date() - today.date()).days
    word = {0: "today", 1: "tomorrow"}.get(days, moment.date().isoformat())
    return f"{moment:%H:%M} UTC {word}"


def _load(day: DayForecast) -> str:
    return f"today's load {day.ratio:.2f}× theirs"


def _profile_evidence(day: DayForecast) -> dict[str, Any]:
    return {
        "forecast": "profile",
        "balance_percent": day.balance,
        "empties_at": day.empties_at.isoformat() if day.empties_at else None,
        "eases_at": day.eases_at.isoformat() if day.eases_at else None,
        "left_percent": round(day.left_percent, 1),
        "load_ratio": round(day.ratio, 3) if math.isfinite(day.ratio) else None,
        "past_days": [d.isoformat() for d in day.days],
        "past_days_kind": day.kind,
    }


def _if_unmerged(evidence: Mapping[str, object]) -> str:
    """st1/sc1 where the data cannot tell merged from random I/O: the other end of the range."""
    seconds = evidence.get("seconds_to_empty_if_unmerged")
    if not isinstance(seconds, int | float):
        return ""
    return f" (in {units.duration(seconds)} if the I/O is random and unmerged)"


CHARGED_ABOVE = 1.1
"""A charge this far above the rate moved is named: st1/sc1 count each unmerged I/O as 1 MiB."""


def _charged_more(found: Outlook) -> str:
    charged = found.evidence.get("charged_rate")
    if not isinstance(charged, int | float) or charged <= CHARGED_ABOVE * found.rate:
        return ""
    unit = found.bucket.unit
    return (
        f", charged as {format_rate(charged, unit, found.bucket.owner)} "
        "(each small random I/O counts as 1 MiB)"
    )
