"""Which CloudWatch metrics each resource has: no more, since every metric requested is billed.

Nothing is asked for a detached volume or a stopped instance (CloudWatch has nothing to give),
BurstBalance only for bucket volume types, the instance balances only for instance types whose
EBS baseline is below their maximum, and the "exceeded" checks only on Nitro. The metrics, their
statistics and the dimensions each is published with come from the catalogue
(`model/metrics.py`): a metric asked with other dimensions than AWS publishes it with comes back
empty, and is billed all the same.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from functools import partial

from analyzer.model import metrics
from analyzer.model.limits import (
    binding_units,
    has_burst_balance,
    instance_envelope,
    reach,
    volume_envelope,
)
from analyzer.model.metrics import Measure, Metric, Namespace, Part, Tier, When
from analyzer.model.rds_storage import db_storage_envelope
from analyzer.model.resources import AgentMetrics, DbInstance, Instance, Inventory, Volume
from analyzer.model.units import Unit

VOLUME_PERIOD_S = 60
DETAILED_PERIOD_S = 60
BASIC_PERIOD_S = 300


@dataclass(frozen=True, slots=True)
class MetricQuery:
    resource_id: str
    namespace: str
    metric: str
    dimensions: tuple[tuple[str, str], ...]
    """(name, value) pairs, exactly as AWS publishes the metric: CloudWatch matches them all."""
    stat: str
    period_s: int
    scale: float = 1.0
    """Multiplies each value CloudWatch answers into the catalogue's unit (`Metric.scale`)."""

    def __hash__(self) -> int:
        """From the resource and the metric alone, two strings that keep their own hashes: a
        query is a key of the history, looked up many times a cycle, and the same metric of
        the same resource asked two ways is rare. Nothing is stored for it (a fleet holds
        hundreds of thousands of queries)."""
        return hash((self.resource_id, self.metric))


def _queries(
    namespace: Namespace,
    resource_id: str,
    period_s: int,
    has: Callable[[When], bool],
    tier: Tier | None,
    attached_to: str | None = None,
    covered: bool = False,
    agent: AgentMetrics | None = None,
    leave: frozenset[Measure | Part] = frozenset(),
) -> list[MetricQuery]:
    """`leave`: what the resource's metrics feed that is not asked for (worked out otherwise,
    or of no use)."""
    out = []
    # One tuple of dimensions for every metric published with the same names: a fleet's
    # queries hold hundreds of thousands of them.
    shared: dict[tuple[metrics.Dimension, ...], tuple[tuple[str, str], ...] | None] = {}
    # Covered by a node agent: only what CloudWatch alone has, at every tier (nothing else
    # watches it), on the tier's cadence.
    for m in metrics.beyond_node(namespace) if covered else metrics.of(namespace, tier):
        if m.feeds in leave:
            continue
        if m.published_with not in shared:
            shared[m.published_with] = metrics.dimensions(m, resource_id, attached_to)
        dims = shared[m.published_with]
        if dims is not None and (m.when is When.ALWAYS or has(m.when)):
            period = m.period_s or period_s
            instead = _agent_query(m, resource_id, period, agent)
            out.append(
                instead
                or MetricQuery(resource_id, namespace.value, m.name, dims, m.statistic, period)
            )
    return out


def _agent_query(
    metric: Metric, resource_id: str, period_s: int, agent: AgentMetrics | None
) -> MetricQuery | None:
    """The CloudWatch agent's metric in place of this one, where the agent publishes it for the
    resource: asked in the agent's namespace, with the dimension set ListMetrics showed."""
    if agent is None:
        return None
    mine = metrics.agent_instead(metric.name)
    if mine is None or mine.name not in agent.names:
        return None
    return MetricQuery(
        resource_id,
        agent.namespace,
        mine.name,
        agent.dimensions,
        mine.statistic,
        period_s,
        mine.scale,
    )


Known = dict[str, tuple[tuple[object, ...], list[MetricQuery]]]
"""Queries already worked out, by resource id, with what they were worked out from."""


def for_inventory(
    inv: Inventory,
    tiers: Mapping[str, Tier] | None = None,
    known: Known | None = None,
    period_s: int | None = None,
    covered: Collection[str] = frozenset(),
    agentless: Collection[str] = frozenset(),
    guards: Collection[str] = frozenset(),
) -> dict[str, list[MetricQuery]]:
    """The metric queries of every resource in a region, by resource id: at each resource's
    tier (see `Tier`), or every metric the catalogue has where no tiers are given. With
    `known`, a resource whose description, instance, tier and coverage are unchanged keeps its
    list. `period_s`: every resource's metrics at this period (a source finer than CloudWatch,
    such as a node's NVMe statistics); None: CloudWatch's, by resource and monitoring.
    `covered`: the ids of the volumes a node agent reads, whose rates it has: such a volume,
    and an instance whose every volume is one, are asked only what CloudWatch alone has
    (`metrics.BEYOND_NODE`). `agentless`: the ids of volumes whose CloudWatch agent fell
    silent, read from AWS/EBS whatever ListMetrics said (`agent_metrics.Silence`). `guards`:
    the ids of idle instances whose operation counts stand guard over their idle volumes
    (`guards_of`): asked for them at the idle tier."""
    known = known if known is not None else {}

    def tier(resource_id: str) -> Tier | None:
        return None if tiers is None else tiers.get(resource_id, Tier.IDLE)

    def cached(
        rid: str, key: tuple[object, ...], make: Callable[[], list[MetricQuery]]
    ) -> list[MetricQuery]:
        found = known.get(rid)
        if found is not None and _same(found[0], key):
            return found[1]
        made = make()
        if found is not None:
            # The queries it kept stay the very objects (the history's keys): a tier move
            # adds or drops some, and leaves the others as they were.
            kept = {q: q for q in found[1]}
            made = [kept.get(q, q) for q in made]
        known[rid] = (key, made)
        return made

    instances = {i.instance_id: i for i in inv.instances}
    out: dict[str, list[MetricQuery]] = {}
    for volume in inv.volumes:
        instance = instances.get(volume.attached_to or "")
        nitro = instance.type_info.nitro if instance and instance.type_info else None
        t = tier(volume.volume_id)
        mine = volume.volume_id in covered
        agent = volume.volume_id not in agentless
        out[volume.volume_id] = cached(
            volume.volume_id,
            (volume, instance, t, mine, agent),
            partial(for_volume, volume, nitro, t, period_s or VOLUME_PERIOD_S, mine, agent),
        )
    volumes = {v.volume_id: v for v in inv.volumes}
    for instance in inv.instances:
        t = tier(instance.instance_id)
        whole = fully_covered(instance, covered)
        attached = tuple(volumes.get(vid) for vid in instance.volume_ids)
        leave = (
            _LEFT.setdefault(
                found := _left_to_volumes(instance, attached, t, tiers or {}, covered), found
            )
            if t is not None
            else _NOTHING_LEFT
        )
        guard = instance.instance_id in guards
        out[instance.instance_id] = cached(
            instance.instance_id,
            (instance, t, whole, leave, _GUARD if guard else None, *attached),
            partial(for_instance, instance, t, period_s, whole, leave, guard),
        )
    for db in inv.db_instances:
        t = tier(db.db_instance_id)
        out[db.db_instance_id] = cached(
            db.db_instance_id, (db, t), partial(for_db_instance, db, t, period_s or VOLUME_PERIOD_S)
        )
    return out


RATES = frozenset({Part.READ_OPS, Part.WRITE_OPS, Part.READ_BYTES, Part.WRITE_BYTES})
"""An instance's EBS operation and byte counts: the sums of its volumes'."""
_BY_UNIT = {
    Unit.IOPS: frozenset({Measure.IO_BALANCE, Measure.IOPS_EXCEEDED}),
    Unit.BYTES_PER_SECOND: frozenset({Measure.BYTE_BALANCE, Measure.THROUGHPUT_EXCEEDED}),
}


_GUARD = object()
"""In an instance's cache key: it stands guard."""
_NOTHING_LEFT: frozenset[Measure | Part] = frozenset()
_LEFT: dict[frozenset[Measure | Part], frozenset[Measure | Part]] = {}
"""One object for each set left out, so that an instance's queries are worked out again only
when what is left out of them changes."""


def _left_to_volumes(
    instance: Instance,
    volumes: tuple[Volume | None, ...],
    tier: Tier,
    tiers: Mapping[str, Tier],
    covered: Collection[str],
) -> frozenset[Measure | Part]:
    """What the daemon does not ask of an instance, whose volumes tell it or whose limits
    cannot bind:
    - an EBS limit its volumes' own limits keep it under (`limits.binding_units`) can neither
      drain its bucket nor cap it: its balance and its exceeded check are not asked, nor its
      operation and byte counts where neither of its limits can bind;
    - its operation and byte counts are the sums of its volumes' (Amazon EC2 User Guide,
      "Instance metrics"), so where every volume is read at least as often and as closely as
      the instance, they are summed from the volumes' instead (`states.instance_state`); and
      at the active tier whatever its volumes' tiers, the sum then ending at the last minute
      every volume was read for (what an active instance is read for is its balances). Not
      where a volume is Multi-Attach (CloudWatch does not split its I/O by instance), read
      by a node agent, or not in the inventory."""
    known = [v for v in volumes if v is not None]
    types = instance.type_info
    envelopes = [volume_envelope(v, types) for v in known]
    found = reach(envelopes) if len(known) == len(volumes) else None
    binds = binding_units(instance_envelope(instance), found)
    leave: set[Measure | Part] = set()
    for unit, fed in _BY_UNIT.items():
        if unit not in binds:
            leave |= fed
    summed = (
        bool(known)
        and len(known) == len(volumes)
        and tier is not Tier.IDLE
        and all(
            not v.multi_attach
            and v.volume_id not in covered
            and (tier is Tier.ACTIVE or tiers.get(v.volume_id, Tier.IDLE).rank >= tier.rank)
            for v in known
        )
    )
    if not binds or summed:
        leave |= RATES
    return frozenset(leave)


GUARD_PARTS = frozenset({Part.READ_OPS, Part.WRITE_OPS})
"""What an idle instance asks to stand guard over its idle volumes."""


def guards_of(
    inv: Inventory, tiers: Mapping[str, Tier], covered: Collection[str]
) -> dict[str, tuple[str, ...]]:
    """By instance id, the idle volumes whose load the instance's own operation counts bound:
    an idle Nitro instance, of a type with published limits, whose every attached volume is
    in the inventory, not Multi-Attach and not read by a node agent, and at least two of them
    idle. On Nitro an instance's EBSReadOps and EBSWriteOps are the sums of its volumes'
    (Amazon EC2 User Guide, "Instance metrics"), so its idle volumes do no more than they show
    less what its other volumes, read on their own, show: its two counts stand for their
    own two each (where it pays: `Cadence.guard_pays`)."""
    volumes = {v.volume_id: v for v in inv.volumes}
    out = {}
    for instance in inv.instances:
        info = instance.type_info
        mine = [volumes.get(vid) for vid in instance.volume_ids]
        idle = tuple(
            v.volume_id
            for v in mine
            if v is not None and tiers.get(v.volume_id, Tier.IDLE) is Tier.IDLE
        )
        if (
            instance.active
            and info is not None
            and info.nitro is True
            and instance_envelope(instance) is not None
            and tiers.get(instance.instance_id, Tier.IDLE) is Tier.IDLE
            and len(idle) >= 2  # one volume's own two counts are as cheap
            and all(
                v is not None and v.active and not v.multi_attach and v.volume_id not in covered
                for v in mine
            )
        ):
            out[instance.instance_id] = idle
    return out


def fully_covered(instance: Instance, covered: Collection[str]) -> bool:
    """Whether node agents read every volume of this instance: then they have its EBS sums and
    exceeded checks too."""
    return bool(instance.volume_ids) and all(v in covered for v in instance.volume_ids)


def covered_ids(inv: Inventory, covered: Collection[str]) -> set[str]:
    """The ids of the inventory's resources whose rates node agents read: the covered volumes,
    and the instances whose every volume is one."""
    if not covered:
        return set()
    mine = {v.volume_id for v in inv.volumes if v.volume_id in covered}
    return mine | {i.instance_id for i in inv.instances if fully_covered(i, covered)}


def _same(old: tuple[object, ...], new: tuple[object, ...]) -> bool:
    return len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True))


def for_volume(
    volume: Volume,
    nitro: bool | None = None,
    tier: Tier | None = None,
    period_s: int = VOLUME_PERIOD_S,
    covered: bool = False,
    use_agent: bool = True,
) -> list[MetricQuery]:
    """`covered`: a node agent reads its rates; only what CloudWatch alone has is asked. Where
    the CloudWatch agent publishes its NVMe statistics (`volume.agent`), those are asked in place
    of the AWS/EBS metrics they stand for (unless `use_agent` is False): the same price, and the
    exceeded checks in seconds."""
    if not volume.active:
        return []
    checked = volume.volume_type != "standard"  # AWS publishes no exceeded checks for magnetic
    has = {
        When.BUCKET: has_burst_balance(volume),
        When.NITRO: nitro is not False and not volume.multi_attach and checked,
        When.UNCHECKED: nitro is False or volume.multi_attach or not checked,
        When.ATTACHED_NITRO: nitro is not False and not volume.multi_attach,
    }
    # The metrics published per attachment name the volume's one instance; a Multi-Attach
    # volume has none of them.
    attached_to = None if volume.multi_attach else volume.attached_to
    return _queries(
        Namespace.EBS,
        volume.volume_id,
        period_s,
        lambda w: has.get(w, False),
        tier,
        attached_to,
        covered,
        volume.agent if use_agent else None,
    )


def for_db_instance(
    db: DbInstance, tier: Tier | None = None, period_s: int = VOLUME_PERIOD_S
) -> list[MetricQuery]:
    """AWS/RDS metrics are already per second: their Average over a minute is the rate."""
    if not db.active:
        return []
    storage = db_storage_envelope(db)
    has = {
        When.BUCKET: storage is not None and storage.bucket is not None,
        When.EBS_BURST: db.class_info is not None and db.class_info.ebs_bursts,
        When.LOG_VOLUME: db.dedicated_log_volume,
    }
    return _queries(Namespace.RDS, db.db_instance_id, period_s, lambda w: has.get(w, False), tier)


def for_instance(
    instance: Instance,
    tier: Tier | None = None,
    period_s: int | None = None,
    covered: bool = False,
    leave: frozenset[Measure | Part] = frozenset(),
    guard: bool = False,
) -> list[MetricQuery]:
    """`period_s`: None for CloudWatch's, by the instance's monitoring. `covered`: node agents
    read every one of its volumes; only what CloudWatch alone has is asked. `leave`: what is
    not asked of it (`_left_to_volumes`). `guard`: idle, it stands guard over its volumes
    (`guards_of`) and asks its operation counts too."""
    if not instance.active:
        return []
    period = period_s or (DETAILED_PERIOD_S if instance.detailed_monitoring else BASIC_PERIOD_S)
    info = instance.type_info
    nitro = info is None or info.nitro is not False
    has = {
        When.EBS_BURST: info is not None and info.ebs_bursts,
        When.NITRO: nitro,
        # AWS publishes no instance EBS exceeded checks for bare metal.
        When.VIRTUALIZED_NITRO: nitro and (info is None or not info.bare_metal),
    }
    out = _queries(
        Namespace.EC2,
        instance.instance_id,
        period,
        lambda w: has.get(w, False),
        tier,
        covered=covered,
        leave=leave,
    )
    if guard and tier is Tier.IDLE:
        everything = frozenset(m.feeds for m in metrics.of(Namespace.EC2))
        out += _queries(
            Namespace.EC2,
            instance.instance_id,
            period,
            lambda w: has.get(w, False),
            Tier.ACTIVE,
            leave=everything - GUARD_PARTS,
        )
    return out
