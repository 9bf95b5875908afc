"""`ebs-analyzer backtest`: the rules over past data, and what really happened.

The inventory's history is fetched once (every metric, at its own period, over `--since`),
turned into each resource's measures as a cycle would, and the rules are replayed cycle by
cycle over it (`replay`). Beside what would have fired, the data itself says what happened:
a bucket that ran empty (its balance at 1 % or less) is an exhaustion; a rate held at 95 % of
a limit or more for five minutes is a saturation. Each is matched with the first alert of its
kind active before it started (the lead time), and exhaustions also with a `BurstBalance <
20 %` CloudWatch alarm on the same data, so that an operator sees what the rules add.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from analyzer.analyze.catalog import Catalog
from analyzer.analyze.record import drain_began
from analyzer.analyze.rules import RuleSet
from analyzer.analyze.states import states_for
from analyzer.model.findings import Bottleneck, Severity
from analyzer.model.metrics import Measure
from analyzer.model.resources import Inventory
from analyzer.model.series import Series
from analyzer.model.state import EMPTY_BALANCE_PERCENT, ResourceState
from analyzer.offline.replay import BALANCES, EVERY_MINUTE, Fired, Sight, replay

ALARM_PERCENT = 20.0
"""The alarm many operators run today: BurstBalance below 20 %."""
WARNING = Severity.WARNING.rank
"""Alerts below this (`info`) are listed, but warn of nothing and are no false warning."""
HELD_AT = 0.95
HELD_FOR_S = 300.0
CAPS = frozenset(
    {
        Bottleneck.VOLUME_IOPS,
        Bottleneck.VOLUME_THROUGHPUT,
        Bottleneck.INSTANCE_IOPS,
        Bottleneck.INSTANCE_THROUGHPUT,
    }
)

Raw = Mapping[str, Mapping[str, Series]]
"""By resource id, then metric name: what CloudWatch returned."""


@dataclass(frozen=True, slots=True)
class Episode:
    """An exhaustion or a saturation, and who saw it coming."""

    resource_id: str
    what: str
    """The balance that ran empty, or the rate that was held at its limit."""
    started_at: datetime
    ended_at: datetime | None
    """None: still going at the end of the data."""
    warned_at: datetime | None = None
    """The first alert of its kind active before it started."""
    detected_at: datetime | None = None
    """The first alert of its kind that fired while it lasted, where none warned."""
    alarm_at: datetime | None = None
    """Exhaustions: when a BurstBalance < 20 % alarm went into ALARM before it."""
    began_at: datetime | None = None
    """Exhaustions: when the drain that emptied the bucket began (its last peak). No lead
    counts from before it."""

    @property
    def lead_seconds(self) -> float | None:
        return self._lead(self.warned_at)

    @property
    def alarm_lead_seconds(self) -> float | None:
        return self._lead(self.alarm_at)

    def _lead(self, warned: datetime | None) -> float | None:
        if warned is None:
            return None
        since = max(warned, self.began_at) if self.began_at is not None else warned
        return max((self.started_at - since).total_seconds(), 0.0)


@dataclass
class Quality:
    """How one resource's (or every resource's) exhaustions were warned, by the rules and by a
    `BurstBalance < 20 %` alarm on the same data."""

    exhaustions: int = 0
    warned: int = 0
    """Exhaustions with a warning active when they started."""
    leads: list[float] = field(default_factory=list)
    false_warnings: int = 0
    """Credit warnings during which no bucket of their resource ran empty."""
    later_than_alarm: int = 0
    """Exhaustions the alarm warned of before the rules did (or that only the alarm warned)."""
    alarm_warned: int = 0
    alarm_leads: list[float] = field(default_factory=list)
    alarm_episodes: int = 0
    alarm_false_episodes: int = 0
    warning_seconds: float = 0.0
    """How long at least one credit warning was active, within the judged span: what holding
    a warning longer costs (a warning never resolved would be early for everything)."""
    alarm_seconds: float = 0.0
    """How long the alarm was on (the balance below 20 %), within the judged span."""

    def add(self, other: Quality) -> None:
        for name in (
            "exhaustions",
            "warned",
            "warning_seconds",
            "alarm_seconds",
            "false_warnings",
            "later_than_alarm",
            "alarm_warned",
            "alarm_episodes",
            "alarm_false_episodes",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.leads += other.leads
        self.alarm_leads += other.alarm_leads

    def as_dict(self) -> dict[str, Any]:
        return {
            "exhaustions": self.exhaustions,
            "warned": self.warned,
            "false_warnings": self.false_warnings,
            "median_lead_seconds": _median(self.leads),
            "later_than_alarm": self.later_than_alarm,
            "warning_seconds": round(self.warning_seconds, 1),
            "alarm": {
                "threshold_percent": ALARM_PERCENT,
                "warned": self.alarm_warned,
                "episodes": self.alarm_episodes,
                "false_episodes": self.alarm_false_episodes,
                "median_lead_seconds": _median(self.alarm_leads),
                "seconds": round(self.alarm_seconds, 1),
            },
        }


def summed(qualities: Iterable[Quality]) -> Quality:
    """The figures of several resources as one."""
    out = Quality()
    for quality in qualities:
        out.add(quality)
    return out


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


@dataclass
class Backtest:
    start: datetime
    end: datetime
    fired: list[Fired] = field(default_factory=list)
    exhaustions: list[Episode] = field(default_factory=list)
    saturations: list[Episode] = field(default_factory=list)
    by_resource: dict[str, Quality] = field(default_factory=dict)
    """Every resource with a bucket, or a credit warning, by id."""
    states: list[ResourceState] = field(default_factory=list, repr=False, compare=False)
    """The resources judged, as their data shows them: what fixes are replayed over
    (`approval.py`). Not part of the report."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "from": _iso(self.start),
            "to": _iso(self.end),
            "alerts": [
                {
                    "rule": f.rule,
                    "severity": f.severity.value,
                    "resource_id": f.resource_id,
                    "bottleneck": f.bottleneck.value,
                    "fired_at": _iso(f.fired_at),
                    "resolved_at": _iso(f.resolved_at),
                }
                for f in self.fired
            ],
            "exhaustions": [_episode(e, alarm=True) for e in self.exhaustions],
            "saturations": [_episode(e) for e in self.saturations],
            "quality": self.quality(),
        }

    def total(self) -> Quality:
        return summed(self.by_resource.values())

    def quality(self) -> dict[str, Any]:
        """Exhaustions warned ahead and false warnings, ours and the 20 % alarm's: in total,
        and by resource."""
        return {
            **self.total().as_dict(),
            "resources": {rid: q.as_dict() for rid, q in sorted(self.by_resource.items())},
        }


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _episode(e: Episode, alarm: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resource_id": e.resource_id,
        "what": e.what,
        "started_at": _iso(e.started_at),
        "ended_at": _iso(e.ended_at),
        "warned_at": _iso(e.warned_at),
        "lead_seconds": e.lead_seconds,
        "detected_at": _iso(e.detected_at),
    }
    if alarm:
        out["began_at"] = _iso(e.began_at)
        out["alarm_at"] = _iso(e.alarm_at)
        out["alarm_lead_seconds"] = e.alarm_lead_seconds
    return out


def runs(
    series: Series, holds: Iterable[bool], min_s: float = 0.0
) -> list[tuple[datetime, datetime | None]]:
    """Where `holds` is true for consecutive datapoints (at least `min_s` long): each run's
    start, and its end (the first datapoint after it; None when it lasts to the end)."""
    found: list[tuple[datetime, datetime | None]] = []
    begun: datetime | None = None
    last: datetime | None = None
    for (at, _), held in zip(series.points(), holds, strict=True):
        if held and begun is None:
            begun = at
        elif not held and begun is not None:
            found.append((begun, at))
            begun = None
        last = at
    if begun is not None and last is not None:
        found.append((begun, None))
    period = timedelta(seconds=series.period_s)
    return [
        (s, e)
        for s, e in found
        if ((e or (last or s) + period) - s).total_seconds() >= max(min_s, series.period_s)
    ]


def exhaustions(state: ResourceState) -> list[Episode]:
    """Each time a balance ran empty. Runs at empty between which the balance never climbed
    back to the alarm's level are one exhaustion: a bucket that earns a few credits and spends
    them at once has not recovered."""
    out = []
    for measure in BALANCES:
        balance = state.measure(measure)
        held = (v <= EMPTY_BALANCE_PERCENT for v in balance.values)
        recovered = [s for s, _ in runs(balance, (v >= ALARM_PERCENT for v in balance.values))]
        merged: list[tuple[datetime, datetime | None]] = []
        for s, e in runs(balance, held):
            previous = merged[-1][1] if merged else None
            if previous is not None and not any(previous <= r < s for r in recovered):
                merged[-1] = (merged[-1][0], e)
            else:
                merged.append((s, e))
        out += [Episode(state.ref.resource_id, measure.value, s, e) for s, e in merged]
    return out


def saturations(state: ResourceState) -> list[Episode]:
    envelope = state.class_envelope if state.is_db else state.envelope
    if envelope is None:
        return []
    out = []
    for measure, limit in (
        (Measure.IOPS, envelope.iops),
        (Measure.THROUGHPUT, envelope.throughput_bps),
    ):
        rate = state.measure(measure)
        held = (v >= HELD_AT * limit for v in rate.values)
        out += [
            Episode(state.ref.resource_id, measure.value, s, e)
            for s, e in runs(rate, held, HELD_FOR_S)
        ]
    return out


def _overlaps(
    start: datetime, end: datetime | None, other_start: datetime, other_end: datetime | None
) -> bool:
    return (other_end is None or start < other_end) and (end is None or other_start < end)


Span = tuple[datetime, datetime | None]
"""From, and until (None: to the end of the data)."""


def _matched(episode: Episode, spans: Sequence[Span]) -> Episode:
    """The episode with the first warning on when it started, or else the first that began
    while it lasted."""
    before = [
        s for s, e in spans if s <= episode.started_at and (e is None or e >= episode.started_at)
    ]
    during = [
        s
        for s, _ in spans
        if s > episode.started_at and (episode.ended_at is None or s < episode.ended_at)
    ]
    return replace(
        episode,
        warned_at=min(before) if before else None,
        detected_at=None if before or not during else min(during),
    )


def _merged(spans: Iterable[Span]) -> list[Span]:
    """Spans that overlap or touch, joined: warnings of one bucket that follow one another
    without a pause are one warning to whoever reads them."""
    out: list[Span] = []
    for begun, ended in sorted(spans, key=lambda span: span[0]):
        if out and (out[-1][1] is None or begun <= out[-1][1]):
            last = out[-1][1]
            out[-1] = (out[-1][0], None if last is None or ended is None else max(last, ended))
        else:
            out.append((begun, ended))
    return out


def _union(spans: Sequence[Span], start: datetime, end: datetime) -> float:
    """Seconds within [start, end] that at least one of `spans` covers."""
    total = 0.0
    for begun, ended in _merged(spans):
        stop = min(ended or end, end)
        total += max((stop - max(begun, start)).total_seconds(), 0.0)
    return total


def _began(balance: Series, started: datetime) -> datetime | None:
    """When the drain that emptied the bucket at `started` began: its last peak."""
    before = balance.until(started + timedelta(seconds=balance.period_s))
    index = drain_began(np.asarray(before.values, dtype=np.float64))
    return before.timestamps[index] if index is not None else None


def _followed(alert: Fired, empty: Sequence[Episode]) -> bool:
    """A trend warning: whether an exhaustion began within its horizon of it."""
    until = alert.fired_at + timedelta(seconds=alert.horizon_s or 0.0)
    return any(alert.fired_at <= x.started_at <= until for x in empty)


def judge(
    states: Sequence[ResourceState],
    fired: list[Fired],
    start: datetime,
    end: datetime,
    lag_s: float = 0.0,
) -> Backtest:
    """What happened in the data, matched with what fired (and with a 20 % alarm).

    A resource's credit warnings that overlap or follow one another without a pause are one
    warning, as an operator reads them: true where an exhaustion began while it was on, false
    otherwise. A trend warning (days ahead) is true where an exhaustion follows within its
    horizon; it earns no minutes of lead. A lead counts from the warning, or the alarm, but
    never from before the drain that emptied the bucket began (its last peak): a warning held
    over from an earlier drain foresaw nothing of this one. The alarm sees a minute `lag_s`
    after it ends, when CloudWatch has published it (`publication_lag`), as the replay does."""
    out = Backtest(start, end, fired, states=list(states))
    for state in states:
        rid = state.ref.resource_id
        warnings = [f for f in fired if f.resource_id == rid and f.severity.rank >= WARNING]
        credit_alerts = [f for f in warnings if f.bottleneck.is_credits]
        trends = [f for f in credit_alerts if f.horizon_s is not None]
        forecasts = _merged((f.fired_at, f.resolved_at) for f in credit_alerts if f not in trends)
        caps = [(f.fired_at, f.resolved_at) for f in warnings if f.bottleneck in CAPS]
        out.saturations += [_matched(e, caps) for e in saturations(state) if e.started_at >= start]
        every = exhaustions(state)
        empty = [e for e in every if e.started_at >= start]
        balance = state.measure(Measure.BURST_BALANCE)
        below = runs(balance, (v < ALARM_PERCENT for v in balance.values))
        if not credit_alerts and not any(len(state.measure(m)) for m in BALANCES):
            continue
        quality = out.by_resource.setdefault(rid, Quality())
        quality.alarm_episodes += len([r for r in below if r[0] >= start])
        quality.alarm_seconds += _union(below, start, end)
        quality.warning_seconds += _union(
            [(a.fired_at, a.resolved_at) for a in credit_alerts], start, end
        )
        quality.alarm_false_episodes += sum(
            1
            for s, e in below
            if s >= start and not any(_overlaps(s, e, x.started_at, x.ended_at) for x in every)
        )
        for episode in empty:
            alarm = [
                s
                for s, e in below
                if s <= episode.started_at and (e is None or e > episode.started_at)
            ]
            # The alarm knows a minute's balance once it is published, as the rules do.
            first = min(alarm, default=None)
            if first is not None:
                first += timedelta(seconds=balance.period_s + lag_s)
            began = _began(state.measure(Measure(episode.what)), episode.started_at)
            matched = _matched(replace(episode, alarm_at=first, began_at=began), forecasts)
            out.exhaustions.append(matched)
            quality.exhaustions += 1
            if matched.lead_seconds is not None:
                quality.warned += 1
                quality.leads.append(matched.lead_seconds)
            if matched.alarm_lead_seconds is not None:
                quality.alarm_warned += 1
                quality.alarm_leads.append(matched.alarm_lead_seconds)
                if (
                    matched.lead_seconds is None
                    or matched.lead_seconds < matched.alarm_lead_seconds
                ):
                    quality.later_than_alarm += 1
        # A warning on a bucket that ran empty before the span and is still low is no false one.
        quality.false_warnings += sum(
            1
            for s, e in forecasts
            if not any(_overlaps(s, e, x.started_at, x.ended_at) for x in every)
        )
        quality.false_warnings += sum(1 for a in trends if not _followed(a, empty))
    out.exhaustions.sort(key=lambda e: (e.started_at, e.resource_id))
    out.saturations.sort(key=lambda e: (e.started_at, e.resource_id))
    return out


def backtest(
    inventories: Mapping[str, Inventory],
    raw: Mapping[str, Raw],
    ruleset: RuleSet,
    catalog: Catalog,
    start: datetime,
    end: datetime,
    resolve_after_s: float,
    past: Mapping[str, Raw] | None = None,
    sight: Sight = EVERY_MINUTE,
) -> Backtest:
    """The rules replayed from `start` (the history before it is what they read first, with
    `past`, the days before the history, by region) to `end`, then judged against the
    data."""
    states = [
        state
        for region, inventory in inventories.items()
        for state in states_for(inventory, raw.get(region, {}))
    ]
    before = {rid: found for by_region in (past or {}).values() for rid, found in by_region.items()}
    done = replay(states, ruleset, catalog, start, end, resolve_after_s, before=before, sight=sight)
    return judge(states, done.fired, start, end, sight.lag_s)
