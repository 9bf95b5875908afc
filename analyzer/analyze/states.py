"""Fetched series → the state of each resource: its envelope and its normalized measures."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

from analyzer.analyze import normalize
from analyzer.model import metrics
from analyzer.model.limits import instance_envelope, instance_type_envelope, volume_envelope
from analyzer.model.metrics import Measure, Namespace, Part
from analyzer.model.rds_storage import db_storage_envelope, log_volume_envelope
from analyzer.model.resources import DbInstance, Instance, Inventory, Volume
from analyzer.model.series import Series, Status, combine_status
from analyzer.model.state import NOTHING, FetchStats, ResourceState, Snapshot


def _status(measures: Mapping[Measure, Series], active: bool) -> tuple[Status, str | None]:
    if not active:
        return Status.NO_DATA, None
    iops = measures.get(Measure.IOPS, NOTHING)
    return iops.status, iops.error


def volume_state(
    volume: Volume, raw: Mapping[str, Series], instance: Instance | None
) -> ResourceState:
    """Its envelope is that of the configuration in force (the one before, while a
    modification is still `modifying`), and holds from `limits_since`."""
    measures = normalize.volume(raw)
    status, error = _status(measures, volume.active)
    info = instance.type_info if instance else None
    envelope = volume_envelope(volume.in_force(), info)
    before = volume.before_change()
    envelope_before = volume_envelope(before, info) if before is not None else None
    # A modification that left the limits as they were (a size-only growth of an io2, a
    # throughput change where IOPS bind… but the envelope holds both) changes nothing judged.
    unchanged = before is not None and envelope_before == envelope
    return ResourceState(
        ref=volume.ref,
        resource=volume,
        envelope=envelope,
        measures=MappingProxyType(measures),
        status=status,
        error=error,
        related=volume.instance_ids,
        limits_since=None if unchanged else volume.limits_since,
        envelope_before=envelope_before,
    )


def instance_state(
    instance: Instance,
    raw: Mapping[str, Series],
    volumes: Sequence[ResourceState],
    complete_until: datetime | None = None,
) -> ResourceState:
    """Instance rates come from AWS/EC2; where those are missing, failed or not asked, from the
    sum of the attached volumes (the instance cap applies to exactly that sum). A Multi-Attach
    volume's I/O is not split by instance in CloudWatch, so it is left out of the sum, which
    is then a lower bound, and said so. `complete_until`: where the volumes were last asked at
    different moments, the end of the minutes every one of them was asked for: the sum stops
    there, so that a minute not yet asked of one volume does not count as none."""
    measures = normalize.instance(raw)
    notes: list[str] = []
    if _sums_volumes(instance, raw):
        failed = [
            v
            for v in volumes
            if v.measure(Measure.IOPS).status is Status.ERROR and not _multi_attach(v)
        ]
        if failed and not _asked_counts(raw):
            # Its counts are its volumes' alone: without one of them, the sum is not known.
            first = failed[0]
            why = f"{first.ref.resource_id}: {first.measure(Measure.IOPS).error}"
            for m in (Measure.IOPS, Measure.THROUGHPUT, Measure.AVG_IO_SIZE):
                measures[m] = Series.failed(why, measures[m].period_s)
            volumes = ()
        with_data = [v for v in volumes if v.measure(Measure.IOPS).status is Status.OK]
        shared = [v for v in with_data if _multi_attach(v)]
        with_data = [v for v in with_data if not _multi_attach(v)]
        if shared:
            notes.append(
                f"Multi-Attach volume(s) {', '.join(v.ref.resource_id for v in shared)} left "
                "out of the sum: CloudWatch does not split their I/O by instance"
            )
        if with_data:
            notes.append(
                f"{_why_summed(raw, measures)}: rates summed from "
                f"{len(with_data)} attached volume(s)"
            )

            # The volumes' measures share their periods: lay them out once for every sum.
            def part(v: ResourceState, m: Measure) -> Series:
                found = v.measure(m)
                return found if complete_until is None else found.until(complete_until)

            grid = normalize.Grid.of([p for v in with_data if (p := part(v, Measure.IOPS))])
            for m in (Measure.IOPS, Measure.THROUGHPUT):
                measures[m] = normalize.add(*(part(v, m) for v in with_data), grid=grid)
            throughput, iops = measures[Measure.THROUGHPUT], measures[Measure.IOPS]
            measures[Measure.AVG_IO_SIZE] = normalize.divide(throughput, iops)
    status, error = _status(measures, instance.active)
    return ResourceState(
        ref=instance.ref,
        resource=instance,
        envelope=instance_envelope(instance),
        measures=MappingProxyType(measures),
        status=status,
        error=error,
        related=instance.volume_ids,
        notes=tuple(notes),
    )


def _multi_attach(state: ResourceState) -> bool:
    return isinstance(state.resource, Volume) and state.resource.multi_attach


def _sums_volumes(instance: Instance, raw: Mapping[str, Series]) -> bool:
    """Whether `instance_state` takes the instance's rates from its volumes: it is running
    and its own operation counts are not data."""
    if not instance.active:
        return False
    counts = [metrics.feeding(Namespace.EC2, p) for p in (Part.READ_OPS, Part.WRITE_OPS)]
    found = [raw.get(m.name, NOTHING) for m in counts if m is not None]
    return combine_status(*found)[0] is not Status.OK


def _asked_counts(raw: Mapping[str, Series]) -> bool:
    """Whether the instance's own AWS/EC2 operation counts were asked for."""
    ops = metrics.feeding(Namespace.EC2, Part.READ_OPS)
    return ops is not None and ops.name in raw


def _why_summed(raw: Mapping[str, Series], measures: Mapping[Measure, Series]) -> str:
    if not _asked_counts(raw):
        return "AWS/EC2 EBS counts not asked (the sums of its volumes', which are read)"
    return f"AWS/EC2 EBS metrics unavailable ({measures[Measure.IOPS].error or 'no data'})"


def db_state(db: DbInstance, raw: Mapping[str, Series]) -> ResourceState:
    measures = normalize.db_instance(raw)
    status, error = _status(measures, db.active)
    return ResourceState(
        ref=db.ref,
        resource=db,
        envelope=db_storage_envelope(db),
        measures=MappingProxyType(measures),
        status=status,
        error=error,
        class_envelope=instance_type_envelope(db.class_info),
        log_envelope=log_volume_envelope(db),
    )


def states_for(
    inventory: Inventory,
    raw: Mapping[str, Mapping[str, Series]],
    cache: StateCache | None = None,
    since: datetime | None = None,
    touched: Collection[str] | None = None,
    complete_until: Mapping[str, datetime] | None = None,
) -> list[ResourceState]:
    """The state of every resource of the inventory from its series (`raw`: by resource id,
    then metric name).

    With a cache, a resource whose data and description are the very objects of last time
    keeps its state from last time; with `touched` (the ids whose series changed since), the
    series of the others are not even compared. With `since`, measures are worked out only
    from then on (what the analysis reads), although the history holds more.
    `complete_until`: by instance id, where its rates are summed from volumes asked at
    different moments, the end of what all of them were asked for (`instance_state`)."""
    cache = cache if cache is not None else StateCache()
    # The same inventory as last time, and told what changed: the others are as they were.
    settled = touched is not None and cache.inventory is inventory
    cache.inventory = inventory
    instances = {i.instance_id: i for i in inventory.instances}
    nothing: Mapping[str, Series] = {}

    def changed(rid: str) -> bool:
        return touched is None or rid in touched

    def as_before(rid: str, *related: str) -> ResourceState | None:
        """Its state from last time, where nothing it is built from can have changed."""
        if not settled or any(changed(r) for r in (rid, *related)):
            return None
        return cache.kept(rid)

    def cut(series: Mapping[str, Series]) -> Mapping[str, Series]:
        if since is None:
            return series
        return {n: _since(s, since, n in metrics.BALANCES) for n, s in series.items()}

    def volume(v: Volume) -> ResourceState:
        if kept := as_before(v.volume_id):
            return kept
        instance = instances.get(v.attached_to or "")
        mine = raw.get(v.volume_id, nothing)
        return cache.get(
            v, mine, (instance,), lambda: volume_state(v, cut(mine), instance), changed(v.volume_id)
        )

    volumes = [volume(v) for v in inventory.volumes]
    by_id = {v.ref.resource_id: v for v in volumes}

    def instance(i: Instance) -> ResourceState:
        if kept := as_before(i.instance_id, *i.volume_ids):
            return kept
        attached = tuple(by_id[vid] for vid in i.volume_ids if vid in by_id)
        mine = raw.get(i.instance_id, nothing)
        until = (complete_until or {}).get(i.instance_id)
        # Its volumes matter only where its rates are summed from theirs.
        depends = (*attached, until) if _sums_volumes(i, mine) else ()
        return cache.get(
            i,
            mine,
            depends,
            lambda: instance_state(i, cut(mine), attached, until),
            changed(i.instance_id),
        )

    def db(d: DbInstance) -> ResourceState:
        if kept := as_before(d.db_instance_id):
            return kept
        mine = raw.get(d.db_instance_id, nothing)
        return cache.get(d, mine, (), lambda: db_state(d, cut(mine)), changed(d.db_instance_id))

    out = [
        *volumes,
        *(instance(i) for i in inventory.instances),
        *(db(d) for d in inventory.db_instances),
    ]
    if not settled:
        cache.keep_only({s.ref.resource_id for s in out})
    return out


_Raw = tuple[tuple[str, ...], tuple[Series, ...]]
"""A resource's series as a state was built from them: the metric names, and the series in
the same order. Two tuples, the names shared, not a copy of the mapping each: under half
the size, for every resource."""


@dataclass
class StateCache:
    """Each resource's state with what it was built from, compared by identity: the history
    replaces a series only when new data arrives, and the inventory a description only when
    it is described again, so an unchanged resource is not normalized again."""

    _known: dict[str, tuple[tuple[object, ...], _Raw, ResourceState]] = field(default_factory=dict)
    inventory: Inventory | None = None
    """The inventory of the last call."""
    _names: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)
    """Every tuple of metric names kept, once: resources read at the same tier share one."""

    def kept(self, rid: str) -> ResourceState | None:
        known = self._known.get(rid)
        return known[2] if known is not None else None

    def get(
        self,
        resource: Volume | Instance | DbInstance,
        raw: Mapping[str, Series],
        depends: tuple[object, ...],
        build: Callable[[], ResourceState],
        changed: bool = True,
    ) -> ResourceState:
        """The state kept for `resource` if it was built from these very objects; `changed`
        False: its series are known to be the same, only its description and what it depends
        on are compared."""
        rid = resource.ref.resource_id
        known = self._known.get(rid)
        if (
            known is not None
            and _same(known[0], (resource, *depends))
            and (not changed or _same_series(known[1], raw))
        ):
            return known[2]
        state = build()
        names = tuple(raw)
        kept = (self._names.setdefault(names, names), tuple(raw.values()))
        self._known[rid] = ((resource, *depends), kept, state)
        return state

    def keep_only(self, ids: set[str]) -> None:
        for gone in [rid for rid in self._known if rid not in ids]:
            del self._known[gone]


def _same(old: tuple[object, ...], new: tuple[object, ...]) -> bool:
    """The same objects: the description and what it depends on."""
    return len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True))


def _same_series(old: _Raw, new: Mapping[str, Series]) -> bool:
    """The same series objects, by metric name."""
    names, series = old
    return len(names) == len(new) and all(
        new.get(name) is s for name, s in zip(names, series, strict=True)
    )


def build(
    generated_at: datetime,
    data_end: datetime,
    states: Iterable[ResourceState],
    stats: FetchStats | None = None,
    asked_until: Mapping[str, Mapping[str, datetime]] | None = None,
) -> Snapshot:
    return Snapshot(generated_at, data_end, tuple(states), stats or FetchStats(), asked_until or {})


def _since(series: Series, start: datetime, keep_last: bool) -> Series:
    """Its periods from `start` on; `keep_last` (a balance's): its newest, however old, where
    none is that recent (what an idle bucket's refill is worked out from)."""
    found = series.since(start)
    if found.timestamps or not keep_last or not series.timestamps:
        return found
    return series.since(series.timestamps[-1])
