"""The metric history kept across cycles: backfilled once, then extended with what is new.

A query seen for the first time is fetched over the whole lookback. After that, each cycle
fetches only the periods completed since, plus an overlap for datapoints that arrive late, and
skips a query altogether while no new period of it is complete: 5-minute EC2 metrics are asked
for once every five minutes, whatever the interval. A failed fetch keeps what was known and is
tried again from the same point next cycle, so nothing is lost.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import MINUTE_S, Window, data_end, floor_to, read_end
from analyzer.model import metrics
from analyzer.model.series import Series, Status


@dataclass
class History:
    lookback_s: float
    overlap_s: float
    settle_s: float
    _series: dict[MetricQuery, Series] = field(default_factory=dict)
    _until: dict[MetricQuery, datetime] = field(default_factory=dict)
    _touched: set[str] = field(default_factory=set)
    _grouped: dict[str, dict[str, Series]] = field(default_factory=dict)
    """The same series by resource id and metric name."""
    _asked: Mapping[str, Sequence[MetricQuery]] | None = None
    """What `current` was last asked for."""
    _asked_until: dict[str, datetime] = field(default_factory=dict)
    """By resource id: the end of the latest window CloudWatch answered for it."""
    _axes: dict[tuple[datetime, ...], tuple[datetime, ...]] = field(default_factory=dict)
    """Every time axis kept, once: a series' timestamps are the very tuple of every other
    series over the same minutes (a resource's metrics, and the resources polled with it),
    not a copy each."""
    _axes_swept: int = 0
    """How many axes were in use at the last sweep of those no series holds any more."""
    newest: datetime | None = None
    """The end of the newest one-minute datapoint CloudWatch has answered: how late it
    publishes, seen (`data_end`)."""
    _newest_at: datetime | None = None
    """When `newest` was answered."""
    _planned_at: datetime | None = None
    """The moment of the last `plan`: the cycle whose answers are merged."""

    def plan(
        self, queries: Iterable[MetricQuery], now: datetime
    ) -> list[tuple[Window, list[MetricQuery]]]:
        """The windows to fetch this cycle, each with the queries that share it."""
        groups: dict[tuple[datetime, datetime, int], list[MetricQuery]] = {}
        self._planned_at = now
        for query in queries:
            period = query.period_s
            end = self.asked_end(now, period)
            known = self._until.get(query)
            if known is None:
                start = floor_to(end - timedelta(seconds=max(self.lookback_s, period)), period)
            elif end <= known:
                continue
            else:
                oldest = end - timedelta(seconds=self.lookback_s)
                start = floor_to(max(known - timedelta(seconds=self.overlap_s), oldest), period)
            groups.setdefault((start, end, period), []).append(query)
        return [
            (Window(start, end, period), group)
            for (start, end, period), group in sorted(groups.items(), key=lambda kv: kv[0])
        ]

    def asked_end(self, now: datetime, period_s: int) -> datetime:
        """Where a query of this period is asked up to at `now`. A minute's: up to the minute
        under way, since CloudWatch answers what it has published, and a gauge (a balance, an
        average) is whole once its datapoint is there; a sum's newest minute waits to be
        complete (`_held_from`). A coarser period's (5-minute EC2 metrics): its newest period that
        ended `settle_s` ago, as it may still be filling."""
        if period_s == MINUTE_S:
            return data_end(now, 0.0, period_s)
        return data_end(now, self.settle_s, period_s)

    def data_end(self, now: datetime) -> datetime:
        """The end of the newest minute a cycle at `now` reads (`window.read_end`), from the
        newest CloudWatch has published for any series kept."""
        return read_end(now, self.newest, self.settle_s)

    def expected_end(self, now: datetime) -> datetime:
        """`data_end` as it will stand once this cycle's answers are in: the newest minute
        published moved on by the minutes passed since the last fetch (CloudWatch publishes
        as late as it did then)."""
        if self.newest is None or self._newest_at is None:
            return self.data_end(now)
        passed = data_end(now, 0.0) - data_end(self._newest_at, 0.0)
        return read_end(now, self.newest + passed, self.settle_s)

    def _held_from(self, fetched: Mapping[MetricQuery, Series]) -> dict[str, datetime]:
        """By resource id, the minute from which its one-minute sums are held back: the newest
        minute any of them has, where it may still be filling (it is complete once the next
        minute is there, or `settle_s` after it ends). One minute for all of a resource's
        sums, so that a measure added from several (reads and writes) never sums a minute
        that one of them holds back."""
        now = self._planned_at
        if now is None:
            return {}
        newest: dict[str, datetime] = {}
        for query, series in fetched.items():
            if _filling(query) and series.timestamps:
                last = series.timestamps[-1]
                if last > newest.get(query.resource_id, last - timedelta(seconds=1)):
                    newest[query.resource_id] = last
        settled = now - timedelta(seconds=self.settle_s + MINUTE_S)
        return {rid: last for rid, last in newest.items() if last > settled}

    def merge(self, window: Window, fetched: Mapping[MetricQuery, Series]) -> None:
        """Take in a fetch over `window`: its points replace those the window covers."""
        oldest = window.end - timedelta(seconds=self.lookback_s)
        holds = self._held_from(fetched)
        # What CloudWatch should have had by now: the settled end (`Snapshot.stale`).
        settled = min(window.end, data_end(self._planned_at or window.end, self.settle_s))
        for query, new in fetched.items():
            self._touched.add(query.resource_id)
            old = self._series.get(query, Series((), (), query.period_s, Status.NO_DATA))
            if new.status is Status.ERROR:
                kept = Series(old.timestamps, old.values, query.period_s, Status.ERROR, new.error)
                self._keep(query, kept)
                continue
            if new.timestamps and query.period_s == MINUTE_S:
                newest = new.timestamps[-1] + timedelta(seconds=MINUTE_S)
                if self.newest is None or newest > self.newest:
                    self.newest, self._newest_at = newest, self._planned_at
            until = window.end
            kept = new
            held = holds.get(query.resource_id)
            if held is not None and _filling(query):
                kept = new.until(held)
                if not kept.timestamps:
                    kept = Series((), (), new.period_s, Status.NO_DATA)
                if self.overlap_s < MINUTE_S:
                    until = held  # asked again from the minute held back
                # (With a minute of overlap or more, the next fetch asks for it again anyway,
                # in the window the query's other metrics share.)
            balance = query.metric in metrics.BALANCES
            self._keep(query, self._shared(_spliced(old, kept, window, oldest, balance)))
            self._until[query] = until
            if balance:
                continue  # read on its own every minute (`RegionPoller`): not the rates'
            asked = self._asked_until.get(query.resource_id)
            if asked is None or settled > asked:
                self._asked_until[query.resource_id] = settled

    def _shared(self, series: Series) -> Series:
        """The series on the axis kept for its timestamps (kept from now on if new)."""
        axis = self._axes.setdefault(series.timestamps, series.timestamps)
        if axis is series.timestamps:
            return series
        return Series(axis, series.values, series.period_s, series.status, series.error)

    def _sweep(self) -> None:
        """Forget the axes no series is on any more, once they are as many again as at the
        last sweep: a sweep costs a look at every series."""
        if len(self._axes) <= 2 * self._axes_swept + 64:
            return
        self._axes = {s.timestamps: s.timestamps for s in self._series.values()}
        self._axes_swept = len(self._axes)

    def _keep(self, query: MetricQuery, series: Series) -> None:
        self._series[query] = series
        self._grouped.setdefault(query.resource_id, {})[query.metric] = series

    def current(self, wanted: Mapping[str, Sequence[MetricQuery]]) -> dict[str, dict[str, Series]]:
        """The series of the queries `wanted` (by resource id), by resource id and metric
        name, each as its last fetch left it: the lookback up to that fetch (a series changes
        only when new data arrives, so what is built on it can be kept until then). Queries
        no longer asked for (their resources are gone, or their tier reads less) are
        forgotten; asked again for the very same mapping, nothing is. What is returned is the
        history's own: read it before the next merge."""
        if wanted is not self._asked:
            asked = {q for queries in wanted.values() for q in queries}
            for gone in [q for q in self._series if q not in asked]:
                series = self._series.pop(gone)
                self._until.pop(gone, None)
                self._touched.add(gone.resource_id)
                mine = self._grouped.get(gone.resource_id, {})
                if mine.get(gone.metric) is series:  # not a query of the same name kept
                    del mine[gone.metric]
                if not mine:
                    self._grouped.pop(gone.resource_id, None)
                    self._asked_until.pop(gone.resource_id, None)
            self._rekey(wanted)
            self._asked = wanted
        return self._grouped

    def _rekey(self, wanted: Mapping[str, Sequence[MetricQuery]]) -> None:
        """Key what is kept by the very queries `wanted` holds. A resource's queries are
        worked out anew when its tier moves: equal to those kept, but other objects, each
        with its tuple of dimensions, and a dict keeps the key it first had, so both would
        stay alive. Built afresh, the dicts are also sized for what they hold now, not for
        the backfill's queries."""
        series, until = self._series, self._until
        self._series = {q: series[q] for queries in wanted.values() for q in queries if q in series}
        self._until = {q: until[q] for queries in wanted.values() for q in queries if q in until}

    def asked_until(self) -> Mapping[str, datetime]:
        """By resource id, the end of the latest window CloudWatch answered for its rates (a
        balance is read on its own): data older than that, by a few periods, was asked for and
        did not come (stale)."""
        return self._asked_until

    def take_touched(self) -> set[str]:
        """The resources whose series changed (merged or forgotten) since the last call."""
        touched, self._touched = self._touched, set()
        self._sweep()
        return touched

    def __len__(self) -> int:
        return len(self._series)


def _filling(query: MetricQuery) -> bool:
    """Whether its newest minute may still be filling when CloudWatch first answers it: a
    one-minute sum (a gauge is whole once its datapoint is there)."""
    return query.stat == "Sum" and query.period_s == MINUTE_S


def _spliced(
    old: Series, new: Series, window: Window, oldest: datetime, keep_last: bool = False
) -> Series:
    """`old` from `oldest` on, with the points of `window` replaced by `new`'s: cut and joined
    by position, since both are in time order. `keep_last` (a balance's): where nothing is
    newer than `oldest`, its newest point is kept however old (`metrics.BALANCES`)."""
    if keep_last and not new.timestamps and old.timestamps and old.timestamps[-1] < oldest:
        oldest = old.timestamps[-1]
    stamps, values = old.timestamps, old.values
    if new.timestamps and not window.start <= new.timestamps[0] <= new.timestamps[-1] < window.end:
        # Points outside the window asked for: join point by point.
        kept = [(t, v) for t, v in old.points() if not window.start <= t < window.end]
        return Series.of([(t, v) for t, v in kept if t >= oldest] + new.points(), old.period_s)
    first = bisect.bisect_left(stamps, oldest)
    start = max(first, bisect.bisect_left(stamps, window.start))
    end = max(start, bisect.bisect_left(stamps, window.end))
    joined = stamps[first:start] + new.timestamps + stamps[end:]
    # Joined, not extended: an array extended keeps room to grow, which a kept series never
    # uses (a tenth of the history's memory).
    numbers = _doubles(values[first:start]) + _doubles(new.values) + _doubles(values[end:])
    return Series(joined, numbers, old.period_s, Status.OK if joined else Status.NO_DATA)


def _doubles(values: Sequence[float]) -> array[float]:
    return values if isinstance(values, array) else array("d", values)
