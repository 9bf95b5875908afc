"""An attempt to apply a fix, as the audit trail keeps it: who, which fix, from what to what,
and how it ended."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True, slots=True)
class Attempt:
    fix_id: str
    who: str
    """A Slack user id (`U0123`), or the user a terminal ran as."""
    via: str
    """`slack`, `cli`, or `policy` for a fix that applied itself."""
    at: datetime
    outcome: str
    """applied, already, dry_run, unconfirmed, refused, invalid, failed; `denied` for a
    click by someone who is not an approver."""
    reason: str = ""
    before: Mapping[str, Any] = field(default_factory=dict)
    target: Mapping[str, Any] = field(default_factory=dict)
    state: str | None = None
    """The modification's state as last read."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "before", MappingProxyType(dict(self.before)))
        object.__setattr__(self, "target", MappingProxyType(dict(self.target)))

    @property
    def applied(self) -> bool:
        return self.outcome == "applied"

    def as_dict(self) -> dict[str, Any]:
        return {
            "fix_id": self.fix_id,
            "who": self.who,
            "via": self.via,
            "at": self.at.isoformat(),
            "outcome": self.outcome,
            "reason": self.reason,
            "before": dict(self.before),
            "target": dict(self.target),
            "state": self.state,
        }
