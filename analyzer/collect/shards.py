"""Which resources a shard watches: those whose group's stable hash falls to it.

A group is what the analysis needs together: an instance with its volumes (and, through a
Multi-Attach volume, the other instances it is attached to), a detached volume alone, an RDS
instance with its storage. Each group is named by its least id within its account's scope, and
hashed with BLAKE2b (stable across processes and Python versions, unlike `hash()`), so that
every replica of a shard, and every restart, takes the same resources.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace

from analyzer.model.resources import Inventory

ORDINAL = re.compile(r"-(\d+)$")
"""A StatefulSet pod's name ends in its ordinal: `ebs-analyzer-2`."""


@dataclass(frozen=True, slots=True)
class Shard:
    index: int
    total: int

    def __post_init__(self) -> None:
        if self.total < 1 or not 0 <= self.index < self.total:
            raise ValueError(f"shard {self.index} of {self.total}: expected 0 ≤ shard < total")

    @property
    def whole(self) -> bool:
        return self.total == 1

    def takes(self, scope: str, group: str) -> bool:
        return self.whole or shard_of(f"{scope}/{group}", self.total) == self.index


WHOLE = Shard(0, 1)


def shard_of(key: str, total: int) -> int:
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % total


def ordinal(pod_name: str) -> int | None:
    """A StatefulSet pod's ordinal, from its name; None for any other name."""
    found = ORDINAL.search(pod_name)
    return int(found.group(1)) if found else None


def groups(inventory: Inventory) -> dict[str, str]:
    """Each volume's and instance's group: the least id among the instances and volumes
    attached to one another (a union over the attachments)."""
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def join(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            low, high = sorted((ra, rb))
            parent[high] = low

    for instance in inventory.instances:
        find(instance.instance_id)
    for volume in inventory.volumes:
        find(volume.volume_id)
        for instance_id in volume.instance_ids:
            join(volume.volume_id, instance_id)
    return {node: find(node) for node in list(parent)}


def kept(inventory: Inventory, shard: Shard) -> Inventory:
    """The part of an inventory this shard watches."""
    if shard.whole:
        return inventory
    scope = inventory.scope
    group = groups(inventory)
    return replace(
        inventory,
        volumes=tuple(v for v in inventory.volumes if shard.takes(scope, group[v.volume_id])),
        instances=tuple(i for i in inventory.instances if shard.takes(scope, group[i.instance_id])),
        db_instances=tuple(
            d for d in inventory.db_instances if shard.takes(scope, d.db_instance_id)
        ),
    )
