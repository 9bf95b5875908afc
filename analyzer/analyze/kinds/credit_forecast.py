"""Rule kind `credit_forecast`: a draining bucket that will be empty within the horizon.

Two forecasts speak (SPEC.md, Forecasts). The physics forecast is the resource's outlook,
worked out once per cycle with this rule's windows (see `analyze/outlook.py`): the finding, the
report row and the gauge give one time to empty. Volume buckets (gp2, st1, sc1) follow the
bucket model; instance EBS buckets (EBSIOBalance%, EBSByteBalance%) the trend of their balance.
The profile forecast (`analyze/profile.py`) runs the bucket through the rest of the day as the
resource's own past days ran it, at today's rate. Where today follows them, the profile decides:
it warns hours ahead of a day that will empty the bucket, and turns the physics forecast's
warning into `info` on a day that will end with credits left.

Where the past days share no pattern (bursts at other hours each day: `DayForecast.patterned`),
the bucket's record of its drains (`analyze/record.py`) judges the physics forecast: a drain
warns where the drains of the past two weeks that had spent as much as this one went on,
often enough (`warn_chance`), to spend what is left. Where the record does not vouch for it,
the drain's burn decides (`burn`): the balance's net fall over a long and a short window both
spend what is left within a pair's `within` (the multiwindow, multi-burn-rate alert of the SRE
Workbook); otherwise it is a burst like the many before it, and says nothing. Below
`low_balance` (the floor: the alarm operators run) it warns whatever the forecasts say: a
bucket that hovers low between bursts is one warning, not one a burst (see `floor`). Without a
record (a bucket that has not drained in two weeks) the physics forecast decides alone, unless
the bucket is young: its past, as read, holds fewer whole days than `profile_days` (a new
volume, an account just added, a recording's first days). Then nothing tells a drain from the
bucket's routine, and only its burn lets the physics forecast speak above the floor: on real
recorded load, the physics forecast alone warned a young bucket of 373 drains that never
emptied it where the burn warned of 2, none of 44 exhaustions later than the alarm
(docs/backtest.md, "Without a past"). A missing balance never fires it.

Each warning carries `clear_balance` (`HOLDS_UNTIL` in its evidence): the alert book keeps it
firing, whatever the forecast says meanwhile, until the bucket refills past that level.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.analyze.kinds.base import RuleBase
from analyzer.analyze.outlook import outlook_at
from analyzer.analyze.profile import DayForecast, day_forecast
from analyzer.analyze.record import LEAST_DRAINS, Chance, drains, record_of
from analyzer.collect.past import REFRESH_S
from analyzer.collect.window import floor_to
from analyzer.model import units
from analyzer.model.findings import HOLDS_BALANCE, HOLDS_UNTIL, Credit, Finding, Severity
from analyzer.model.layers import Bucket
from analyzer.model.outlook import DEFAULT_RATE_WINDOW_S, DEFAULT_TREND_WINDOW_S, Outlook
from analyzer.model.resources import ResourceType
from analyzer.model.series import Series, recent
from analyzer.model.state import EMPTY_BALANCE_PERCENT, ResourceState, Snapshot
from analyzer.model.units import Duration, PositiveDuration, Unit, format_rate

CLEAR_BALANCE = 30.0


class BurnWindows(BaseModel):
    """One pair of windows the burn is read over: the balance left is the budget, its net fall
    per second the burn (the drain less what the baseline earns back). The pair speaks where
    the burn over both windows empties the bucket `within`: the long window says the drain has
    lasted, the short one that it goes on now (the multiwindow, multi-burn-rate alert of the
    SRE Workbook's chapter "Alerting on SLOs")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    long: PositiveDuration
    short: PositiveDuration
    within: PositiveDuration

    @model_validator(mode="after")
    def _short_within_long(self) -> BurnWindows:
        if self.short >= self.long:
            raise ValueError(
                f"burn window short {units.duration(self.short)} is not shorter than long "
                f"{units.duration(self.long)}"
            )
        return self


DEFAULT_BURN = (BurnWindows(long=900.0, short=300.0, within=600.0),)
"""Gone within ten minutes by the last quarter hour's burn and by the last five minutes'."""
OVERRULES = 20
"""Drains that spent as much as the one under way: a record with this many overrules a
departure from the past days."""


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
    record: bool = True
    """Let the bucket's record of its drains judge the physics forecast, where fetched."""
    warn_chance: float = Field(default=0.9, gt=0.0, le=1.0)
    """A drain warns above `low_balance` when the record gives it at least this chance of
    emptying the bucket. High, because such a warning comes early: below `low_balance` the
    floor warns anyway."""
    low_balance: float = Field(default=20.0, gt=0.0, lt=100.0)
    """Percent. The floor: the level of the alarm operators run today. A bucket whose latest
    reading is below it warns, whatever the forecasts say, so that every drain that alarm
    would warn of is warned no later."""
    clear_balance: float = Field(default=CLEAR_BALANCE, gt=0.0, le=100.0)
    """Percent. A warning holds until the bucket refills past this, whatever the forecast
    says meanwhile: a bucket hovering low between bursts is one alert, not one a burst.
    At least `low_balance`."""
    anticipate: Duration = 0.0
    """Above `low_balance`, a drain that reaches it within this at its net drain, read over
    both `rate_window` and `anticipate_window` (a burst that has just begun, or one that has
    slowed, does not), warns: the floor, a few minutes early. 0: never."""
    anticipate_window: PositiveDuration = 900.0
    """The longer of the two windows the net drain is read over to anticipate the floor."""
    burn: tuple[BurnWindows, ...] = DEFAULT_BURN
    """Above `low_balance`, a drain whose record does not judge it likely to empty the bucket
    still warns where the burn over both windows of a pair empties it within that pair's
    `within`, the record aside: the physics of the drain under way; so does a young bucket's
    (see `_young`), which has no record. Empty: never, and a young bucket is judged by the
    physics forecast alone."""
    drain_window: PositiveDuration = Field(default=DEFAULT_TREND_WINDOW_S, le=3600.0)
    """How far back the drain under way is read from the one-minute balance: a drain that began
    earlier has spent at least what this window shows."""

    supported: ClassVar[frozenset[ResourceType]] = frozenset(ResourceType)

    @model_validator(mode="after")
    def _clears_above_low(self) -> CreditForecast:
        if self.clear_balance < self.low_balance:
            raise ValueError(
                f"clear_balance {self.clear_balance:g} is below low_balance "
                f"{self.low_balance:g}: a warning would clear where it holds"
            )
        return self

    @property
    def reads_past(self) -> bool:
        return self.profile

    def reach(self) -> float:
        longest = max((pair.long for pair in self.burn), default=0.0)
        return max(super().reach(), self.for_ + longest)

    def _about(
        self,
        state: ResourceState,
        bucket: Bucket,
        window_s: float,
        severity: Severity | None = None,
        *,
        balance: float | None,
        charged: float | None = None,
        **fields: Any,
    ) -> Finding:
        """A finding about `bucket`, its `balance` now. A warning carries the level it holds
        until (`clear_balance`) and the balance read against it: the alert book keeps it firing
        while that balance stays below."""
        evidence = dict(fields.get("evidence", {}))
        holds = (severity or self.severity).rank >= Severity.WARNING.rank
        if holds:
            evidence |= {HOLDS_UNTIL: self.clear_balance, HOLDS_BALANCE: bucket.balance.value}
        credit = Credit(
            bucket.balance,
            balance_percent=balance,
            holds_until_percent=self.clear_balance if holds else None,
            charged_rate=charged,
        )
        fields |= {"evidence": evidence, "credit": credit}
        return self.finding(state, bucket.bottleneck, window_s, severity, **fields)

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        reference = at + (snapshot.generated_at - snapshot.data_end)
        found = outlook_at(state, snapshot, at)
        if found is not None and found.seconds_to_empty <= self.horizon:
            day = self._day(state, found.bucket, at)
            if day is not None and not day.departs and day.empties_at is None:
                return self._eased(state, found, day, at)
            if found.balance_percent < self.low_balance:
                return self._physics(state, found, spoke="floor")
            if not _draining(state, found.bucket, at, charged=True):
                return None  # idle now, or not falling: an early word foresees nothing yet
            # The record judges the physics forecast, where there is one. Where today departs
            # from its past days, only a record that has seen many drains this deep
            # (`OVERRULES`) overrules physics: a departure of a minute at the end of a daily
            # burst is not news, a heavier load than usual is.
            judged = self._judged(state, found.bucket, at)
            if day is not None and judged is not None and judged.at_risk < OVERRULES:
                judged = None
            if judged is None and self.burn and self._young(state, found.bucket):
                # A past too short to vouch for the drain or call it news: only a drain that
                # has lasted (its burn) speaks, so a new volume's first bursts do not page.
                burnt = self._burning(state, found.bucket, at)
                if burnt is None:
                    return None
                return self._physics(state, found, burnt=burnt, spoke="burn")
            if judged is None or judged.chance >= self.warn_chance:
                return self._physics(state, found, judged)
            burnt = self._burning(state, found.bucket, at)
            if burnt is not None:
                return self._physics(state, found, judged, burnt=burnt, spoke="burn")
            reaches = self._reaches_low(state, found.bucket, at)
            if reaches is not None:
                return self._physics(state, found, judged, reaches)
            return None  # a burst like the many before it: not news
        emptying = [
            (bucket, day)
            for bucket in state.buckets()
            if _draining(state, bucket, at)
            and (day := self._day(state, bucket, at)) is not None
            and not day.departs
            and day.empties_at is not None
            and (day.empties_at - at).total_seconds() <= self.profile_horizon
        ]
        if emptying:
            bucket, day = min(emptying, key=lambda found: found[1].empties_at or at)
            return self._profiled(state, bucket, day, at, reference)
        return None

    def floor(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        """The floor of the policy: the alarm operators run. A bucket whose latest reading is
        below `low_balance` warns, and goes on warning while it idles low: with no reading
        (AWS publishes none while a volume is idle) it can have refilled at most at its
        baseline, and it warns until that could have brought it past `clear_balance`. The
        analysis stage asks this of a resource no credit warning speaks of."""
        for bucket in state.buckets():
            reading = state.balance(bucket.balance, at)
            most = state.balance_at_most(bucket.balance, at)
            if reading is None or most is None or reading >= self.low_balance:
                continue
            if most >= self.clear_balance:
                continue
            found = state.outlook
            if found is not None and found.bucket == bucket:
                return self._physics(state, found)
            return self._low(state, bucket, reading, most, at)
        return None

    def _judged(self, state: ResourceState, bucket: Bucket, at: datetime) -> Chance | None:
        """What the bucket's record says of the drain under way (spent from its peak in the
        last `drain_window`); None without a record of `LEAST_DRAINS` drains (one whose daily
        minima never fell below `DRAINED_BELOW` has none fetched) or a balance to read."""
        grid = state.days(bucket.balance) if self.record else None
        if grid is None:
            return None
        balance = recent(state.in_force(bucket.balance), at, self.drain_window)
        current = state.balance(bucket.balance, at)
        if current is None or not len(balance):
            return None
        _, still = drains(np.asarray(balance.values, dtype=np.float64))
        peak, trough = still if still is not None else (current, current)
        spent = peak - min(current, trough)
        # The past as fetched every six hours: in a replay too, the record reads no further.
        record = record_of(grid, floor_to(at, int(REFRESH_S)))
        if len(record) < LEAST_DRAINS:
            return None
        return record.chance(peak, spent)

    def _young(self, state: ResourceState, bucket: Bucket) -> bool:
        """Whether the bucket's past, as read, holds fewer whole days than `profile_days` (a
        new volume, an account just added, a recording's first days): too short for a record
        to vouch for a drain or a profile to call it news. A past not read (the fetch failed,
        or not yet due) says nothing, and the physics forecast speaks as it would."""
        minima = state.past.minima.get(bucket.balance)
        return minima is not None and len(minima) < self.profile_days

    def _day(self, state: ResourceState, bucket: Bucket, at: datetime) -> DayForecast | None:
        grid = state.days(bucket.balance) if self.profile else None
        if grid is None:
            return None
        model = bucket.model
        day = day_forecast(
            grid,
            state.in_force(bucket.balance),
            at,
            refill_percent_per_s=100.0 * model.baseline / model.capacity if model else None,
            min_days=self.profile_days,
            horizon_s=self.profile_horizon,
            window_s=self.profile_window,
            recent_s=self.rate_window,
            departs_above=self.departs_above,
        )
        # Past days without a shared pattern (bursts at other hours each day) say nothing.
        return day if day is not None and day.patterned else None

    def _reaches_low(self, state: ResourceState, bucket: Bucket, at: datetime) -> float | None:
        """Seconds until the balance reaches `low_balance` at its net drain, where both the
        drain over `rate_window` and over `anticipate_window` bring it there within
        `anticipate`; None otherwise."""
        if self.anticipate <= 0:
            return None
        balance = state.in_force(bucket.balance)
        current = state.balance(bucket.balance, at)
        if current is None or current < self.low_balance:
            return None
        longest = 0.0
        for window in (self.rate_window, self.anticipate_window):
            seconds = _seconds_to_spend(balance, at, window, current - self.low_balance)
            if seconds is None or seconds > self.anticipate:
                return None  # too little data, not draining, or not there soon enough
            longest = max(longest, seconds)
        return longest

    def _burning(self, state: ResourceState, bucket: Bucket, at: datetime) -> Burnt | None:
        """The first pair of `burn` windows over both of which the balance's net fall empties
        the bucket within the pair's `within`; None where none does (or too little data)."""
        balance = state.in_force(bucket.balance)
        current = state.balance(bucket.balance, at)
        if current is None:
            return None
        for pair in self.burn:
            long_s = _seconds_to_spend(balance, at, pair.long, current)
            short_s = _seconds_to_spend(balance, at, pair.short, current)
            if long_s is None or short_s is None:
                continue
            if long_s <= pair.within and short_s <= pair.within:
                return Burnt(pair, long_s, short_s)
        return None

    def _physics(
        self,
        state: ResourceState,
        found: Outlook,
        judged: Chance | None = None,
        reaches: float | None = None,
        spoke: str = "physics",
        burnt: Burnt | None = None,
    ) -> Finding:
        """The bucket model's forecast at today's rate; `spoke` says what let it speak: the
        forecast itself (`physics`), the burn over a pair of windows (`burn`), or the balance
        below the floor (`floor`)."""
        bucket = found.bucket
        kind = bucket.owner
        summary = (
            f"{state.label}: {bucket.name} {found.balance_percent:.0f}% → 0 in "
            f"{units.duration(found.seconds_to_empty)} at "
            f"{_rate_read(found)}; "
            f"then throttled to {format_rate(bucket.baseline, bucket.unit, kind)}"
            f"{_if_unmerged(found)}{_below(reaches, self.low_balance)}"
            f"{_burns(burnt)}{_went_on(judged)}."
        )
        evidence: dict[str, Any] = {**found.evidence, "forecast": spoke}
        if burnt is not None:
            evidence["burn"] = burnt.evidence()
        if judged is not None:
            evidence["record"] = _record_evidence(judged, self.warn_chance)
        if reaches is not None:
            evidence["seconds_to_low"] = round(reaches, 1)
        return self._about(
            state,
            bucket,
            state.windows.rate_s,
            summary=summary,
            observed=_rate(found),
            limit=bucket.baseline,
            unit=bucket.unit,
            seconds_to_empty=found.seconds_to_empty,
            evidence=evidence,
            balance=found.balance_percent,
            charged=found.charged_rate,
        )

    def _low(
        self,
        state: ResourceState,
        bucket: Bucket,
        balance: float,
        most: float,
        at: datetime,
    ) -> Finding:
        """A bucket below the floor that is not draining now: idle, or earning a little back."""
        kind = bucket.owner
        state_now = "empty" if balance <= EMPTY_BALANCE_PERCENT else f"{balance:.0f}%"
        idle = (
            f" (last reading; idle since, at most {most:.0f}% now)" if most > balance + 0.5 else ""
        )
        summary = (
            f"{state.label}: {bucket.name} {state_now}{idle}, below {self.low_balance:.0f}%; "
            f"the warning holds until it refills past {self.clear_balance:.0f}%. When empty it "
            f"is throttled to {format_rate(bucket.baseline, bucket.unit, kind)}."
        )
        return self._read_off(
            state,
            bucket,
            at,
            self.drain_window,
            summary,
            None,
            {"forecast": "floor", "balance_percent": balance, "balance_at_most_percent": most},
            balance=balance,
        )

    def _eased(
        self, state: ResourceState, found: Outlook, day: DayForecast, at: datetime
    ) -> Finding:
        """The recent rate would empty the bucket within the horizon, but the past days say
        the load eases first, and today follows them: `info`, not a warning."""
        eases = f" at {_clock(day.eases_at, at)}" if day.eases_at else ""
        return self._spared(
            state,
            found,
            f"the load usually eases{eases} and today follows the past {day.kind} "
            f"({_load(day)}): about {day.left_percent:.0f}% left then",
            _profile_evidence(day),
        )

    def _spared(
        self, state: ResourceState, found: Outlook, but: str, evidence: Mapping[str, Any]
    ) -> Finding:
        """`info`: the physics forecast would empty the bucket within the horizon, `but`."""
        bucket = found.bucket
        summary = (
            f"{state.label}: {bucket.name} {found.balance_percent:.0f}% would reach 0 in "
            f"{units.duration(found.seconds_to_empty)} at {_rate_read(found)}, but {but}."
        )
        return self._about(
            state,
            bucket,
            state.windows.rate_s,
            severity=Severity.INFO,
            summary=summary,
            observed=found.rate,
            limit=bucket.baseline,
            unit=bucket.unit,
            seconds_to_empty=None,
            evidence={
                **found.evidence,
                **evidence,
                "physics_seconds_to_empty": found.seconds_to_empty,
            },
            balance=found.balance_percent,
            charged=found.charged_rate,
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
        return self._read_off(
            state,
            bucket,
            at,
            self.profile_window,
            summary,
            seconds,
            _profile_evidence(day),
            balance=day.balance,
        )

    def _read_off(
        self,
        state: ResourceState,
        bucket: Bucket,
        at: datetime,
        window_s: float,
        summary: str,
        seconds_to_empty: float | None,
        evidence: Mapping[str, Any],
        *,
        balance: float | None,
        **more: Any,
    ) -> Finding:
        """A finding read off the bucket itself rather than a physics outlook: its observed
        rate is the recent mean, its limit the baseline it falls to."""
        rate = recent(state.in_force(bucket.rate), at, self.rate_window).mean()
        return self._about(
            state,
            bucket,
            window_s,
            summary=summary,
            observed=rate if rate is not None else 0.0,
            limit=bucket.baseline,
            unit=bucket.unit,
            seconds_to_empty=seconds_to_empty,
            evidence={**evidence, "baseline": bucket.baseline, "burst": bucket.burst, **more},
            balance=balance,
        )


@dataclass(frozen=True, slots=True)
class Burnt:
    """The pair of burn windows that spoke, and the seconds to empty each read."""

    pair: BurnWindows
    long_s: float
    short_s: float

    def evidence(self) -> dict[str, float]:
        return {
            "long_window_s": self.pair.long,
            "short_window_s": self.pair.short,
            "within_s": self.pair.within,
            "long_seconds_to_empty": round(self.long_s, 1),
            "short_seconds_to_empty": round(self.short_s, 1),
        }


def _seconds_to_spend(
    balance: Series, at: datetime, window_s: float, points: float
) -> float | None:
    """Seconds until `points` of the balance are spent at its net fall over the last `window_s`;
    None where the window holds less than half its span of data, or the balance did not fall
    over it."""
    read = recent(balance, at, window_s).points()
    if len(read) < 2:
        return None
    span = (read[-1][0] - read[0][0]).total_seconds()
    fall = read[0][1] - read[-1][1]
    if span < window_s / 2 or fall <= 0:
        return None
    return points / (fall / span)


def _burns(burnt: Burnt | None) -> str:
    if burnt is None:
        return ""
    pair = burnt.pair
    return (
        f"; its burn over the last {units.duration(pair.long)} and the last "
        f"{units.duration(pair.short)} both empty it within {units.duration(pair.within)}"
    )


def _draining(state: ResourceState, bucket: Bucket, at: datetime, charged: bool = False) -> bool:
    """Whether the bucket is draining now: its balance is published as recently as its rates
    (AWS publishes none while a volume idles), and it is charged above its baseline (`charged`:
    the bucket model says so, as AWS counts its I/O) or its newest rate is above it. A warning
    above the floor before its drain has begun foresees nothing of it."""
    rate = state.in_force(bucket.rate).until(at).last()
    balance = state.in_force(bucket.balance).until(at).last()
    if rate is None or balance is None or balance[0] < rate[0]:
        return False
    return charged or rate[1] > bucket.baseline


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


def _of_those(judged: Chance) -> str:
    """What the record holds, in words: how many drains got this far and how many went on."""
    if judged.at_risk == 0:
        return (
            f"none of the {judged.drains} drains in its record spent {judged.spent:.0f} points "
            f"(a {judged.chance:.0%} chance it goes on)"
        )
    return (
        f"{judged.went_on} of the {judged.at_risk} drains in its record that spent "
        f"{judged.spent:.0f} points went on to spend {judged.peak:.0f} "
        f"(a {judged.chance:.0%} chance it empties)"
    )


def _below(reaches: float | None, low: float) -> str:
    if reaches is None:
        return ""
    return f"; below {low:.0f}% in {units.duration(reaches)} at its net drain of the last minutes"


def _went_on(judged: Chance | None) -> str:
    return f"; {_of_those(judged)}" if judged is not None else ""


def _record_evidence(judged: Chance, needs: float) -> dict[str, Any]:
    return {
        "chance": round(judged.chance, 3),
        "needs": needs,
        "peak_percent": round(judged.peak, 1),
        "spent_points": round(judged.spent, 1),
        "drains": judged.drains,
        "at_risk": judged.at_risk,
        "went_on": judged.went_on,
    }


def _if_unmerged(found: Outlook) -> str:
    """st1/sc1 where the data cannot tell merged from random I/O: the other end of the range."""
    seconds = found.seconds_if_unmerged
    if seconds is None:
        return ""
    return f" (in {units.duration(seconds)} if the I/O is random and unmerged)"


CHARGED_ABOVE = 1.1
"""A charge this far above the rate it was read at is named, with the rule that makes it so."""
WHY_CHARGED = {
    Unit.IOPS: "each I/O above 256 KiB counts as several",
    Unit.BYTES_PER_SECOND: "each small random I/O counts as 1 MiB",
}


def _rate(found: Outlook) -> float:
    """The rate the drain was read at: since the load changed within the window, or its
    mean."""
    since = found.rate_since_change
    return since if since is not None else found.rate


def _rate_read(found: Outlook) -> str:
    """The rate the drain was read at: the window's mean, or the rate since the load changed
    within it; and what the bucket is charged, where AWS's counting makes that more."""
    unit, kind = found.bucket.unit, found.bucket.owner
    since, read_from = found.rate_since_change, found.read_from
    rate, text = found.rate, format_rate(found.rate, unit, kind)
    if since is not None and read_from is not None:
        changed = read_from.astimezone(UTC)
        rate, text = since, f"{format_rate(since, unit, kind)} since {changed:%H:%M} UTC"
    charged = found.charged_rate
    if charged is not None and charged > CHARGED_ABOVE * rate:
        why = WHY_CHARGED.get(unit, "as AWS counts its I/O")
        text += f", charged as {format_rate(charged, unit, kind)} ({why})"
    return text
