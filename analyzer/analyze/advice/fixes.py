"""What to change about a finding, and what it costs a month: the fixes of each kind of
resource, in the order an operator reads them."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyze.advice.facts import CEILINGS, modification_context
from analyzer.analyze.advice.instance import for_instance, to_nitro
from analyzer.analyze.advice.joint import joint
from analyzer.analyze.advice.kubernetes import in_cluster, in_words_for
from analyzer.analyze.advice.rds import for_db
from analyzer.analyze.advice.sizing import bounded_by
from analyzer.analyze.advice.volume import for_volume, to_nitro_in_words
from analyzer.analyze.catalog import Catalog
from analyzer.model.findings import Finding, Remedy, RemedyKind
from analyzer.model.resources import Instance, ResourceType, Volume
from analyzer.model.state import ResourceState, Snapshot


def remedies(finding: Finding, snapshot: Snapshot, catalog: Catalog) -> tuple[Remedy, ...]:
    state = snapshot.get(finding.resource.scope, finding.resource.resource_id)
    if state is None:
        return ()
    if state.is_db:
        found = for_db(finding, state, snapshot, catalog)
    elif finding.bottleneck.owner is ResourceType.INSTANCE:
        found = for_instance(finding, state, snapshot, catalog)
        nxt = finding.next_bottleneck
        volume = snapshot.get(state.ref.scope, nxt.resource_id) if nxt is not None else None
        if volume is not None:
            found = _with_joint(found, finding, volume, state, snapshot, catalog)
    else:
        found = _for_volume(finding, state, snapshot, catalog)
    return tuple(replace(o, currency=catalog.currency) for o in found)


def _with_joint(
    found: list[Remedy],
    finding: Finding,
    volume: ResourceState,
    instance: ResourceState,
    snapshot: Snapshot,
    catalog: Catalog,
) -> list[Remedy]:
    """The options, with the joint fix second where one limit follows the other closely: the
    cheapest single fix stays first, the change that moves both walls right after it."""

    def volume_fixes(f: Finding, v: ResourceState, i: ResourceState) -> list[Remedy]:
        return _through_claim(v, for_volume(f, v, catalog.prices, snapshot.data_end, i))

    kind = volume.resource.volume_type if isinstance(volume.resource, Volume) else ""
    both = joint(finding, volume, instance, snapshot, catalog, volume_fixes, CEILINGS.get(kind))
    if both is None:
        return found
    return [*found[:1], both, *found[1:]]


def _for_volume(
    finding: Finding, state: ResourceState, snapshot: Snapshot, catalog: Catalog
) -> list[Remedy]:
    instances = [s for s in snapshot.related(state) if isinstance(s.resource, Instance)]
    instance = instances[0] if instances else None
    options = _through_claim(
        state, for_volume(finding, state, catalog.prices, snapshot.data_end, instance)
    )
    suffix = bounded_by(finding)
    volume = state.resource
    context = (
        modification_context(volume, snapshot.generated_at) if isinstance(volume, Volume) else ""
    )
    own = finding.next_bottleneck is not None and (
        finding.next_bottleneck.resource_id == finding.resource.resource_id
    )
    found = [
        replace(
            o,
            # A limit of the volume as it is does not bind a volume of another type or a set.
            action=(o.action if own and o.kind in NEW_VOLUME else o.action + suffix)
            + ("" if o.kind in NOT_A_MODIFICATION else context),
        )
        for o in options
    ]
    if instance is None:
        return found
    node = instance.resource.node if isinstance(instance.resource, Instance) else None
    if node is not None:
        found = [
            in_words_for(o, node) if o.kind is RemedyKind.INSTANCE and o.change is None else o
            for o in found
        ]
    unnamed = to_nitro_in_words(volume, state) if isinstance(volume, Volume) else None
    if isinstance(volume, Volume) and unnamed is not None:
        # The instance is the fix: name the Nitro types, first, where the region's are known,
        # in place of the sentence that names none.
        named = to_nitro(volume, instance, snapshot, catalog)
        if named:
            found = named + [o for o in found if o.kind is not RemedyKind.INSTANCE]
    return _with_joint(found, finding, state, instance, snapshot, catalog)


def _through_claim(state: ResourceState, options: list[Remedy]) -> list[Remedy]:
    """A claim's volume is changed through its claim (`kubernetes.in_cluster`); any other
    volume's fixes are as they are."""
    claim = state.resource.claim if isinstance(state.resource, Volume) else None
    return options if claim is None else in_cluster(options, claim)


NEW_VOLUME = frozenset({RemedyKind.PAST_CEILING, RemedyKind.STRIPE})
"""Fixes that replace the volume's type or the volume itself."""
NOT_A_MODIFICATION = frozenset({RemedyKind.STRIPE, RemedyKind.INSTANCE})
"""Fixes that do not modify the volume: a new set of volumes, another instance."""
