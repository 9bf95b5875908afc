"""The fortnight a fix is replayed over before it is applied, read from CloudWatch: what proves
a cut, and what `apply` shows of any fix (`plan.with_past`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from analyzer.act.plan import Plan, with_past
from analyzer.collect import demand
from analyzer.collect.boundaries import MetricData
from analyzer.errors import AnalyzerError
from analyzer.model.state import FetchStats


def reader(
    metrics: Mapping[str, MetricData],
    settle_s: float,
    clock: Callable[[], datetime],
    fetched: Callable[[FetchStats], None] = lambda _: None,
) -> Callable[[Plan], Plan]:
    """What reads a plan's resource's last fourteen days where its scope's metrics are
    (`metrics`, by scope) and replays the target over them; `fetched` is told what the read
    cost. A read that fails leaves the plan without its past, with AWS's reason."""

    def past(plan: Plan) -> Plan:
        stats = FetchStats()
        try:
            seen = next(
                (
                    d
                    for _, d in demand.fetch_demand(
                        metrics[plan.scope], [plan.resource], clock(), settle_s, stats
                    )
                ),
                None,
            )
        except AnalyzerError as exc:
            return with_past(plan, None, str(exc))
        fetched(stats)
        return with_past(plan, seen)

    return past
