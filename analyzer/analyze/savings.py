"""Pure: what a volume pays for and never uses, proven on the longest past CloudWatch keeps.

A volume's past is read as the peaks of each stretch at the finest period CloudWatch still
holds for it (`collect/peaks.py`): each period's busiest raw datapoint, as a rate a second.
The need for each limit is the peak over the window times the headroom, and never less than
what keeps the analyzer's own cap rules from warning at the peak (`min_headroom`). The
cheapest configuration AWS sells at or above the need is the target; it is offered only where
the past, replayed period by period through its limits (`held.replay`, the code that proves
the fixes), would have limited nothing, and where it costs less than the volume does today.

Where the volume's own limits held its past back (`held.behind`: a rate at 95 % of a limit in
force, or a bucket the data shows empty), what was asked then is unknown: the rate before the
hold began stands for it, a floor, and the finding says so. A volume at its cap in its busiest
minute is therefore never offered less than that cap.

Kinds (SPEC.md, Savings): `gp2_to_gp3`; `iops_above_need`, `throughput_above_need` (gp3,
io1, io2); `io2_to_gp3`, for io1 too (the one kind SPEC.md names for the family; never
applied automatically: it gives up io2's durability and io's steadier latency);
`unattached` (its monthly cost, the snapshot-then-delete commands, no fix).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from analyzer.analyze.advice import kubernetes
from analyzer.analyze.advice.proof import option_limits
from analyzer.analyze.held import behind, counted_iops, replay
from analyzer.analyze.prices import PriceList
from analyzer.analyze.sold import described
from analyzer.model import limits, rds_storage
from analyzer.model.demand import Demand, LongPast
from analyzer.model.findings import Change
from analyzer.model.kubernetes import Claim
from analyzer.model.limits import Envelope, volume_envelope
from analyzer.model.rds_storage import db_storage_envelope
from analyzer.model.resources import DbInstance, InstanceType, ResourceType, Volume
from analyzer.model.units import MIB

DEFAULT_HEADROOM = 1.2
LEAST_DAYS = 14.0
"""A window shorter than this offers nothing: a fortnight holds a workload's weekly cycle
twice, the least AWS Compute Optimizer reads too."""
IO_LEAST_IOPS = 100
"""The fewest IOPS io1 and io2 provision (Amazon EBS User Guide, "Provisioned IOPS SSD
volumes")."""
DURABILITY = {"io2": "99.999 %", "io1": "99.8–99.9 %", "gp3": "99.8–99.9 %"}
"""Annual durability by type (Amazon EBS User Guide, "Amazon EBS volume types")."""


@dataclass(frozen=True, slots=True)
class Peak:
    """A limit's peak over the window: the rate a second of the busiest raw datapoint, when,
    and at what period CloudWatch still held it."""

    value: float
    at: datetime
    period_s: int
    floor: bool = False
    """Held back then by the volume's own limits: what was asked is at least this."""

    def as_dict(self, limit: float | None) -> dict[str, Any]:
        return {
            "value": round(self.value, 1),
            "at": self.at.isoformat(),
            "period_s": self.period_s,
            "floor": self.floor,
            "target_limit": round(limit, 1) if limit is not None else None,
        }


@dataclass(frozen=True, slots=True)
class Saving:
    """One volume's cut: today's configuration, the target, what it saves a month, and the
    peaks that sized it."""

    resource_type: ResourceType
    resource_id: str
    kind: str
    today: Mapping[str, Any]
    target: Mapping[str, Any] | None
    fix_id: str | None
    monthly_today: float
    monthly_saving: float
    window_days: float
    period_s: int | None
    peaks: Mapping[str, Peak]
    target_limits: Mapping[str, float]
    headroom: float
    gives_up: str | None = None
    commands: tuple[str, ...] = ()
    alternative: Saving | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    """Where it is (account, region, claim): what a person finds it by."""
    kubernetes: Mapping[str, Any] | None = None
    """A claim's volume: the cut made through its claim (the VolumeAttributesClass, the
    kubectl command, the driver's annotations), as a fix's `change.to.kubernetes` is."""

    @property
    def today_text(self) -> str:
        """`io2 500 GiB, 20,000 IOPS`: today's configuration as an operator reads it."""
        return described(self.today, self.resource_type)

    @property
    def target_text(self) -> str:
        return described(self.target, self.resource_type) if self.target is not None else ""


def need(peak: float, headroom: float, min_headroom: float) -> float:
    """What a limit must carry for a peak: the headroom's share above it, and never less than
    keeps the cap rules quiet at that peak."""
    return peak * max(headroom, min_headroom)


def lifted(past: LongPast, today: Envelope | None) -> LongPast:
    """The past with the demand behind each hold of the volume's own limits lifted to the
    rate before it, marked a floor (`held.behind`): what `peaks`, `holds` and `_bumped` read."""
    if today is None:
        return past
    return replace(past, stretches=tuple(behind(s, today) for s in past.stretches))


def peaks(past: LongPast) -> dict[str, Peak]:
    """The IOPS and throughput peaks over every stretch of a `lifted` past."""
    found: dict[str, Peak] = {}
    for stretch in past.stretches:
        for name, rates in (("iops", stretch.iops), ("throughput", stretch.bps)):
            if not len(rates):
                continue
            index = int(np.argmax(rates))
            value = float(rates[index])
            kept = found.get(name)
            if kept is None or value > kept.value:
                at = stretch.start.timestamp() + index * stretch.period_s
                found[name] = Peak(
                    value,
                    datetime.fromtimestamp(at, stretch.start.tzinfo),
                    stretch.period_s,
                    bool(stretch.floor[index]),
                )
    return found


def holds(past: LongPast, option: Envelope, scale: float) -> bool:
    """Whether `option` would have limited no period of a `lifted` past, its demand times
    `scale`."""
    for lifted in past.stretches:
        scaled = Demand(
            lifted.start, lifted.period_s, lifted.iops * scale, lifted.bps * scale, lifted.floor
        )
        if not replay(scaled, option).held:
            return False
    return True


def _ceil(value: float) -> int:
    return math.ceil(value - 1e-9)


def _gp3(size: int, iops_need: float, mibps_need: float) -> dict[str, Any] | None:
    """The cheapest gp3 at `size` that provisions the need; None where gp3 sells none."""
    iops = max(limits.GP3_INCLUDED_IOPS, _ceil(iops_need))
    mibps = max(limits.GP3_INCLUDED_MIBPS, _ceil(mibps_need))
    # Throughput is sold up to a quarter MiB/s an IOPS: more throughput needs more IOPS.
    iops = max(iops, _ceil(mibps / limits.GP3_MIBPS_PER_IOPS))
    if iops > min(limits.GP3_MAX_IOPS, limits.GP3_IOPS_PER_GIB * size) and iops > 3_000:
        return None
    if mibps > limits.GP3_MAX_MIBPS:
        return None
    return {"volume_type": "gp3", "size_gib": size, "iops": iops, "throughput_mibps": mibps}


def _provisioned_io(kind: str, size: int, iops_need: float) -> dict[str, Any] | None:
    """io1 or io2 at `size` provisioned at the IOPS need (the throughput its IOPS bring is
    checked by the replay, and the IOPS raised where it falls short: `_bumped`)."""
    iops = max(IO_LEAST_IOPS, _ceil(iops_need))
    if iops > _io_ceiling(kind, size):
        return None
    return {"volume_type": kind, "size_gib": size, "iops": iops}


def _io_ceiling(kind: str, size: int) -> int:
    most, per_gib = (
        (limits.IO2_MAX_IOPS, limits.IO2_IOPS_PER_GIB)
        if kind == "io2"
        else (limits.IO1_MAX_IOPS, limits.IO1_IOPS_PER_GIB)
    )
    return int(min(most, per_gib * size))


def _monthly(prices: PriceList, config: Mapping[str, Any]) -> float | None:
    return prices.monthly(
        str(config["volume_type"]),
        int(config["size_gib"]),
        config.get("iops"),
        config.get("throughput_mibps"),
    )


def _today(volume: Volume) -> dict[str, Any]:
    config: dict[str, Any] = {"volume_type": volume.volume_type, "size_gib": volume.size_gib}
    if volume.volume_type in ("gp3", "io1", "io2") and volume.iops:
        config["iops"] = volume.iops
    if volume.volume_type == "gp3":
        config["throughput_mibps"] = volume.throughput_mibps or limits.GP3_INCLUDED_MIBPS
    return config


def fix_id(volume_id: str, today: Mapping[str, Any], target: Mapping[str, Any]) -> str:
    """The target in `--what-if` / `apply` syntax, naming only what changes."""
    keys = {"volume_type": "type", "iops": "iops", "throughput_mibps": "throughput"}
    parts = [
        f"{short}={target[name]}"
        for name, short in keys.items()
        if name in target and target[name] != today.get(name)
    ]
    return f"{volume_id}:{','.join(parts)}"


def unattached(
    volume: Volume, past: LongPast | None, prices: PriceList, after_s: float, now: datetime
) -> Saving | None:
    """A volume attached to no instance, without I/O for longer than `after_s` (since its
    last datapoint, or since it was created where it has none): its monthly cost, and the
    commands that keep a snapshot of it and delete it. Never applied."""
    if volume.state != "available":
        return None
    since = past.last_active if past is not None else None
    if since is None:
        since = volume.created
    if since is None:
        return None  # neither I/O nor a creation time: how long it has sat is not known
    idle_s = (now - since).total_seconds()
    if idle_s < after_s:
        return None
    config = _today(volume)
    cost = _monthly(prices, config)
    if cost is None:
        return None
    rid = volume.volume_id
    return Saving(
        ResourceType.VOLUME,
        rid,
        "unattached",
        config,
        None,
        None,
        cost,
        cost,
        idle_s / 86_400,
        None,
        {},
        {},
        0.0,
        commands=(
            f"aws ec2 create-snapshot --volume-id {rid} --region {volume.region} "
            f'--description "before deleting {rid}"',
            f"aws ec2 wait snapshot-completed --filters Name=volume-id,Values={rid} "
            f"--region {volume.region}",
            f"aws ec2 delete-volume --volume-id {rid} --region {volume.region}",
        ),
    )


def cut(
    volume: Volume,
    instance_type: InstanceType | None,
    past: LongPast,
    prices: PriceList,
    headroom: float = DEFAULT_HEADROOM,
    min_headroom: float = 1.0,
) -> Saving | None:
    """The cheapest configuration AWS sells that would have carried every period of the
    volume's past with `headroom`, where it costs less than today; None otherwise (a window
    shorter than `LEAST_DAYS`, a type without a cut, a past that needs what it has)."""
    return weigh(volume, summarized(volume, instance_type, past), prices, headroom, min_headroom)


def summarized(volume: Volume, instance_type: InstanceType | None, past: LongPast) -> LongPast:
    """What of a past a cut is weighed on: the part in force (`_in_force`), lifted where the
    volume's own limits held it (`lifted`), and of each stretch only its busiest periods, by
    IOPS and by throughput, each a stretch of one period. Exact for every target a cut
    offers: gp3, io1 and io2 have no bucket, so a period is held back where its IOPS as
    counted (the larger of its operations and its bytes over the I/O unit) or its throughput
    is above a limit, and the busiest periods by IOPS and by throughput decide it for all
    (`weigh` refuses a target with a bucket). What the daemon keeps of a volume's past
    between reads, a few figures a stretch (`live/long_pasts.py`)."""
    past = _in_force(past, volume, instance_type)
    past = lifted(past, volume_envelope(volume, instance_type))
    return replace(past, stretches=tuple(b for s in past.stretches for b in busiest(s)))


def busiest(stretch: Demand) -> tuple[Demand, ...]:
    """The stretch's busiest period by IOPS and by throughput (the first where several tie),
    each a stretch of its own; one where they are the same, none where it has no period."""
    if not len(stretch.iops):
        return ()
    picked = sorted({int(np.argmax(stretch.iops)), int(np.argmax(stretch.bps))})
    return tuple(
        Demand(
            stretch.start + timedelta(seconds=i * stretch.period_s),
            stretch.period_s,
            stretch.iops[i : i + 1].copy(),
            stretch.bps[i : i + 1].copy(),
            stretch.floor[i : i + 1].copy(),
        )
        for i in picked
    )


def weigh(
    volume: Volume,
    summary: LongPast,
    prices: PriceList,
    headroom: float = DEFAULT_HEADROOM,
    min_headroom: float = 1.0,
) -> Saving | None:
    """`cut` on a `summarized` past."""
    if volume.state != "in-use" or summary.days < LEAST_DAYS or not summary.stretches:
        return None
    today_config = _today(volume)
    today_cost = _monthly(prices, today_config)
    if today_cost is None:
        return None
    found = peaks(summary)
    if "iops" not in found:
        return None
    scale = max(headroom, min_headroom)
    iops_need = need(found["iops"].value, headroom, min_headroom)
    mibps_need = need(found["throughput"].value, headroom, min_headroom) / MIB
    kind = volume.volume_type
    options: list[tuple[str, dict[str, Any] | None]] = []
    if kind == "gp2":
        options.append(("gp2_to_gp3", _gp3(volume.size_gib, iops_need, mibps_need)))
    elif kind == "gp3":
        options.append(("above_need", _gp3(volume.size_gib, iops_need, mibps_need)))
    elif kind in ("io1", "io2"):
        options.append(("above_need", _provisioned_io(kind, volume.size_gib, iops_need)))
        options.append(("io2_to_gp3", _gp3(volume.size_gib, iops_need, mibps_need)))
    offered: list[Saving] = []
    for name, config in options:
        if config is None:
            continue
        saving = _priced(
            volume, today_config, today_cost, config, name, summary, found, scale, prices
        )
        if saving is not None:
            offered.append(saving)
    if not offered:
        return None
    # The in-family cut first, the change of type beside it: never the other way round.
    first, *rest = offered
    return replace(first, alternative=rest[0]) if rest else first


Priced = Callable[[Mapping[str, Any]], float | None]
"""An RDS instance's storage configuration → its monthly cost (None: not priced)."""
BUMPS = 8
"""How many times a target is raised to what its own limits count before it is given up."""


def cut_db(
    db: DbInstance,
    past: LongPast,
    price: Priced,
    headroom: float = DEFAULT_HEADROOM,
    min_headroom: float = 1.0,
) -> Saving | None:
    """An RDS instance's storage provisioned above its need (io1 and io2; gp3 where RDS lets
    performance be provisioned above what it includes): the same type and size at what its
    past's peaks need, within what RDS provisions at that size (`rds_storage`), replayed
    through RDS's storage model and raised where its own limits count more; where it costs
    less. None otherwise. The type is kept: a change of storage type on RDS copies the data."""
    return weigh_db(db, summarized_db(db, past), price, headroom, min_headroom)


def summarized_db(db: DbInstance, past: LongPast) -> LongPast:
    """What of an RDS instance's past its cut is weighed on, as `summarized` for a volume:
    lifted where its storage's limits held it, each stretch's busiest periods."""
    lifted_past = lifted(past, db_storage_envelope(db))
    return replace(
        lifted_past, stretches=tuple(b for s in lifted_past.stretches for b in busiest(s))
    )


def weigh_db(
    db: DbInstance,
    summary: LongPast,
    price: Priced,
    headroom: float = DEFAULT_HEADROOM,
    min_headroom: float = 1.0,
) -> Saving | None:
    """`cut_db` on a `summarized_db` past."""
    today = _db_today(db)
    if today is None or not db.active or db.cluster is not None or db.additional_volumes:
        return None  # stopped; the cluster's storage; I/O counted with other volumes
    today_cost = price(today)
    if today_cost is None or summary.days < LEAST_DAYS or not summary.stretches:
        return None
    found = peaks(summary)
    if "iops" not in found:
        return None
    scale = max(headroom, min_headroom)
    iops_need = need(found["iops"].value, headroom, min_headroom)
    bps_need = need(found["throughput"].value, headroom, min_headroom)
    for _ in range(BUMPS):
        target = _db_target(db, today, iops_need, bps_need / MIB)
        if target is None or all(
            target[k] >= today[k] for k in ("iops", "throughput_mibps") if k in today
        ):
            return None
        change = Change(ResourceType.DB_INSTANCE, db.db_instance_id, today, target)
        option = option_limits(change, db)
        if option is None or option.bursts:
            return None
        if holds(summary, option, scale):
            break
        counted, bps = _counted(option, summary, scale)
        more = counted
        if db.storage_type != "gp3":
            more = _io_iops(counted, bps, option, float(target["iops"]))
        if _ceil(more) <= int(target["iops"]) and bps <= option.throughput_bps:
            return None
        iops_need, bps_need = max(iops_need, more), max(bps_need, bps)
    else:
        return None
    cost = price(target)
    if cost is None or cost >= today_cost - 0.005:
        return None
    kind = "iops_above_need"
    if "throughput_mibps" in today:
        kind = _above_need(today_cost, cost, price({**today, "iops": target["iops"]}))
    return Saving(
        ResourceType.DB_INSTANCE,
        db.db_instance_id,
        kind,
        today,
        target,
        fix_id(db.db_instance_id, today, target),
        today_cost,
        round(today_cost - cost, 2),
        summary.days,
        max((p.period_s for p in found.values()), default=None),
        dict(found),
        {"iops": option.iops, "throughput": option.throughput_bps},
        scale,
    )


def _db_today(db: DbInstance) -> dict[str, Any] | None:
    """An RDS instance's storage by the fields a fix sets, where performance is provisioned on
    it: io1 and io2, and gp3 where RDS lets performance be provisioned above what it includes
    (the striped sizes, and SQL Server); None otherwise."""
    base: dict[str, Any] = {"storage_type": db.storage_type, "allocated_gib": db.allocated_gib}
    if db.storage_type in ("io1", "io2") and db.iops:
        return {**base, "iops": db.iops}
    if db.storage_type == "gp3" and rds_storage.gp3_provisioned(db):
        iops, mibps = rds_storage.gp3_included(db)
        return {
            **base,
            "iops": max(db.iops or 0, iops),
            "throughput_mibps": max(db.throughput_mibps or 0, mibps),
        }
    return None


def _db_target(
    db: DbInstance, today: Mapping[str, Any], iops_need: float, mibps_need: float
) -> dict[str, Any] | None:
    """The least RDS provisions on this storage at the need; None where it provisions no
    such thing."""
    if db.storage_type in ("io1", "io2"):
        low, high = rds_storage.provisioned_range(db)
        iops = max(low, _ceil(iops_need))
        return {**today, "iops": iops} if iops <= high else None
    included_iops, included_mibps = rds_storage.gp3_included(db)
    most = rds_storage.gp3_ceiling(db)
    mibps = max(included_mibps, _ceil(mibps_need))
    iops = max(included_iops, _ceil(iops_need), _ceil(mibps / limits.GP3_MIBPS_PER_IOPS))
    if iops > most.iops or mibps > most.throughput_mibps:
        return None
    return {**today, "iops": iops, "throughput_mibps": mibps}


def last_modified(volume: Volume) -> datetime | None:
    """The start of the volume's latest modification that did not fail: the past its limits
    today are in force over begins there."""
    return max((m.started for m in volume.modifications if m.state != "failed"), default=None)


def _in_force(past: LongPast, volume: Volume, instance_type: InstanceType | None) -> LongPast:
    """The past the volume's limits today were in force over: from its last modification on
    (before it, a rate held at the old limits says nothing of what the new ones carry, and
    the limits it was held by are not all known: AWS reports a volume's latest modification
    only), and only the minute stretch off Nitro, where AWS gives no `Maximum` of a volume's
    operations and bytes (EBS User Guide, "Amazon CloudWatch metrics for Amazon EBS")."""
    stretches = past.stretches
    if instance_type is not None and instance_type.nitro is False:
        stretches = tuple(s for s in stretches if s.period_s <= 60)
    since = last_modified(volume)
    if since is not None:
        stretches = tuple(t for s in stretches if (t := _from(s, since)) is not None)
    if stretches == past.stretches:
        return past
    first = min((s.start for s in stretches), default=None)
    return replace(past, stretches=stretches, first_seen=first)


def _from(stretch: Demand, since: datetime) -> Demand | None:
    """The periods of `stretch` that begin at `since` or after; None where none does."""
    skip = max(math.ceil((since - stretch.start).total_seconds() / stretch.period_s), 0)
    if skip >= len(stretch.iops):
        return None
    if skip == 0:
        return stretch
    return Demand(
        stretch.start + timedelta(seconds=skip * stretch.period_s),
        stretch.period_s,
        stretch.iops[skip:],
        stretch.bps[skip:],
        stretch.floor[skip:],
    )


def _priced(
    volume: Volume,
    today: Mapping[str, Any],
    today_cost: float,
    target: dict[str, Any],
    name: str,
    past: LongPast,
    found: Mapping[str, Peak],
    scale: float,
    prices: PriceList,
) -> Saving | None:
    cost = _monthly(prices, target)
    if cost is None or cost >= today_cost - 0.005:
        return None
    change = Change(ResourceType.VOLUME, volume.volume_id, today, target)
    option = option_limits(change, volume)
    if option is None or option.bursts:
        return None  # a summary holds each stretch's busiest periods: no bucket's course
    # The cheapest that carries the need by its limits may still count large I/O as several
    # (its I/O unit), or bring too little throughput with its IOPS: the past replayed through
    # it decides, and the target is raised to what it counts.
    while not holds(past, option, scale):
        bumped = _bumped(target, option, past, scale)
        cost = _monthly(prices, bumped) if bumped is not None else None
        if bumped is None or cost is None or cost >= today_cost - 0.005:
            return None
        target = bumped
        option = option_limits(Change(ResourceType.VOLUME, volume.volume_id, today, target), volume)
        if option is None or option.bursts:
            return None
    kind = name
    if name == "above_need":
        kind = _above_need(
            today_cost, cost, _monthly(prices, {**today, "iops": target.get("iops")})
        )
    gives_up = None
    if name == "io2_to_gp3":
        was = str(today["volume_type"])
        durability = (
            f"{was}'s durability ({DURABILITY[was]} a year against gp3's {DURABILITY['gp3']}) and "
            if DURABILITY[was] != DURABILITY["gp3"]
            else ""
        )
        gives_up = f"{durability}{was}'s steadier latency; never applied automatically"
    return Saving(
        ResourceType.VOLUME,
        volume.volume_id,
        kind,
        dict(today),
        target,
        fix_id(volume.volume_id, today, target),
        today_cost,
        round(today_cost - cost, 2),
        past.days,
        max((p.period_s for p in found.values()), default=None),
        dict(found),
        {"iops": option.iops, "throughput": option.throughput_bps},
        scale,
        gives_up,
    )


def _bumped(
    target: dict[str, Any], option: Envelope, past: LongPast, scale: float
) -> dict[str, Any] | None:
    """The target raised to carry what its own limits count of the past's busiest period (an
    I/O above the unit counts as several; io1 and io2 bring throughput with their IOPS);
    None where nothing would change or AWS sells no more."""
    iops_need, bps_need = _counted(option, past, scale)
    raised = dict(target)
    kind = str(target["volume_type"])
    if kind == "gp3":
        bigger = _gp3(
            int(target["size_gib"]),
            max(iops_need, float(target["iops"])),
            max(bps_need / MIB, float(target["throughput_mibps"])),
        )
        if bigger is None:
            return None
        raised = bigger
    else:
        more = _io_iops(iops_need, bps_need, option, float(target["iops"]))
        raised["iops"] = max(int(target["iops"]), _ceil(more))
        if raised["iops"] > _io_ceiling(kind, int(target["size_gib"])):
            return None
    return raised if raised != target else None


def _counted(option: Envelope, past: LongPast, scale: float) -> tuple[float, float]:
    """What `option`'s limits count of the past's busiest period, its demand times `scale`:
    the IOPS (an I/O above the unit counts as several) and the bytes a second."""
    iops_need = bps_need = 0.0
    for stretch in past.stretches:
        found = counted_iops(option, stretch.iops * scale, stretch.bps * scale)
        if len(found):
            iops_need = max(iops_need, float(found.max()))
            bps_need = max(bps_need, float(stretch.bps.max()) * scale)
    return iops_need, bps_need


def _io_iops(iops_need: float, bps_need: float, option: Envelope, iops: float) -> float:
    """The IOPS io1 or io2 needs: `iops_need`, and enough that the throughput its IOPS bring
    (`option`'s at `iops`) carries `bps_need`."""
    if bps_need > option.throughput_bps > 0:
        return max(iops_need, iops * bps_need / option.throughput_bps)
    return iops_need


def _above_need(today_cost: float, cost: float, iops_only: float | None) -> str:
    """A cut of IOPS and throughput named after the larger part of its saving: the IOPS alone
    cut (`iops_only`, what that costs), or the throughput."""
    by_iops = today_cost - iops_only if iops_only is not None else 0.0
    return "iops_above_need" if by_iops >= (today_cost - cost) / 2 else "throughput_above_need"


def through_claim(saving: Saving, claim: Claim) -> Saving:
    """The cut as the claim's owner makes it: a VolumeAttributesClass with the target's
    attributes, named on the claim; a claim the in-tree plugin made has none, and its cut is
    EC2's alone (said in `kubernetes.unheard`). The alternative likewise."""
    alternative = saving.alternative
    if alternative is not None:
        alternative = through_claim(alternative, claim)
    if saving.target is None:
        return replace(saving, alternative=alternative)
    program: dict[str, Any] = {"namespace": claim.namespace, "persistentvolumeclaim": claim.name}
    if not claim.csi:
        program["unheard"] = kubernetes.UNHEARD.format(claim=claim.text())
    else:
        step, command, more = kubernetes.attributes_step(claim, saving.target)
        program |= more | {"commands": [command], "step": step}
    return replace(saving, kubernetes=program, alternative=alternative)
