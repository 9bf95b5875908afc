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
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from analyzer.analyze.catalog import Catalog
from analyzer.analyze.rules import RuleSet
from analyzer.analyze.states import states_for
from analyzer.model.findings import Bottleneck, Severity
from analyzer.model.metrics import Measure
from analyzer.model.resources import Inventory
from analyzer.model.series import Series
from analyzer.model.state import EMPTY_BALANCE_PERCENT, ResourceState
from analyzer.replay import BALANCES, Fired, replay

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

    @property
    def lead_seconds(self) -> float | None:
        return _lead(self.warned_at, self.started_at)

    @property
    def alarm_lead_seconds(self) -> float | None:
        return _lead(self.alarm_at, self.started_at)


def _lead(warned: datetime | None, started: datetime) -> float | None:
    return (started - warned).total_seconds() if warned is not None else None


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
        out = Quality()
        for quality in self.by_resource.values():
            out.add(quality)
        return out

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


def _matched(episode: Episode, alerts: Sequence[Fired]) -> Episode:
    before = [
        a.fired_at
        for a in alerts
        if a.fired_at <= episode.started_at
        and (a.resolved_at is None or a.resolved_at >= episode.started_at)
    ]
    during = [
        a.fired_at
        for a in alerts
        if a.fired_at > episode.started_at
        and (episode.ended_at is None or a.fired_at < episode.ended_at)
    ]
    return Episode(
        episode.resource_id,
        episode.what,
        episode.started_at,
        episode.ended_at,
        min(before) if before else None,
        None if before or not during else min(during),
        episode.alarm_at,
    )


def _union(
    spans: Sequence[tuple[datetime, datetime | None]], start: datetime, end: datetime
) -> float:
    """Seconds within [start, end] that at least one of `spans` covers."""
    total, reached = 0.0, start
    for begun, ended in sorted(spans, key=lambda span: span[0]):
        stop = min(ended or end, end)
        total += max((stop - max(begun, reached)).total_seconds(), 0.0)
        reached = max(reached, stop)
    return total


def judge(
    states: Sequence[ResourceState], fired: list[Fired], start: datetime, end: datetime
) -> Backtest:
    """What happened in the data, matched with what fired (and with a 20 % alarm)."""
    out = Backtest(start, end, fired)
    for state in states:
        rid = state.ref.resource_id
        warnings = [f for f in fired if f.resource_id == rid and f.severity.rank >= WARNING]
        credit_alerts = [f for f in warnings if f.bottleneck.is_credits]
        cap_alerts = [f for f in warnings if f.bottleneck in CAPS]
        out.saturations += [
            _matched(e, cap_alerts) for e in saturations(state) if e.started_at >= start
        ]
        empty = [e for e in exhaustions(state) if e.started_at >= start]
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
            if s >= start and not any(_overlaps(s, e, x.started_at, x.ended_at) for x in empty)
        )
        for episode in empty:
            alarm = [
                s
                for s, e in below
                if s <= episode.started_at and (e is None or e > episode.started_at)
            ]
            # The alarm knows a minute's balance once the minute is over, as the rules do.
            first = min(alarm, default=None)
            if first is not None:
                first += timedelta(seconds=balance.period_s)
            dated = Episode(rid, episode.what, episode.started_at, episode.ended_at, alarm_at=first)
            matched = _matched(dated, credit_alerts)
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
        quality.false_warnings += sum(
            1
            for a in credit_alerts
            if not any(
                _overlaps(a.fired_at, a.resolved_at, x.started_at, x.ended_at) for x in empty
            )
        )
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
) -> Backtest:
    """The rules replayed from `start` (the history before it is what they read first) to
    `end`, then judged against the data."""
    states = [
        state
        for region, inventory in inventories.items()
        for state in states_for(inventory, raw.get(region, {}))
    ]
    done = replay(states, ruleset, catalog, start, end, resolve_after_s)
    return judge(states, done.fired, start, end)
