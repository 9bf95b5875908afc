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
from analyzer.collect.window import Window, aligned, data_end, floor_to
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

    def plan(
        self, queries: Iterable[MetricQuery], now: datetime
    ) -> list[tuple[Window, list[MetricQuery]]]:
        """The windows to fetch this cycle, each with the queries that share it."""
        groups: dict[tuple[datetime, datetime, int], list[MetricQuery]] = {}
        for query in queries:
            period = query.period_s
            end = data_end(now, self.settle_s, period)
            known = self._until.get(query)
            if known is None:
                start = aligned(now, period, self.lookback_s, self.settle_s).start
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

    def merge(self, window: Window, fetched: Mapping[MetricQuery, Series]) -> None:
        """Take in a fetch over `window`: its points replace those the window covers."""
        oldest = window.end - timedelta(seconds=self.lookback_s)
        for query, new in fetched.items():
            self._touched.add(query.resource_id)
            old = self._series.get(query, Series((), (), query.period_s, Status.NO_DATA))
            if new.status is Status.ERROR:
                kept = Series(old.timestamps, old.values, query.period_s, Status.ERROR, new.error)
                self._keep(query, kept)
                continue
            self._keep(query, self._shared(_spliced(old, new, window, oldest)))
            self._until[query] = window.end
            asked = self._asked_until.get(query.resource_id)
            if asked is None or window.end > asked:
                self._asked_until[query.resource_id] = window.end

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
        """By resource id, the end of the latest window CloudWatch answered for it: data older
        than that, by a few periods, was asked for and did not come (stale)."""
        return self._asked_until

    def take_touched(self) -> set[str]:
        """The resources whose series changed (merged or forgotten) since the last call."""
        touched, self._touched = self._touched, set()
        self._sweep()
        return touched

    def __len__(self) -> int:
        return len(self._series)


def _spliced(old: Series, new: Series, window: Window, oldest: datetime) -> Series:
    """`old` from `oldest` on, with the points of `window` replaced by `new`'s: cut and joined
    by position, since both are in time order."""
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
