"""What watching costs: the cadence of each polling tier, and a month's projected bill."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from analyzer.model.metrics import Tier

SECONDS_PER_MONTH = 30 * 86400.0


@dataclass(frozen=True, slots=True)
class Cadence:
    """Seconds between polls of a resource, by tier; hot resources are polled every cycle."""

    interval_s: float
    active_s: float
    idle_s: float

    def of(self, tier: Tier) -> float:
        return {Tier.HOT: self.interval_s, Tier.ACTIVE: self.active_s}.get(tier, self.idle_s)


@dataclass(frozen=True, slots=True)
class Projection:
    """Metrics requested a month, by tier, and what they cost."""

    metrics: Mapping[Tier, float]
    price_per_metric: float

    @property
    def total_metrics(self) -> float:
        return sum(self.metrics.values())

    def dollars(self, tier: Tier | None = None) -> float:
        count = self.total_metrics if tier is None else self.metrics.get(tier, 0.0)
        return count * self.price_per_metric
