"""Which polling tier a resource belongs in, from what its data showed.

- hot: an alert pending or firing; a rate at `hot_utilization` of a limit in force or more; a
  bucket that will be empty within `hot_empty_within` at the current rate; a bucket below
  `low_balance_percent` (refilling, it would empty fast if the load came back).
- active: a rate at `quiet_utilization` of a limit or more; a bucket draining, or not full; a
  bucket whose balance has not been read yet.
- idle: everything else. An idle resource is read through its operation counts alone, so
  its throughput is taken at its worst (every operation `ASSUMED_IO_BYTES`): a load that
  could drain its bucket or near a limit at that size moves it up at once.

An idle resource stays idle while it is quiet even though its balance is no longer read: with
no drain, a full bucket stays full. Data that failed leaves the tier as it was.

An idle resource is polled at most every `idle_cadence`, and sooner where a bucket it feeds could
come to need a warning sooner: within `IDLE_SHARE` of the time that bucket, full, takes to fall
to the alarm's 20 % at its burst rate (`alarm_times`).

A hot resource says which limits make it hot (`Placement.hot_for`): where an alert already fires
about each of them and none is pending or clearing, nothing about it is about to change state,
and it is polled only as often as keeps its data recent (`Cadence.of`, `steady`).

The time to empty is the resource's outlook (`outlook.with_outlook`), worked out over the
windows of the rule that applies to it: the one the rules read, not a second opinion.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from analyzer.model.findings import Bottleneck
from analyzer.model.layers import Layer
from analyzer.model.limits import (
    full_to_alarm_s,
    instance_envelope,
    instance_full_to_alarm_s,
    instance_type_envelope,
    reach,
    volume_envelope,
)
from analyzer.model.metrics import Measure, Tier
from analyzer.model.rds_storage import db_storage_envelope
from analyzer.model.resources import Instance, Inventory
from analyzer.model.series import Status, recent
from analyzer.model.state import ResourceState
from analyzer.model.units import MIB, Unit

ASSUMED_IO_BYTES = 1 * MIB
"""Operations read without their bytes count at this size: the largest I/O that counts as
one against an HDD limit, and four against gp2's."""
FULL_PERCENT = 99.0


@dataclass(frozen=True, slots=True)
class TierPolicy:
    hot_utilization: float = 0.7
    quiet_utilization: float = 0.3
    hot_empty_within_s: float = 3 * 3600.0
    low_balance_percent: float = 50.0
    window_s: float = 300.0
    """The rates a tier is decided on: the mean over this window."""


@dataclass(frozen=True, slots=True)
class _Load:
    iops: float
    bps: float


def _load(state: ResourceState, at: datetime, window_s: float) -> _Load | None:
    iops = recent(state.measure(Measure.IOPS), at, window_s).mean()
    if iops is None:
        return None
    bps = recent(state.measure(Measure.THROUGHPUT), at, window_s).mean()
    return _Load(iops, bps if bps is not None else iops * ASSUMED_IO_BYTES)


def _shares(state: ResourceState, load: _Load, at: datetime) -> list[tuple[float, Bottleneck]]:
    """The share of each limit in force that the load takes, over every layer, with the limit:
    a bucket's where the limit in force is a baseline because its credits ran out."""
    out = []
    for layer in state.layers():
        if layer.envelope.approximate:
            continue
        counted = layer.envelope.counted_iops(load.iops, load.bps)
        for unit, rate in ((Unit.IOPS, counted), (Unit.BYTES_PER_SECOND, load.bps)):
            limit = state.limit(layer, unit, at)
            if limit:
                out.append((rate / limit, _limit_in_force(layer, unit, limit)))
    return out


def _limit_in_force(layer: Layer, unit: Unit, limit: float) -> Bottleneck:
    if limit < layer.limit(unit, credits_left=True):
        return Bottleneck.BURST_CREDITS if layer.storage else Bottleneck.INSTANCE_BURST_CREDITS
    return layer.bottleneck(unit)


def _draining(state: ResourceState, load: _Load) -> bool:
    for bucket in state.buckets():
        if bucket.model is not None:
            charged = bucket.model.consumption(load.iops, load.bps)
        else:
            charged = load.iops if bucket.unit is Unit.IOPS else load.bps
        if charged > bucket.baseline:
            return True
    return False


_NOT_HOT: frozenset[Bottleneck] = frozenset()
_LIMITS: dict[frozenset[Bottleneck], frozenset[Bottleneck]] = {_NOT_HOT: _NOT_HOT}
"""One object for each set of limits seen: the poller keeps a placement's set for every
resource it watches, and a frozenset takes 216 bytes, empty or not."""


def _interned(limits: set[Bottleneck]) -> frozenset[Bottleneck]:
    found = frozenset(limits)
    return _LIMITS.setdefault(found, found)


@dataclass(frozen=True, slots=True)
class Placement:
    tier: Tier
    hot_for: frozenset[Bottleneck] | None = _NOT_HOT
    """The limits that make it hot, its alerts aside: a rate at `hot_utilization` of one, a
    bucket that empties soon or is low. None where its data failed (nothing is known)."""


def place(
    state: ResourceState,
    previous: Tier | None,
    alerted: bool,
    policy: TierPolicy,
    at: datetime,
) -> Placement:
    """The tier `state` belongs in with the data complete by `at`, its outlook worked out at
    `at`, and the limits that make it hot."""
    if state.status is Status.ERROR:
        return Placement(Tier.HOT if alerted else previous or Tier.ACTIVE, None)
    load = _load(state, at, policy.window_s) or _Load(0.0, 0.0)
    shares = _shares(state, load, at)
    balances = [(state.balance(b.balance, at), b) for b in state.buckets()]
    found = state.outlook
    hot_for = {limit for share, limit in shares if share >= policy.hot_utilization}
    if found is not None and found.seconds_to_empty <= policy.hot_empty_within_s:
        hot_for.add(found.bucket.bottleneck)
    low = policy.low_balance_percent
    hot_for |= {b.bottleneck for value, b in balances if value is not None and value < low}
    if alerted or hot_for:
        return Placement(Tier.HOT, _interned(hot_for))
    # A bucket's balance is read once before its resource may go idle; where AWS reports
    # none (an unattached or a large gp2 volume), the load alone decides.
    never_read = previous is None and any(value is None for value, _ in balances)
    if (
        max((share for share, _ in shares), default=0.0) >= policy.quiet_utilization
        or _draining(state, load)
        or never_read
        or any(value is not None and value < FULL_PERCENT for value, _ in balances)
    ):
        return Placement(Tier.ACTIVE)
    return Placement(Tier.IDLE)


def alarm_times(inv: Inventory) -> dict[str, float]:
    """By resource id, the shortest time in which a bucket its I/O drains, full, falls to the
    alarm's 20 % at its burst rate: a volume's own bucket and its instance's, at what that
    instance's volumes can do together; an instance's own; an RDS instance's storage and
    class. Resources whose I/O drains no bucket are left out: only the caps bound their
    cadence."""
    types = {i.instance_id: i.type_info for i in inv.instances}
    envelopes = {
        v.volume_id: volume_envelope(v, types.get(v.attached_to or "")) for v in inv.volumes
    }

    def instance_time(instance: Instance) -> float | None:
        mine = [envelopes.get(vid) for vid in instance.volume_ids]
        return instance_full_to_alarm_s(instance_envelope(instance), reach(mine))

    instances = {i.instance_id: instance_time(i) for i in inv.instances}
    out: dict[str, float] = {}

    def put(rid: str, *times: float | None) -> None:
        found = [t for t in times if t is not None]
        if found:
            out[rid] = min(found)

    for volume in inv.volumes:
        envelope = envelopes[volume.volume_id]
        own = full_to_alarm_s(envelope.bucket) if envelope and envelope.bucket else None
        put(volume.volume_id, own, *(instances.get(iid) for iid in volume.instance_ids))
    for iid, found in instances.items():
        put(iid, found)
    for db in inv.db_instances:
        storage = db_storage_envelope(db)
        own = full_to_alarm_s(storage.bucket) if storage and storage.bucket else None
        put(
            db.db_instance_id,
            own,
            instance_full_to_alarm_s(instance_type_envelope(db.class_info), None),
        )
    return out
