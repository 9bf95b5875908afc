"""The alert book on disk: the only place alerts become JSON, and JSON becomes alerts again.

The file is versioned. It is written whole to a temporary file and renamed, so a crash never
leaves half a file. A file that cannot be read (missing fields, another version, broken JSON)
is set aside beside itself as `….unreadable` with a log line, and the daemon starts with an
empty book: it never crashes on its own state, and never trusts what it cannot read.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analyzer.deliver.alerts import Alert, AlertState, Owed
from analyzer.deliver.rows import finding_row
from analyzer.model.findings import (
    Bottleneck,
    Change,
    Finding,
    NextBottleneck,
    Remedy,
    Severity,
)
from analyzer.model.resources import ResourceRef, ResourceType
from analyzer.model.units import Unit

STATE_VERSION = 1
"""Version 1: alerts with their finding in the JSON report's form (plus its window)."""

log = structlog.get_logger(__name__)


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Next(_Record):
    bottleneck: Bottleneck
    limit: float
    unit: Unit
    resource_id: str
    headroom: float | None = None


class _Change(_Record):
    resource_type: ResourceType
    resource_id: str
    from_: dict[str, Any] = Field(default_factory=dict, alias="from")
    to: dict[str, Any] = Field(default_factory=dict)


class _Remedy(_Record):
    action: str
    monthly_cost: float | None = None
    monthly_cost_delta: float | None = None
    currency: str = "USD"
    change: _Change | None = None
    changes: list[_Change] = Field(default_factory=list)
    """Every resource it changes, `change` first."""


class _Finding(_Record):
    rule: str
    severity: Severity
    resource_type: ResourceType
    resource_id: str
    region: str
    bottleneck: Bottleneck
    summary: str
    observed: float
    limit: float
    unit: Unit
    seconds_to_empty: float | None = None
    next_bottleneck: _Next | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    remedies: list[_Remedy] = Field(default_factory=list)
    window_seconds: float | None = None


class _Alert(_Record):
    state: AlertState
    since: datetime
    finding: _Finding
    firing_since: datetime | None = None
    absent_since: datetime | None = None
    absent_cycles: int = Field(default=0, ge=0)
    last_sent: datetime | None = None
    sent_severity: Severity | None = None
    outbox: Owed | None = None
    refill_seconds: float | None = Field(default=None, ge=0)
    refilled_percent: float | None = Field(default=None, ge=0, le=100)


class _StateFile(_Record):
    version: Literal[1]
    alerts: list[Any]
    """Each entry is validated on its own: one that is not an alert is set aside alone."""


def _finding_record(f: Finding) -> dict[str, Any]:
    return {**finding_row(f), "window_seconds": f.window_s}


def _finding(record: _Finding) -> Finding:
    nxt = record.next_bottleneck
    window = record.window_seconds
    if window is None:  # files written before findings kept their window
        window = float(record.evidence.get("window_seconds") or 0.0)
    return Finding(
        rule=record.rule,
        severity=record.severity,
        resource=ResourceRef(record.resource_type, record.resource_id, record.region),
        bottleneck=record.bottleneck,
        summary=record.summary,
        observed=record.observed,
        limit=record.limit,
        unit=record.unit,
        seconds_to_empty=record.seconds_to_empty,
        next_bottleneck=None
        if nxt is None
        else NextBottleneck(nxt.bottleneck, nxt.limit, nxt.unit, nxt.resource_id, nxt.headroom),
        evidence=record.evidence,
        remedies=tuple(
            Remedy(
                r.action,
                r.monthly_cost,
                r.monthly_cost_delta,
                r.currency,
                _change(r.change),
                tuple(c for c in map(_change, r.changes[1:]) if c is not None),
            )
            for r in record.remedies
        ),
        window_s=window,
    )


def _change(record: _Change | None) -> Change | None:
    if record is None:
        return None
    return Change(record.resource_type, record.resource_id, record.from_, record.to)


def _iso(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat() if moment is not None else None


def encode(alerts: list[Alert]) -> dict[str, Any]:
    return {
        "version": STATE_VERSION,
        "alerts": [
            {
                "rule": a.rule,
                "region": a.finding.resource.region,
                "resource_id": a.resource_id,
                "resource_type": a.resource_type.value,
                "severity": a.severity.value,
                "state": a.state.value,
                "since": _iso(a.since),
                "finding": _finding_record(a.finding),
                "firing_since": _iso(a.firing_since),
                "absent_since": _iso(a.absent_since),
                "absent_cycles": a.absent_cycles,
                "last_sent": _iso(a.last_sent),
                "sent_severity": a.sent_severity.value if a.sent_severity else None,
                "outbox": a.outbox.value if a.outbox else None,
                "refill_seconds": a.refill_s,
                "refilled_percent": a.refilled_percent,
            }
            for a in alerts
        ],
    }


def decode(document: Any) -> list[Alert]:
    """Alerts from a parsed state file; ValueError (naming the field) if it, or any of its
    entries, is not one."""
    alerts, rejected = read(document)
    if rejected:
        raise ValueError(rejected[0])
    return alerts


def read(document: Any) -> tuple[list[Alert], list[str]]:
    """The alerts of a parsed state file, and why each entry that is not an alert was left
    out (naming its field); ValueError if the document itself is not a state file."""
    try:
        parsed = _StateFile.model_validate(document)
    except ValidationError as exc:
        raise ValueError(_why(exc)) from None
    records: list[_Alert] = []
    rejected: list[str] = []
    for index, entry in enumerate(parsed.alerts):
        try:
            records.append(_Alert.model_validate(entry))
        except ValidationError as exc:
            rejected.append(_why(exc, f"alerts.{index}"))
    return _alerts(records), rejected


def _why(exc: ValidationError, prefix: str = "") -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in (*([prefix] if prefix else []), *first["loc"]))
    return f"{where or 'document'}: {first['msg']}"


def _alerts(records: list[_Alert]) -> list[Alert]:
    alerts = [
        Alert(
            finding=_finding(a.finding),
            state=a.state,
            since=a.since,
            firing_since=a.firing_since,
            absent_since=a.absent_since,
            absent_cycles=a.absent_cycles,
            last_sent=a.last_sent,
            sent_severity=a.sent_severity,
            outbox=a.outbox,
            refill_s=a.refill_seconds,
            refilled_percent=a.refilled_percent,
        )
        for a in records
    ]
    return alerts


def check_writable(path: Path) -> None:
    """Whether the state can be written where it is configured: OSError if not (a missing
    directory is created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".state-check-")
    os.close(handle)
    Path(temporary).unlink()


def save(alerts: list[Alert], path: Path) -> None:
    """Write the alerts atomically; OSError when the file cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".state-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(encode(alerts), out, indent=1, sort_keys=True)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load(path: Path) -> list[Alert]:
    """The alerts in the state file; none when there is no file, or when it cannot be read
    (then it is set aside, and a log line says where)."""
    if not path.exists():
        return []
    try:
        alerts, rejected = read(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:  # JSON and UTF-8 errors, bad shapes: ValueErrors
        _set_aside(path, str(exc))
        return []
    if rejected:
        _keep_copy(path, rejected)
    firing = sum(1 for a in alerts if a.state is AlertState.FIRING)
    log.info("state.loaded", path=str(path), alerts=len(alerts), firing=firing)
    return alerts


def _keep_copy(path: Path, rejected: list[str]) -> None:
    """Some entries are not alerts: the others are loaded, and the file as it was is copied
    aside so that nothing is lost (the next save rewrites it without them)."""
    aside = path.with_name(path.name + ".rejected")
    copied_to: str | None = str(aside)
    copy_error: str | None = None
    try:
        shutil.copyfile(path, aside)
    except OSError as exc:
        copied_to, copy_error = None, exc.strerror or str(exc)
    for why in rejected:
        log.error(
            "state.entry_skipped",
            path=str(path),
            error=why,
            copied_to=copied_to,
            copy_error=copy_error,
        )


def _set_aside(path: Path, error: str) -> None:
    aside = path.with_name(path.name + ".unreadable")
    try:
        path.replace(aside)
    except OSError as exc:
        log.error(
            "state.unreadable",
            path=str(path),
            error=error,
            moved_to=None,
            move_error=exc.strerror or str(exc),
        )
        return
    log.error("state.unreadable", path=str(path), moved_to=str(aside), error=error)
