"""What a region holds: volumes, the instances they are attached to, RDS instances, each
with its type's EBS limits.

Instance types are cached for the life of the process: their limits do not change between
cycles. With tag filters, a volume is in scope when it or its instance matches, and an instance
when it or one of its volumes does: an instance's EBS cap is shared by all its volumes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import structlog

from analyzer.collect.boundaries import Describer
from analyzer.errors import AwsAccessError, AwsCallError
from analyzer.model.resources import (
    DbInstance,
    Initialization,
    Instance,
    InstanceType,
    Inventory,
    Modification,
    Volume,
)

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class TagFilter:
    """`Key=Value` or `Key` (any value). Filters on the same key are alternatives."""

    key: str
    value: str | None

    @classmethod
    def parse(cls, text: str) -> TagFilter:
        key, sep, value = text.partition("=")
        if not key.strip():
            raise ValueError(f"tag filter {text!r}: expected Key=Value or Key")
        return cls(key.strip(), value.strip() if sep else None)


def tags_match(tags: Mapping[str, str], filters: Sequence[TagFilter]) -> bool:
    """Every key must match; several values of one key are alternatives, as in AWS filters."""
    by_key: dict[str, list[str | None]] = {}
    for f in filters:
        by_key.setdefault(f.key, []).append(f.value)
    for key, values in by_key.items():
        if key not in tags:
            return False
        if None not in values and tags[key] not in values:
            return False
    return True


class InstanceTypeCache:
    """EBS limits per (region, type), fetched once."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], InstanceType] = {}

    def get(self, describer: Describer, names: Iterable[str]) -> dict[str, InstanceType]:
        region = describer.region
        wanted = set(names)
        missing = sorted(n for n in wanted if (region, n) not in self._known)
        if missing:
            for info in describer.instance_types(missing):
                self._known[(region, info.name)] = info
        return {n: self._known[(region, n)] for n in wanted if (region, n) in self._known}


def discover_db(
    describer: Describer,
    types: InstanceTypeCache,
    tag_filters: Sequence[TagFilter] = (),
    account_id: str = "",
    account_name: str = "",
) -> tuple[DbInstance, ...]:
    """RDS instances on EBS storage, each with its class's EBS limits and memory.

    Without permission for rds:DescribeDBInstances the EBS analysis goes on without RDS.
    """
    try:
        found = describer.db_instances()
    except AwsAccessError as exc:
        log.warning("rds.skipped", region=describer.region, error=str(exc))
        return ()
    dbs = [d for d in found if not tag_filters or tags_match(d.tags, tag_filters)]
    known = types.get(describer, {d.ec2_type for d in dbs})
    with_class = [
        replace(
            d,
            class_info=known.get(d.ec2_type),
            account_id=account_id,
            account_name=account_name,
        )
        for d in dbs
    ]
    return tuple(sorted(with_class, key=lambda d: d.db_instance_id))


def _modifications(describer: Describer) -> Mapping[str, list[Modification]]:
    """The volumes' modifications; without them (no permission, or a call that failed) the
    analysis goes on, and its fixes say nothing of modifications under way."""
    try:
        return describer.volume_modifications()
    except (AwsAccessError, AwsCallError) as exc:
        log.warning("modifications.skipped", region=describer.region, error=str(exc))
        return {}


def _initializations(describer: Describer) -> Mapping[str, Initialization]:
    """The volumes still initializing from a snapshot; without them (no permission for
    ec2:DescribeVolumeStatus, or a call that failed) slow first reads may read as a cap."""
    try:
        return describer.volume_initializations()
    except (AwsAccessError, AwsCallError) as exc:
        log.warning("initialization.skipped", region=describer.region, error=str(exc))
        return {}


def _in_scope(
    volumes: list[Volume], instances: list[Instance], tag_filters: Sequence[TagFilter]
) -> tuple[list[Volume], list[Instance]]:
    if not tag_filters:
        return volumes, instances
    matching = {i.instance_id for i in instances if tags_match(i.tags, tag_filters)}
    volumes = [
        v
        for v in volumes
        if tags_match(v.tags, tag_filters) or not matching.isdisjoint(v.instance_ids)
    ]
    with_volumes = {i for v in volumes for i in v.instance_ids}
    instances = [i for i in instances if i.instance_id in matching | with_volumes]
    return volumes, instances


def discover(
    describer: Describer,
    types: InstanceTypeCache,
    tag_filters: Sequence[TagFilter] = (),
    with_rds: bool = True,
    account_id: str = "",
    account_name: str = "",
) -> Inventory:
    """Volumes, instances and RDS instances of one region, within the tag filters; each
    resource marked with the account that owns it, where there are accounts."""
    volumes, instances = _in_scope(describer.volumes(), describer.instances(), tag_filters)
    if volumes:
        modified = _modifications(describer)
        initializing = _initializations(describer)
        volumes = [
            replace(
                v,
                modifications=tuple(modified.get(v.volume_id, v.modifications)),
                initialization=initializing.get(v.volume_id),
                account_id=account_id,
                account_name=account_name,
            )
            for v in volumes
        ]
    by_instance: dict[str, list[str]] = {}
    for v in volumes:
        for instance_id in v.instance_ids:
            by_instance.setdefault(instance_id, []).append(v.volume_id)
    known = types.get(describer, {i.instance_type for i in instances})
    instances = [
        replace(
            i,
            volume_ids=tuple(sorted(by_instance.get(i.instance_id, []))),
            type_info=known.get(i.instance_type),
            account_id=account_id,
            account_name=account_name,
        )
        for i in instances
    ]
    return Inventory(
        describer.region,
        tuple(sorted(volumes, key=lambda v: v.volume_id)),
        tuple(sorted(instances, key=lambda i: i.instance_id)),
        discover_db(describer, types, tag_filters, account_id, account_name) if with_rds else (),
        account_id=account_id,
        account_name=account_name,
    )
