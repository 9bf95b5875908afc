"""The alert book on disk: the only place alerts become JSON, and JSON becomes alerts again.

The file is versioned. It is written whole to a temporary file, flushed to disk and renamed,
and the folder is flushed after the rename, so neither a crash nor a power cut leaves half a
file. A state file that is a symbolic link (to a persistent volume, say) is written through to
its target: the temporary file goes beside the target, where the rename is atomic.

Everything read back is validated as strictly as it is written: timezone-aware times only, and
the evidence the alert book reads typed as it reads it. A file that cannot be read (missing
fields, another version, broken JSON, nested too deep, too large) is set aside beside itself
as `….unreadable` with a log line, and the daemon starts with an empty book: it never crashes
on its own state, and never trusts what it cannot read.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import structlog
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
)

from analyzer.analyze.alerts import Alert, AlertState, Owed
from analyzer.deliver.records import FindingRecord, finding_stored
from analyzer.model.applied import OFFERS_KEPT, Attempt
from analyzer.model.findings import Finding, Severity
from analyzer.yamlfile import dotted, explain

STATE_VERSION = 1
"""Version 1: alerts with their finding in the JSON report's form (plus its window), the time
before which the receiver asked not to be sent anything (`not_before`), and the attempts to
apply fixes (`applied`); the last two optional: older daemons pass over them."""
MAX_BYTES = 64 * 1024 * 1024
"""A state file larger than this is set aside unread: a book of alerts takes kilobytes, and
parsing a runaway file would hold the start for minutes or run the pod out of memory."""

log = structlog.get_logger(__name__)


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Alert(_Record):
    """Times must say their timezone: a naive one loads, then cannot be compared with the
    clock, and every cycle fails."""

    state: AlertState
    since: AwareDatetime
    finding: FindingRecord
    firing_since: AwareDatetime | None = None
    absent_since: AwareDatetime | None = None
    absent_cycles: int = Field(default=0, ge=0)
    last_sent: AwareDatetime | None = None
    sent_severity: Severity | None = None
    outbox: Owed | None = None
    refill_seconds: float | None = Field(default=None, ge=0)
    refilled_percent: float | None = Field(default=None, ge=0, le=100)
    attached_to: str | None = Field(default=None, max_length=64)
    """A volume's instance when its alert began: a move during a restart still ends it."""
    ended: str | None = Field(default=None, max_length=500)
    """What the inventory said ended it, for a resolution still owed."""
    offered: list[Annotated[str, Field(max_length=300)]] = Field(
        default_factory=list, max_length=OFFERS_KEPT
    )
    """The fixes its messages offered on an Apply button: a restart still applies a click on
    one of them, and only those."""


class _Attempt(_Record):
    fix_id: str = Field(max_length=300)
    who: str = Field(max_length=200)
    via: str = Field(max_length=20)
    at: AwareDatetime
    outcome: str = Field(max_length=20)
    reason: str = Field(default="", max_length=2000)
    before: dict[str, Any] = Field(default_factory=dict)
    target: dict[str, Any] = Field(default_factory=dict)
    state: str | None = Field(default=None, max_length=64)
    """A volume's modification state, or an RDS instance's status (`storage-initialization`,
    `storage-config-upgrade`, …): AWS's own words, never longer than this."""
    started: AwareDatetime | None = None
    settled: bool = True
    count: int = Field(default=1, ge=1)

    def attempt(self) -> Attempt:
        return Attempt(**self.model_dump())


def _fitted(attempt: Attempt) -> dict[str, Any]:
    """An attempt as the file keeps it: each text cut to what reading it back allows, so that
    every record written is one the next start reads (a long reason or an AWS state loses its
    tail, never the record)."""
    record = attempt.as_dict()
    for name, info in _Attempt.model_fields.items():
        longest = next((m.max_length for m in info.metadata if hasattr(m, "max_length")), None)
        value = record.get(name)
        if longest is not None and isinstance(value, str) and len(value) > longest:
            record[name] = value[: longest - 1] + "…"
    return record


class _StateFile(_Record):
    version: Literal[1]
    alerts: list[Any]
    """Each entry is validated on its own: one that is not an alert is set aside alone."""
    not_before: Any = None
    """Validated on its own too: a deadline that cannot be read is no reason to lose alerts."""
    applied: list[Any] = Field(default_factory=list)
    """The attempts to apply fixes (`apply`'s audit trail), each validated on its own; absent
    from files written before fixes were applied."""
    slack_seen: Any = None
    """The Slack signatures seen within the replay window (`deliver/seen.py`), read by
    `Seen.from_records`, which skips what it cannot read: never a reason to lose alerts."""
    savings_digest_at: Any = None
    """When the weekly savings digest was last posted; validated on its own."""


_DEADLINE: TypeAdapter[AwareDatetime | None] = TypeAdapter(AwareDatetime | None)


@dataclass
class State:
    """What the state file keeps: the alerts, and the time before which the receiver asked
    not to be sent anything (Retry-After), so that a restart does not hammer it."""

    alerts: list[Alert] = field(default_factory=list)
    not_before: datetime | None = None
    applied: list[Attempt] = field(default_factory=list)
    """The attempts to apply fixes, newest last."""
    slack_seen: Any = None
    """The Slack signatures seen lately, as written (`Seen.records`)."""
    savings_digest_at: datetime | None = None


def _iso(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat() if moment is not None else None


def encode(
    alerts: list[Alert],
    not_before: datetime | None = None,
    applied: Iterable[Attempt] = (),
    slack_seen: Iterable[dict[str, Any]] = (),
    savings_digest_at: datetime | None = None,
) -> dict[str, Any]:
    return {
        "version": STATE_VERSION,
        "not_before": _iso(not_before),
        "savings_digest_at": _iso(savings_digest_at),
        "applied": [_fitted(a) for a in applied],
        "slack_seen": list(slack_seen),
        "alerts": [
            {
                "rule": a.rule,
                "region": a.finding.resource.region,
                "account_id": a.finding.resource.account_id or None,
                "resource_id": a.resource_id,
                "resource_type": a.resource_type.value,
                "severity": a.severity.value,
                "state": a.state.value,
                "since": _iso(a.since),
                "finding": finding_stored(a.finding),
                "firing_since": _iso(a.firing_since),
                "absent_since": _iso(a.absent_since),
                "absent_cycles": a.absent_cycles,
                "last_sent": _iso(a.last_sent),
                "sent_severity": a.sent_severity.value if a.sent_severity else None,
                "outbox": a.outbox.value if a.outbox else None,
                "refill_seconds": a.refill_s,
                "refilled_percent": a.refilled_percent,
                "attached_to": a.attached_to,
                "ended": a.ended,
                "offered": list(a.offered),
            }
            for a in alerts
        ],
    }


def decode(document: Any) -> list[Alert]:
    """Alerts from a parsed state file; ValueError (naming the field) if it, or any of its
    entries, is not one."""
    state, rejected = read_state(document)
    if rejected:
        raise ValueError(rejected[0])
    return state.alerts


def read(document: Any) -> tuple[list[Alert], list[str]]:
    """The alerts of a parsed state file, and why each entry that is not an alert was left
    out (naming its field); ValueError if the document itself is not a state file."""
    state, rejected = read_state(document)
    return state.alerts, rejected


def read_state(document: Any) -> tuple[State, list[str]]:
    """What a parsed state file keeps, and why each part that could not be read was left out
    (naming its field); ValueError if the document itself is not a state file."""
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
    not_before: datetime | None = None
    try:
        not_before = _DEADLINE.validate_python(parsed.not_before)
    except ValidationError as exc:
        rejected.append(_why(exc, "not_before"))
    applied: list[Attempt] = []
    for index, entry in enumerate(parsed.applied):
        try:
            applied.append(_Attempt.model_validate(entry).attempt())
        except ValidationError as exc:
            rejected.append(_why(exc, f"applied.{index}"))
    digest_at: datetime | None = None
    try:
        digest_at = _DEADLINE.validate_python(parsed.savings_digest_at)
    except ValidationError as exc:
        rejected.append(_why(exc, "savings_digest_at"))
    kept = (parsed.slack_seen, digest_at)
    return State(_alerts(records), not_before, applied, *kept), rejected


def _why(exc: ValidationError, prefix: str = "") -> str:
    """The first problem, placed in the whole document (`alerts.3.since`, or `document`)."""
    return explain(
        exc, lambda loc: dotted((prefix, *loc) if prefix else loc) or "document", first=True
    )


def _judged(record: _Alert) -> Finding:
    """The alert's finding; one kept by a daemon that did not yet say which limits it was
    judged under was judged under those in force when the alert began (a modification
    before then is no news to it, one after ends it)."""
    finding = record.finding.finding()
    if "limits_since" in record.finding.model_fields_set:
        return finding
    return replace(finding, limits_since=record.since)


def _alerts(records: list[_Alert]) -> list[Alert]:
    alerts = [
        Alert(
            finding=_judged(a),
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
            attached_to=a.attached_to,
            ended=a.ended,
            offered=tuple(a.offered),
        )
        for a in records
    ]
    return alerts


def target(path: Path) -> Path:
    """Where the state is written: the file itself, or the file a symbolic link leads to
    (followed at every save, so a link moved later is followed too). Replacing the link with a
    regular file would leave its target, on a persistent volume say, never updated again.
    OSError for a loop of links."""
    if not path.is_symlink():
        return path
    try:
        return path.resolve()
    except RuntimeError:  # Python before 3.13 says a loop so
        raise OSError(errno.ELOOP, "Too many levels of symbolic links", str(path)) from None


def check_writable(path: Path) -> None:
    """Whether the state can be written where it is configured: OSError if not (a missing
    directory is created)."""
    folder = target(path).parent
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".state-check-")
    os.close(handle)
    Path(temporary).unlink()


def save(
    alerts: list[Alert],
    path: Path,
    not_before: datetime | None = None,
    applied: Iterable[Attempt] = (),
    slack_seen: Iterable[dict[str, Any]] = (),
    savings_digest_at: datetime | None = None,
) -> None:
    """Write the alerts (and the receiver's deadline) atomically and durably: the data is on
    disk before the rename, and the rename is on disk before this returns. OSError when the
    file cannot be written."""
    document = encode(alerts, not_before, applied, slack_seen, savings_digest_at)
    _write(target(path), json.dumps(document, indent=1, sort_keys=True))


LONG_PASTS = ".long-pasts"
"""The suffix of the file beside the state file that keeps the volumes' long pasts."""


def long_pasts_path(path: Path) -> Path:
    """Where the volumes' long pasts are kept (`live/long_pasts.py`): beside the state file
    (its target, where it is a link), in a file of their own. Thousands of volumes' figures
    change a few volumes a cycle; the alerts are written every cycle and after every message
    sent, and would write them all again each time."""
    state = target(path)
    return state.with_name(state.name + LONG_PASTS)


def save_long_pasts(path: Path, text: str) -> None:
    """Write the long pasts, already JSON, beside the state file at `path`, atomically and
    durably; OSError when it cannot be written."""
    _write(long_pasts_path(path), text)


def load_long_pasts(path: Path) -> Any:
    """The long pasts kept beside the state file at `path`, parsed; None where there are none,
    or where they cannot be read (then the file is set aside, and a log line says where: the
    volumes' pasts are read again, a stretch a day)."""
    where = long_pasts_path(path)
    if not where.exists():
        return None
    try:
        return _parse(where)
    except (OSError, ValueError, RecursionError) as exc:
        _set_aside(where, _message(exc))
        return None


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".state-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Flush a rename in `folder` to disk; a filesystem that cannot sync a folder is left
    to its own guarantees."""
    handle = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(handle)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(handle)


def load(path: Path) -> list[Alert]:
    """The alerts in the state file; none when there is no file, or when it cannot be read
    (then it is set aside, and a log line says where)."""
    return load_state(path).alerts


def load_state(path: Path) -> State:
    """What the state file keeps; nothing when there is no file, or when it cannot be read
    (then it is set aside, and a log line says where). A symbolic link is read through."""
    path = target(path)
    if not path.exists():
        return State()
    try:
        state, rejected = read_state(_parse(path))
    # JSON and UTF-8 errors, bad shapes: ValueErrors; brackets nested past the interpreter's
    # depth: RecursionError.
    except (OSError, ValueError, RecursionError) as exc:
        _set_aside(path, _message(exc))
        return State()
    if rejected:
        _keep_copy(path, rejected)
    firing = sum(1 for a in state.alerts if a.state is AlertState.FIRING)
    log.info(
        "state.loaded",
        path=str(path),
        alerts=len(state.alerts),
        firing=firing,
        not_before=_iso(state.not_before),
    )
    return state


def _parse(path: Path) -> Any:
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise ValueError(f"{size} bytes, more than the {MAX_BYTES} a state file may have")
    return json.loads(path.read_text(encoding="utf-8"))


def _message(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deep to read"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def set_aside(path: Path, error: str) -> None:
    """Move a state file that made cycles fail out of the way, as an unreadable one is: the
    next cycle starts from an empty book, and the file is kept to look at."""
    path = target(path)
    if path.exists():
        _set_aside(path, error)


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
