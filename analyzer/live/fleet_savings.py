"""What the fleet pays for and never uses: each volume's longest past read as peaks
(`collect/peaks.py`) and weighed for a cut (`analyze/savings.py`), scope by scope.

A volume whose read failed is said and left out: a cut is offered only on a past read whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import structlog

from analyzer.analyze import prices, savings
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.kinds.caps import IopsCap, ThroughputCap
from analyzer.analyze.prices import PriceList
from analyzer.analyze.rules import RuleSet
from analyzer.analyze.savings import Saving
from analyzer.collect import peaks
from analyzer.collect.boundaries import MetricData
from analyzer.errors import AnalyzerError
from analyzer.live.cycle import Analyzer
from analyzer.model import rds_storage
from analyzer.model.demand import LongPast
from analyzer.model.kubernetes import own_name
from analyzer.model.resources import DbInstance, InstanceType, Inventory, ResourceType, Volume
from analyzer.model.state import FetchStats
from analyzer.settings import Settings

log = structlog.get_logger(__name__)


def min_headroom(ruleset: RuleSet) -> float:
    """The least headroom that keeps the cap rules quiet at a peak: above the reciprocal of
    the lowest utilization a volume's cap rule warns at (0.95 shipped: 5.3 % above)."""
    levels = [
        rule.utilization
        for rule in ruleset.rules
        if isinstance(rule, IopsCap | ThroughputCap) and ResourceType.VOLUME in rule.resource_types
    ]
    return 1.0 / min(levels) + 0.001 if levels else 1.0


@dataclass
class Found:
    """The savings of a fleet, what reading them cost, and the volumes whose past could not
    be read."""

    savings: list[Saving] = field(default_factory=list)
    stats: FetchStats = field(default_factory=FetchStats)
    unread: list[str] = field(default_factory=list)
    volumes: int = 0
    reasons: list[str] = field(default_factory=list)
    """Why reads failed, as AWS said it, the first first."""
    currency: str = "USD"
    """The price list's, which the savings are in."""
    unpriced: list[str] = field(default_factory=list)
    """RDS instances with provisioned IOPS whose storage the prices do not cover: the price
    file's `rds_storage` gives RDS's IOPS prices; the Price List lookup reads storage by the
    GB only."""

    @property
    def why(self) -> str:
        """The first reason a read failed."""
        return (self.reasons or self.stats.errors or ["unknown"])[0]


def find(analyzer: Analyzer, now: datetime) -> Found:
    """Every volume of every scope weighed, and every RDS instance's provisioned IOPS, sorted by
    saving, most first."""
    settings = analyzer.settings
    price_list = analyzer.price_list or prices.load(settings.prices)
    floor = min_headroom(analyzer.rules)
    found = Found(currency=price_list.currency)
    inventories = analyzer.refresh_inventory()
    for where, inventory in inventories.items():
        region = analyzer.scopes.at(where)
        for volume, instance_type in volumes(inventory):
            past = _read(region.metrics, volume, volume.volume_id, settings, now, found)
            if past is None:
                continue
            summary = savings.summarized(volume, instance_type, past)
            one = offered(volume, summary, settings, price_list, floor, now)
            if one is not None:
                found.savings.append(one)
        catalog = Catalog(price_list, analyzer.offers)
        for db in inventory.db_instances:
            _weigh_db(db, region.metrics, settings, catalog, floor, now, found)
    found.savings.sort(key=lambda s: (-s.monthly_saving, s.resource_id))
    return found


def _read(
    metrics: MetricData,
    resource: Volume | DbInstance,
    rid: str,
    settings: Settings,
    now: datetime,
    found: Found,
) -> LongPast | None:
    """A resource's longest past, counted in `found`; None where the read failed, which
    `found` names with AWS's reason."""
    found.volumes += 1
    try:
        past = peaks.read(metrics, resource, now, settings.settle_delay, found.stats)
    except AnalyzerError as exc:
        log.info("savings.unread", resource_id=rid, error=str(exc))
        found.reasons.append(str(exc))
        past = None
    if past is None:
        found.unread.append(rid)
    return past


def _weigh_db(
    db: DbInstance,
    metrics: MetricData,
    settings: Settings,
    catalog: Catalog,
    floor: float,
    now: datetime,
    found: Found,
) -> None:
    """An RDS instance's provisioned performance weighed on its storage's longest past, where
    it has some a cut could lower (`provisioned`) and it is priced: one unpriced is named, and
    not read."""
    if not provisioned(db):
        return
    price = db_price(db, catalog)
    if not priced(db, price):
        found.unpriced.append(db.db_instance_id)
        return
    past = _read(metrics, db, db.db_instance_id, settings, now, found)
    if past is None:
        return
    one = savings.cut_db(db, past, price, settings.savings_headroom, floor)
    if one is not None:
        found.savings.append(replace(one, labels=db_labels(db)))


def provisioned(db: DbInstance) -> bool:
    """Whether an RDS instance's storage has performance provisioned that a cut of the
    instance could lower: io1 and io2, and gp3 where RDS provisions it above what it
    includes. Not a stopped instance (AWS/RDS publishes nothing while stopped), not a member
    of a Multi-AZ DB cluster (its storage is the cluster's), not one with additional storage
    volumes (AWS/RDS counts their I/O with the primary's, so no cut of one is proven)."""
    if not db.active or db.cluster is not None or db.additional_volumes:
        return False
    if db.storage_type in ("io1", "io2"):
        return bool(db.iops)
    return db.storage_type == "gp3" and rds_storage.gp3_provisioned(db)


def priced(db: DbInstance, price: savings.Priced) -> bool:
    """Whether the price list prices what the storage provisions: more IOPS cost more. RDS
    bills IOPS by the month, which the Price List lookup does not read, and a price entry
    without an IOPS price would make them free."""
    base: dict[str, Any] = {"storage_type": db.storage_type, "allocated_gib": db.allocated_gib}
    low = price({**base, "iops": 100_000.0, "throughput_mibps": 4_000.0})
    high = price({**base, "iops": 200_000.0, "throughput_mibps": 4_000.0})
    return low is not None and high is not None and high > low


def db_price(db: DbInstance, catalog: Catalog) -> savings.Priced:
    """An RDS instance's storage configuration → its monthly cost, Multi-AZ twice: every IOPS
    of io1 and io2 is provisioned beyond what the storage includes, and gp3's beyond what it
    includes at the size (`rds_storage.gp3_included`)."""

    def price(config: Mapping[str, Any]) -> float | None:
        kind, size = str(config["storage_type"]), int(config["allocated_gib"])
        iops, mibps = float(config.get("iops") or 0), float(config.get("throughput_mibps") or 0)
        if kind == "gp3":
            included_iops, included_mibps = rds_storage.gp3_included(
                replace(db, allocated_gib=size)
            )
            iops, mibps = max(iops - included_iops, 0.0), max(mibps - included_mibps, 0.0)
        return catalog.db_storage_monthly(
            kind, db.engine, db.region, db.multi_az, size, extra_iops=iops, extra_mibps=mibps
        )

    return price


def db_labels(db: DbInstance) -> dict[str, str]:
    """Where an RDS instance is, as a person finds it: region, account."""
    labels = {"region": db.region}
    if db.account_id:
        labels["account_id"] = db.account_id
    if db.account_name:
        labels["account_name"] = db.account_name
    return labels


def offered(
    volume: Volume,
    summary: LongPast,
    settings: Settings,
    price_list: PriceList,
    floor: float,
    now: datetime,
) -> Saving | None:
    """What one volume offers on its `summarized` past: a cut where it is attached, its cost
    where it has sat unattached longer than `unattached_after`; through its claim where it
    has one, and labelled with where it is."""
    if volume.state == "available":
        one = savings.unattached(volume, summary, price_list, settings.unattached_after, now)
    else:
        one = savings.weigh(volume, summary, price_list, settings.savings_headroom, floor)
    if one is None:
        return None
    if volume.claim is not None:
        one = savings.through_claim(one, volume.claim)
    return replace(one, labels=labels(volume))


def volumes(inventory: Inventory) -> Iterator[tuple[Volume, InstanceType | None]]:
    """Each volume, with the type of the instance it is attached to (None: attached to none,
    or the type unknown)."""
    types = {i.instance_id: i.type_info for i in inventory.instances}
    for volume in inventory.volumes:
        yield volume, types.get(volume.attached_to or "")


def labels(volume: Volume) -> dict[str, str]:
    """Where a volume is, as a person finds it: its Name (where it says more than its claim),
    region, account, claim."""
    labels = {"region": volume.region}
    name = own_name(volume.tags.get("Name"), volume.claim)
    if name:
        labels["name"] = name
    if volume.account_id:
        labels["account_id"] = volume.account_id
    if volume.account_name:
        labels["account_name"] = volume.account_name
    if volume.claim is not None:
        labels["claim"] = volume.claim.ref
    return labels
