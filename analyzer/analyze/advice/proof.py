"""Each fix of a finding replayed over the resource's own past: whether it would have held.

A fix that changes the resource's own limits (a volume modified, a set striped, io2) is run
through them over the demand of the resource's last days (`analyze/held.py`). The fixes that
would have limited the workload go after those that would not, whatever they cost, each group
in the order the advice gave (the cheapest useful first); a fix to buy time says how much
later than today it would have begun to limit, on the worst day.

An instance type or DB class with fewer vCPUs or less memory than today's is weighed on the
peaks of the same days (`fitted`) before the types are cut to the few shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime

from analyzer.analyze.candidates import SHOWN, family, same_family
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
    demand = behind(seen, state.envelope, earlier=_earlier(state))
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


def _earlier(state: ResourceState) -> tuple[datetime, Envelope | None] | None:
    """A volume modified within its past: when its limits became today's, and its limits
    before (None where AWS did not say what it was)."""
    volume = state.resource
    if not isinstance(volume, Volume) or state.limits_since is None:
        return None
    before = volume.before_change()
    return state.limits_since, volume_envelope(before) if before is not None else None


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
    """`finding` with the instance types or DB classes its workload fits in, the `SHOWN` of
    them. `cpu`: the peak CPU (percent, the highest 5-minute mean); `memory`: the most memory
    used (GiB; an RDS instance's memory less its lowest `FreeableMemory`); each with the days
    it was read over, None where unknown. A type with fewer vCPUs, or less memory, is left out
    where that peak would be above `CPU_FITS` (`MEMORY_FITS`) of it, and says the figure where
    it would not; where the peak is unknown it stays, says so, and goes after every type that
    needs no such check (`_shortlist`). Only then is the list cut, today's family's type kept
    where it fits."""
    judged = [fit for r in finding.remedies if (fit := _fit(r, cpu, memory)) is not None]
    slots = [i for i, (r, _) in enumerate(judged) if _is_option(r)]
    shown = _shortlist([judged[i] for i in slots])
    own = next((judged[i][0] for i in slots if _own_family(judged[i][0])), None)
    if own is not None and own not in shown:
        shown.append(own)
    places = dict(zip(slots, shown, strict=False))
    kept = (places.get(i) if i in slots else remedy for i, (remedy, _) in enumerate(judged))
    return replace(finding, remedies=tuple(r for r in kept if r is not None))


def _shortlist(options: list[tuple[Remedy, bool]]) -> list[Remedy]:
    """The `SHOWN` of `options` (each with whether a peak it needs is unknown, cheapest
    first): those that need no check, one a family; where one that does costs less than all
    of them, the one of those that gives up the least in place of the last (a saving to
    check, not a gamble on a third of the memory)."""
    sure: dict[str, Remedy] = {}
    for remedy, unknown in options:
        if not unknown:
            sure.setdefault(family(_type_name(remedy).removeprefix("db.")), remedy)
    kept = list(sure.values())
    unsure = [r for r, unknown in options if unknown]
    best = kept[0].monthly_cost if kept else None
    cheaper = sorted(
        (
            r
            for r in unsure
            if r.monthly_cost is not None and (best is None or r.monthly_cost < best)
        ),
        key=lambda r: -_kept_share(r),
    )
    if not kept:
        return unsure[:SHOWN]
    return kept[: SHOWN - 1] + cheaper[:1] if cheaper else kept[:SHOWN]


def _type_name(remedy: Remedy) -> str:
    change = type_change(remedy)
    return str(change.after.get("instance_type")) if change is not None else ""


def _kept_share(remedy: Remedy) -> float:
    """The least share of today's vCPUs or memory a type or class keeps."""
    change = type_change(remedy)
    if change is None:
        return 1.0
    shares = [1.0]
    for key in ("vcpus", "memory_gib"):
        had, gets = change.before.get(key), change.after.get(key)
        if isinstance(had, int | float) and isinstance(gets, int | float) and had > 0:
            shares.append(gets / had)
    return min(shares)


def type_change(remedy: Remedy) -> Change | None:
    """The change of an instance type or a DB class a fix makes, if any."""
    kinds = (ResourceType.INSTANCE, ResourceType.DB_INSTANCE)
    return next(
        (c for c in remedy.changes if c.resource_type in kinds and "vcpus" in c.after), None
    )


def _is_option(remedy: Remedy) -> bool:
    """One type or class among others: what the list of them is cut to `SHOWN` of."""
    return remedy.kind is RemedyKind.INSTANCE and type_change(remedy) is not None


def _own_family(remedy: Remedy) -> bool:
    change = type_change(remedy)
    return change is not None and same_family(
        _type_name(remedy), str(change.before.get("instance_type"))
    )


def _fit(remedy: Remedy, cpu: Peak | None, memory: Peak | None) -> tuple[Remedy, bool] | None:
    """The remedy as offered, and whether a peak it needs is unknown; None where a known peak
    would not fit in it."""
    change = type_change(remedy)
    if change is None:
        return remedy, False
    said, unknown = [], False
    for key, peak, fits in (("vcpus", cpu, CPU_FITS), ("memory_gib", memory, MEMORY_FITS)):
        had, gets = change.before.get(key), change.after.get(key)
        if not (isinstance(had, int | float) and isinstance(gets, int | float) and gets < had):
            continue
        if peak is None:
            unknown = True
            said.append(_unknown(key, change, gets))
            continue
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
        return remedy, False
    return replace(remedy, action=f"{remedy.action}; {'; '.join(said)}"), unknown


def _unknown(key: str, change: Change, gets: float) -> str:
    """What to check where the peak a smaller type needs is unknown."""
    if key == "vcpus":
        return f"peak CPU unknown: check that its CPUUtilization fits {gets:.0f} vCPUs"
    if change.resource_type is ResourceType.DB_INSTANCE:
        return (
            f"memory in use unknown: check that its FreeableMemory leaves room in {gets:,.0f} GiB"
        )
    return "memory in use unknown: publish mem_used_percent with the CloudWatch agent to check"


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
