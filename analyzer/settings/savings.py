"""What the fleet pays for and never uses: how much headroom a cut keeps, when an
unattached volume is worth a word, and whether the daemon says the savings in Slack weekly."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from analyzer.settings.values import Seconds


def _switched(value: Any) -> Any:
    """YAML reads a bare `off` as false (and `on` as true): the word it was written as."""
    if value is False:
        return "off"
    if value is True:
        return "weekly"
    return value


Digest = Annotated[
    Literal["weekly", "off"],
    BeforeValidator(_switched),
    Field(json_schema_extra={"enum": ["weekly", "off", False], "type": ["string", "boolean"]}),
]


class Savings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    savings_headroom: float = Field(default=1.2, gt=1.0, le=10.0)
    """A cut carries each limit's peak over its past times this (and never less than keeps
    the cap rules from warning at that peak)."""
    unattached_after: Seconds = Field(default=7 * 86400.0, ge=3600.0)
    """A volume attached to no instance, with no I/O for this long, is reported with its
    monthly cost and the commands that keep a snapshot of it and delete it."""
    savings_digest: Digest = "weekly"
    """Where a Slack webhook is set, the daemon posts the fleet's savings once a week (the
    first once its volumes' long pasts are read): the total, and the largest, each with its
    fix_id. Savings never page. A bare `off` in YAML (read as false) is `off`."""
