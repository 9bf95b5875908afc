"""The one fetch path: page-sized calls, a few in flight at once, answers in the order planned."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from analyzer.collect import fetch
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window, aligned
from analyzer.model.series import Series
from analyzer.model.state import FetchStats
from tests.fakes import FakeMetricData

NOW = datetime(2026, 11, 19, 8, 30, tzinfo=UTC)


def _query(n: int, period_s: int = 60) -> MetricQuery:
    return MetricQuery(
        f"vol-{n:05}", "AWS/EBS", "VolumeReadOps", (("VolumeId", f"vol-{n:05}"),), "Sum", period_s
    )


@dataclass
class SlowMetricData:
    """`FakeMetricData`'s answers, each after a wait, counting the calls under way at once; a
    call that asks for a resource of `failing` fails."""

    inner: FakeMetricData = field(default_factory=lambda: FakeMetricData(lambda q, t: 1.0))
    failing: frozenset[str] = frozenset()
    region: str = "us-east-1"
    most: int = 0
    calls: int = 0
    _now: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def fetch(
        self, queries: Sequence[MetricQuery], window: Window
    ) -> tuple[dict[MetricQuery, Series], FetchStats]:
        with self._lock:
            self._now += 1
            self.calls += 1
            self.most = max(self.most, self._now)
        time.sleep(0.02)  # CloudWatch's answer on its way
        with self._lock:
            self._now -= 1
        if any(q.resource_id in self.failing for q in queries):
            failed = FetchStats(metrics_requested=len(queries), metrics_failed=len(queries))
            failed.errors.append("throttled")
            return {q: Series.failed("throttled", q.period_s) for q in queries}, failed
        return self.inner.fetch(queries, window)


@pytest.mark.parametrize(
    ("span", "per_call"),
    [
        (timedelta(hours=1), 500),  # a daemon's backfill: the most a call takes
        (timedelta(days=1), 70),
        (timedelta(days=15), 4),  # `backtest --since 15d`
        (timedelta(days=200), 1),
    ],
)
def test_a_call_carries_what_one_page_answers(span: timedelta, per_call: int) -> None:
    assert fetch.per_call(aligned(NOW, 60, span.total_seconds(), 0)) == per_call


def test_calls_wait_side_by_side_and_come_back_in_the_order_planned() -> None:
    day = aligned(NOW, 60, 86_400, 0)
    hour = aligned(NOW, 300, 3_600, 0)
    plan = [
        (day, [_query(n) for n in range(300)]),
        (hour, [_query(n, 300) for n in range(300, 303)]),
    ]
    metrics = SlowMetricData(failing=frozenset({"vol-00000"}))
    stats = FetchStats()
    answers = list(fetch.fetch(metrics, plan, stats))
    assert metrics.most > 1
    # 300 queries over a day of minutes: five calls of 70 and fewer, then the hour's one.
    assert [(w, len(a)) for w, a in answers] == [(day, 70)] * 4 + [(day, 20), (hour, 3)]
    assert [q for _, a in answers for q in a] == [q for _, group in plan for q in group]
    # The failed call's counts are merged with the others', and its queries end as errors.
    assert (stats.metrics_requested, stats.metrics_failed, stats.errors) == (303, 70, ["throttled"])
    assert all(s.error == "throttled" for s in answers[0][1].values())


def test_nothing_to_fetch_makes_no_call() -> None:
    metrics = SlowMetricData()
    assert list(fetch.fetch(metrics, [(aligned(NOW, 60, 3_600, 0), [])], FetchStats())) == []
    assert metrics.calls == 0
