"""EBS prices per month, from a YAML file users can replace for their region."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analyzer.errors import ConfigError
from analyzer.yamlfile import read_yaml


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


class PriceList(_Strict):
    currency: str = "USD"
    region: str = ""
    cloudwatch_per_1000_metrics: float = Field(default=0.01, ge=0)
    volumes: dict[str, VolumePrice]

    def monthly(
        self,
        volume_type: str,
        size_gib: int,
        iops: float | None = None,
        throughput_mibps: float | None = None,
    ) -> float | None:
        """The monthly price of a volume as configured; None for a type without a price."""
        price = self.volumes.get(volume_type)
        if price is None:
            return None
        total = price.per_gib * size_gib
        provisioned = iops or 0.0
        if price.iops_tiers:
            total += _tiered(provisioned, price.iops_tiers)
        total += price.per_iops * provisioned
        total += price.per_iops_above_3000 * max(provisioned - 3_000, 0.0)
        total += price.per_mibps_above_125 * max((throughput_mibps or 125.0) - 125.0, 0.0)
        return round(total, 2)


def _tiered(iops: float, tiers: tuple[IopsTier, ...]) -> float:
    total, floor = 0.0, 0.0
    for tier in tiers:
        ceiling = float("inf") if tier.up_to is None else float(tier.up_to)
        if iops > floor:
            total += (min(iops, ceiling) - floor) * tier.per_iops
        floor = ceiling
    return total


def load(path: Path | None = None) -> PriceList:
    """The price file at `path`, or the shipped us-east-1 prices."""
    source = path or Path(str(files("analyzer") / "data" / "prices.yaml"))
    document = read_yaml(source)
    try:
        return PriceList.model_validate(document)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc'])}: "
            f"{'unknown key' if e['type'] == 'extra_forbidden' else e['msg']}"
            for e in exc.errors()
        ]
        raise ConfigError(f"{source}: {'; '.join(problems)}") from None
