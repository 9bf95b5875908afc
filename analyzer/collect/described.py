"""An inventory answered as the Describe* calls of its region: a recording played back, or the
inventory a node agent's capture holds, described without AWS."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from analyzer.model.resources import (
    DbInstance,
    Initialization,
    Instance,
    InstanceType,
    Inventory,
    Modification,
    Volume,
)


@dataclass(frozen=True, slots=True)
class RecordedDescriber:
    """The Describe* calls of one region, answered from its recorded inventory."""

    inventory: Inventory

    @property
    def region(self) -> str:
        return self.inventory.region

    def volumes(self) -> list[Volume]:
        return list(self.inventory.volumes)

    def instances(self) -> list[Instance]:
        return list(self.inventory.instances)

    def instance_types(self, names: Sequence[str]) -> list[InstanceType]:
        wanted = set(names)
        known = {i.type_info.name: i.type_info for i in self.inventory.instances if i.type_info}
        known |= {
            d.class_info.name: d.class_info for d in self.inventory.db_instances if d.class_info
        }
        return [t for name, t in known.items() if name in wanted]

    def offered_instance_types(self) -> list[InstanceType]:
        return []  # not recorded: fixes name no other instance type or class

    def orderable_db_classes(self, engine: str) -> set[str]:
        return set()

    def db_instances(self) -> list[DbInstance]:
        return list(self.inventory.db_instances)

    def volume_modifications(self) -> dict[str, list[Modification]]:
        return {v.volume_id: list(v.modifications) for v in self.inventory.volumes}

    def volume_initializations(self) -> dict[str, Initialization]:
        return {v.volume_id: v.initialization for v in self.inventory.volumes if v.initialization}
