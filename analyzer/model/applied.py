"""An attempt to apply a fix, as the audit trail keeps it: who, which fix, from what to what,
and how it ended."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

OFFERS_KEPT = 8
"""The fixes an alert remembers offering on Apply buttons: a fix that changed from one
message to the next leaves the earlier button clickable in the channel."""
ACTED = frozenset({"applied", "failed", "unknown"})
"""Outcomes where AWS was asked to change something (or may have been): the audit trail's
core, never evicted by refusals and denials."""


@dataclass(frozen=True, slots=True)
class Attempt:
    fix_id: str
    who: str
    """A Slack user id (`U0123`), or the user a terminal ran as."""
    via: str
    """`slack`, `cli`, or `policy` for a fix that applied itself."""
    at: datetime
    outcome: str
    """applied, already, dry_run, unconfirmed, refused, invalid, failed; `unknown` where AWS's
    answer was lost and the resource could not be read back; `denied` for a click by someone
    who is not an approver."""
    reason: str = ""
    before: Mapping[str, Any] = field(default_factory=dict)
    target: Mapping[str, Any] = field(default_factory=dict)
    state: str | None = None
    """The modification's state as last read."""
    started: datetime | None = None
    """When the modification started, as AWS reports it (a volume's `StartTime`): what AWS's
    four modifications in 24 hours count. None where AWS did not say."""
    settled: bool = True
    """False from the moment AWS accepted the change until its read-back ended: a record
    still unsettled after a restart is a modification whose end this daemon never saw."""
    count: int = 1
    """The same denial repeated by the same user: counted on one record, not each kept."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "before", MappingProxyType(dict(self.before)))
        object.__setattr__(self, "target", MappingProxyType(dict(self.target)))

    @property
    def applied(self) -> bool:
        return self.outcome == "applied"

    @property
    def acted(self) -> bool:
        """AWS was asked to change the resource, or may have been."""
        return self.outcome in ACTED

    @property
    def resource_id(self) -> str:
        return self.fix_id.partition(":")[0].strip()

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
            "started": self.started.isoformat() if self.started is not None else None,
            "settled": self.settled,
            "count": self.count,
        }
