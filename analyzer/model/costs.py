"""What watching costs: the cadence of each polling tier, and a month's projected bill."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from analyzer.model.metrics import Tier
from analyzer.model.series import STALE_PERIODS

SECONDS_PER_MONTH = 30 * 86400.0


IDLE_SHARE = 0.4
"""An idle resource whose bucket could fall to the alarm's 20 % within `t` seconds is polled
within this share of `t`. The worst case, a full gp2 bucket on a 1 GiB volume (100 IOPS
baseline) drained at 3,000 IOPS, reaches 20 % after 1,490 s: polled every 10 minutes, the drain
is seen at the latest 13 minutes in (with the settle delay and a cycle), and warned of at least
2.9 times as long before empty as the alarm (docs/daemon.md, Adaptive polling)."""


GUARDED_S = 3600.0
"""How often an idle volume is read while its instance's operation counts stand guard over it
(`queries.guards_of`): the counts bound its load every minute, so its own read only keeps its
own series, and what `/metrics` shows of it, within the hour."""


STEADY_S = STALE_PERIODS * 60.0
"""How often a hot resource whose alerts all fire steadily is polled: one-minute data stays
recent for `STALE_PERIODS` minutes, and a sum's newest minute is read once the next is there
(a minute after the newest balance), so the poller reads it again in the cycle it would go
stale in, every second minute (sooner where the newest minute comes late). What its data
shows meanwhile is seen up to a minute later than with a poll every minute."""


Role = Literal["minute", "guard", "guard_beside", "guarded", "full"] | None
"""What a resource's physics, or its instance's, makes of its cadence (`Cadence.of_resource`)."""


@dataclass(frozen=True, slots=True)
class Cadence:
    """Seconds between polls of a resource, by tier: hot resources every cycle, or as their
    data goes stale while their alerts fire steadily (`STEADY_S`)."""

    interval_s: float
    active_s: float
    idle_s: float
    """The longest an idle resource goes unpolled."""
    stretch: float = 1.0
    """The factor a budget stretched the quiet cadences by (`billing.within`)."""

    def of(self, tier: Tier, alarm_s: float | None = None, steady: bool = False) -> float:
        """`alarm_s`: the shortest time in which a bucket the resource drains, full, falls to
        the alarm's 20 % (`tiers.alarm_times`); an idle resource is polled within
        `IDLE_SHARE` of it, in whole minutes, never more often than an active one. `steady`: a
        hot resource whose every limit in play has its alert firing, none pending or clearing
        (`tiers.Placement`): polled every `STEADY_S`, never less often than an active one."""
        if tier is Tier.HOT:
            if steady:
                return max(self.interval_s, min(STEADY_S, self.active_s))
            return self.interval_s
        if tier is Tier.ACTIVE:
            return self.active_s
        if alarm_s is None:
            return self.idle_s
        soon = round(IDLE_SHARE * alarm_s / 60) * 60 * self.stretch
        return min(self.idle_s, max(soon, self.active_s))

    def of_resource(
        self, tier: Tier, alarm_s: float | None = None, steady: bool = False, role: Role = None
    ) -> float:
        """`of`, for a resource the physics of its instance sets a cadence of its own for:
        `minute`, an instance whose EBS bucket can change from one minute to the next (every
        interval); `guard`, an idle instance whose operation counts stand guard over its idle
        volumes (the active cadence: at least twice as often as any of them would be read,
        for the price of one); `guard_beside`, such an instance beside volumes read on their
        own, whose counts it is read with (`alarm_s`: the soonest of its idle volumes'; their
        idle cadence: as soon as reading them would see a load, for the price of one);
        `guarded`, such a volume (`GUARDED_S`); `full`, an active
        resource whose buckets are full and undrained, which only a rise in its load can
        change, as an idle one's: its idle cadence (`tiers.Placement.full`)."""
        if tier is not Tier.HOT and role == "minute":
            return self.interval_s
        if tier is Tier.ACTIVE and role == "full":
            return self.of(Tier.IDLE, alarm_s)
        if tier is Tier.IDLE and role == "guard":
            return self.active_s
        if tier is Tier.IDLE and role == "guard_beside":
            return self.of(Tier.IDLE, alarm_s)
        if tier is Tier.IDLE and role == "guarded":
            return max(GUARDED_S, self.idle_s)
        return self.of(tier, alarm_s, steady)

    def guard_pays(self, alarms: Sequence[float | None], beside: bool = False) -> bool:
        """Whether an instance standing guard over idle volumes whose soonest alarms are
        `alarms` costs less than reading them: the guard's two counts at its cadence (`beside`:
        beside volumes read on their own, `guard_beside`) and each volume's two at
        `GUARDED_S`, against each volume's two at its idle cadence. Three volumes on an
        instance whose bucket they can drain (10 minutes each) cost 36 metrics an hour read,
        30 guarded; two, 24 and 28; two beside a busy volume, 24 and 16."""
        read = sum(1 / self.of(Tier.IDLE, alarm) for alarm in alarms)
        role: Role = "guard_beside" if beside else "guard"
        soonest = min((a for a in alarms if a is not None), default=None)
        guarded = 1 / self.of_resource(Tier.IDLE, soonest, role=role) + len(
            alarms
        ) / self.of_resource(Tier.IDLE, role="guarded")
        return read > guarded


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
