"""How often the daemon reads, and how much: its cycles, the inventory's refreshes, and each
resource's tier (hot, active, idle) with its cadence, within a budget."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.settings.values import Seconds


class Polling(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    interval: Seconds = Field(default=60.0, ge=1, le=86400.0)
    """Seconds between analysis cycles."""
    inventory_interval: Seconds = Field(default=600.0, ge=1, le=86400.0)
    """Seconds between inventory refreshes (Describe* calls)."""
    overlap: Seconds = Field(default=300.0, ge=0, le=3600.0)
    """After the first backfill, each cycle fetches what is new plus this much again, for
    datapoints that arrive late."""
    polling: Literal["adaptive", "full"] = "adaptive"
    """adaptive: each resource on the cadence and with the metrics of its tier (hot, active,
    idle); full: every metric of every resource every interval."""
    active_cadence: Seconds = Field(default=300.0, ge=60, le=3600.0)
    """Between polls of an active resource: I/O that matters, far from every limit."""
    idle_cadence: Seconds = Field(default=900.0, ge=60, le=3600.0)
    """The longest between polls of an idle resource (quiet, not draining, its bucket full):
    the window the cap rules read. Shorter where a bucket the resource drains could fall to
    20 % sooner: 0.4 of that time."""
    hot_utilization: float = Field(default=0.7, gt=0, le=1)
    """A rate at this share of a limit in force makes a resource hot."""
    quiet_utilization: float = Field(default=0.3, gt=0, le=1)
    """Below this share of every limit (and not draining) a resource may be idle."""
    hot_empty_within: Seconds = Field(default=3 * 3600.0, gt=0, le=86400.0)
    """A bucket that will be empty within this makes its resource hot."""
    low_balance_percent: float = Field(default=50.0, ge=0, le=100)
    """A bucket below this makes its resource hot (refilling, it would empty fast)."""
    budget: float | None = Field(default=None, gt=0)
    """The monthly GetMetricData budget in dollars: the active and idle cadences stretch (the
    hot one never) so that the projected bill stays under it."""

    @model_validator(mode="after")
    def _tiers_in_order(self) -> Polling:
        if self.active_cadence > self.idle_cadence:
            raise ValueError(
                f"active_cadence ({self.active_cadence:g} s) must not be longer than "
                f"idle_cadence ({self.idle_cadence:g} s)"
            )
        if self.quiet_utilization >= self.hot_utilization:
            raise ValueError(
                f"quiet_utilization ({self.quiet_utilization:g}) must be below "
                f"hot_utilization ({self.hot_utilization:g})"
            )
        return self
