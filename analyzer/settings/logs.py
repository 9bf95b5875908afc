"""How the daemon's log lines are written."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class Logs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    log_format: Literal["auto", "json", "console"] = "auto"
    """auto: console on a terminal, JSON lines elsewhere."""
