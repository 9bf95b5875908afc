"""The one way metrics are fetched: windows, each with the queries that share it, in
GetMetricData calls that answer in one page, a few calls in flight at once.

The daemon's polls, the balances' past days, and the history `backtest` and `record` read all
come through here. Each call mostly waits for CloudWatch, so calls wait side by side; the
answers are handed back in the order planned, so what is built on them does not depend on
which call came back first. A call that fails ends as error series (`cloudwatch`), never as
"no data".
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from analyzer.collect import cloudwatch
from analyzer.collect.boundaries import MetricData
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window
from analyzer.model.series import Series
from analyzer.model.state import FetchStats

FETCHES_IN_FLIGHT = 4
"""GetMetricData calls at once in one region: far below CloudWatch's request quota, and a
throttled call is retried by botocore's standard retry mode."""
POINTS_PER_CALL = 100_800
"""GetMetricData returns at most this many datapoints a call (a page)."""

Plan = Sequence[tuple[Window, Sequence[MetricQuery]]]
"""Windows to fetch, each with the queries that share it."""


def per_call(window: Window) -> int:
    """Queries a call over `window` carries so that it answers in one page, at least one."""
    return max(1, min(cloudwatch.MAX_QUERIES, POINTS_PER_CALL // max(window.periods, 1)))


def fetch(
    metrics: MetricData, plan: Plan, stats: FetchStats
) -> Iterator[tuple[Window, dict[MetricQuery, Series]]]:
    """Each window's answer, call by call in the order planned, with each call's counts
    merged into `stats` as it is handed back."""
    calls = [
        (window, batch)
        for window, group in plan
        for batch in cloudwatch.batches(group, per_call(window))
    ]
    if not calls:
        return
    with ThreadPoolExecutor(FETCHES_IN_FLIGHT, thread_name_prefix="fetch") as pool:
        # Each answer is let go of once handed back: a first cycle's answers together weigh
        # more than the history they become.
        answers = deque(pool.submit(metrics.fetch, batch, window) for window, batch in calls)
        for window, _ in calls:
            fetched, call_stats = answers.popleft().result()
            stats.merge(call_stats)
            yield window, fetched
