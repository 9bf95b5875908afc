"""What the HTTP server answers: /metrics for Prometheus, /healthz, /livez and /readyz for
the orchestrator, and /slack/actions where Slack approvals are set up. The connections they
come on, and the limits on them, are `server`'s."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import structlog
from prometheus_client import CONTENT_TYPE_LATEST

from analyzer.deliver.deflated import Deflated

Readiness = Callable[[], tuple[bool, str]]
Actions = Callable[[Mapping[str, str], bytes], tuple[int, str]]
"""`POST /slack/actions`: the request's headers and body → the status and body to answer."""
Exposition = Callable[[], Deflated]
"""The /metrics text: Prometheus's text format."""
StartResponse = Callable[..., Any]

log = structlog.get_logger(__name__)

ALLOWED_METHODS = ("GET", "HEAD")
"""Every endpoint only reads: any other method is answered 405, on every path but one."""
ACTIONS_PATH = "/slack/actions"
"""The one that takes a POST, where Slack approvals are set up: Slack's interactive requests."""
MAX_ACTION_BYTES = 64 * 1024
STATUS_TEXT = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    408: "Request Timeout",
    411: "Length Required",
    413: "Content Too Large",
}
LATE = "the request did not come in time\n"


def _text(
    start_response: StartResponse,
    status: str,
    body: str,
    headers: Iterable[tuple[str, str]] = (),
) -> Iterable[bytes]:
    data = body.encode()
    start_response(
        status,
        [
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Content-Length", str(len(data))),
            *headers,
        ],
    )
    return [data]


def gzip_accepted(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding header takes gzip (RFC 9110, section 12.5.3): named, or
    `*`, and not with a weight of zero."""
    weights: dict[str, float] = {}
    for item in accept_encoding.split(","):
        coding, _, params = item.partition(";")
        weight = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        weights[coding.strip().lower()] = weight
    return weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0))) > 0


def _action(
    actions: Actions, environ: dict[str, Any], start_response: StartResponse
) -> Iterable[bytes]:
    """A Slack interactive request: its body read (up to `MAX_ACTION_BYTES`), handed over.
    A body not sized by Content-Length (chunked), sized wrongly, too large, or that does
    not come in time is refused here with one log line."""

    def refused(status: int, reason: str) -> Iterable[bytes]:
        log.warning("slack.unreadable", reason=reason, status=status)
        return _text(start_response, f"{status} {STATUS_TEXT[status]}", reason + "\n")

    if "HTTP_TRANSFER_ENCODING" in environ:
        return refused(411, "a body must come with a Content-Length, not a transfer coding")
    announced = str(environ.get("CONTENT_LENGTH") or "0")
    if not announced.isascii() or not announced.isdigit():
        return refused(400, "the Content-Length is not a number")
    digits = announced.lstrip("0") or "0"
    if len(digits) > 9 or int(digits) > MAX_ACTION_BYTES:
        return refused(413, "body too large")
    length = int(digits)
    try:
        body = environ["wsgi.input"].read(length) if length else b""
    except TimeoutError:  # handed over before it all came (a long head): rare, said each time
        log.warning("http.request_timeout", client=str(environ.get("REMOTE_ADDR")))
        return _text(start_response, "408 Request Timeout", LATE)
    except OSError:
        body = b""
    if len(body) < length:
        return refused(400, "the body is shorter than its Content-Length")
    headers = {
        key[5:].replace("_", "-").title(): str(value)
        for key, value in environ.items()
        if key.startswith("HTTP_")
    }
    status, text = actions(headers, body)
    return _text(start_response, f"{status} {STATUS_TEXT.get(status, 'Error')}", text)


def application(
    exposition: Exposition,
    ready: Readiness,
    live: Readiness | None = None,
    actions: Actions | None = None,
) -> Callable[..., Iterable[bytes]]:
    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        if actions is not None and environ.get("PATH_INFO") == ACTIONS_PATH:
            if method == "POST":
                return _action(actions, environ, start_response)
            return _text(
                start_response,
                "405 Method Not Allowed",
                "method not allowed: try POST\n",
                [("Allow", "POST")],
            )
        if method not in ALLOWED_METHODS:
            allowed = ", ".join(ALLOWED_METHODS)
            return _text(
                start_response,
                "405 Method Not Allowed",
                f"method not allowed: {method}; try {' or '.join(ALLOWED_METHODS)}\n",
                [("Allow", allowed)],
            )
        body = endpoint(environ, start_response)
        return [] if method == "HEAD" else body

    def endpoint(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/")
        if path == "/metrics":
            text = exposition()
            headers = [("Content-Type", CONTENT_TYPE_LATEST), ("Vary", "Accept-Encoding")]
            if gzip_accepted(environ.get("HTTP_ACCEPT_ENCODING", "")):
                pieces = text.gzip()
                length = sum(map(len, pieces))
                headers.append(("Content-Encoding", "gzip"))
                body: Iterable[bytes] = pieces
            else:
                length, body = text.length, text.pieces()
            start_response("200 OK", [*headers, ("Content-Length", str(length))])
            return body
        if path == "/healthz":
            return _text(start_response, "200 OK", "ok\n")
        if path == "/livez":
            is_live, why = live() if live is not None else (True, "alive")
            return _text(
                start_response, "200 OK" if is_live else "503 Service Unavailable", why + "\n"
            )
        if path == "/readyz":
            is_ready, why = ready()
            return _text(
                start_response, "200 OK" if is_ready else "503 Service Unavailable", why + "\n"
            )
        missing = "not found: try /metrics, /healthz, /livez or /readyz\n"
        return _text(start_response, "404 Not Found", missing)

    return app
