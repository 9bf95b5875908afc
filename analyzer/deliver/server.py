"""The HTTP endpoints: /metrics for Prometheus, /healthz and /readyz for the orchestrator."""

from __future__ import annotations

import contextlib
import io
import re
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CONTENT_TYPE_LATEST

from analyzer.deliver.deflated import Deflated

Readiness = Callable[[], tuple[bool, str]]
Actions = Callable[[Mapping[str, str], bytes], tuple[int, str]]
"""`POST /slack/actions`: the request's headers and body → the status and body to answer."""
Exposition = Callable[[], Deflated]
"""The /metrics text: Prometheus's text format."""
StartResponse = Callable[..., Any]


LISTEN_BACKLOG = 128
"""Connections the kernel queues while every handler is busy: many scrapers at once (the
standard library's default is 5)."""
IDLE_TIMEOUT_S = 10.0
"""A connection that sends nothing for this long is closed."""
WORKERS = 4
"""Threads that answer requests. A connection holds none while its request is on its way:
only a complete request is handed to one, so idle connections cost a socket, not a thread."""
MAX_HEAD_BYTES = 2 * 65_537
"""A request head longer than this is handed over as it is: the handler answers 414 or 431
to a request line or a header of more than 64 KiB, as it did to the first of them."""
READ_BYTES = 65_536
LINGER_S = 1.0
"""How long an answered connection is drained of what the client sent and no one read (the
body of a refused POST) before it is closed."""
ALLOWED_METHODS = ("GET", "HEAD")
"""Every endpoint only reads: any other method is answered 405, on every path but one."""
ACTIONS_PATH = "/slack/actions"
"""The one that takes a POST, where Slack approvals are set up: Slack's interactive requests."""
MAX_ACTION_BYTES = 64 * 1024
STATUS_TEXT = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 413: "Content Too Large"}


class _Server(WSGIServer):
    request_queue_size = LISTEN_BACKLOG


class _Server6(_Server):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    """One request, its head already read by the server's loop (`head`), the rest (a body,
    which no endpoint reads) from the socket within `timeout`."""

    disable_nagle_algorithm = True
    """The headers and the body go out in separate writes: with Nagle's algorithm the body
    waits for the client's delayed ACK of the headers, 40 ms a scrape."""

    def __init__(self, head: bytes, timeout: float, *args: Any) -> None:
        self._head = head
        self._timeout = timeout
        super().__init__(*args)

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self._timeout)
        self.rfile.close()
        self.rfile = io.BufferedReader(_Replay(self._head, self.connection))

    def announced_a_body(self) -> bool:
        """Whether the request said a body follows (which no endpoint reads)."""
        headers = getattr(self, "headers", None)  # none when the request line was refused
        return headers is not None and (
            "Content-Length" in headers or "Transfer-Encoding" in headers
        )

    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes every 15 s would flood stderr; the log carries the daemon's own events."""


class _Replay(io.RawIOBase):
    """What the server's loop read of a connection, then the connection itself."""

    def __init__(self, head: bytes, connection: socket.socket) -> None:
        self._head = memoryview(head)
        self._connection = connection

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return self._connection.recv_into(buffer)


CONTENT_LENGTH = re.compile(rb"\ncontent-length:[ \t]*([0-9]{1,12})[ \t]*\r?\n", re.IGNORECASE)


def _complete(head: bytes | bytearray, searched_from: int) -> bool:
    """Whether a request has all come that a worker is given: its head (ended by a blank
    line, or grown past what is read of it) and the body it announces, up to
    `MAX_ACTION_BYTES`. A body that trickles in holds a socket here, never a worker."""
    if len(head) > MAX_HEAD_BYTES + MAX_ACTION_BYTES:
        return True
    ends = [i + len(m) for m in (b"\r\n\r\n", b"\n\n") if (i := head.find(m)) >= 0]
    if not ends:
        return len(head) > MAX_HEAD_BYTES
    end = min(ends)
    announced = CONTENT_LENGTH.search(head, 0, end)
    if announced is None:
        return True
    length = int(announced.group(1))
    return length > MAX_ACTION_BYTES or len(head) >= end + length


@dataclass
class _Reading:
    """A connection whose request has not all come: what has, and when it is given up."""

    connection: socket.socket
    address: Any
    deadline: float
    head: bytearray = field(default_factory=bytearray)


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
    """A Slack interactive request: its body read (up to `MAX_ACTION_BYTES`), handed over."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = -1
    if not 0 <= length <= MAX_ACTION_BYTES:
        return _text(start_response, "413 Content Too Large", "body too large or unsized\n")
    body = environ["wsgi.input"].read(length) if length else b""
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


class Server:
    """Serves the endpoints until stopped: one thread waits on every connection at once
    (`selectors`) and reads each request's head, and a pool of `WORKERS` threads answers the
    complete ones. 300 idle connections hold 300 sockets and no thread; each is closed after
    `idle_timeout_s` without a byte."""

    def __init__(
        self,
        host: str,
        port: int,
        exposition: Exposition,
        ready: Readiness,
        live: Readiness | None = None,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        actions: Actions | None = None,
    ) -> None:
        self._server = make_server(
            host,
            port,
            application(exposition, ready, live, actions),
            server_class=_Server6 if ":" in host else _Server,
        )
        self._idle_timeout_s = idle_timeout_s
        self._reading: dict[socket.socket, _Reading] = {}
        self._workers = ThreadPoolExecutor(WORKERS, thread_name_prefix="http")
        self._stopping = threading.Event()
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._thread = threading.Thread(target=self._serve, name="http", daemon=True)

    @classmethod
    def bound(cls, host: str, port: int) -> Server:
        """The address taken before what it serves exists, so that a busy port is said
        before anything runs; `answer_with` gives it its answers before it starts."""

        def starting() -> tuple[bool, str]:
            return False, "not ready: starting"

        return cls(host, port, lambda: Deflated.of([]), starting, starting)

    def answer_with(
        self,
        exposition: Exposition,
        ready: Readiness,
        live: Readiness | None = None,
        actions: Actions | None = None,
    ) -> None:
        self._server.set_app(application(exposition, ready, live, actions))

    @property
    def port(self) -> int:
        return int(self._server.server_port)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting, close the connections whose request has not come, and let the
        requests being answered finish."""
        self._stopping.set()
        if self._thread.is_alive():
            self._wake_writer.send(b"\0")
            self._thread.join()
        for reading in list(self._reading.values()):
            self._close(reading.connection)
        self._workers.shutdown(wait=True)
        self._server.server_close()
        self._wake_reader.close()
        self._wake_writer.close()

    def _serve(self) -> None:
        listening = self._server.socket
        listening.setblocking(False)
        with selectors.DefaultSelector() as selector:
            selector.register(listening, selectors.EVENT_READ)
            selector.register(self._wake_reader, selectors.EVENT_READ)
            while not self._stopping.is_set():
                for key, _ in selector.select(self._wait()):
                    if key.fileobj is listening:
                        self._accept(selector)
                    elif key.fileobj is not self._wake_reader:
                        self._read(selector, self._reading[key.fileobj])  # type: ignore[index]
                self._expire(selector)

    def _wait(self) -> float:
        """Until the next connection is due to be given up."""
        if not self._reading:
            return self._idle_timeout_s
        first = min(r.deadline for r in self._reading.values())
        return max(first - time.monotonic(), 0.0)

    def _accept(self, selector: selectors.BaseSelector) -> None:
        while True:
            try:
                connection, address = self._server.socket.accept()
            except BlockingIOError:
                return
            except OSError:  # out of descriptors, or the client gave up: try again shortly
                time.sleep(0.05)
                return
            connection.setblocking(False)
            deadline = time.monotonic() + self._idle_timeout_s
            self._reading[connection] = _Reading(connection, address, deadline)
            selector.register(connection, selectors.EVENT_READ)

    def _read(self, selector: selectors.BaseSelector, reading: _Reading) -> None:
        try:
            data = reading.connection.recv(READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the client closed it, or reset it
            selector.unregister(reading.connection)
            self._close(reading.connection)
            return
        searched = len(reading.head)
        reading.head += data
        reading.deadline = time.monotonic() + self._idle_timeout_s
        if _complete(reading.head, searched):
            selector.unregister(reading.connection)
            del self._reading[reading.connection]
            self._workers.submit(self._answer, reading)

    def _expire(self, selector: selectors.BaseSelector) -> None:
        now = time.monotonic()
        for reading in [r for r in self._reading.values() if r.deadline <= now]:
            selector.unregister(reading.connection)
            self._close(reading.connection)

    def _close(self, connection: socket.socket) -> None:
        self._reading.pop(connection, None)
        connection.close()

    def _answer(self, reading: _Reading) -> None:
        """One request, in a worker: answered as the standard library's WSGI server does."""
        connection = reading.connection
        handler: _QuietHandler | None = None
        try:
            connection.setblocking(True)
            handler = _QuietHandler(
                bytes(reading.head),
                self._idle_timeout_s,
                connection,
                reading.address,
                self._server,
            )
        except OSError:
            pass  # the client went away, or stayed silent past the timeout
        finally:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_WR)
                _drain(connection, handler is not None and handler.announced_a_body())
            connection.close()


def _drain(connection: socket.socket, announced_a_body: bool) -> None:
    """Read what is left of the request until the client closes, for at most `LINGER_S`:
    closing a socket with unread data resets the connection, and a client still sending loses
    the answer already sent to it. A request without a body, and nothing left of it to read,
    is closed at once."""
    connection.setblocking(False)
    if not announced_a_body:
        try:
            if not connection.recv(1, socket.MSG_PEEK):
                return
        except BlockingIOError:
            return
    deadline = time.monotonic() + LINGER_S
    while (left := deadline - time.monotonic()) > 0:
        connection.settimeout(left)
        if not connection.recv(READ_BYTES):
            return
