"""What applying a fix would do, read afresh: the resource today and the target, checked
against what AWS sells, priced, and replayed over the resource's last fourteen days."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from analyzer.analyze.advice.proof import option_limits
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.held import BOUND_AT, behind, counted_iops, replay
from analyzer.analyze.sold import Asked, configured, described
from analyzer.model.demand import Demand
from analyzer.model.findings import Change, PastFit, delta_text, fix_id
from analyzer.model.limits import Envelope, volume_envelope
from analyzer.model.rds_storage import db_storage_envelope
from analyzer.model.resources import DbInstance, Inventory, ResourceType, Volume
from analyzer.model.units import MIB

Changeable = Volume | DbInstance

PROVISIONS_IOPS = frozenset({"gp3", "io1", "io2"})
COMPARED = ("volume_type", "storage_type", "size_gib", "allocated_gib", "iops", "throughput_mibps")
"""The fields of a configuration a fix sets (the limits after it are derived from them)."""


@dataclass(frozen=True, slots=True)
class Busiest:
    """The busiest period of the past read, as the target's limits count it, beside them."""

    iops: float
    iops_at: datetime
    bps: float
    bps_at: datetime
    iops_limit: float
    bps_limit: float
    days: float

    def above(self) -> str | None:
        """The limit the past reached (`BOUND_AT` of it or more), said with its peak; None
        where it stayed below both."""
        if self.iops >= BOUND_AT * self.iops_limit:
            return (
                f"{self.iops:,.0f} IOPS at {self.iops_at:%Y-%m-%d %H:%M} UTC, against the "
                f"target's {self.iops_limit:,.0f}"
            )
        if self.bps >= BOUND_AT * self.bps_limit:
            return (
                f"{self.bps / MIB:,.0f} MiB/s at {self.bps_at:%Y-%m-%d %H:%M} UTC, against the "
                f"target's {self.bps_limit / MIB:,.0f}"
            )
        return None


@dataclass(frozen=True, slots=True)
class Plan:
    """A fix on one resource as it is now: from → to, what it costs, what it would have done."""

    asked: Asked
    scope: str
    resource: Changeable
    change: Change
    today_monthly: float | None
    target_monthly: float | None
    currency: str = "USD"
    past: PastFit | None = None
    past_note: str = ""
    """Why there is no past, where there is none."""
    busiest: Busiest | None = None
    """The past's busiest period against the target's limits, where it was read."""

    @property
    def fix_id(self) -> str:
        """The fix as the analyzer names it (the same target named another way reads as the
        analyzer would have named it)."""
        return fix_id(self.change) or self.asked.text

    @property
    def resource_id(self) -> str:
        return self.asked.resource_id

    @property
    def kind(self) -> ResourceType:
        return self.change.resource_type

    @property
    def monthly_delta(self) -> float | None:
        if self.today_monthly is None or self.target_monthly is None:
            return None
        return round(self.target_monthly - self.today_monthly, 2)

    @property
    def before(self) -> dict[str, Any]:
        return _config(self.change.before)

    @property
    def after(self) -> dict[str, Any]:
        return _config(self.change.after)

    @property
    def cuts(self) -> bool:
        """Whether the target's IOPS or throughput limit is below today's by more than the
        cap rules' margin (`BOUND_AT`): IOPS or throughput provisioned lower, io1 or io2 moved
        to gp3 at less, a gp2 volume whose baseline or 250 MiB/s is above the gp3 it moves to
        (a savings cut). Only the past proves such a change: `guards.busier`. A gp2 volume
        below 1 TiB moved to gp3 at 3,000 IOPS is none: gp3 gives at all times what its burst
        gave while credits lasted (128 MiB/s against 125 aside)."""
        option = option_limits(self.change, self.resource)
        today = _today_limits(self.resource)
        if option is None or today is None:
            return False
        return (
            option.iops < BOUND_AT * today.iops
            or option.throughput_bps < BOUND_AT * today.throughput_bps
        )

    @property
    def already_so(self) -> bool:
        """The resource has the target already: every field the target sets."""
        before = self.change.before
        return all(before.get(k) == v for k, v in self.after.items())

    def cost_text(self) -> str:
        delta = self.monthly_delta
        return "price unknown" if delta is None else delta_text(delta, self.currency)

    def lines(self) -> list[str]:
        """The plan as `apply` prints it."""
        where = _said_resource(self.resource)
        note = f": {self.past_note}" if self.past_note else ""
        past = self.past.text() if self.past is not None else f"not read{note}"
        return [
            f"apply {self.fix_id}",
            f"  {where} in {self.scope}",
            f"  today:  {described(self.before, self.kind)}",
            f"  target: {described(self.after, self.kind)}",
            f"  cost:   {self.cost_text()}",
            f"  past:   {past}",
        ]


def _config(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: values[k] for k in COMPARED if values.get(k) is not None}


def _said_resource(resource: Changeable) -> str:
    if isinstance(resource, Volume):
        claim = f" ({resource.claim.text()})" if resource.claim is not None else ""
        attached = f" on {resource.attached_to}" if resource.attached_to else ", not attached"
        return f"volume {resource.volume_id}{claim}{attached}"
    return f"RDS instance {resource.db_instance_id} ({resource.engine}, {resource.instance_class})"


def plan_of(asked: Asked, scope: str, resource: Changeable, catalog: Catalog) -> Plan:
    """The fix on `resource` as it is; ConfigError where the target is not one AWS sells."""
    if isinstance(resource, Volume):
        inventory = Inventory(resource.region, volumes=(resource,))
    else:
        inventory = Inventory(resource.region, db_instances=(resource,))
    change, _, _ = configured(asked, resource, inventory)
    return Plan(
        asked,
        scope,
        resource,
        change,
        _monthly(catalog, resource, change.before),
        _monthly(catalog, resource, change.after),
        catalog.currency,
    )


def _monthly(catalog: Catalog, resource: Changeable, config: Mapping[str, Any]) -> float | None:
    if isinstance(resource, Volume):
        kind = str(config["volume_type"])
        provisioned = kind in PROVISIONS_IOPS
        return catalog.prices.monthly(
            kind,
            int(config["size_gib"]),
            config.get("iops") if provisioned else None,
            config.get("throughput_mibps") if kind == "gp3" else None,
        )
    return catalog.db_storage_monthly(
        str(config["storage_type"]),
        resource.engine,
        resource.region,
        resource.multi_az,
        int(config["allocated_gib"]),
    )


def with_past(plan: Plan, seen: Demand | None, note: str = "") -> Plan:
    """The plan with the target replayed over `seen` (the resource's own rates as CloudWatch
    showed them), or with the reason there is none."""
    if seen is None:
        return replace(plan, past_note=note or "no operations in CloudWatch")
    option = option_limits(plan.change, plan.resource)
    if option is None:
        return replace(plan, past_note="no model of the target's limits")
    lifted = behind(seen, _today_limits(plan.resource))
    return replace(plan, past=replay(lifted, option).fit(), busiest=_busiest(lifted, option))


def _today_limits(resource: Changeable) -> Envelope | None:
    if isinstance(resource, Volume):
        return volume_envelope(resource)
    return db_storage_envelope(resource)


def _busiest(seen: Demand, option: Envelope) -> Busiest | None:
    counted = counted_iops(option, seen.iops, seen.bps)
    if not len(counted):
        return None
    at_iops, at_bps = int(np.argmax(counted)), int(np.argmax(seen.bps))
    step = timedelta(seconds=seen.period_s)
    return Busiest(
        float(counted[at_iops]),
        seen.start + step * at_iops,
        float(seen.bps[at_bps]),
        seen.start + step * at_bps,
        option.iops,
        option.throughput_bps,
        seen.days,
    )
