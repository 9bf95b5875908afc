"""Each fix of a finding replayed over the resource's own past: whether it would have held.

A fix that changes the resource's own limits (a volume modified, a set striped, io2) is run
through them over the demand of the resource's last days (`analyze/held.py`). The fixes that
would have limited the workload go after those that would not, whatever they cost, each group
in the order the advice gave (the cheapest useful first); a fix to buy time says how much
later than today it would have begun to limit, on the worst day.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from analyzer.analyze.held import before_emptied, behind, replay, time_bought
from analyzer.analyze.kinds.credits_exhausted import down_from
from analyzer.model.demand import Demand
from analyzer.model.findings import (
    RATE_BEFORE_EMPTY,
    Change,
    Finding,
    PastFit,
    Remedy,
    RemedyKind,
    past_span,
)
from analyzer.model.layers import Bucket
from analyzer.model.limits import (
    CreditBucket,
    Envelope,
    instance_type_envelope,
    volume_envelope,
)
from analyzer.model.rds_storage import db_storage_envelope
from analyzer.model.resources import DbInstance, Instance, InstanceType, ResourceType, Volume
from analyzer.model.state import Resource, ResourceState

ChangeKey = tuple[object, ...]
"""A change told apart from another (`change_key`): what a fix's past is kept by."""


def change_key(change: Change) -> ChangeKey:
    return (
        change.resource_type,
        change.resource_id,
        tuple(sorted((k, repr(v)) for k, v in change.after.items())),
    )


def proven(
    finding: Finding,
    state: ResourceState,
    seen: Demand,
    types: Mapping[str, InstanceType] | None = None,
) -> Finding:
    """`finding` with each fix's `past`, and its fixes in that order. `seen`: the resource's
    rates over its past days, as CloudWatch shows them."""
    return with_past(finding, weighed(finding, state, seen, types))


def weighed(
    finding: Finding,
    state: ResourceState,
    seen: Demand,
    types: Mapping[str, InstanceType] | None = None,
) -> dict[ChangeKey, PastFit]:
    """The past of each of the finding's fixes that changes the resource's own limits, by its
    change: the figures kept where the demand is not (a fortnight of minutes is 20,160 values
    a metric). `types`: the instance types an instance's fixes may name, by name."""
    demand = behind(seen, state.envelope)
    # The resource as it is, replayed only where a fix to buy time is weighed against it.
    stopgap = any(r.kind is RemedyKind.STOPGAP for r in finding.remedies)
    today = replay(demand, state.envelope) if stopgap and state.envelope is not None else None
    fits = {}
    for remedy in finding.remedies:
        limits = option_limits(remedy.change, state.resource, types)
        if limits is None or remedy.change is None:
            continue
        held = replay(demand, limits)
        buys_time = remedy.kind is RemedyKind.STOPGAP
        bought = time_bought(held, today) if buys_time and today is not None else None
        fits[change_key(remedy.change)] = held.fit(bought)
    return fits


def with_past(finding: Finding, fits: Mapping[ChangeKey, PastFit]) -> Finding:
    """`finding` with each fix's past from `fits`, where it has one, the fixes that would have
    limited the workload after those that would not."""
    fixes = [
        replace(remedy, past=fits.get(change_key(remedy.change)))
        if remedy.change is not None
        else remedy
        for remedy in finding.remedies
    ]
    return replace(finding, remedies=tuple(sorted(fixes, key=_would_have_limited)))


def own_changes(finding: Finding) -> frozenset[ChangeKey]:
    """The changes of `finding`'s fixes that a past could be given (that change its
    resource's own limits): what its past is read for."""
    rid = finding.resource.resource_id
    return frozenset(
        change_key(r.change)
        for r in finding.remedies
        if r.change is not None and _own(r.change, rid)
    )


def before_empty(finding: Finding, state: ResourceState, seen: Demand) -> float | None:
    """An empty bucket's rate before it ran out as its past shows it (`held.before_emptied`),
    where its finding's history did not reach back to the drain (a single run, or a daemon
    started after it); None where there is nothing to add."""
    bucket = _empty_bucket(finding, state)
    return before_emptied(seen, bucket.model) if bucket is not None and bucket.model else None


def recalled(finding: Finding, state: ResourceState, before: float) -> Finding | None:
    """The finding of an empty bucket, with `before` as the rate it ran at before it ran out:
    what its fixes are then sized for, not the burst, as the daemon sizes them from what it
    saw. None where it is no such finding, or knows that rate already."""
    credit = finding.credit
    bucket = _empty_bucket(finding, state)
    if bucket is None or credit is None:
        return None
    summary = finding.summary.removesuffix(".") + down_from(before, bucket) + "."
    return replace(
        finding,
        summary=summary,
        evidence={**finding.evidence, RATE_BEFORE_EMPTY: before},
        credit=replace(credit, rate_before_empty=before),
    )


def _empty_bucket(finding: Finding, state: ResourceState) -> Bucket | None:
    credit = finding.credit
    if credit is None or not credit.empty or credit.rate_before_empty is not None:
        return None
    return next((b for b in state.buckets() if b.balance is credit.balance), None)


CPU_FITS = 80.0
"""Percent: a type with fewer vCPUs is offered where the peak CPU would be at most this of it,
a fifth left for what the peak did not show."""
MEMORY_FITS = 80.0
"""Percent: a class with less memory is offered where the most memory used would be at most
this of it."""

Peak = tuple[float, float]
"""A peak read over the past, and the days it was read over."""


def fitted(finding: Finding, cpu: Peak | None, memory: Peak | None = None) -> Finding:
    """`finding` without the instance types or DB classes its workload is not known to fit
    in. `cpu`: the peak CPU (percent, the highest 5-minute mean); `memory`: the most memory
    used (GiB; an RDS instance's memory less its lowest `FreeableMemory`); each with the days
    it was read over, None where unknown. A type with fewer vCPUs, or less memory, stays where
    that peak would be at most `CPU_FITS` (`MEMORY_FITS`) of it, and says the figure."""
    found = (_fits(remedy, cpu, memory) for remedy in finding.remedies)
    return replace(finding, remedies=tuple(r for r in found if r is not None))


def type_change(remedy: Remedy) -> Change | None:
    """The change of an instance type or a DB class a fix makes, if any."""
    kinds = (ResourceType.INSTANCE, ResourceType.DB_INSTANCE)
    return next(
        (c for c in remedy.changes if c.resource_type in kinds and "vcpus" in c.after), None
    )


def _fits(remedy: Remedy, cpu: Peak | None, memory: Peak | None) -> Remedy | None:
    change = type_change(remedy)
    if change is None:
        return remedy
    said = []
    for key, peak, fits in (("vcpus", cpu, CPU_FITS), ("memory_gib", memory, MEMORY_FITS)):
        had, gets = change.before.get(key), change.after.get(key)
        if not (isinstance(had, int | float) and isinstance(gets, int | float) and gets < had):
            continue
        if peak is None:
            return None
        value, days = peak
        would = value / gets * 100 if key == "memory_gib" else value * had / gets
        if would > fits:
            return None
        span = past_span(days)
        if key == "vcpus":
            said.append(
                f"its peak CPU over the last {span}, {value:.0f} % of {had} vCPUs, would be "
                f"{would:.0f} % of {gets}"
            )
        else:
            said.append(
                f"the most memory it used over the last {span}, {value:,.1f} GiB, would be "
                f"{would:.0f} % of {gets:,.0f} GiB"
            )
    if not said:
        return remedy
    return replace(remedy, action=f"{remedy.action}; {'; '.join(said)}")


def _would_have_limited(remedy: Remedy) -> bool:
    return remedy.past is not None and not remedy.past.held


def option_limits(
    change: Change | None, resource: Resource, types: Mapping[str, InstanceType] | None = None
) -> Envelope | None:
    """The limits the resource has after `change`, where it changes this very volume, this
    RDS instance's storage, or this EC2 instance's type (one of `types`); None for a change
    of anything else (a DB class: not replayed)."""
    if change is None or not _own(change, resource.ref.resource_id):
        return None
    after = change.after
    if isinstance(resource, Instance):
        info = (types or {}).get(str(after.get("instance_type")))
        return instance_type_envelope(info) if info is not None else None
    if isinstance(resource, DbInstance):
        storage_type = str(after["storage_type"])
        same = storage_type == resource.storage_type
        return db_storage_envelope(
            replace(
                resource,
                storage_type=storage_type,
                allocated_gib=int(after.get("allocated_gib") or resource.allocated_gib),
                iops=_int_or_none(after.get("iops")) or (resource.iops if same else None),
                throughput_mibps=_int_or_none(after.get("throughput_mibps"))
                or (resource.throughput_mibps if same else None),
            )
        )
    if not isinstance(resource, Volume):
        return None
    modified = replace(
        resource,
        volume_type=str(after.get("volume_type", resource.volume_type)),
        size_gib=int(after.get("size_gib") or resource.size_gib),
        iops=_int_or_none(after.get("iops")),
        throughput_mibps=_int_or_none(after.get("throughput_mibps")),
    )
    limits = volume_envelope(modified)
    if limits is None:
        return None
    return _striped(limits, int(after.get("volumes") or 1))


def _own(change: Change, resource_id: str) -> bool:
    """Whether `change` is one the replay runs: a volume's own, an RDS instance's storage,
    or an EC2 instance's type."""
    if change.resource_id != resource_id:
        return False
    if change.resource_type is ResourceType.VOLUME:
        return True
    if change.resource_type is ResourceType.INSTANCE:
        return "instance_type" in change.after
    return change.resource_type is ResourceType.DB_INSTANCE and "storage_type" in change.after


def _int_or_none(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) else None


def _striped(limits: Envelope, volumes: int) -> Envelope:
    """A set of `volumes` alike, striped: every limit and bucket `volumes` times over, I/O
    spread evenly across them."""
    if volumes == 1:
        return limits
    bucket = limits.bucket
    return replace(
        limits,
        iops=limits.iops * volumes,
        throughput_bps=limits.throughput_bps * volumes,
        baseline_iops=limits.baseline_iops * volumes,
        baseline_throughput_bps=limits.baseline_throughput_bps * volumes,
        bucket=None
        if bucket is None
        else CreditBucket(
            bucket.capacity * volumes,
            bucket.baseline * volumes,
            bucket.burst * volumes,
            bucket.unit,
            bucket.io_cap * volumes if bucket.io_cap is not None else None,
        ),
    )
