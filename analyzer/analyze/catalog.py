"""What else can be bought where a resource runs, and at what price.

The price file speaks first (its figures are the user's: discounts, a region without access to
the Price List); AWS's offers fill in the rest. A price nobody knows is None, and a fix
without one says "unpriced", never a guess (DOMAIN.md).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from analyzer.analyze.prices import HOURS_PER_MONTH, PriceList
from analyzer.model.resources import InstanceType


class Offers(Protocol):
    """AWS's own lists, per region: every lookup may answer nothing."""

    def instance_types(self, region: str) -> Sequence[InstanceType]:
        """Every instance type the region offers on demand; empty where unknown."""
        ...

    def db_classes(self, engine: str, region: str) -> Collection[str] | None:
        """The DB instance classes RDS offers for `engine`; None where unknown."""
        ...

    def instance_hourly(self, instance_type: str, region: str) -> float | None: ...

    def db_class_hourly(
        self, instance_class: str, engine: str, region: str, multi_az: bool
    ) -> float | None: ...

    def db_storage_per_gib(
        self, storage_type: str, engine: str, region: str, multi_az: bool
    ) -> float | None:
        """RDS storage a GiB-month."""
        ...


class NoOffers:
    """Nothing known beyond the price file."""

    def instance_types(self, region: str) -> Sequence[InstanceType]:
        return ()

    def db_classes(self, engine: str, region: str) -> Collection[str] | None:
        return None

    def instance_hourly(self, instance_type: str, region: str) -> float | None:
        return None

    def db_class_hourly(
        self, instance_class: str, engine: str, region: str, multi_az: bool
    ) -> float | None:
        return None

    def db_storage_per_gib(
        self, storage_type: str, engine: str, region: str, multi_az: bool
    ) -> float | None:
        return None


NO_OFFERS = NoOffers()


def _monthly(hourly: float | None) -> float | None:
    return round(hourly * HOURS_PER_MONTH, 2) if hourly is not None else None


@dataclass(frozen=True, slots=True)
class Catalog:
    prices: PriceList
    offers: Offers = NO_OFFERS

    @property
    def currency(self) -> str:
        return self.prices.currency

    def instance_types(self, region: str) -> Sequence[InstanceType]:
        return self.offers.instance_types(region)

    def db_classes(self, engine: str, region: str) -> Collection[str] | None:
        return self.offers.db_classes(engine, region)

    def instance_monthly(self, instance_type: str, region: str) -> float | None:
        listed = self.prices.instances.get(instance_type)
        if listed is not None:
            return _monthly(listed)
        return _monthly(self.offers.instance_hourly(instance_type, region))

    def db_monthly(
        self, instance_class: str, engine: str, region: str, multi_az: bool
    ) -> float | None:
        """The class's on-demand month; Multi-AZ runs (and bills) a standby too."""
        listed = self.prices.db_classes.get(engine, {}).get(instance_class)
        if listed is not None:
            return _monthly(listed * (2 if multi_az else 1))
        return _monthly(self.offers.db_class_hourly(instance_class, engine, region, multi_az))

    def db_storage_monthly(
        self,
        storage_type: str,
        engine: str,
        region: str,
        multi_az: bool,
        size_gib: int,
        extra_iops: float = 0.0,
        extra_mibps: float = 0.0,
    ) -> float | None:
        """RDS storage a month. `extra_iops`, `extra_mibps`: what is provisioned beyond what
        the storage includes, priced only where the price file lists it."""
        copies = 2 if multi_az else 1
        listed = self.prices.rds_storage.get(storage_type)
        if listed is not None:
            total = (
                listed.per_gib * size_gib
                + (listed.per_iops or listed.per_iops_above_3000) * extra_iops
                + listed.per_mibps_above_125 * extra_mibps
            )
            return round(total * copies, 2)
        if extra_iops or extra_mibps:
            return None  # the Price List's IOPS and throughput lines are not read here
        per_gib = self.offers.db_storage_per_gib(storage_type, engine, region, multi_az)
        return round(per_gib * size_gib, 2) if per_gib is not None else None
