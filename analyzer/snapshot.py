"""One immutable snapshot per cycle: every resource with its envelope and normalized measures.

Rules, reports and the exporter read snapshots; nothing in a snapshot calls AWS.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

from analyzer import normalize
from analyzer.cloudwatch import FetchStats
from analyzer.forecast import latest_balance
from analyzer.inventory import Inventory
from analyzer.limits import (
    Envelope,
    db_storage_envelope,
    instance_envelope,
    instance_type_envelope,
    volume_envelope,
)
from analyzer.models import (
    DbInstance,
    Instance,
    Measure,
    ResourceRef,
    ResourceType,
    Status,
    Volume,
)
from analyzer.queries import MetricQuery
from analyzer.series import Series

EMPTY_BALANCE_PERCENT = 1.0
"""At or below this BurstBalance the bucket is treated as empty: I/O runs at baseline."""

Resource = Volume | Instance | DbInstance


@dataclass(frozen=True, slots=True)
class ResourceState:
    ref: ResourceRef
    resource: Resource
    envelope: Envelope | None
    measures: Mapping[Measure, Series]
    status: Status
    error: str | None = None
    related: tuple[str, ...] = ()
    """Volume: the instance it is attached to. Instance: its volumes."""
    notes: tuple[str, ...] = ()
    class_envelope: Envelope | None = None
    """DB instances: the EBS limits of the instance class (`envelope` is their storage)."""

    def measure(self, measure: Measure) -> Series:
        return self.measures.get(measure, Series())

    def balance(self, measure: Measure, at: datetime) -> float | None:
        reading = latest_balance(self.measure(measure), at)
        return reading[1] if reading else None

    def credits_left(self, measure: Measure, at: datetime) -> bool:
        """False only when a balance is reported and empty; missing is never "empty"."""
        value = self.balance(measure, at)
        return value is None or value > EMPTY_BALANCE_PERCENT

    def iops_limit(self, at: datetime) -> float | None:
        """The IOPS limit in force: a volume's or a DB's storage, or an instance's EBS."""
        if self.envelope is None:
            return None
        balance = Measure.BURST_BALANCE if self.has_storage else Measure.IO_BALANCE
        return self.envelope.iops_limit(self.credits_left(balance, at))

    def throughput_limit(self, at: datetime) -> float | None:
        if self.envelope is None:
            return None
        balance = Measure.BURST_BALANCE if self.has_storage else Measure.BYTE_BALANCE
        return self.envelope.throughput_limit(self.credits_left(balance, at))

    def class_iops_limit(self, at: datetime) -> float | None:
        """DB instances: the EBS IOPS limit of the instance class."""
        if self.class_envelope is None:
            return None
        return self.class_envelope.iops_limit(self.credits_left(Measure.IO_BALANCE, at))

    def class_throughput_limit(self, at: datetime) -> float | None:
        if self.class_envelope is None:
            return None
        return self.class_envelope.throughput_limit(self.credits_left(Measure.BYTE_BALANCE, at))

    @property
    def is_volume(self) -> bool:
        return self.ref.resource_type is ResourceType.VOLUME

    @property
    def is_db(self) -> bool:
        return self.ref.resource_type is ResourceType.DB_INSTANCE

    @property
    def has_storage(self) -> bool:
        """Volumes and DB instances have storage limits (and a BurstBalance)."""
        return self.ref.resource_type is not ResourceType.INSTANCE

    @property
    def label(self) -> str:
        """`vol-0abc "shop-data" (gp2 50 GiB on i-0123)`: the resource as an operator knows it."""
        name = self.resource.tags.get("Name")
        named = f' "{name}"' if name and name != self.ref.resource_id else ""
        return f"{self.ref.resource_id}{named} ({self.resource.describe()})"


@dataclass(frozen=True)
class Snapshot:
    generated_at: datetime
    """The report time: forecasts count from here."""
    data_end: datetime
    """All data in the snapshot covers periods complete by this moment."""
    resources: tuple[ResourceState, ...]
    stats: FetchStats = field(default_factory=FetchStats)
    _index: Mapping[tuple[str, str], ResourceState] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        index = {(r.ref.region, r.ref.resource_id): r for r in self.resources}
        object.__setattr__(self, "_index", MappingProxyType(index))

    def get(self, region: str, resource_id: str) -> ResourceState | None:
        return self._index.get((region, resource_id))

    def related(self, state: ResourceState) -> list[ResourceState]:
        found = (self.get(state.ref.region, rid) for rid in state.related)
        return [r for r in found if r is not None]


def _by_resource(fetched: Mapping[MetricQuery, Series]) -> dict[str, dict[str, Series]]:
    out: dict[str, dict[str, Series]] = {}
    for query, series in fetched.items():
        out.setdefault(query.resource_id, {})[query.metric] = series
    return out


def _status(measures: Mapping[Measure, Series], active: bool) -> tuple[Status, str | None]:
    if not active:
        return Status.NO_DATA, None
    iops = measures.get(Measure.IOPS, Series())
    return iops.status, iops.error


def volume_state(
    volume: Volume, raw: Mapping[str, Series], instance: Instance | None
) -> ResourceState:
    measures = normalize.volume(raw)
    status, error = _status(measures, volume.active)
    return ResourceState(
        ref=volume.ref,
        resource=volume,
        envelope=volume_envelope(volume, instance.type_info if instance else None),
        measures=MappingProxyType(measures),
        status=status,
        error=error,
        related=(volume.attached_to,) if volume.attached_to else (),
    )


def instance_state(
    instance: Instance, raw: Mapping[str, Series], volumes: Sequence[ResourceState]
) -> ResourceState:
    """Instance rates come from AWS/EC2; where those are missing or failed, from the sum of
    the attached volumes (the instance cap applies to exactly that sum)."""
    measures = normalize.instance(raw)
    notes: list[str] = []
    if instance.active and measures[Measure.IOPS].status is not Status.OK:
        with_data = [v for v in volumes if v.measure(Measure.IOPS).status is Status.OK]
        if with_data:
            why = measures[Measure.IOPS].error or "no data"
            notes.append(
                f"AWS/EC2 EBS metrics unavailable ({why}): rates summed from "
                f"{len(with_data)} attached volume(s)"
            )
            iops = normalize.add(*(v.measure(Measure.IOPS) for v in with_data))
            throughput = normalize.add(*(v.measure(Measure.THROUGHPUT) for v in with_data))
            measures[Measure.IOPS] = iops
            measures[Measure.THROUGHPUT] = throughput
            measures[Measure.AVG_IO_SIZE] = normalize.divide(throughput, iops)
            for m in (
                Measure.READ_IOPS,
                Measure.WRITE_IOPS,
                Measure.READ_THROUGHPUT,
                Measure.WRITE_THROUGHPUT,
            ):
                measures[m] = normalize.add(*(v.measure(m) for v in with_data))
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
    )


def states_for(inventory: Inventory, fetched: Mapping[MetricQuery, Series]) -> list[ResourceState]:
    instances = {i.instance_id: i for i in inventory.instances}
    raw = _by_resource(fetched)
    volumes = [
        volume_state(v, raw.get(v.volume_id, {}), instances.get(v.attached_to or ""))
        for v in inventory.volumes
    ]
    by_id = {v.ref.resource_id: v for v in volumes}
    out: list[ResourceState] = list(volumes)
    for instance in inventory.instances:
        attached = [by_id[vid] for vid in instance.volume_ids if vid in by_id]
        out.append(instance_state(instance, raw.get(instance.instance_id, {}), attached))
    out.extend(db_state(db, raw.get(db.db_instance_id, {})) for db in inventory.db_instances)
    return out


def build(
    generated_at: datetime,
    data_end: datetime,
    states: Iterable[ResourceState],
    stats: FetchStats | None = None,
) -> Snapshot:
    return Snapshot(generated_at, data_end, tuple(states), stats or FetchStats())
