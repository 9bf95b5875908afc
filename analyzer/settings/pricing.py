"""Where the proposed fixes' prices come from: a price file, and the AWS Price List."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict


class Pricing(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    prices: Path | None = None
    """A price file for the proposed fixes (default: the shipped us-east-1 prices)."""
    pricing_api: bool = True
    """Ask the AWS Price List for instance, RDS class and RDS storage prices the price file
    does not list; off, those options are priced by the file alone, or unpriced."""
