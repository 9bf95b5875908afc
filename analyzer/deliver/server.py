"""The HTTP endpoints: /metrics for Prometheus, /healthz and /readyz for the orchestrator."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CONTENT_TYPE_LATEST

Readiness = Callable[[], tuple[bool, str]]
Exposition = Callable[[], bytes]
"""The /metrics text: Prometheus's text format."""
StartResponse = Callable[..., Any]


LISTEN_BACKLOG = 128
"""Connections the kernel queues while every handler is busy: many scrapers at once (the
standard library's default is 5)."""
IDLE_TIMEOUT_S = 10.0
"""A connection that sends nothing for this long is closed, and its thread ends."""


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG


class _ThreadingServer6(_ThreadingServer):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    timeout = IDLE_TIMEOUT_S
    disable_nagle_algorithm = True
    """The headers and the body go out in separate writes: with Nagle's algorithm the body
    waits for the client's delayed ACK of the headers, 40 ms a scrape."""

    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes every 15 s would flood stderr; the log carries the daemon's own events."""


def _text(start_response: StartResponse, status: str, body: str) -> Iterable[bytes]:
    data = body.encode()
    start_response(
        status, [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(data)))]
    )
    return [data]


def application(
    exposition: Exposition, ready: Readiness, live: Readiness | None = None
) -> Callable[..., Iterable[bytes]]:
    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/")
        if path == "/metrics":
            body = exposition()
            start_response(
                "200 OK",
                [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(body)))],
            )
            return [body]
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


class Server:
    """Serves the endpoints from a background thread until stopped."""

    def __init__(
        self,
        host: str,
        port: int,
        exposition: Exposition,
        ready: Readiness,
        live: Readiness | None = None,
    ) -> None:
        self._server = make_server(
            host,
            port,
            application(exposition, ready, live),
            server_class=_ThreadingServer6 if ":" in host else _ThreadingServer,
            handler_class=_QuietHandler,
        )
        self._thread = threading.Thread(target=self._server.serve_forever, name="http", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_port)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        if self._thread.is_alive():  # shutdown() would wait forever for a loop never started
            self._server.shutdown()
        self._server.server_close()
