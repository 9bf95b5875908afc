"""Findings become alerts keyed by (rule, resource): pending, firing, resolved.

- pending: the condition holds but not yet for the rule's `for`; nothing is sent.
- firing: sent once, then again only after the repeat interval, or when its severity changes.
- resolved: once the condition has been gone for `resolve_after` and at least two cycles, so
  that one missing datapoint does not resolve an alert; then a resolved message is sent.

What is owed to the channels sits in an outbox (an `outbox` mark on the alert) until it is
delivered: a failed delivery is tried again next cycle, never dropped. An alert that resolves
before its firing message got out is dropped quietly: nobody heard of it. The book is saved to
the state file after every cycle, so a restart neither re-sends nor forgets firing alerts.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

import structlog

from analyzer.deliver.report import finding_row
from analyzer.model.findings import Finding

STATE_VERSION = 1
MIN_ABSENT_CYCLES = 2
log = structlog.get_logger(__name__)


class Owed(StrEnum):
    """What the channels have yet to hear about an alert."""

    FIRING = "firing"
    REPEAT = "repeat"
    RESOLVED = "resolved"


@dataclass
class Alert:
    rule: str
    region: str
    resource_id: str
    resource_type: str
    severity: str
    state: str  # "pending", "firing" or "resolved"
    since: str
    """When the condition first held (ISO 8601)."""
    finding: dict[str, Any]
    """The latest finding as the report shows it: what the messages say."""
    firing_since: str | None = None
    absent_since: str | None = None
    absent_cycles: int = 0
    last_sent: str | None = None
    sent_severity: str | None = None
    outbox: str | None = None

    @property
    def key(self) -> str:
        return f"{self.rule}|{self.region}|{self.resource_id}"

    @property
    def notified(self) -> bool:
        return self.last_sent is not None


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _key(finding: Finding) -> str:
    rule, region, resource_id = finding.key
    return f"{rule}|{region}|{resource_id}"


@dataclass
class AlertBook:
    repeat_s: float
    resolve_after_s: float
    path: Path | None = None
    alerts: dict[str, Alert] = field(default_factory=dict)

    # --- the lifecycle --------------------------------------------------------------------

    def update(self, now: datetime, firing: Iterable[Finding], pending: Iterable[Finding]) -> None:
        firing_by_key = {_key(f): f for f in firing}
        pending_by_key = {_key(f): f for f in pending}
        for key, finding in firing_by_key.items():
            self._fire(key, finding, now)
        for key, finding in pending_by_key.items():
            if key not in self.alerts:
                self.alerts[key] = self._new(finding, now, "pending")
            elif self.alerts[key].state == "pending":
                self.alerts[key].finding = finding_row(finding)
        for key, alert in list(self.alerts.items()):
            if key in firing_by_key or key in pending_by_key:
                continue
            if alert.state == "pending":
                del self.alerts[key]
            elif alert.state == "firing":
                self._absent(alert, now)
        for alert in self.alerts.values():
            if self._repeat_due(alert, now):
                alert.outbox = Owed.REPEAT

    def _repeat_due(self, alert: Alert, now: datetime) -> bool:
        if alert.state != "firing" or alert.outbox is not None or alert.last_sent is None:
            return False
        return (now - _parse(alert.last_sent)).total_seconds() >= self.repeat_s

    def _new(self, finding: Finding, now: datetime, state: str) -> Alert:
        return Alert(
            rule=finding.rule,
            region=finding.resource.region,
            resource_id=finding.resource.resource_id,
            resource_type=finding.resource.resource_type.value,
            severity=finding.severity.value,
            state=state,
            since=_iso(now),
            finding=finding_row(finding),
        )

    def _fire(self, key: str, finding: Finding, now: datetime) -> None:
        alert = self.alerts.get(key)
        if alert is None or alert.state == "resolved":
            alert = self._new(finding, now, "pending")
            self.alerts[key] = alert
        alert.finding = finding_row(finding)
        alert.severity = finding.severity.value
        alert.absent_since, alert.absent_cycles = None, 0
        if alert.state == "pending":
            alert.state = "firing"
            alert.firing_since = _iso(now)
            alert.outbox = Owed.FIRING
            log.info(
                "alert.firing",
                rule=alert.rule,
                resource=alert.resource_id,
                severity=alert.severity,
                summary=finding.summary,
            )
        elif alert.notified and alert.sent_severity != alert.severity:
            alert.outbox = Owed.FIRING
            log.info(
                "alert.changed",
                rule=alert.rule,
                resource=alert.resource_id,
                severity=alert.severity,
            )

    def _absent(self, alert: Alert, now: datetime) -> None:
        if alert.absent_since is None:
            alert.absent_since = _iso(now)
        alert.absent_cycles += 1
        gone_for = (now - _parse(alert.absent_since)).total_seconds()
        if alert.absent_cycles < MIN_ABSENT_CYCLES or gone_for < self.resolve_after_s:
            return
        log.info("alert.resolved", rule=alert.rule, resource=alert.resource_id)
        if not alert.notified:
            del self.alerts[alert.key]
            return
        alert.state = "resolved"
        alert.outbox = Owed.RESOLVED

    # --- delivery -------------------------------------------------------------------------

    def owed(self) -> list[Alert]:
        return [a for a in self.alerts.values() if a.outbox is not None]

    def delivered(self, alerts: Iterable[Alert], now: datetime) -> None:
        for alert in alerts:
            if alert.outbox == Owed.RESOLVED:
                self.alerts.pop(alert.key, None)
                continue
            alert.last_sent = _iso(now)
            alert.sent_severity = alert.severity
            alert.outbox = None

    def firing(self) -> list[Alert]:
        return [a for a in self.alerts.values() if a.state == "firing"]

    def __iter__(self) -> Iterator[Alert]:
        return iter(self.alerts.values())

    # --- the state file -------------------------------------------------------------------

    def save(self) -> None:
        if self.path is None:
            return
        document = {"version": STATE_VERSION, "alerts": [asdict(a) for a in self.alerts.values()]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".state-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(document, out, indent=1, sort_keys=True)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def load(self) -> None:
        """Alerts from the state file. A file that cannot be read is set aside, not trusted."""
        if self.path is None or not self.path.exists():
            return
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
            if document.get("version") != STATE_VERSION:
                raise ValueError(f"version {document.get('version')!r}")
            alerts = [Alert(**raw) for raw in document["alerts"]]
        except (OSError, ValueError, TypeError, KeyError) as exc:
            aside = self.path.with_name(self.path.name + ".unreadable")
            self.path.replace(aside)
            log.error("state.unreadable", path=str(self.path), moved_to=str(aside), error=str(exc))
            return
        self.alerts = {a.key: a for a in alerts}
        log.info("state.loaded", path=str(self.path), alerts=len(alerts), firing=len(self.firing()))
