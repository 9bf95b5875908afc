"""What the fleet pays for and never uses: how much headroom a cut keeps, when an
unattached volume is worth a word, and whether the daemon says the savings in Slack weekly."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from analyzer.settings.values import Seconds


class Savings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    savings_headroom: float = Field(default=1.2, gt=1.0, le=10.0)
    """A cut carries each limit's peak over its past times this (and never less than keeps
    the cap rules from warning at that peak)."""
    unattached_after: Seconds = Field(default=7 * 86400.0, ge=3600.0)
    """A volume attached to no instance, with no I/O for this long, is reported with its
    monthly cost and the commands that keep a snapshot of it and delete it."""
    savings_digest: Literal["weekly", "off"] = "weekly"
    """Where a Slack webhook is set, the daemon posts the fleet's savings once a week (the
    first once its volumes' long pasts are read): the total, and the largest, each with its
    fix_id. Savings never page."""
