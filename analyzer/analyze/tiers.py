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

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from analyzer.model.findings import Bottleneck
from analyzer.model.layers import Bucket, Layer
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
from analyzer.model.series import Series, Status, is_recent, recent
from analyzer.model.state import ResourceState
from analyzer.model.units import MIB, Unit

ASSUMED_IO_BYTES = 1 * MIB
"""Operations read without their bytes count at this size: the largest I/O that counts as
one against an HDD limit, and four against gp2's."""
FULL_PERCENT = 99.0
NEAR_BASELINE = 0.9
"""An instance's bucket is charged by the second for what its volumes do above its baseline
(Amazon EC2 User Guide, "Amazon EBS-optimized instance types"), and the daemon sees their sum
as means over minutes (CloudWatch's one-minute sums) and over the tier's five-minute window:
a mean at 90 % of the baseline leaves a tenth for its seconds to spread above it. Below, the
bucket is full and stays so (a balance below full says otherwise, and is read every minute);
and while it is full, a drain at the instance's maximum takes 24 minutes to bring it to 20 %,
which its balances read every 10 minutes (`IDLE_SHARE`) see in time."""


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


def _load(
    state: ResourceState, at: datetime, window_s: float, known: _Load = _Load(0.0, 0.0)
) -> _Load | None:
    """Its rates over the window; bytes not read taken at `ASSUMED_IO_BYTES` an operation,
    but for an instance whose volumes' latest rates (`known`: `latest_load`) account for some
    of its operations: those at their own size (its guard's counts beside a busy volume are
    not a gigabyte a second)."""
    iops = recent(state.measure(Measure.IOPS), at, window_s).mean()
    if iops is None:
        return None
    bps = recent(state.measure(Measure.THROUGHPUT), at, window_s).mean()
    if bps is not None:
        return _Load(iops, bps)
    counted = min(known.iops, iops)
    share = counted / known.iops if known.iops else 0.0
    return _Load(iops, known.bps * share + (iops - counted) * ASSUMED_IO_BYTES)


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


def _charged(bucket: Bucket, load: _Load) -> float:
    """What the load charges the bucket a second, in its unit."""
    if bucket.model is not None:
        return bucket.model.consumption(load.iops, load.bps)
    return load.iops if bucket.unit is Unit.IOPS else load.bps


def _draining(state: ResourceState, load: _Load) -> bool:
    return any(_charged(bucket, load) > bucket.baseline for bucket in state.buckets())


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
    minute: bool = False
    """Below the hot tier, a bucket that can change from one minute to the next: an
    instance's near its baseline (`near_baseline`), whose balances are read every minute; a
    bucket `falling`, whose resource is read every minute while it falls."""
    full: bool = False
    """Active by its load alone: every bucket of it read full and none drained. Nothing
    about it changes but its load, which can rise as fast as an idle resource's can: it is
    read at its idle cadence (`Cadence.of_resource`), for the active tier's metrics."""


def place(
    state: ResourceState,
    previous: Tier | None,
    alerted: bool,
    policy: TierPolicy,
    at: datetime,
    volumes: Sequence[ResourceState] = (),
) -> Placement:
    """The tier `state` belongs in with the data complete by `at`, its outlook worked out at
    `at`, and the limits that make it hot. `volumes`: an instance's, whose latest rates tell
    how near its baseline it is (`latest_load`)."""
    if state.status is Status.ERROR:
        return Placement(Tier.HOT if alerted else previous or Tier.ACTIVE, None)
    summed = latest_load(volumes, policy.window_s)
    load = _load(state, at, policy.window_s, summed) or _Load(0.0, 0.0)
    shares = _shares(state, load, at)
    balances = [(state.balance(b.balance, at), b) for b in state.buckets()]
    found = state.outlook
    hot_for = {limit for share, limit in shares if share >= policy.hot_utilization}
    if found is not None and found.seconds_to_empty <= policy.hot_empty_within_s:
        hot_for.add(found.bucket.bottleneck)
    low = policy.low_balance_percent
    hot_for |= {b.bottleneck for value, b in balances if value is not None and value < low}
    falls = {b.bottleneck for b in state.buckets() if falling(state, b, at)}
    if alerted or hot_for:
        # A hot resource whose bucket falls is not steady until an alert names the bucket.
        return Placement(Tier.HOT, _interned(hot_for | falls))
    nearest = _Load(max(load.iops, summed.iops), max(load.bps, summed.bps))
    if not state.has_storage and near_baseline(state, nearest, balances):
        return Placement(Tier.ACTIVE, minute=True)
    if falls:
        return Placement(Tier.ACTIVE, minute=True)
    # A bucket's balance is read once before its resource may go idle; where AWS reports
    # none (an unattached or a large gp2 volume), the load alone decides.
    never_read = previous is None and any(value is None for value, _ in balances)
    below = any(value is not None and value < FULL_PERCENT for value, _ in balances)
    if _draining(state, load) or never_read or below:
        return Placement(Tier.ACTIVE)
    if max((share for share, _ in shares), default=0.0) >= policy.quiet_utilization:
        # Every bucket read full (none unread), none drained.
        return Placement(Tier.ACTIVE, full=all(value is not None for value, _ in balances))
    return Placement(Tier.IDLE)


def falling(state: ResourceState, bucket: Bucket, at: datetime) -> bool:
    """Whether its balance's newest reading, recent, is below the one a period before: the
    bucket is being drained now, whatever the rates last read say (a burst between two reads
    of an active resource shows in its balance, read every minute, first)."""
    series = state.in_force(bucket.balance).until(at)
    if len(series) < 2 or not is_recent(series, at):
        return False
    before, newest = series.timestamps[-2:]
    was, now = series.values[-2:]
    return (newest - before).total_seconds() <= series.period_s and now < was


def latest_load(volumes: Iterable[ResourceState], window_s: float) -> _Load:
    """What volumes do together by the latest data of each, however old: the mean of each
    one's last `window_s` of data (its throughput taken at `ASSUMED_IO_BYTES` an operation
    where its bytes are not read). An instance's own sum ends where the volume read least
    recently ends; this is what each of them last showed."""
    iops = bps = 0.0
    for volume in volumes:
        ops = _latest(volume.measure(Measure.IOPS), window_s)
        if ops is None:
            continue
        iops += ops
        found = _latest(volume.measure(Measure.THROUGHPUT), window_s)
        bps += found if found is not None else ops * ASSUMED_IO_BYTES
    return _Load(iops, bps)


def _latest(series: Series, window_s: float) -> float | None:
    newest = series.last()
    if newest is None:
        return None
    end = newest[0] + timedelta(seconds=series.period_s)
    return series.between(end - timedelta(seconds=window_s), end).mean()


def near_baseline(
    state: ResourceState, load: _Load, balances: list[tuple[float | None, Bucket]]
) -> bool:
    """Whether an instance's EBS bucket can change from one minute to the next: it is below
    full (falling, or refilling), or its volumes' summed rate charges it `NEAR_BASELINE` of its
    baseline or more."""
    if any(value is not None and value < FULL_PERCENT for value, _ in balances):
        return True
    return any(
        _charged(bucket, load) >= NEAR_BASELINE * bucket.baseline for bucket in state.buckets()
    )


def idle_ceiling(state: ResourceState, policy: TierPolicy, at: datetime) -> float:
    """The most operations a second, each of `ASSUMED_IO_BYTES`, a resource can do and still
    be idle by its load: under `quiet_utilization` of every limit, draining no bucket. Both
    grow with the load in proportion, so one operation's share says where they are reached."""
    one = _Load(1.0, float(ASSUMED_IO_BYTES))
    found = [policy.quiet_utilization / share for share, _ in _shares(state, one, at) if share]
    found += [b.baseline / charged for b in state.buckets() if (charged := _charged(b, one))]
    return min(found, default=math.inf)


def alarm_times(inv: Inventory) -> dict[str, float]:
    """By resource id, the shortest time in which a bucket its I/O drains, full, falls to the
    alarm's 20 % at its burst rate: a volume's own bucket and its instance's, at what that
    instance's volumes can do together; an instance's own; an RDS instance's storage and
    class. Resources whose I/O drains no bucket are left out: only the caps bound their
    cadence."""
    types = {i.instance_id: i.type_info for i in inv.instances}
    envelopes = {
        v.volume_id: volume_envelope(v.in_force(), types.get(v.attached_to or ""))
        for v in inv.volumes
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
