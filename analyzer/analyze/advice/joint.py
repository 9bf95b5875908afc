"""One change of a volume and its instance together.

Where a volume's limit and its instance's bind within a few percent of each other, lifting
either alone buys those few percent before the other binds: incident 4 of SPEC.md paid for
three moves. The joint fix sizes both for twice today's rate (`GROWTH_CAP`), or as far as one
volume of its type goes: the volume's cheapest modification and the cheapest instance type
that carries the instance's whole load with this volume's share grown as much, priced
together.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from analyzer.analyze.advice.instance import (
    GROWTH_CAP,
    ec2_candidates,
    needs_nitro,
    option,
    rates,
    restart,
)
from analyzer.analyze.candidates import less_than_today
from analyzer.analyze.catalog import Catalog
from analyzer.model.findings import Finding, NextBottleneck, Remedy, RemedyKind
from analyzer.model.limits import XEN_MAX_IOPS
from analyzer.model.resources import Instance, ResourceType, Volume
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import MIB

JOINT_WITHIN = 1.25
"""A fix of one limit that buys less than this before the other binds is offered jointly."""

VolumeFixes = Callable[[Finding, ResourceState, ResourceState], list[Remedy]]
"""The volume's own fixes for a finding (sized for twice the rate when it has no next
bottleneck), given the volume's state and its instance's."""


def _two_places(*factors: float) -> float:
    """The smallest, rounded down: a fix sized to a ceiling stays within it."""
    return math.floor(min(factors) * 100) / 100


def _close(nxt: NextBottleneck | None) -> bool:
    return nxt is not None and nxt.headroom is not None and nxt.headroom < JOINT_WITHIN


def joint(
    finding: Finding,
    volume: ResourceState,
    instance: ResourceState,
    snapshot: Snapshot,
    catalog: Catalog,
    volume_fixes: VolumeFixes,
    ceiling: tuple[float, float] | None,
) -> Remedy | None:
    """For a finding of either, where the other's limit is close behind: both changed.
    `ceiling`: the most IOPS and MiB/s one volume of this type carries."""
    nxt = finding.next_bottleneck
    if nxt is None or nxt.headroom is None or not _close(nxt) or ceiling is None:
        return None
    if nxt.resource_id not in (volume.ref.resource_id, instance.ref.resource_id):
        return None
    if nxt.resource_id == finding.resource.resource_id:
        return None  # the next limit is the resource's own: not a joint matter
    host = instance.resource
    if not isinstance(host, Instance) or host.type_info is None:
        return None
    if not isinstance(volume.resource, Volume):
        return None
    inst_bps, inst_iops = rates(instance, snapshot.data_end)
    vol_bps, vol_iops = rates(volume, snapshot.data_end)
    # Twice today's rate, or as far as one volume of its type goes.
    factor = _two_places(
        GROWTH_CAP,
        ceiling[0] / vol_iops if vol_iops else GROWTH_CAP,
        ceiling[1] * MIB / vol_bps if vol_bps else GROWTH_CAP,
    )
    if factor < JOINT_WITHIN:
        return None  # the volume's type is the wall: another type or a striped set
    bottleneck = finding.bottleneck if finding.resource == volume.ref else nxt.bottleneck
    own = replace(
        finding,
        resource=volume.ref,
        bottleneck=bottleneck,
        next_bottleneck=NextBottleneck(
            bottleneck, 0.0, finding.unit, volume.ref.resource_id, factor
        ),
        evidence={},
    )
    fixes = [
        f
        for f in volume_fixes(own, volume, instance)
        if f.change is not None and f.kind not in (RemedyKind.STOPGAP, RemedyKind.STRIPE)
    ]
    if not fixes:
        return None
    fix = fixes[0]
    grow = factor - 1
    today = host.type_info
    raised = fix.change.after.get("iops") if fix.change is not None else None
    nitro_for = needs_nitro(host, snapshot) or (
        f"{volume.ref.resource_id} at {raised:,} IOPS"
        if isinstance(raised, int)
        and raised > XEN_MAX_IOPS
        and fix.change is not None
        and fix.change.after.get("volume_type") in ("io1", "io2")
        else ""
    )
    found = ec2_candidates(
        host,
        today,
        catalog,
        inst_bps + vol_bps * grow,
        inst_iops + vol_iops * grow,
        nitro=bool(today.nitro) or bool(nitro_for),
    )
    if not found:
        return None
    now = catalog.instance_monthly(today.name, host.region)
    # The cheapest that keeps today's memory and vCPUs: one change, not a bet on the workload.
    keeps = [c for c in found if not less_than_today(c.info, today)]
    chosen = keeps[0] if keeps else found[0]
    moved = option(
        ResourceType.INSTANCE,
        host.instance_id,
        today,
        chosen,
        now,
        restart(host),
        node=host.node,
    )
    action = (
        f"Both at once, sized for {factor:.2f}× today's rate (either alone buys "
        f"{max(nxt.headroom - 1, 0) * 100:.0f} % before the other binds): "
        f"{fix.action}; and {moved.action[0].lower()}{moved.action[1:]}"
    )
    parts = (fix.monthly_cost, moved.monthly_cost)
    deltas = (fix.monthly_delta, moved.monthly_delta)
    cost = round(sum(p for p in parts if p is not None), 2) if None not in parts else None
    delta = round(sum(d for d in deltas if d is not None), 2) if None not in deltas else None
    also = (moved.change,) if moved.change is not None else ()
    return Remedy(action, cost, delta, change=fix.change, also=also, kind=RemedyKind.BOTH)
