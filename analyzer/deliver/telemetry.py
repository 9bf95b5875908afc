"""The daemon's own metrics: CloudWatch calls and their cost, cycles, notifications."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from analyzer.model.costs import Projection
from analyzer.model.metrics import Tier
from analyzer.model.state import FetchStats

prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]


POLL_BUCKETS = (0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
SECONDS_PER_MONTH = 30 * 86400


OUTCOMES = ("success", "error")
CYCLE_OUTCOMES = ("success", "partial", "failed")
"""A cycle is `partial` where some metrics failed, `failed` where all did or it raised."""
ACCOUNT_OUTCOMES = ("success", "denied", "throttled", "error")
"""An account's outcome (`live.watched.OUTCOMES`)."""


@dataclass
class Telemetry:
    """The daemon's own metrics, in its own registry."""

    registry: CollectorRegistry
    price_per_metric: float = 0.01 / 1000
    wall_clock: Callable[[], float] = time.time
    """Real time, for the timestamps Prometheus compares with `time()`: the analysis clock
    may be simulated (the demo), and a timestamp on it would read hours off."""
    _recent: deque[tuple[float, int]] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        r = self.registry
        self.requests = Counter(
            "ebs_analyzer_cloudwatch_requests",
            "CloudWatch API requests by operation and outcome.",
            ["operation", "outcome"],
            registry=r,
        )
        self.metrics_requested = Counter(
            "ebs_analyzer_cloudwatch_metrics_requested",
            "Metrics requested from GetMetricData, what CloudWatch bills, by the polling tier "
            "of their resource (full: every metric; past: the fortnights fixes are weighed on, "
            "and the long pasts savings are weighed on).",
            ["tier"],
            registry=r,
        )
        self.poll_duration = Histogram(
            "ebs_analyzer_poll_duration_seconds",
            "Duration of an analysis cycle.",
            buckets=POLL_BUCKETS,
            registry=r,
        )
        self.last_success = Gauge(
            "ebs_analyzer_last_successful_poll_timestamp_seconds",
            "When the last cycle succeeded (Unix time, real time even where the analysis "
            "clock is simulated).",
            registry=r,
        )
        self.notifications = Counter(
            "ebs_analyzer_notifications",
            "Notification deliveries by channel and outcome.",
            ["channel", "outcome"],
            registry=r,
        )
        self.cycles = Counter(
            "ebs_analyzer_cycles",
            "Analysis cycles by outcome: success, partial (some metrics failed), failed.",
            ["outcome"],
            registry=r,
        )
        self.failed_share = Gauge(
            "ebs_analyzer_last_cycle_failed_metrics_ratio",
            "The share of the metrics requested in the last cycle whose answer failed (0-1).",
            registry=r,
        )
        self.inventories = Counter(
            "ebs_analyzer_inventory_refreshes",
            "Inventory refreshes (Describe* in every region) by outcome.",
            ["outcome"],
            registry=r,
        )
        self.state_saves = Counter(
            "ebs_analyzer_state_saves",
            "Writes of the alert state file by outcome.",
            ["outcome"],
            registry=r,
        )
        self.apply_attempts = Counter(
            "ebs_analyzer_apply_attempts",
            "Attempts to apply a fix, by where they came from (slack, policy) and outcome "
            "(applied, already, refused, denied, invalid, failed).",
            ["via", "outcome"],
            registry=r,
        )
        self.cost = Gauge(
            "ebs_analyzer_cloudwatch_estimated_cost_dollars_per_month",
            "What GetMetricData costs a month at the rate of the last hour (of the analysis "
            "clock: a simulated one prices a simulated month).",
            registry=r,
        )
        self.projected = Gauge(
            "ebs_analyzer_cloudwatch_projected_cost_dollars_per_month",
            "What GetMetricData would cost a month with every resource in the tier it is in "
            "now, by tier, under the cadences in force.",
            ["tier"],
            registry=r,
        )
        self._accounts: set[str] = set()
        self._account_series: tuple[Gauge, Counter, Gauge] | None = None
        # Every series a counter will have, at zero from the start: an `increase()` over a
        # series that appears with its first event misses that event.
        for outcome in OUTCOMES:
            self.requests.labels("GetMetricData", outcome)
            self.inventories.labels(outcome)
            self.state_saves.labels(outcome)
        for outcome in CYCLE_OUTCOMES:
            self.cycles.labels(outcome)
        for tier in (*(t.value for t in Tier), "full", "past"):
            self.metrics_requested.labels(tier)

    def expect_channel(self, channel: str) -> None:
        """The channel notifications will go to: its deliveries counted from zero."""
        for outcome in OUTCOMES:
            self.notifications.labels(channel, outcome)

    def cycle_done(
        self, stats: FetchStats, duration_s: float, now: datetime, backfill: bool
    ) -> None:
        """A cycle that ran to its end at `now` (the analysis clock): `success`, `partial` or
        `failed` by its metrics."""
        for outcome, count in stats.requests.items():
            self.requests.labels("GetMetricData", outcome).inc(count)
        for tier, count in stats.by_tier.items():
            self.metrics_requested.labels(tier).inc(count)
        self.metrics_requested.labels("past").inc(stats.past_requested)
        untiered = stats.billed - stats.past_requested - sum(stats.by_tier.values())
        if untiered > 0:
            self.metrics_requested.labels("full").inc(untiered)
        self.poll_duration.observe(duration_s)
        if stats.outcome != "failed":
            self.last_success.set(self.wall_clock())
        self.cycles.labels(stats.outcome).inc()
        self.failed_share.set(round(stats.failed_share, 4))
        if not backfill:
            self._estimate(stats.billed, now.timestamp())

    def budget_set(self, dollars: float) -> None:
        """The monthly GetMetricData budget: exported only where one is set, so that a rule
        comparing the cost with it has nothing to compare without one."""
        Gauge(
            "ebs_analyzer_cloudwatch_budget_dollars_per_month",
            "The monthly GetMetricData budget set.",
            registry=self.registry,
        ).set(dollars)

    def sharded(self, shard: int, total: int) -> None:
        """This process's shard of the fleet: exported only where there is more than one, so
        that a rule can count the shards that answer against the shards there should be."""
        Gauge(
            "ebs_analyzer_shards",
            "Where the fleet is split into shards: how many there are, labelled by the one this "
            "process watches.",
            ["shard"],
            registry=self.registry,
        ).labels(str(shard)).set(total)

    def projected_bill(self, projection: Projection) -> None:
        for tier in Tier:
            self.projected.labels(tier.value).set(round(projection.dollars(tier), 4))

    def cycle_failed(self, metrics: bool = True) -> None:
        """A cycle that raised: nothing was analyzed. `metrics`: whether its metrics failed
        (not where the inventory could not be described, which its own counter tells)."""
        self.cycles.labels("failed").inc()
        if metrics:
            self.failed_share.set(1.0)

    def _account_families(self) -> tuple[Gauge, Counter, Gauge]:
        """The series by account, registered once there are accounts: none otherwise."""
        with self._lock:
            if self._account_series is None:
                self._account_series = self._new_account_families()
        return self._account_series

    def _new_account_families(self) -> tuple[Gauge, Counter, Gauge]:
        up = Gauge(
            "ebs_analyzer_account_up",
            "Where there are accounts: 1 while the account answers (its Describe calls and its "
            "metrics), 0 while its role or its calls fail.",
            ["account_id", "account_name"],
            registry=self.registry,
        )
        checks = Counter(
            "ebs_analyzer_account_checks",
            "Where there are accounts: each account's inventory rounds and cycles, by outcome "
            "(success, denied, throttled, error).",
            ["account_id", "account_name", "outcome"],
            registry=self.registry,
        )
        projected = Gauge(
            "ebs_analyzer_account_projected_cost_dollars_per_month",
            "Where there are accounts: what watching each account's region would cost a month "
            "in GetMetricData, its resources in the tiers they are in now.",
            ["account_id", "account_name", "region"],
            registry=self.registry,
        )
        return up, checks, projected

    def account_checked(self, account_id: str, account_name: str, outcome: str) -> None:
        """An account answered (`success`) or failed (`denied`, `throttled`, `error`)."""
        up, checks, _ = self._account_families()
        if account_id not in self._accounts:
            self._accounts.add(account_id)
            for each in ACCOUNT_OUTCOMES:
                checks.labels(account_id, account_name, each)
        checks.labels(account_id, account_name, outcome).inc()
        up.labels(account_id, account_name).set(1.0 if outcome == "success" else 0.0)

    def account_bills(self, bills: dict[tuple[str, str, str], float]) -> None:
        """(account id, name, region) → the month's projected GetMetricData dollars."""
        projected = self._account_families()[2]
        projected.clear()
        for (account_id, name, region), dollars in bills.items():
            projected.labels(account_id, name, region).set(round(dollars, 4))

    def inventory_refreshed(self, ok: bool) -> None:
        self.inventories.labels("success" if ok else "error").inc()

    def apply_attempted(self, via: str, outcome: str) -> None:
        self.apply_attempts.labels(via, outcome).inc()

    def state_saved(self, ok: bool) -> None:
        self.state_saves.labels("success" if ok else "error").inc()

    def notified(self, channel: str, outcome: str) -> None:
        self.notifications.labels(channel, outcome).inc()

    def _estimate(self, metrics: int, now: float) -> None:
        """Steady-state cost: the last hour's requests, scaled to a month (backfills apart),
        both on the analysis clock, so that the demo's faster clock prices its own month."""
        with self._lock:
            self._recent.append((now, metrics))
            while self._recent and now - self._recent[0][0] > 3600:
                self._recent.popleft()
            if len(self._recent) < 2:
                return
            span = max(now - self._recent[0][0], 1.0)
            per_second = sum(m for _, m in list(self._recent)[1:]) / span
        self.cost.set(round(per_second * SECONDS_PER_MONTH * self.price_per_metric, 4))
