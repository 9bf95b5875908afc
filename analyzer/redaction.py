"""Secrets out of every line written: one redaction, applied where logs are written.

Known secret values (registered with `secret`, and environment variables whose names say they
hold one) are replaced wherever they hide in a line, in the forms they usually take there
(trimmed, percent-encoded, a path, a path's last segment); anything shaped like a credential
(`user:password@`, `?token=`, a Slack webhook path, an Authorization header) is replaced too.
A low module of its own: settings and the channels register secrets here, and the log's
renderer scrubs with it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, MutableMapping
from typing import Any
from urllib.parse import quote, urlsplit

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
