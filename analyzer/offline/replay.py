"""The rules over past data, minute by minute, with the daemon's alert lifecycle.

At each step every resource's series are cut to what CloudWatch would have held then, the
analysis stage runs as a cycle would (outlooks, rules with their `for`, the next bottleneck,
the fixes), and the alert book takes the findings in (pending, firing, resolved after
`resolve_after`): what fires and when is what the daemon would have sent.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from types import MappingProxyType

from analyzer.analyze.alerts import SILENT, AlertBook, AlertState
from analyzer.analyze.analysis import Judgements, analyze
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.rules import RuleSet
from analyzer.analyze.states import build
from analyzer.collect.past import DRAINED_BELOW, PROFILE_PERIOD_S
from analyzer.collect.window import data_end, floor_to, read_end
from analyzer.model import metrics
from analyzer.model.findings import Bottleneck, Finding, Remedy, Severity
from analyzer.model.layers import balance_metric
from analyzer.model.metrics import Measure, Namespace
from analyzer.model.past import Grid, Past
from analyzer.model.resources import ResourceType, Volume
from analyzer.model.series import Series, span
from analyzer.model.state import NOTHING, ResourceState

STEP_S = 60.0
NEVER_REPEAT_S = 10 * 365 * 86400.0


@dataclass(frozen=True, slots=True)
class Sight:
    """What a cycle at a moment reads, as the daemon reads it (`History`). CloudWatch
    publishes a minute `lag_s` after it ends (`publication_lag`). A gauge (a balance, an
    average) is read as soon as it is published; a sum's newest minute is read once the next
    is there, or `settle_s` after it ends (`settle_delay`). The cycle's data end is the newest
    minute published, never earlier than `settle_s` before it. Both 0: every minute the moment
    it ends (the rule files' tests)."""

    settle_s: float = 0.0
    lag_s: float = 0.0

    def published(self, at: datetime) -> datetime:
        """The end of the newest minute CloudWatch has published by `at`."""
        return data_end(at, self.lag_s) if self.lag_s else at

    def end(self, at: datetime, newest: datetime | None) -> datetime:
        """The data end of a cycle at `at`, where `newest` ends the newest minute published,
        as the daemon's (`window.read_end`)."""
        if not self.settle_s and not self.lag_s:
            return at
        return read_end(at, newest, self.settle_s)

    def settled(self, at: datetime) -> datetime:
        """A sum's minute that ends after this, and is its series' newest, is held back."""
        return at - timedelta(seconds=self.settle_s)


EVERY_MINUTE = Sight()
"""Each minute read the moment it ends."""


@dataclass(frozen=True, slots=True)
class Fired:
    rule: str
    severity: Severity
    resource_id: str
    bottleneck: Bottleneck
    fired_at: datetime
    resolved_at: datetime | None = None
    horizon_s: float | None = None
    """A trend warning: how far ahead it speaks. It warns of an exhaustion that follows within
    this, gives no minutes of lead, and is false where none follows."""
    fix: Remedy | None = field(default=None, compare=False)
    """The first fix its message offered that `apply` takes (`Remedy.fix_id`): what approving
    it would have changed. None where it offered none."""


@dataclass
class Replay:
    """What fired over a replay, and what was firing or pending at each step."""

    fired: list[Fired] = field(default_factory=list)
    firing_at: dict[datetime, frozenset[tuple[str, str]]] = field(default_factory=dict)
    """At each step: (rule, resource id) of the alerts firing."""
    pending_at: dict[datetime, frozenset[tuple[str, str]]] = field(default_factory=dict)
    warned_at: dict[datetime, frozenset[str]] = field(default_factory=dict)
    """At each step: the ids of the resources a credit alert of warning or above fires for."""


@dataclass
class Transcript:
    """What an alert book fired, escalated and resolved, read after each cycle: the replay's
    book and the daemon's alike (`analyzer/played.py`)."""

    out: Replay = field(default_factory=Replay)
    _open: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """By alert key, the index in `out.fired` of the message it fired with."""

    def take(self, book: AlertBook, at: datetime) -> None:
        """The book as a cycle at `at` left it."""
        for key, alert in book.alerts.items():
            index = self._open.get(key)
            escalated = (
                alert.state is AlertState.FIRING
                and index is not None
                and alert.severity.rank > self.out.fired[index].severity.rank
            )
            if escalated and index is not None:
                # Sent again at its new severity: what warned is the new message.
                self.out.fired[index] = replace(self.out.fired[index], resolved_at=at)
                del self._open[key]
            if alert.state is AlertState.FIRING and key not in self._open:
                self._open[key] = len(self.out.fired)
                finding = alert.finding
                self.out.fired.append(
                    Fired(
                        alert.rule,
                        alert.severity,
                        alert.resource_id,
                        finding.bottleneck,
                        at,
                        horizon_s=_trend_horizon(finding),
                        fix=next((r for r in finding.remedies if r.fix_id is not None), None),
                    )
                )
            elif alert.state is AlertState.RESOLVED and key in self._open:
                index = self._open.pop(key)
                self.out.fired[index] = replace(self.out.fired[index], resolved_at=at)
        for key in [k for k in self._open if k not in book.alerts]:
            # Resolved and delivered: the book holds it no more.
            index = self._open.pop(key)
            self.out.fired[index] = replace(self.out.fired[index], resolved_at=at)
        self.out.firing_at[at] = frozenset(
            (a.rule, a.resource_id) for a in book.alerts.values() if a.state is AlertState.FIRING
        )
        self.out.warned_at[at] = frozenset(
            a.resource_id
            for a in book.alerts.values()
            if a.state is AlertState.FIRING
            and a.finding.is_credits
            and a.severity.rank >= Severity.WARNING.rank
        )
        self.out.pending_at[at] = frozenset(
            (a.rule, a.resource_id) for a in book.alerts.values() if a.state is AlertState.PENDING
        )


PAST_DAYS = 14
DAY = timedelta(days=1)
BALANCES = (Measure.BURST_BALANCE, Measure.IO_BALANCE, Measure.BYTE_BALANCE)


@dataclass(frozen=True, slots=True)
class DataPast:
    """A resource's past as the daemon would have fetched it, worked out from its data: each
    balance's minimum per whole UTC day, and its 5-minute means (the day profile)."""

    minima: dict[Measure, list[tuple[datetime, float]]]
    profiles: dict[Measure, Grid]


PAST_STATS = ("Minimum", "Average")
"""The days before a backtest's data, as it fetches them: each balance's 5-minute `Minimum`
(its daily minima) and `Average` (its day profile), named `BurstBalance:Minimum`, …"""


def past_name(metric: str, stat: str) -> str:
    return f"{metric}:{stat}"


def data_past(state: ResourceState, before: Mapping[str, Series] | None = None) -> DataPast:
    """The past worked out from the state's data, and from `before` (the days before it, by
    `past_name`), where given."""
    minima: dict[Measure, list[tuple[datetime, float]]] = {}
    profiles: dict[Measure, Grid] = {}
    before = before or {}
    for measure in BALANCES:
        name = balance_metric(measure)
        lowest = before.get(past_name(name, "Minimum"), NOTHING)
        means = before.get(past_name(name, "Average"), NOTHING)
        series = state.measure(measure)
        lows: dict[datetime, float] = {}
        for part in (lowest, series):
            for at, value in part.points():
                day = at.replace(hour=0, minute=0, second=0, microsecond=0)
                lows[day] = min(value, lows.get(day, value))
        if not lows:
            continue
        minima[measure] = _covered(sorted(lows.items()), lowest, _data_start(state))
        joined = Series.of([*means.points(), *series.points()], series.period_s)
        if not joined.timestamps:
            continue
        start = floor_to(joined.timestamps[0], PROFILE_PERIOD_S)
        end = joined.timestamps[-1] + timedelta(seconds=series.period_s)
        profiles[measure] = Grid.of(joined, start, end, PROFILE_PERIOD_S)
    return DataPast(minima, profiles)


COVERED_FROM_S = 3600.0
"""A day of the data counts whole where its data begins within this of its start."""


def _data_start(state: ResourceState) -> datetime | None:
    """When the state's data begins: its earliest datapoint of any metric (a balance has none
    while its volume idles, its other metrics may)."""
    firsts = [s.timestamps[0] for s in state.measures.values() if s.timestamps]
    return min(firsts) if firsts else None


def _covered(
    lows: list[tuple[datetime, float]], before: Series, first: datetime | None
) -> list[tuple[datetime, float]]:
    """The daily minima of the days the data covers: the data's first day is left out where
    the data begins later in the day than `COVERED_FROM_S` (its minimum is that of a few
    hours; the days fetched before it, daily minima, count as CloudWatch gave them)."""
    if before.timestamps or first is None or not lows:
        return lows
    day = first.replace(hour=0, minute=0, second=0, microsecond=0)
    if (first - day).total_seconds() <= COVERED_FROM_S:
        return lows
    return [(d, v) for d, v in lows if d != day]


Axes = dict[tuple[int, int], tuple[datetime, ...]]
"""One step's cut time axes: by the axis' identity and where it is cut, the timestamps kept."""


def share_axes(states: Sequence[ResourceState]) -> list[ResourceState]:
    """The states with every time axis held once, as the daemon's history holds them: the
    series of equal timestamps read the very same tuple, which `cut` then copies once a step
    for all of them (a fortnight of minutes is 20,000 timestamps, a dozen series a resource)."""
    axes: dict[tuple[datetime, ...], tuple[datetime, ...]] = {}

    def shared(series: Series) -> Series:
        return replace(series, timestamps=axes.setdefault(series.timestamps, series.timestamps))

    return [
        replace(state, measures=MappingProxyType({m: shared(s) for m, s in state.measures.items()}))
        for state in states
    ]


def _until(series: Series, at: datetime, axes: Axes | None) -> Series:
    """`series.until(at)`, its timestamps taken from `axes` where another series of the same
    axis was cut there already, its values a view of the whole series' (a fortnight's copy
    each step of each series was a tenth of a replay)."""
    if axes is None:
        return series.until(at)
    stamps = series.timestamps
    end = bisect.bisect_right(stamps, at - span(series.period_s))
    if end == len(stamps):
        return series
    key = (id(stamps), end)
    kept = axes.get(key)
    if kept is None:
        kept = axes[key] = stamps[:end]
    values = series.values
    shown = memoryview(values)[:end] if isinstance(values, array) else values[:end]
    return Series(kept, shown, series.period_s, series.status, series.error)


def _before_change(state: ResourceState, at: datetime) -> ResourceState:
    """A volume at a moment before the modification its limits date from: the volume and the
    envelope of before, judged on all its data up to then (the recording's inventory is of
    its end, after the change)."""
    if state.limits_since is None or state.limits_since <= at:
        return state
    resource = state.resource
    before = resource.before_change() if isinstance(resource, Volume) else None
    if before is None or state.envelope_before is None:
        return replace(state, limits_since=None)
    return replace(state, resource=before, envelope=state.envelope_before, limits_since=None)


def cut(
    state: ResourceState,
    at: datetime,
    past: DataPast | None = None,
    axes: Axes | None = None,
    measures: Mapping[Measure, Series] | None = None,
) -> ResourceState:
    """The state as its series stood at `at`, with the past the daemon would have fetched by
    then, where given: the daily minima of the whole days before it (at most `PAST_DAYS`),
    and the 5-minute balance (the day profile, the drain record) of a balance whose minima
    show a drain. (The profile reads only moments hours before `at`, and the record the data
    up to the last six-hourly fetch, which the daemon's fetch holds.) The data's first days
    have no whole day before them, as for the daemon over the same data: a resource without
    a past. `axes`: the step's axes cut so far, shared by every state cut at
    `at` (the timestamps a series' identity keys must outlive the step). `measures`: its
    series as a cycle read them (`_read`), where they end elsewhere than at `at`."""
    if measures is None:
        measures = {m: _until(s, at, axes) for m, s in state.measures.items()}
    state = _before_change(state, at)
    if past is None or not past.minima:
        return replace(state, measures=MappingProxyType(measures))  # its own past, if any
    minima = {}
    profiles = {}
    for measure, days in past.minima.items():
        kept = [(d, v) for d, v in days if d + DAY <= at and d >= at - PAST_DAYS * DAY]
        # No whole day yet is a past read empty, as CloudWatch answers the daemon's fetch: a
        # young bucket, judged so in both.
        minima[measure] = Series.of(kept, 86_400)
        # The day profile only where the whole days' minima show a drain, as the daemon
        # fetches it (`PastDays`): a resource's first days have none, in the daemon and here.
        shows = kept and min(v for _, v in kept) < DRAINED_BELOW
        if shows and measure in past.profiles:
            profiles[measure] = past.profiles[measure]
    return replace(
        state, measures=MappingProxyType(measures), past=Past(minima=minima, days=profiles)
    )


_NAMESPACES = {ResourceType.VOLUME: Namespace.EBS, ResourceType.INSTANCE: Namespace.EC2}


def summed(state: ResourceState) -> frozenset[Measure]:
    """The measures of a resource read from sums (operations, bytes, time: a minute of them
    may still be filling), as against gauges its namespace publishes whole (a balance)."""
    namespace = _NAMESPACES.get(state.ref.resource_type, Namespace.RDS)
    gauges = {
        m.feeds
        for m in metrics.of(namespace)
        if isinstance(m.feeds, Measure) and m.statistic != "Sum"
    }
    return frozenset(m for m in state.measures if m not in gauges)


def _read(
    state: ResourceState, at: datetime, sight: Sight, sums: frozenset[Measure], axes: Axes
) -> tuple[dict[Measure, Series], datetime | None]:
    """Its series as a cycle at `at` reads them (`Sight`), and the end of the newest minute
    published among them."""
    published = sight.published(at)
    settled = sight.settled(at)
    out: dict[Measure, Series] = {}
    newest = None
    for measure, series in state.measures.items():
        seen = _until(series, published, axes)
        if seen.timestamps:
            last = seen.timestamps[-1]
            end = last + span(seen.period_s)
            if seen.period_s == STEP_S and (newest is None or end > newest):
                newest = end
            if measure in sums and end > settled:
                seen = _until(seen, last, axes)  # its newest minute may still be filling
        out[measure] = seen
    return out, newest


def _trend_horizon(finding: Finding) -> float | None:
    return finding.credit.horizon_s if finding.credit is not None else None


def replay(
    states: Sequence[ResourceState],
    ruleset: RuleSet,
    catalog: Catalog,
    start: datetime,
    end: datetime,
    resolve_after_s: float = 300.0,
    step_s: float = STEP_S,
    before: Mapping[str, Mapping[str, Series]] | None = None,
    sight: Sight = EVERY_MINUTE,
) -> Replay:
    """Cycles every `step_s` from `start` to `end` (both included) over `states`, each reading
    the data `sight` shows it; `before`: the days before their data, by resource id
    (`data_past`)."""
    book = AlertBook(NEVER_REPEAT_S, resolve_after_s, log=SILENT)
    memo = Judgements()
    transcript = Transcript()
    # The past the daemon would have fetched, from the data, unless a state has its own.
    before = before or {}
    pasts = [
        data_past(s, before.get(s.ref.resource_id)) if ruleset.reads_past() and not s.past else None
        for s in states
    ]
    states = share_axes(states)
    sums = [summed(s) for s in states]
    at = start
    while at <= end:
        axes: Axes = {}
        read = [_read(s, at, sight, summed, axes) for s, summed in zip(states, sums, strict=True)]
        newest = max((n for _, n in read if n is not None), default=None)
        seen = sight.end(at, newest)
        cuts = [cut(s, seen, p, axes, m) for s, p, (m, _) in zip(states, pasts, read, strict=True)]
        snapshot = build(at, seen, cuts)
        analysis = analyze(snapshot, ruleset, catalog, memo)
        book.update(at, analysis.firing, analysis.pending, analysis.unknown, analysis.readings)
        transcript.take(book, at)
        book.delivered(book.owed(), at)
        at += timedelta(seconds=step_s)
    return transcript.out
