"""structlog on stderr: a console renderer on a terminal, JSON lines elsewhere.

stdout stays free for reports. Every line is scrubbed of secrets as it is written, whatever
its level and wherever the secret hides in it (a value under a key that names a secret, an
error message, an exception, a nested value): one redaction here, rather than care at each
call site, so that a line added tomorrow cannot print a password. Lines of the libraries that
log through the standard library (APScheduler, botocore, slack_sdk) go through the same
renderer and the same redaction, from WARNING up: one format in the log, JSON where JSON is
asked for.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any
from urllib.parse import quote, urlsplit

import structlog

HANDLER = "ebs-analyzer"
"""The name of the handler that renders the standard library's records: replaced, not
added again, when logging is configured again."""
SECRET_KEYS = ("webhook", "token", "secret", "password", "authorization")
REDACTED = "[redacted]"
SECRET_ENV_WORDS = ("SECRET", "TOKEN", "PASSWORD", "PASSWD", "WEBHOOK", "CREDENTIAL", "API_KEY")
"""An environment variable whose name holds one of these holds a secret (AWS_SECRET_ACCESS_KEY,
AWS_SESSION_TOKEN, SLACK_WEBHOOK_URL), unless it names a file (…_FILE)."""
MIN_SECRET = 4
"""Shorter values are not redacted by value: every "a" in the log would go. The patterns
below still hide them where they sit in a URL."""
MIN_ENV_SECRET = 8
"""Environment values are guessed secrets by their name: shorter ones are more likely flags."""

_SEP = r"(?:/|%2F)"
PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # user:password@ in a URL, plain or percent-encoded.
    (re.compile(r"(?i)([a-z][a-z0-9+.-]*://)[^/\s@'\"<>]+@"), rf"\1{REDACTED}@"),
    (
        re.compile(r"(?i)([a-z][a-z0-9+.-]*%3A%2F%2F)(?:(?!%2F)[^/\s@'\"<>])+?%40"),
        rf"\1{REDACTED}%40",
    ),
    # A query parameter that names a secret: ?token=, &key=, sig=, X-Amz-Signature=, ...
    (
        re.compile(
            r"(?i)((?:[?&;]|%3F|%26)[\w.-]*(?:token|key|sig|secret|pass|pwd|auth|credential)"
            r"[\w.-]*(?:=|%3D))[^&\s#'\"<>]+"
        ),
        rf"\1{REDACTED}",
    ),
    # A Slack webhook, whole or only its path, plain or percent-encoded.
    # Its token may hold the space a bad paste left: up to a quote or the end of the line.
    (re.compile(rf"(?i)(hooks\.slack\.com){_SEP}[^'\"<>\r\n]*"), rf"\1/{REDACTED}"),
    (
        re.compile(rf"(?i)(services|workflows|triggers){_SEP}(?-i:T[A-Z0-9]+){_SEP}[^'\"<>\r\n]*"),
        rf"\1/{REDACTED}",
    ),
    # An Authorization header's credentials.
    (
        re.compile(
            r"\b([Bb]asic|[Bb]earer|BASIC|BEARER)(\s+|%20)(?=\S*[A-Z0-9+/=])[A-Za-z0-9+/=._~-]{8,}"
        ),
        rf"\1\2{REDACTED}",
    ),
)
"""Secrets known by their shape, whatever their value."""

_secrets: set[str] = set()


def _variants(value: str) -> set[str]:
    """The forms a secret takes in a line: as set, trimmed, percent-encoded, and, for a URL,
    its path and its last segment (an error may quote only those); the pieces of a value a
    stray space or control character split."""
    found = {value, value.strip(), quote(value.strip(), safe=""), quote(value.strip())}
    found |= {piece for piece in re.split(r"[\s\x00-\x1f\x7f]+", value) if piece}
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        parts = None
    if parts is not None and parts.scheme and parts.netloc:
        found |= {parts.path, parts.path.rstrip("/").rpartition("/")[2], quote(parts.path)}
        if parts.password:
            found.add(parts.password)
    return {v for v in found if len(v) >= MIN_SECRET}


def secret(value: str | None) -> None:
    """Redact this value (and the forms it takes) in every line from now on: a password read
    from a file, a webhook, a token."""
    if value:
        _secrets.update(_variants(value))


def secrets_from_environment(environ: Mapping[str, str] | None = None) -> None:
    """Values of variables that name a secret, such as AWS_SECRET_ACCESS_KEY: botocore or an
    error may echo them."""
    for name, value in (os.environ if environ is None else environ).items():
        upper = name.upper()
        if upper.endswith("_FILE") or not any(word in upper for word in SECRET_ENV_WORDS):
            continue
        if len(value.strip()) >= MIN_ENV_SECRET:
            secret(value)


def scrub(text: str) -> str:
    """The text without a secret: known values first (longest first, so that a whole URL
    goes before its path), then whatever has the shape of one."""
    for value in sorted(_secrets, key=len, reverse=True):
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replacement in PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, bool | int | float) or value is None:
        return value
    if isinstance(value, Mapping):
        return {key: _scrubbed(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_scrubbed(item) for item in value]
    # Anything else is rendered by its repr: keep the object unless that would show a secret.
    shown = repr(value)
    clean = scrub(shown)
    return value if clean == shown else clean


def redact(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """The last step before rendering: the exception is text by now, and so is a library's
    message."""
    for key in list(event):
        if any(word in key.lower() for word in SECRET_KEYS):
            event[key] = REDACTED
        else:
            event[key] = _scrubbed(event[key])
    return event


class _Stderr:
    """Whatever sys.stderr is when a line is written (it may be replaced after configure)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(level: str = "info", json_lines: bool | None = None) -> None:
    if json_lines is None:
        json_lines = not sys.stderr.isatty()
    secrets_from_environment()
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if json_lines
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    shared: list[Any] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    handler = logging.StreamHandler(_Stderr())
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                redact,
                renderer,
            ],
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
        )
    )
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "name", None) == HANDLER]:
        root.removeHandler(old)
    handler.set_name(HANDLER)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            *shared,
            structlog.processors.format_exc_info,
            redact,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(file=_Stderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
