"""How an Alertmanager behind authentication is reached: its URL without credentials (what
may be shown) and what it is sent, as Prometheus sends it (basic auth, or a bearer token,
each from the settings or a file read again for every request)."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

from pydantic import SecretStr

from analyzer import redaction

UNPRINTABLE = re.compile(r"[\s\x00-\x1f\x7f]")
"""What no URL holds, and what a badly pasted secret often does."""


def read_secret(path: Path, what: str) -> str:
    """A secret from a file (a mounted secret), trimmed; an error names the file, never what
    it holds."""
    try:
        value = path.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        raise OSError(f"{path}: the {what} file is not UTF-8 text") from None
    except OSError as exc:
        raise OSError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    redaction.secret(value)
    return value


WHAT = {"Basic": "Alertmanager password", "Bearer": "Alertmanager bearer token"}


@dataclass(frozen=True)
class Credentials:
    """What an Alertmanager behind authentication is sent, as Prometheus sends it: basic auth
    (a username and a password) or a bearer token. A secret in a file is read again for every
    request, so that a rotated secret is used without a restart."""

    scheme: Literal["Basic", "Bearer"]
    username: str = ""
    secret: SecretStr | None = None
    secret_file: Path | None = None

    def header(self) -> str:
        """The Authorization header; OSError when the file cannot be read."""
        value = (
            read_secret(self.secret_file, WHAT[self.scheme])
            if self.secret_file is not None
            else self.secret.get_secret_value()
            if self.secret is not None
            else ""
        )
        if self.scheme == "Bearer":
            return f"Bearer {value}"
        pair = base64.b64encode(f"{self.username}:{value}".encode()).decode()
        redaction.secret(pair)
        return f"Basic {pair}"


class AlertmanagerUrl(str):
    """An Alertmanager's URL, without credentials (what may be shown), and the credentials
    to send it, from the URL's user:password@ or from the settings."""

    credentials: Credentials | None = None

    def __new__(cls, url: str, credentials: Credentials | None = None) -> AlertmanagerUrl:
        made = super().__new__(cls, url)
        made.credentials = credentials
        return made


def _shown(url: str) -> str:
    """A URL fit for an error message: nothing before an @, no query."""
    return redaction.scrub(url.rpartition("@")[2].partition("?")[0])


def alertmanager_endpoint(url: str, credentials: Credentials | None = None) -> AlertmanagerUrl:
    """The URL with user:password@ taken out and sent as basic auth instead (urllib would
    take the userinfo for part of the host name); ValueError for what is no http(s) URL."""
    if isinstance(url, AlertmanagerUrl) and credentials is None:
        return url
    if UNPRINTABLE.search(url.strip()):
        raise ValueError(f"{_shown(url.strip())!r} holds a space or a control character")
    url = url.strip()
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"{_shown(url)!r} is not an http:// or https:// URL")
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError as exc:
        raise ValueError(f"{_shown(url)!r} is not a URL: {exc}") from None
    if not parts.hostname:
        raise ValueError(f"{_shown(url)!r} names no host")
    if "@" not in parts.netloc:
        return AlertmanagerUrl(url, credentials)
    if credentials is not None:
        raise ValueError(
            f"{_shown(url)!r}: credentials in the URL and in alertmanager_basic_auth or "
            "alertmanager_bearer_token: keep one"
        )
    password = unquote(parts.password or "")
    redaction.secret(parts.password)
    redaction.secret(password)
    basic = Credentials("Basic", unquote(parts.username or ""), SecretStr(password))
    bare = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
    return AlertmanagerUrl(bare, basic)
