"""What watching an inventory costs a month in GetMetricData, by tier, and the cadences that
keep it under a budget.

CloudWatch bills each metric requested, whatever the number of datapoints: a resource polled
every `c` seconds for `n` metrics costs `n × month / c` metrics a month. A 5-minute EC2 metric
is asked for at most once per 5-minute point, however often its resource is due.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from analyzer.collect.queries import MetricQuery
from analyzer.model.costs import SECONDS_PER_MONTH, Cadence, Projection, Role
from analyzer.model.metrics import BALANCES, Tier

MAX_STRETCH_S = 3600.0
"""The budget never stretches a cadence beyond an hour: older data would no longer be one
cycle's worth of news."""


def project(
    wanted: Mapping[str, Sequence[MetricQuery]],
    tiers: Mapping[str, Tier],
    cadence: Cadence,
    price_per_metric: float,
    alarms: Mapping[str, float] | None = None,
    steady: Collection[str] = frozenset(),
    roles: Mapping[str, Role] | None = None,
) -> Projection:
    """The month's bill if each resource stays in its tier, asking for `wanted[id]`.
    `alarms`: by resource id, how soon a full bucket it drains reaches 20 % (`Cadence.of`);
    `steady`: the ids of hot resources whose alerts fire steadily (`Cadence.of`); `roles`:
    what their instances make of their cadences (`Cadence.of_resource`)."""
    metrics = dict.fromkeys(Tier, 0.0)
    alarms = alarms or {}
    roles = roles or {}
    for rid, queries in wanted.items():
        tier = tiers.get(rid, Tier.IDLE)
        role = roles.get(rid)
        every = cadence.of_resource(tier, alarms.get(rid), rid in steady, role)
        # An active resource's balance is read every interval between its polls
        # (`RegionPoller._watched`), unless its role reads it in full as often or not at all.
        watched = cadence.interval_s if tier is Tier.ACTIVE and role is None else every
        metrics[tier] += sum(
            SECONDS_PER_MONTH / max(watched if q.metric in BALANCES else every, q.period_s)
            for q in queries
        )
    return Projection(metrics, price_per_metric)


def within(budget: float, projection: Projection, cadence: Cadence) -> Cadence:
    """The cadence under which `projection` (made with `cadence`) fits `budget` dollars a month:
    the active and idle cadences stretched by one factor, the hot one never. Where the hot
    resources alone cost more, the others are stretched as far as they go."""
    spent_hot = projection.dollars(Tier.HOT)
    rest = projection.dollars(Tier.ACTIVE) + projection.dollars(Tier.IDLE)
    if projection.dollars() <= budget or rest <= 0:
        return cadence
    room = budget - spent_hot
    factor = rest / room if room > 0 else float("inf")
    return replace(
        cadence,
        active_s=_stretched(cadence.active_s, factor),
        idle_s=_stretched(cadence.idle_s, factor),
        stretch=cadence.stretch * factor,
    )


def _stretched(seconds: float, factor: float) -> float:
    """Rounded up to whole minutes, so that the cadence does not change with every resource
    that changes tier (and the bill stays under the budget)."""
    if seconds * factor >= MAX_STRETCH_S:
        return MAX_STRETCH_S
    return float(math.ceil(seconds * factor / 60) * 60)
