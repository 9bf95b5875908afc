"""How alerts live and what is sent of them: their state across restarts, when they are sent
again and resolve, the least severity notified, and a dry run."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from analyzer.model.findings import Severity
from analyzer.settings.values import Seconds


class Alerts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    state_file: Path | None = None
    """Where alert state is kept across restarts (none: alerts start afresh)."""
    dry_run: bool = False
    """Log notifications instead of sending them."""
    repeat_interval: Seconds = Field(default=4 * 3600.0, ge=60)
    """An unchanged firing alert is sent again after this long."""
    notify_severity: Severity = Severity.WARNING
    """The least severity sent to Slack (or the log in a dry run): an `info` alert (a burst
    the resource's own record or past days say will end with credits left) is still on
    /metrics, in reports and posted to Alertmanager, and is sent once it escalates."""
    resolve_after: Seconds = Field(default=300.0, ge=0, le=86400.0)
    """A firing alert resolves once its condition has been gone this long (and two cycles)."""
