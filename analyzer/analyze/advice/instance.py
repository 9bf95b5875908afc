"""What to change about an EC2 instance's EBS finding: the instance type, named and priced.

An instance cap is lifted by a type whose sustained EBS limits carry the workload up to its
next bottleneck (at most twice today's rate); an instance EBS burst running out, by a type
whose baseline carries the demand with a fifth more room. Candidates come from the region's
own list of types (`candidates`), same architecture (an AMI is built for one), Nitro where
today's type is, or where a volume's provisioned IOPS need it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from analyzer.analyze.advice.kubernetes import in_words_for, node_record, replaced
from analyzer.analyze.candidates import Candidate, Wanted, candidates, less_than_today, sustained
from analyzer.analyze.catalog import Catalog
from analyzer.model import units
from analyzer.model.findings import (
    Bottleneck,
    Change,
    Finding,
    Remedy,
    RemedyKind,
)
from analyzer.model.kubernetes import Node
from analyzer.model.limits import XEN_MAX_IOPS
from analyzer.model.metrics import Measure
from analyzer.model.resources import Instance, InstanceType, ResourceType, Volume
from analyzer.model.series import recent
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import GIB

GROWTH_CAP = 2.0
"""Without a next bottleneck in sight, size a fix for twice the present rate."""
MIN_LIFT = 1.1
"""A type that lifts a cap lifts it by a tenth at least: one at today's limit buys nothing."""
BURST_ROOM = 1.2
"""A baseline that must carry a draining demand: with a fifth more room."""
STOP_START = "needs a stop and start"


def restart(instance: Instance) -> str:
    """How a new type takes effect: a stop and start, or, for a cluster node, where its type is
    changed (a node is replaced, not resized)."""
    node = instance.node
    return STOP_START if node is None else replaced(node)


def rates(state: ResourceState, at: datetime) -> tuple[float, float]:
    """The instance's EBS throughput (bytes/s) and IOPS over its rate window."""
    window = state.windows.rate_s
    bps = recent(state.measure(Measure.THROUGHPUT), at, window).mean() or 0.0
    iops = recent(state.measure(Measure.IOPS), at, window).mean() or 0.0
    return bps, iops


def growth(finding: Finding) -> float:
    """How far the fix must carry today's rates."""
    if finding.bottleneck.is_credits:
        before = finding.rate_before_empty
        behind = before / finding.observed if before is not None and finding.observed > 0 else 1.0
        return max(behind, 1.0) * BURST_ROOM
    nxt = finding.next_bottleneck
    return max(min(nxt.headroom, GROWTH_CAP), 1.0) if nxt and nxt.headroom else GROWTH_CAP


def lifted(finding: Finding, today: InstanceType, bps: float, iops: float) -> tuple[float, float]:
    """The EBS throughput and IOPS a new type must sustain: today's rates grown as the finding
    needs, and past today's own cap by `MIN_LIFT` where a cap binds."""
    grow = growth(finding)
    bps, iops = bps * grow, iops * grow
    has_bps, has_iops = sustained(today)
    if finding.bottleneck is Bottleneck.INSTANCE_THROUGHPUT:
        bps = max(bps, has_bps * MIN_LIFT)
    elif finding.bottleneck is Bottleneck.INSTANCE_IOPS:
        iops = max(iops, has_iops * MIN_LIFT)
    return bps, iops


def beyond(finding: Finding) -> str:
    """Where the next limit is near, what binds once the instance is lifted."""
    nxt = finding.next_bottleneck
    if finding.bottleneck.is_credits or nxt is None or nxt.headroom is None:
        return ""
    if nxt.headroom >= GROWTH_CAP:
        return ""
    what = nxt.bottleneck.value.replace("_", " ").replace("iops", "IOPS")
    return f"; beyond {nxt.headroom:.2f}× today's rate the {what} limit of {nxt.resource_id} binds"


def needs_nitro(instance: Instance, snapshot: Snapshot) -> str:
    """Why the new type must be built on Nitro: the reason, or empty."""
    for volume_id in instance.volume_ids:
        state = snapshot.get(instance.scope, volume_id)
        volume = state.resource if state is not None else None
        if (
            isinstance(volume, Volume)
            and volume.volume_type in ("io1", "io2")
            and (volume.iops or 0) > XEN_MAX_IOPS
        ):
            return f"{volume_id}'s {units.iops(volume.iops or 0)}"
    return ""


def describe_type(info: InstanceType) -> dict[str, Any]:
    throughput, iops = sustained(info)
    return {
        "instance_type": info.name,
        "ebs_throughput_mbps": round(throughput / units.MB, 1),
        "ebs_iops": round(iops),
        "memory_gib": round((info.memory_bytes or 0) / GIB, 1),
        "vcpus": info.vcpus,
    }


def option(
    resource_type: ResourceType,
    resource_id: str,
    today: InstanceType,
    candidate: Candidate,
    now: float | None,
    how: str,
    unit: str = "",
    node: Node | None = None,
) -> Remedy:
    """`Move i-… to m6in.12xlarge: …`, priced against today's type; for a cluster node,
    `Change node group db-nodes of cluster prod to …`."""
    info = candidate.info
    throughput, iops = sustained(info)
    was_throughput, was_iops = sustained(today)
    marks = less_than_today(info, today)
    marked = f" ({', '.join(marks)})" if marks else ""
    subject = f"Move {resource_id}" if node is None else f"Change {node.text()}"
    action = (
        f"{subject} to {unit}{info.name}{marked}: EBS {units.mbps(throughput)}, "
        f"{units.iops(iops)} (today {units.mbps(was_throughput)}, {was_iops:,.0f}); "
        f"{(info.memory_bytes or 0) / GIB:,.0f} GiB, {info.vcpus or '?'} vCPUs (today "
        f"{(today.memory_bytes or 0) / GIB:,.0f} GiB, {today.vcpus or '?'}); {how}"
    )
    cost = candidate.monthly
    delta = round(cost - now, 2) if cost is not None and now is not None else None
    after: dict[str, Any] = {**describe_type(info), "instance_type": f"{unit}{info.name}"}
    if node is not None:
        after["kubernetes"] = node_record(node)
    change = Change(
        resource_type,
        resource_id,
        {**describe_type(today), "instance_type": f"{unit}{today.name}"},
        after,
    )
    return Remedy(action, cost, delta, change=change, kind=RemedyKind.INSTANCE)


def ec2_candidates(
    instance: Instance,
    today: InstanceType,
    catalog: Catalog,
    throughput_bps: float,
    iops: float,
    nitro: bool,
) -> list[Candidate]:
    """The types an EC2 instance may move to that sustain these rates: today's architecture
    (an AMI is built for one), Nitro where asked, priced in the instance's region."""
    region = instance.region
    wanted = Wanted(
        throughput_bps=throughput_bps,
        iops=iops,
        nitro=nitro,
        architectures=frozenset(today.architectures) or None,
    )
    return candidates(
        today,
        catalog.instance_types(region),
        wanted,
        lambda name: catalog.instance_monthly(name, region),
    )


def for_instance(
    finding: Finding, state: ResourceState, snapshot: Snapshot, catalog: Catalog
) -> list[Remedy]:
    instance = state.resource
    if not isinstance(instance, Instance):
        return []
    today = instance.type_info
    found: list[Candidate] = []
    nitro_for = needs_nitro(instance, snapshot)
    if today is not None:
        bps, iops = lifted(finding, today, *rates(state, snapshot.data_end))
        nitro = bool(today.nitro) or bool(nitro_for)
        found = ec2_candidates(instance, today, catalog, bps, iops, nitro)
    node = instance.node
    if not found or today is None:
        unnamed = _unnamed(finding, instance)
        return [unnamed if node is None else in_words_for(unnamed, node)]
    now = catalog.instance_monthly(today.name, instance.region)
    how = restart(instance) + (f"; Nitro, for {nitro_for}" if nitro_for else "") + beyond(finding)
    return [
        option(ResourceType.INSTANCE, instance.instance_id, today, c, now, how, node=node)
        for c in found
    ]


def to_nitro(
    volume: Volume, instance_state: ResourceState, snapshot: Snapshot, catalog: Catalog
) -> list[Remedy]:
    """io1/io2 provisioned above what an instance off Nitro delivers (32,000 IOPS): Nitro types
    that carry the provisioned IOPS and at least what today's type does, cheapest first."""
    instance = instance_state.resource
    if not isinstance(instance, Instance) or instance.type_info is None:
        return []
    today = instance.type_info
    bps, iops = rates(instance_state, snapshot.data_end)
    has_bps, has_iops = sustained(today)
    found = ec2_candidates(
        instance,
        today,
        catalog,
        max(bps, has_bps),
        max(iops, has_iops, float(volume.iops or 0)),
        nitro=True,
    )
    now = catalog.instance_monthly(today.name, instance.region)
    how = (
        f"{restart(instance)}; on Nitro {volume.volume_id} delivers the "
        f"{units.iops(volume.iops or 0)} provisioned (and already paid for), off Nitro at "
        f"most {units.iops(XEN_MAX_IOPS)}; from Xen the AMI needs the ENA and NVMe drivers, "
        "and volumes appear as NVMe devices"
    )
    node = instance.node
    return [
        option(ResourceType.INSTANCE, instance.instance_id, today, c, now, how, node=node)
        for c in found
    ]


def _unnamed(finding: Finding, instance: Instance) -> Remedy:
    """Where the region's types are unknown: what kind of type, in words."""
    if finding.bottleneck is Bottleneck.INSTANCE_BURST_CREDITS:
        return Remedy(
            f"Move to an instance type whose EBS baseline covers the load: "
            f"{instance.instance_type} sustains only its baseline once its EBS burst is spent",
            kind=RemedyKind.INSTANCE,
        )
    what = "IOPS" if finding.bottleneck is Bottleneck.INSTANCE_IOPS else "throughput"
    limit = units.iops(finding.limit) if what == "IOPS" else units.mbps(finding.limit)
    family = instance.instance_type.split(".")[0]
    return Remedy(
        f"Move to an instance type with more than {limit} of EBS {what} "
        f"(larger {family} sizes, or an EBS-optimized family such as the *n/*bn "
        f"types); the instance cap is shared by all its volumes",
        kind=RemedyKind.INSTANCE,
    )
