"""`backtest --what-if`: a configuration an operator names, replayed over the resource's past.

The same replay that weighs the analyzer's own fixes (`analyze/held.py`) runs any volume
configuration, any storage of an RDS instance, or any type of an EC2 instance, over the demand
a recording or the account's last days hold: the minutes it would have held the workload below
its demand, and those of the resource as it is, side by side.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from analyzer.analyze.advice.proof import option_limits
from analyzer.analyze.held import Held, behind, replay
from analyzer.analyze.sold import Asked, Tryable, configured, described, spelled
from analyzer.deliver.records import past_row
from analyzer.errors import ConfigError
from analyzer.model.demand import Demand
from analyzer.model.findings import Change
from analyzer.model.limits import Envelope
from analyzer.model.resources import (
    Instance,
    InstanceType,
    Inventory,
    ResourceType,
)


@dataclass(frozen=True, slots=True)
class Tried:
    """A configuration replayed beside the resource as it is."""

    asked: Asked
    resource_type: ResourceType
    before: Mapping[str, Any]
    after: Mapping[str, Any]
    start: datetime
    end: datetime
    as_is: Held
    option: Held

    def as_dict(self) -> dict[str, Any]:
        return {
            "resource_id": self.asked.resource_id,
            "resource_type": self.resource_type.value,
            "from": dict(self.before),
            "to": dict(self.after),
            "since": self.start.isoformat(),
            "until": self.end.isoformat(),
            "as_is": _past(self.as_is),
            "option": _past(self.option),
        }


def _past(held: Held) -> dict[str, Any]:
    """A fix's past as the report gives it, and the minutes of its worst day."""
    return {**past_row(held.fit()), "worst_day_minutes": held.worst_day_minutes}


def find(asked: Asked, inventories: Mapping[str, Inventory]) -> tuple[str, Tryable]:
    """The resource `asked` names, and the scope it is in: a volume, an RDS instance or an
    EC2 instance."""
    for scope, inventory in inventories.items():
        for volume in inventory.volumes:
            if volume.volume_id == asked.resource_id:
                return scope, volume
        for db in inventory.db_instances:
            if db.db_instance_id == asked.resource_id:
                return scope, db
        for instance in inventory.instances:
            if instance.instance_id == asked.resource_id:
                return scope, instance
    raise ConfigError(
        f"--what-if {asked.text}: no volume, RDS instance or EC2 instance {asked.resource_id} "
        "in the inventory"
    )


@dataclass(frozen=True, slots=True)
class Trial:
    """A configuration to try on a resource, checked against what AWS sells, with the limits
    of the resource as it is and as it would be: what is replayed once the past is read."""

    asked: Asked
    change: Change
    before: Mapping[str, Any]
    today: Envelope
    option: Envelope

    def over(self, seen: Demand) -> Tried:
        """The trial replayed over `seen`, beside the resource as it is."""
        demand = behind(seen, self.today)
        return Tried(
            self.asked,
            self.change.resource_type,
            self.before,
            {k: v for k, v in self.change.after.items() if v is not None},
            demand.start,
            demand.start + timedelta(seconds=len(demand.iops) * demand.period_s),
            replay(demand, self.today),
            replay(demand, self.option),
        )


def trial(
    asked: Asked,
    resource: Tryable,
    inventory: Inventory,
    types: Mapping[str, InstanceType] | None = None,
) -> Trial:
    """`asked` on `resource`, before any of its past is read; ConfigError where it names a
    configuration AWS does not sell. `types`: the instance types an EC2 instance may be
    moved to, by name."""
    change, before, today = configured(asked, resource, inventory)
    option = option_limits(change, resource, types)
    if isinstance(resource, Instance) and option is None:
        raise ConfigError(
            f"--what-if {asked.text}: the EBS limits of {change.after['instance_type']} are "
            "not known here (the region does not offer it, or a recording does not hold it: "
            "try it over the account)"
        )
    if option is None or today is None:
        raise ConfigError(f"--what-if {asked.text}: no model of {spelled(change.after)}")
    return Trial(asked, change, before, today, option)


def tried(
    asked: Asked,
    resource: Tryable,
    inventory: Inventory,
    seen: Demand,
    types: Mapping[str, InstanceType] | None = None,
) -> Tried:
    """`trial` replayed over `seen`."""
    return trial(asked, resource, inventory, types).over(seen)


def render(tried: list[Tried]) -> str:
    """Each configuration tried, beside its resource as it is."""
    lines = []
    for one in tried:
        kind = one.resource_type
        lines.append(
            f"WHAT IF  {one.asked.resource_id}, {one.start:%Y-%m-%d %H:%M} → "
            f"{one.end:%Y-%m-%d %H:%M} UTC"
        )
        for label, config, held, said in (
            ("as it is", one.before, one.as_is, "limited"),
            ("tried", one.after, one.option, "would have limited"),
        ):
            text = held.fit().text().replace("would have limited", said, 1)
            if held.worst_day is not None:
                text += f"; worst day {held.worst_day:%a %d %b}, {held.worst_day_minutes:,} min"
            lines.append(f"  {label:<9} {described(config, kind)}")
            lines.append(f"            {text}")
        lines.append("")
    return "\n".join(lines)
