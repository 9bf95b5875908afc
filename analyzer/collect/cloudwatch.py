"""The only module that talks to CloudWatch: GetMetricData in batches, Ids mapped back.

Each batch holds at most 500 queries, each with a generated Id; pages are followed through
`NextToken` and their values joined per Id. A query that CloudWatch marks `InternalError` or
`Forbidden`, one its answer leaves out, one still `PartialData` on the last page, and every
query of a call that failed (or answered more pages than `MAX_PAGES`, or a body that is not a
GetMetricData answer) ends as an error series: never as "no data", so the history it had is
kept.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from analyzer.collect import progress
from analyzer.collect.agent_metrics import Listed
from analyzer.collect.aws import calling
from analyzer.collect.queries import MetricQuery
from analyzer.collect.reply import OffContract, Reply
from analyzer.collect.window import Window
from analyzer.errors import AwsAccessError, AwsCallError
from analyzer.model.series import Series, Status
from analyzer.model.state import FetchStats

MAX_QUERIES = 500
FAILED_CODES = frozenset({"InternalError", "Forbidden"})
MAX_PAGES = 100
"""A call that answers more pages than this is failed: a window of 500 queries at one-minute
resolution needs a handful, so more is a loop, not data."""


def batches(
    queries: Sequence[MetricQuery], size: int = MAX_QUERIES
) -> Iterable[Sequence[MetricQuery]]:
    for start in range(0, len(queries), size):
        yield queries[start : start + size]


def arguments(
    ids: dict[str, MetricQuery], window: Window, account_id: str | None = None
) -> dict[str, Any]:
    """The GetMetricData call for these queries, keyed by their Ids, over `window`; with
    `account_id`, each query reads that source account's metrics from a CloudWatch monitoring
    account (cross-account observability: `AccountId` in each MetricDataQuery)."""
    return {
        "MetricDataQueries": [_query(q, i, account_id) for i, q in ids.items()],
        "StartTime": window.start,
        "EndTime": window.end,
        "ScanBy": "TimestampAscending",
    }


def _query(query: MetricQuery, query_id: str, account_id: str | None) -> dict[str, Any]:
    found: dict[str, Any] = {
        "Id": query_id,
        "MetricStat": {
            "Metric": {
                "Namespace": query.namespace,
                "MetricName": query.metric,
                "Dimensions": [{"Name": name, "Value": value} for name, value in query.dimensions],
            },
            "Period": query.period_s,
            "Stat": query.stat,
        },
        "ReturnData": True,
    }
    if account_id:
        found["AccountId"] = account_id
    return found


def _utc(stamp: datetime) -> datetime:
    if stamp.tzinfo is UTC:  # the analyzer's own clients parse to UTC already
        return stamp
    return stamp.astimezone(UTC) if stamp.tzinfo else stamp.replace(tzinfo=UTC)


_Part = tuple[list[datetime], Sequence[float]]
"""The timestamps and the values one page gave for one query."""


def _read_page(
    page: Any, ids: dict[str, MetricQuery], points: dict[str, list[_Part]], codes: dict[str, str]
) -> str | None:
    """Take in one page of an answer; its NextToken. An answer off GetMetricData's contract (a
    field of the wrong type or shape) raises OffContract naming the field: the call fails."""
    answer = Reply(page)
    for result in answer.each("MetricDataResults"):
        rid = result.text("Id")
        if rid not in ids:
            continue
        stamps, values = result.moments("Timestamps"), result.numbers("Values")
        if len(stamps) != len(values):
            raise OffContract(f"query {rid}: {len(stamps)} timestamps, {len(values)} values")
        points[rid].append((stamps, values))
        codes[rid] = result.text("StatusCode", "Complete")
    return answer.text("NextToken", None)


def _series(parts: list[_Part], period_s: int) -> Series:
    """A query's series from the parts its pages gave. The usual answer, one part in time
    order, is taken as it is; otherwise points are joined, and where a period appears on two
    pages the later value wins."""
    if len(parts) == 1:
        stamps, values = parts[0]
        # Each timestamp later than the one before: in order, none twice. Checked pairwise,
        # without a set and two sorted copies (a fortnight of minutes is 20,160 timestamps).
        if (
            len(stamps) == len(values)
            and all(t.tzinfo is UTC for t in stamps)
            and all(map(operator.lt, stamps, islice(stamps, 1, None)))
        ):
            status = Status.OK if stamps else Status.NO_DATA
            kept = values if isinstance(values, array) else array("d", values)
            return Series(tuple(stamps), kept, period_s, status)
    merged = {_utc(t): v for stamps, values in parts for t, v in zip(stamps, values, strict=False)}
    return Series.of(merged.items(), period_s, Status.OK if merged else Status.NO_DATA)


def _scaled(series: Series, scale: float) -> Series:
    if scale == 1.0 or not series.values:
        return series
    return series.map(lambda v: v * scale)


class CloudWatch:
    """GetMetricData for one region. `client` is a boto3 CloudWatch client or a stand-in with
    the same `get_metric_data` method. `region` names where it reads in messages (an account's
    scope, `111111111111/us-east-1`, where there are accounts); `account_id` is the source
    account to read from a monitoring account, None to read the client's own account."""

    def __init__(
        self,
        client: Any,
        region: str,
        account_id: str | None = None,
        contain_refusals: bool = False,
    ) -> None:
        self._client = client
        self.region = region
        self.account_id = account_id
        self._contained: tuple[type[Exception], ...] = (
            (AwsCallError, AwsAccessError) if contain_refusals else (AwsCallError,)
        )
        """What fails a batch's metrics rather than the cycle: a refusal too, for one of
        several accounts (its role denied or deleted), so that the others go on."""

    def fetch(
        self, queries: Sequence[MetricQuery], window: Window
    ) -> tuple[dict[MetricQuery, Series], FetchStats]:
        stats = FetchStats()
        out: dict[MetricQuery, Series] = {}
        what = f"CloudWatch metrics in {self.region}"
        with progress.step(what, total=len(queries), unit="metrics") as fetching:
            for batch in batches(queries):
                out.update(self._fetch_batch(batch, window, stats))
                fetching.advance(len(batch))
        return out, stats

    def _fetch_batch(
        self, batch: Sequence[MetricQuery], window: Window, stats: FetchStats
    ) -> dict[MetricQuery, Series]:
        ids = {f"m{i}": q for i, q in enumerate(batch)}
        stats.metrics_requested += len(batch)
        try:
            points, codes = self._pages(ids, window, stats)
        except self._contained as exc:
            stats.requests["error"] += 1
            stats.errors.append(str(exc))
            code = getattr(exc, "code", None)
            if code is not None:
                stats.codes.append(code)
            stats.metrics_failed += len(batch)
            return {q: Series.failed(str(exc), q.period_s) for q in batch}
        out: dict[MetricQuery, Series] = {}
        for rid, query in ids.items():
            code = codes.get(rid)
            reason = None
            if code is None:
                reason = f"GetMetricData answered without {query.metric} (query {rid})"
            elif code in FAILED_CODES:
                reason = f"GetMetricData {code} for {query.metric}"
            elif code == "PartialData":
                reason = f"GetMetricData PartialData for {query.metric} on its last page"
            if reason is not None:
                out[query] = Series.failed(reason, query.period_s)
                stats.metrics_failed += 1
                stats.errors.append(f"cloudwatch:GetMetricData in {self.region}: {reason}")
                continue
            out[query] = _scaled(_series(points[rid], query.period_s), query.scale)
            stats.datapoints += len(out[query])
        return out

    def list_metrics(self, namespace: str, dimension: str, metric: str | None = None) -> Listed:
        """Every metric of `namespace` with a `dimension` (named `metric`, where given),
        published in the last three hours (ListMetrics' `RecentlyActive`, its only choice):
        what a live agent publishes now. AwsAccessError or AwsCallError, naming the call,
        where it fails."""
        kwargs: dict[str, Any] = {
            "Namespace": namespace,
            "Dimensions": [{"Name": dimension}],
            "RecentlyActive": "PT3H",
        }
        if metric is not None:
            kwargs["MetricName"] = metric
        if self.account_id:
            kwargs |= {"IncludeLinkedAccounts": True, "OwningAccount": self.account_id}
        found: Listed = []
        for _ in range(MAX_PAGES * 10):
            with calling("cloudwatch:ListMetrics", self.region):
                answer = Reply(self._client.list_metrics(**kwargs))
                for listed in answer.each("Metrics"):
                    dims = tuple(
                        (d.text("Name"), d.text("Value")) for d in listed.each("Dimensions")
                    )
                    found.append((listed.text("MetricName"), dims))
                token = answer.text("NextToken", None)
            if not token:
                return found
            kwargs["NextToken"] = token
        raise AwsCallError(
            f"cloudwatch:ListMetrics in {self.region}: more than {MAX_PAGES * 10} pages"
        )

    def _pages(
        self, ids: dict[str, MetricQuery], window: Window, stats: FetchStats
    ) -> tuple[dict[str, list[_Part]], dict[str, str]]:
        """Every page of one call, per query Id: its parts of the answer, and its status."""
        points: dict[str, list[_Part]] = {i: [] for i in ids}
        codes: dict[str, str] = {}
        kwargs = arguments(ids, window, self.account_id)
        for _ in range(MAX_PAGES):
            with calling("cloudwatch:GetMetricData", self.region):
                page = self._client.get_metric_data(**kwargs)
                token = _read_page(page, ids, points, codes)
            stats.requests["success"] += 1
            if not token:
                return points, codes
            kwargs["NextToken"] = token
        raise AwsCallError(
            f"cloudwatch:GetMetricData in {self.region}: more than {MAX_PAGES} pages for one call"
        )
