"""Prices per month, from a YAML file users can replace for their region or their discounts.

EBS volumes always come from the file. Instance types, RDS classes and RDS storage may be
listed too: a figure in the file wins over the AWS Price List (a discount, a region without
access to it), and the demo ships one such snapshot.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from analyzer.yamlfile import read_model


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class IopsTier(_Strict):
    up_to: int | None
    per_iops: float = Field(ge=0)


class VolumePrice(_Strict):
    per_gib: float = Field(ge=0)
    per_iops: float = Field(default=0.0, ge=0)
    per_iops_above_3000: float = Field(default=0.0, ge=0)
    per_mibps_above_125: float = Field(default=0.0, ge=0)
    iops_tiers: tuple[IopsTier, ...] = ()

    def monthly(
        self, size_gib: int, iops: float | None = None, throughput_mibps: float | None = None
    ) -> float:
        total = self.per_gib * size_gib
        provisioned = iops or 0.0
        if self.iops_tiers:
            total += _tiered(provisioned, self.iops_tiers)
        total += self.per_iops * provisioned
        total += self.per_iops_above_3000 * max(provisioned - 3_000, 0.0)
        total += self.per_mibps_above_125 * max((throughput_mibps or 125.0) - 125.0, 0.0)
        return round(total, 2)


HOURS_PER_MONTH = 730.0
"""AWS's convention for a month of on-demand hours."""


class PriceList(_Strict):
    currency: str = "USD"
    region: str = ""
    source: str = ""
    """Where the figures come from, and when: what a snapshot says of itself."""
    cloudwatch_per_1000_metrics: float = Field(default=0.01, ge=0)
    volumes: dict[str, VolumePrice] = Field(default_factory=dict)
    instances: dict[str, float] = Field(default_factory=dict)
    """On-demand price an hour, by EC2 instance type."""
    db_classes: dict[str, dict[str, float]] = Field(default_factory=dict)
    """On-demand price an hour, Single-AZ, by RDS engine and then by DB instance class."""
    rds_storage: dict[str, VolumePrice] = Field(default_factory=dict)
    """RDS storage a month, Single-AZ, by storage type (Multi-AZ bills it twice)."""

    def over(self, base: PriceList) -> PriceList:
        """This list, with `base`'s sections where it leaves one out (or empty)."""
        sections = ("volumes", "instances", "db_classes", "rds_storage")
        return self.model_copy(update={k: getattr(self, k) or getattr(base, k) for k in sections})

    def monthly(
        self,
        volume_type: str,
        size_gib: int,
        iops: float | None = None,
        throughput_mibps: float | None = None,
    ) -> float | None:
        """The monthly price of a volume as configured; None for a type without a price."""
        price = self.volumes.get(volume_type)
        return price.monthly(size_gib, iops, throughput_mibps) if price is not None else None


def _tiered(iops: float, tiers: tuple[IopsTier, ...]) -> float:
    total, floor = 0.0, 0.0
    for tier in tiers:
        ceiling = float("inf") if tier.up_to is None else float(tier.up_to)
        if iops > floor:
            total += (min(iops, ceiling) - floor) * tier.per_iops
        floor = ceiling
    return total


SHIPPED = Path(str(files("analyzer") / "data" / "prices.yaml"))
DEMO = Path(str(files("analyzer") / "data" / "demo-prices.yaml"))
"""A snapshot of the on-demand prices of the types and classes the demo shows."""


def load(path: Path | None = None) -> PriceList:
    """The price file at `path` over the shipped us-east-1 EBS prices: a section the file
    leaves out keeps the shipped one."""
    shipped = read_model(SHIPPED, PriceList)
    return read_model(path, PriceList).over(shipped) if path is not None else shipped
