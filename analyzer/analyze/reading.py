"""Each resource's reading for this cycle, worked out from its analysed state: the values every
output shows (`model/reading.py`).

`Readings` works a resource's reading out the first time it is asked and keeps it: the daemon
asks for all of them once per cycle to publish them; a replay asks only for the few with an
alert.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from analyzer.analyze.forecast import seconds_to_full
from analyzer.model.metrics import Measure
from analyzer.model.rds_storage import rds_stripes
from analyzer.model.reading import (
    Condition,
    DbDetails,
    Details,
    InstanceDetails,
    Reading,
    VolumeDetails,
)
from analyzer.model.resources import DbInstance, Instance, Volume
from analyzer.model.series import Status
from analyzer.model.state import ResourceState, Snapshot


class Readings:
    """The readings of one analysed snapshot, by (scope, id)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self._kept: dict[tuple[str, str], Reading] = {}

    def __call__(self, scope: str, resource_id: str) -> Reading | None:
        """The reading of a resource; None where the snapshot does not hold it."""
        kept = self._kept.get((scope, resource_id))
        if kept is not None:
            return kept
        state = self.snapshot.get(scope, resource_id)
        if state is None:
            return None
        found = self._kept[(scope, resource_id)] = read(state, self.snapshot)
        return found

    def all(self) -> tuple[Reading, ...]:
        """Every resource's reading, in the snapshot's order."""
        return tuple(
            reading
            for s in self.snapshot.resources
            if (reading := self(s.ref.scope, s.ref.resource_id)) is not None
        )


def read(state: ResourceState, snap: Snapshot) -> Reading:
    at = snap.data_end
    resource = state.resource
    status = _status(state, snap)
    stale = status is Condition.STALE  # not current: its age and limits are said, not its values
    iops = _latest(state, Measure.IOPS, at)
    bps = _latest(state, Measure.THROUGHPUT, at)
    iops_limit, bps_limit = state.iops_limit(at), state.throughput_limit(at)
    if isinstance(resource, DbInstance):
        # What caps an RDS instance is the lower of its storage's and its class's limits.
        iops_limit = _lowest(iops_limit, state.class_iops_limit(at))
        bps_limit = _lowest(bps_limit, state.class_throughput_limit(at))
    found = state.outlook
    measured = Reading(
        ref=state.ref,
        name=resource.tags.get("Name"),
        attached_to=resource.attached_to if isinstance(resource, Volume) else None,
        iops=iops,
        throughput_bytes_per_second=bps,
        iops_limit=iops_limit,
        throughput_limit_bytes_per_second=bps_limit,
        burst_balance_percent=_balance(state, at),
        seconds_to_empty=round(found.seconds_to_empty, 1) if found else None,
        seconds_to_full=seconds_to_refill(state, at),
        avg_io_size_bytes=_latest(state, Measure.AVG_IO_SIZE, at),
        status=status,
        data_age_seconds=snap.data_age_s(state),
        iops_utilization=_ratio(iops, iops_limit),
        throughput_utilization=_ratio(bps, bps_limit),
        state=resource.state,
        details=_details(state, at),
        limits_approximate=state.envelope is not None and state.envelope.approximate,
        model_mismatch=tuple(m.text() for m in state.mismatches),
        error=state.error or None,
        notes=tuple(state.notes) + _modified(resource, at),
        balances=_balances(state, snap),
    )
    if not stale:
        return measured
    return _withheld(measured)


MODIFIED_WITHIN_S = 86_400.0
"""A volume modified within the last day says so on its reading: the rolling day AWS counts a
volume's modifications in, and longer than any rule's window."""


def _modified(resource: object, at: datetime) -> tuple[str, ...]:
    """A volume's recent modification, and which limits its reading is judged by."""
    if not isinstance(resource, Volume):
        return ()
    note = resource.modification_note(at, MODIFIED_WITHIN_S)
    return (note,) if note is not None else ()


def _withheld(reading: Reading) -> Reading:
    details = reading.details
    if isinstance(details, VolumeDetails):
        details = replace(details, latency_seconds=None)
    elif isinstance(details, DbDetails):
        details = replace(
            details,
            latency_seconds=None,
            class_burst_balance_percent=None,
            freeable_memory_bytes=None,
        )
    return replace(
        reading,
        iops=None,
        throughput_bytes_per_second=None,
        burst_balance_percent=None,
        seconds_to_empty=None,
        seconds_to_full=None,
        avg_io_size_bytes=None,
        iops_utilization=None,
        throughput_utilization=None,
        details=details,
    )


def _latest(state: ResourceState, measure: Measure, at: datetime) -> float | None:
    point = state.measure(measure).until(at).last()
    return point[1] if point else None


def _class_balance(state: ResourceState, at: datetime) -> float | None:
    """The lower of an instance's (or a DB class's) EBSIOBalance% and EBSByteBalance%."""
    found = [
        b
        for m in (Measure.IO_BALANCE, Measure.BYTE_BALANCE)
        if (b := state.balance(m, at)) is not None
    ]
    return min(found, default=None)


def _balance(state: ResourceState, at: datetime) -> float | None:
    if state.has_storage:
        return state.balance(Measure.BURST_BALANCE, at)
    return _class_balance(state, at)


def _balances(state: ResourceState, snap: Snapshot) -> dict[Measure, float]:
    """Each bucket's balance as the alert book weighs a hold: none without recent data."""
    at = snap.data_end
    if not state.has_recent_data(at):
        return {}
    found = {}
    for bucket in state.buckets():
        balance = state.balance_at_most(bucket.balance, at)
        if balance is not None:
            found[bucket.balance] = balance
    return found


def seconds_to_refill(state: ResourceState, at: datetime) -> float | None:
    """Seconds until every bucket that is refilling is full again at the present rate."""
    times = [
        t
        for bucket in state.buckets()
        if bucket.model is not None
        and (
            t := seconds_to_full(
                bucket.model,
                state.in_force(bucket.balance),
                state.in_force(Measure.IOPS),
                state.in_force(Measure.THROUGHPUT),
                at,
                state.windows.rate_s,
            )
        )
        is not None
    ]
    return round(max(times), 1) if times else None


def _lowest(*limits: float | None) -> float | None:
    return min((x for x in limits if x is not None), default=None)


def _ratio(value: float | None, limit: float | None) -> float | None:
    if value is None or not limit:
        return None
    return round(value / limit, 4)


def _details(state: ResourceState, at: datetime) -> Details:
    """What a reading says beyond the common columns, by kind of resource."""
    resource = state.resource
    if isinstance(resource, Volume):
        return VolumeDetails(
            volume_type=resource.volume_type,
            size_gib=resource.size_gib,
            multi_attach=resource.multi_attach,
            attachments=tuple(resource.instance_ids),
            latency_seconds=_latest(state, Measure.LATENCY, at),
            initialization=resource.initialization,
            modified=resource.modification_note(at, MODIFIED_WITHIN_S),
        )
    if isinstance(resource, Instance):
        return InstanceDetails(
            instance_type=resource.instance_type,
            volume_ids=tuple(resource.volume_ids),
            detailed_monitoring=resource.detailed_monitoring,
            node=resource.node,
        )
    info = resource.class_info
    return DbDetails(
        engine=resource.engine,
        instance_class=resource.instance_class,
        storage_type=resource.storage_type,
        allocated_gib=resource.allocated_gib,
        stripes=rds_stripes(resource.engine, resource.allocated_gib),
        additional_volumes=tuple(resource.additional_volumes),
        storage_iops_limit=state.iops_limit(at),
        storage_throughput_limit_bytes_per_second=state.throughput_limit(at),
        class_iops_limit=state.class_iops_limit(at),
        class_throughput_limit_bytes_per_second=state.class_throughput_limit(at),
        class_burst_balance_percent=_class_balance(state, at),
        dedicated_log_volume=resource.dedicated_log_volume,
        log_volume_iops=_latest(state, Measure.LOG_IOPS, at),
        log_volume_iops_limit=state.log_envelope.iops if state.log_envelope else None,
        freeable_memory_bytes=_latest(state, Measure.FREEABLE_MEMORY, at),
        memory_bytes=info.memory_bytes if info else None,
        latency_seconds=_latest(state, Measure.LATENCY, at),
    )


def _status(state: ResourceState, snap: Snapshot) -> Condition:
    """The fetch's outcome; `stale` where CloudWatch had no recent data when asked;
    `impaired` where AWS reports its I/O stalled; `initializing` for a volume still fetching
    its blocks from a snapshot; `model_mismatch` where the data contradicts a modelled
    limit; `node_agent` where a node agent reads its rates (unless AWS reports its I/O
    stalled)."""
    if state.node_agent:
        if state.impaired_since(snap.data_end) is not None:
            return Condition.IMPAIRED
        return Condition.NODE_AGENT
    if state.status is not Status.OK:
        return Condition(state.status.value)
    if snap.stale(state):
        return Condition.STALE
    if state.impaired_since(snap.data_end) is not None:
        return Condition.IMPAIRED
    if isinstance(state.resource, Volume) and state.resource.initialization is not None:
        return Condition.INITIALIZING
    if state.mismatches:
        return Condition.MODEL_MISMATCH
    return Condition.OK
