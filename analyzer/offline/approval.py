"""`backtest --approve-within`: each warning's fix, as if approved that long after it fired.

Where a credit warning came for an exhaustion, the fix its message offered (the first that
`apply` takes: one volume, or one RDS instance's storage, modified in place) is taken as
approved `seconds` after the warning fired, and in force `TAKES_EFFECT_S` later (an online
modification takes effect about ten seconds after it is made: incident 2). From the first
whole period after that, the resource's demand runs through the fix's limits, its bucket
full where it has one (`analyze/held.py`, as `--what-if` and the fixes' past replay them);
demand the throttle held back counts at its rate before the limit bound (`held.behind`), a
floor. The throttled minutes of an exhaustion are those its own limits held the demand back
in (its bucket empty as its balance shows it); the fix saves those after it took effect that
its limits would have carried, and averts the exhaustion where it took effect before the
throttle began and carried every period from then through the exhaustion's end.

Each exhaustion is weighed on its own, by the warning on when it began or, where none was,
by the first that fired while it lasted (which saves only what remains of it). A fix
approved for an earlier exhaustion is not carried over to a later one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from analyzer.analyze.advice.proof import option_limits
from analyzer.analyze.held import LIMITED_ABOVE, behind, limited
from analyzer.model.demand import Demand, Flags, Floats
from analyzer.model.metrics import Measure
from analyzer.model.series import Series
from analyzer.model.state import EMPTY_BALANCE_PERCENT, ResourceState
from analyzer.offline.backtest import WARNING, Backtest, Episode
from analyzer.offline.replay import Fired

TAKES_EFFECT_S = 10.0
"""An online ModifyVolume (or ModifyDBInstance of storage) takes effect about this long after
it is made (incident 2: burst returned in about ten seconds)."""
MOST_S = 3600.0
"""The longest approval weighed: past an hour, a warning's fix is no longer a reply to it."""


NOT_WARNED = "not warned"
NO_FIX = "no fix apply takes"
AVERTED = "averted"
LATE = "late"
"""In force only once the throttle had begun (or the exhaustion was over): it saves what
remains."""
TOO_SMALL = "too small"
"""In force before the throttle began, but its limits would have held the demand back before
the exhaustion's end."""


@dataclass(frozen=True, slots=True)
class Approved:
    """One exhaustion, and what approving its warning's fix would have saved of it."""

    episode: Episode
    outcome: str
    warned_at: datetime | None = None
    """The warning whose fix is approved: on when the exhaustion began, or the first that
    fired while it lasted. None: no warning of it."""
    fix: str | None = None
    """The fix approved (`Remedy.fix_id`); None where the warning offered none `apply` takes
    (or none whose limits are known)."""
    in_force_at: datetime | None = None
    throttled_minutes: float = 0.0
    """The minutes of the exhaustion its own limits held the demand back."""
    minutes_saved: float = 0.0

    @property
    def averted(self) -> bool:
        return self.outcome == AVERTED

    def as_dict(self) -> dict[str, Any]:
        e = self.episode
        return {
            "resource_id": e.resource_id,
            "what": e.what,
            "started_at": _iso(e.started_at),
            "ended_at": _iso(e.ended_at),
            "warned_at": _iso(self.warned_at),
            "fix_id": self.fix,
            "in_force_at": _iso(self.in_force_at),
            "throttled_minutes": round(self.throttled_minutes, 1),
            "minutes_saved": round(self.minutes_saved, 1),
            "averted": self.averted,
            "outcome": self.outcome,
        }


@dataclass(frozen=True, slots=True)
class Approval:
    """Every exhaustion of a backtest, with its warning's fix approved within `seconds`."""

    seconds: float
    approved: tuple[Approved, ...]

    @property
    def warned(self) -> int:
        return sum(1 for a in self.approved if a.warned_at is not None)

    @property
    def with_fix(self) -> int:
        return sum(1 for a in self.approved if a.fix is not None)

    @property
    def averted(self) -> int:
        return sum(1 for a in self.approved if a.averted)

    @property
    def throttled_minutes(self) -> float:
        return sum(a.throttled_minutes for a in self.approved)

    @property
    def minutes_saved(self) -> float:
        return sum(a.minutes_saved for a in self.approved)

    def as_dict(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds,
            "takes_effect_seconds": TAKES_EFFECT_S,
            "exhaustions": len(self.approved),
            "warned": self.warned,
            "with_fix": self.with_fix,
            "averted": self.averted,
            "throttled_minutes": self.throttled_minutes,
            "minutes_saved": self.minutes_saved,
            "per_exhaustion": [a.as_dict() for a in self.approved],
        }


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def approve_within(result: Backtest, seconds: float) -> Approval:
    """Each exhaustion of `result`, its warning's fix approved `seconds` after it fired."""
    states = {s.ref.resource_id: s for s in result.states}
    pasts: dict[str, _Past | None] = {}
    out = []
    for episode in result.exhaustions:
        rid = episode.resource_id
        if rid not in pasts:
            pasts[rid] = _past(states[rid]) if rid in states else None
        out.append(_approved(episode, result.fired, states.get(rid), pasts[rid], seconds))
    return Approval(seconds, tuple(out))


@dataclass(frozen=True, slots=True)
class _Past:
    """A resource's demand over its data (`held.behind`: what its limits held back counted
    at its rate before they bound), and the periods its own limits held the demand back."""

    demand: Demand
    throttled: Flags

    def minutes(self, flags: Flags) -> float:
        return float(flags.sum()) * self.demand.period_s / 60


def _past(state: ResourceState) -> _Past | None:
    seen = _seen(state)
    if seen is None or state.envelope is None:
        return None  # no model of its limits: nothing to replay
    empty = _empty(state, seen)
    demand = behind(seen, state.envelope, empty)
    return _Past(demand, limited(demand, state.envelope, empty))


def _empty(state: ResourceState, seen: Demand) -> Flags | None:
    """The periods the resource's bucket was empty, as its data shows it: its balance at
    1 % or less while it served no more than its baseline (at 1 % a bucket may still have
    minutes of burst left). None for a resource with no bucket of its own (an instance's
    buckets are modelled from its rates)."""
    bucket = state.envelope.bucket if state.envelope is not None else None
    if bucket is None:
        return None
    balance = _grid(state.measure(Measure.BURST_BALANCE), seen.start, seen.period_s, len(seen.iops))
    rates = zip(seen.iops.tolist(), seen.bps.tolist(), strict=True)
    charged = np.fromiter(
        (bucket.charge_range(i, b)[0] for i, b in rates),
        dtype=np.float64,
        count=len(seen.iops),
    )
    # No balance published (an idle volume): not empty.
    found: Flags = (np.nan_to_num(balance, nan=100.0) <= EMPTY_BALANCE_PERCENT) & (
        charged <= LIMITED_ABOVE * bucket.baseline
    )
    return found


def _approved(
    episode: Episode,
    fired: Sequence[Fired],
    state: ResourceState | None,
    past: _Past | None,
    seconds: float,
) -> Approved:
    warned = episode.warned_at or episode.detected_at
    if state is None or past is None:
        return Approved(episode, NOT_WARNED if warned is None else NO_FIX, warned)
    demand = past.demand
    first, end = _index(demand, episode.started_at), _index(demand, episode.ended_at)
    throttled = past.throttled[first:end]
    minutes = past.minutes(throttled)
    if warned is None:
        return Approved(episode, NOT_WARNED, throttled_minutes=minutes)
    fix = next((f.fix for f in _warnings(fired, episode.resource_id, warned) if f.fix), None)
    option = option_limits(fix.change, state.resource) if fix is not None else None
    if fix is None or option is None:
        return Approved(episode, NO_FIX, warned, throttled_minutes=minutes)
    in_force = warned + timedelta(seconds=seconds + TAKES_EFFECT_S)
    # From the first whole period after it took effect on, its bucket full.
    begins = _index(demand, in_force, whole=True)
    carried = ~limited(_part(demand, begins, end), option) if begins < end else np.ones(0, bool)
    after = max(begins, first)
    saved = throttled[after - first :] & carried[after - begins :]
    late = begins >= end or bool(throttled[: after - first].any())
    outcome = LATE if late else AVERTED if carried.all() else TOO_SMALL
    return Approved(episode, outcome, warned, fix.fix_id, in_force, minutes, past.minutes(saved))


def _warnings(fired: Sequence[Fired], resource_id: str, at: datetime) -> list[Fired]:
    """The resource's credit warnings that fired at `at` (those a backtest counts: trends
    and `info` excluded)."""
    return [
        f
        for f in fired
        if f.resource_id == resource_id
        and f.bottleneck.is_credits
        and f.severity.rank >= WARNING
        and f.horizon_s is None
        and f.fired_at == at
    ]


def _index(demand: Demand, at: datetime | None, whole: bool = False) -> int:
    """The period of `demand` that `at` falls in (with `whole`: the first to begin at or after
    it); None: the end of the demand."""
    if at is None:
        return len(demand.iops)
    offset = (at - demand.start).total_seconds() / demand.period_s
    index = int(np.ceil(offset)) if whole else int(np.floor(offset))
    return min(max(index, 0), len(demand.iops))


def _part(demand: Demand, first: int, end: int) -> Demand:
    return Demand(
        demand.start + timedelta(seconds=first * demand.period_s),
        demand.period_s,
        demand.iops[first:end],
        demand.bps[first:end],
        demand.floor[first:end],
    )


def _seen(state: ResourceState) -> Demand | None:
    """The resource's rates over its data, a period at a time: zero where CloudWatch
    published none (it publishes none while a volume is idle)."""
    iops, bps = state.measure(Measure.IOPS), state.measure(Measure.THROUGHPUT)
    shown = [s for s in (iops, bps) if s.timestamps]
    if not shown:
        return None
    period = shown[0].period_s
    start = min(s.timestamps[0] for s in shown)
    count = int((max(s.timestamps[-1] for s in shown) - start).total_seconds() // period) + 1
    return Demand.seen(
        start, period, _grid(iops, start, period, count), _grid(bps, start, period, count)
    )


def _grid(series: Series, start: datetime, period_s: int, count: int) -> Floats:
    """`series` on `count` periods from `start`: NaN where it has no datapoint."""
    found = np.full(count, np.nan)
    at = np.array([(t - start).total_seconds() // period_s for t in series.timestamps], int)
    kept = (at >= 0) & (at < count)
    found[at[kept]] = np.asarray(series.values, dtype=np.float64)[kept]
    return found
