"""The HTTP server of the endpoints (`endpoints`): the connections they come on.

Whatever a client sends, it is answered with a status (or closed) in bounded time, with at
most one structured log line and never a traceback: a request must arrive whole within
`REQUEST_TIMEOUT_S` of its connection's accept, and at most `MAX_CONNECTIONS` are held at
once.
"""

from __future__ import annotations

import contextlib
import io
import queue
import re
import selectors
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer, make_server

import structlog

from analyzer.deliver.deflated import Deflated
from analyzer.deliver.endpoints import (
    LATE,
    MAX_ACTION_BYTES,
    Actions,
    Exposition,
    Readiness,
    application,
)

__all__ = ["Actions", "Exposition", "Readiness", "Server"]
"""With `Server`, the types of what it serves, where its users have always found them."""

log = structlog.get_logger(__name__)

LISTEN_BACKLOG = 128
"""Connections the kernel queues while every handler is busy: many scrapers at once (the
standard library's default is 5)."""
IDLE_TIMEOUT_S = 10.0
"""A connection that sends nothing for this long is closed."""
REQUEST_TIMEOUT_S = 10.0
"""A request must have arrived whole this long after its connection was accepted, however
it trickles in (as Go's `http.Server.ReadTimeout`): past it, a connection that has begun a
request is answered 408 and closed. A byte every few seconds no longer holds one forever."""
MAX_CONNECTIONS = 512
"""Connections held at once while their requests come, each a socket (a descriptor): well
below the usual limit of 1024. At the cap, a new connection is taken and room is made by
closing the one held longest, as nginx closes its oldest idle keep-alive connections when it
runs out of them rather than refusing new ones. Every connection held is still waiting for
its request, and a client that means to send one does so at once: the one held longest has
had the most time. A flood of connections then cannot keep Prometheus out: its scrape is the
newest connection and is answered within milliseconds, while the flood would have to open
the cap's worth of connections in that time to reach it. (Refusing new connections at the
cap instead, as HAProxy's `maxconn` does, would let the flood hold every scrape out.)"""
WORKERS = 4
"""Threads that answer requests. A connection holds none while its request is on its way:
only a complete request is handed to one, so idle connections cost a socket, not a thread."""
MAX_HEAD_BYTES = 2 * 65_537
"""A request head longer than this is handed over as it is: the handler answers 414 or 431
to a request line or a header of more than 64 KiB, as it did to the first of them."""
READ_BYTES = 65_536
LINGER_S = 1.0
"""How long an answered connection is drained of what the client sent and no one read (the
body of a refused POST) before it is closed. The server's loop drains it, not a worker: a
client that never closes holds a socket for this long, and no thread."""
TIMED_OUT = (
    "HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\n"
    f"Content-Length: {len(LATE)}\r\nConnection: close\r\n\r\n{LATE}"
).encode()


class _Server(WSGIServer):
    request_queue_size = LISTEN_BACKLOG


class _Server6(_Server):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    """One request, its head already read by the server's loop (`head`), the rest (what the
    loop handed over before it all came) from the socket within `timeout` of each byte and
    before `deadline` (`time.monotonic`), else TimeoutError."""

    disable_nagle_algorithm = True
    """The headers and the body go out in separate writes: with Nagle's algorithm the body
    waits for the client's delayed ACK of the headers, 40 ms a scrape."""

    def __init__(self, head: bytes, timeout: float, deadline: float, *args: Any) -> None:
        self._head = head
        self._timeout = timeout
        self._deadline = deadline
        super().__init__(*args)

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self._timeout)
        self.rfile.close()
        self.rfile = io.BufferedReader(
            _Replay(self._head, self.connection, self._timeout, self._deadline)
        )

    def handle(self) -> None:
        """The standard library's, with `_Answer` for its handler."""
        self.raw_requestline = self.rfile.readline(65537)
        if len(self.raw_requestline) > 65536:
            self.requestline = self.request_version = self.command = ""
            self.send_error(414)
            return
        if not self.parse_request():  # answered already
            return
        handler = _Answer(
            self.rfile,
            self.wfile,  # type: ignore[arg-type]
            self.get_stderr(),
            self.get_environ(),
            multithread=False,
        )
        handler.request_handler = self  # type: ignore[attr-defined]
        handler.run(self.server.get_app())  # type: ignore[attr-defined]

    def announced_a_body(self) -> bool:
        """Whether the request said a body follows (which no endpoint reads)."""
        headers = getattr(self, "headers", None)  # none when the request line was refused
        return headers is not None and (
            "Content-Length" in headers or "Transfer-Encoding" in headers
        )

    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes every 15 s would flood stderr; the log carries the daemon's own events."""


class _Answer(ServerHandler):
    """The standard library's WSGI handler, saying a failure in one log line where it would
    print a traceback (then answering 500 if nothing was sent yet, as it does)."""

    def log_exception(self, exc_info: Any) -> None:
        exc = exc_info[1]
        environ = getattr(self, "environ", None) or {}
        path = str(environ.get("PATH_INFO", ""))[:200]
        error = f"{type(exc).__name__}: {exc}"[:500]
        if isinstance(exc, OSError):  # the client stopped reading, or went away
            log.warning("http.answer_failed", path=path, error=error)
        else:  # a fault of ours
            log.error("http.failed", path=path, error=error)


class _Replay(io.RawIOBase):
    """What the server's loop read of a connection, then the connection itself, until the
    request's deadline."""

    def __init__(
        self, head: bytes, connection: socket.socket, timeout: float, deadline: float
    ) -> None:
        self._head = memoryview(head)
        self._connection = connection
        self._timeout = timeout
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not come in time")
        self._connection.settimeout(min(left, self._timeout))
        try:
            return self._connection.recv_into(buffer)
        finally:
            self._connection.settimeout(self._timeout)  # the answer is written within it


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
    """A connection whose request has not all come: what has, when it was accepted, and
    when it is given up (`time.monotonic`)."""

    connection: socket.socket
    address: Any
    accepted: float
    deadline: float
    head: bytearray = field(default_factory=bytearray)


class _Occasional:
    """A warning said at most once every `every_s`, with how many times it happened since
    the last one said: a flood of hostile connections must not become a flood of lines."""

    def __init__(self, event: str, every_s: float = 1.0) -> None:
        self._event = event
        self._every_s = every_s
        self._said = -float("inf")
        self._times = 0
        self._lock = threading.Lock()

    def __call__(self, **fields: Any) -> None:
        now = time.monotonic()
        with self._lock:
            self._times += 1
            if now - self._said < self._every_s:
                return
            times, self._times, self._said = self._times, 0, now
        log.warning(self._event, times=times, **fields)


class Server:
    """Serves the endpoints until stopped: one thread waits on every connection at once
    (`selectors`) and reads each request's head, and a pool of `WORKERS` threads answers the
    complete ones. 300 idle connections hold 300 sockets and no thread; each is closed after
    `idle_timeout_s` without a byte, and one whose request has not all come
    `request_timeout_s` after its accept is answered 408 and closed. At most
    `max_connections` are held at once (see `MAX_CONNECTIONS` for which one makes room)."""

    def __init__(
        self,
        host: str,
        port: int,
        exposition: Exposition,
        ready: Readiness,
        live: Readiness | None = None,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        actions: Actions | None = None,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self._server = make_server(
            host,
            port,
            application(exposition, ready, live, actions),
            server_class=_Server6 if ":" in host else _Server,
        )
        self._idle_timeout_s = idle_timeout_s
        self._request_timeout_s = request_timeout_s
        self._max_connections = max_connections
        self._reading: dict[socket.socket, _Reading] = {}
        self._answering = 0
        """Connections handed to the workers and not yet closed (held by them)."""
        self._answering_lock = threading.Lock()
        self._full = _Occasional("http.connections_full")
        self._late = _Occasional("http.request_timeout")
        self._workers = ThreadPoolExecutor(WORKERS, thread_name_prefix="http")
        self._stopping = threading.Event()
        self._lingering: dict[socket.socket, float] = {}
        """Answered connections being drained, each until its deadline (`LINGER_S`)."""
        self._handed_back: queue.SimpleQueue[socket.socket] = queue.SimpleQueue()
        """Answered connections the workers give back to the loop to drain."""
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._wake_writer.setblocking(False)
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
            with contextlib.suppress(OSError):  # full: the loop is awake already
                self._wake_writer.send(b"\0")
            self._thread.join()
        for reading in list(self._reading.values()):
            self._close(reading.connection)
        self._workers.shutdown(wait=True)
        for connection in [*self._lingering, *_emptied(self._handed_back)]:
            connection.close()
        self._lingering.clear()
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
                    elif key.fileobj is self._wake_reader:
                        self._take_back(selector)
                    elif key.fileobj in self._lingering:
                        self._linger(selector, key.fileobj)
                    else:
                        self._read(selector, self._reading[key.fileobj])  # type: ignore[index]
                self._expire(selector)

    def _wait(self) -> float:
        """Until the next connection is due to be given up."""
        deadlines = [*(r.deadline for r in self._reading.values()), *self._lingering.values()]
        if not deadlines:
            return self._idle_timeout_s
        return max(min(deadlines) - time.monotonic(), 0.0)

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
            if not self._room(selector):
                self._full(dropped="new", held=self._max_connections)
                connection.close()
                continue
            now = time.monotonic()
            deadline = now + min(self._idle_timeout_s, self._request_timeout_s)
            self._reading[connection] = _Reading(connection, address, now, deadline)
            selector.register(connection, selectors.EVENT_READ)

    def _room(self, selector: selectors.BaseSelector) -> bool:
        """Whether another connection may be held: at the cap, the one held longest whose
        request has not all come is closed to make room; no room, when every one held is
        being answered (a worker has it)."""
        with self._answering_lock:
            held = len(self._reading) + len(self._lingering) + self._answering
        if held < self._max_connections:
            return True
        if self._lingering:  # answered already: the first to go
            first = min(self._lingering, key=self._lingering.__getitem__)
            selector.unregister(first)
            del self._lingering[first]
            first.close()
            return True
        if not self._reading:
            return False
        oldest = min(self._reading.values(), key=lambda r: r.accepted)
        self._full(dropped="idle" if not oldest.head else "reading", held=held)
        selector.unregister(oldest.connection)
        self._close(oldest.connection)
        return True

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
        reading.deadline = min(
            time.monotonic() + self._idle_timeout_s,
            reading.accepted + self._request_timeout_s,
        )
        if _complete(reading.head, searched):
            selector.unregister(reading.connection)
            del self._reading[reading.connection]
            with self._answering_lock:
                self._answering += 1
            self._workers.submit(self._answer, reading)

    def _expire(self, selector: selectors.BaseSelector) -> None:
        """Close the connections due: silently those idle past the idle timeout, and with a
        408 those whose request began and has not all come within the request timeout."""
        now = time.monotonic()
        for reading in [r for r in self._reading.values() if r.deadline <= now]:
            selector.unregister(reading.connection)
            if reading.head and now >= reading.accepted + self._request_timeout_s:
                self._late(client=str(reading.address), timeout_s=self._request_timeout_s)
                _say_timed_out(reading.connection)
            self._close(reading.connection)
        for connection in [c for c, d in self._lingering.items() if d <= now]:
            selector.unregister(connection)
            del self._lingering[connection]
            connection.close()

    def _hand_back(self, connection: socket.socket) -> None:
        """From a worker: an answered connection for the loop to drain."""
        self._handed_back.put(connection)
        with contextlib.suppress(OSError):  # full: the loop has wakes enough to read
            self._wake_writer.send(b"\0")

    def _take_back(self, selector: selectors.BaseSelector) -> None:
        with contextlib.suppress(OSError):
            self._wake_reader.recv(READ_BYTES)
        deadline = time.monotonic() + LINGER_S
        for connection in _emptied(self._handed_back):
            self._lingering[connection] = deadline
            selector.register(connection, selectors.EVENT_READ)

    def _linger(self, selector: selectors.BaseSelector, connection: socket.socket) -> None:
        """Read and drop what the client sends after its answer, until it closes."""
        try:
            if connection.recv(READ_BYTES):
                return
        except BlockingIOError:
            return
        except OSError:
            pass
        selector.unregister(connection)
        del self._lingering[connection]
        connection.close()

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
                reading.accepted + self._request_timeout_s,
                connection,
                reading.address,
                self._server,
            )
        except TimeoutError:  # its head did not all come in time: nothing was answered yet
            self._late(client=str(reading.address), timeout_s=self._request_timeout_s)
            _say_timed_out(connection)
        except OSError:
            pass  # the client went away, or stayed silent past the timeout
        except Exception as exc:  # a fault of ours: one line, and the server goes on
            log.error("http.failed", error=f"{type(exc).__name__}: {exc}"[:500])
        finally:
            lingers = False
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_WR)
                lingers = _unread(connection, handler is not None and handler.announced_a_body())
            with self._answering_lock:
                self._answering -= 1
            if lingers and not self._stopping.is_set():
                self._hand_back(connection)
            else:
                connection.close()


def _say_timed_out(connection: socket.socket) -> None:
    """Answer 408 if the socket takes it at once (it does: nothing was sent on it, and the
    answer is small), after reading what has come, so that closing does not reset it."""
    with contextlib.suppress(OSError):
        connection.setblocking(False)
        for _ in range(16):
            if not connection.recv(READ_BYTES):
                break
    with contextlib.suppress(OSError):
        connection.send(TIMED_OUT)
        connection.shutdown(socket.SHUT_WR)


def _unread(connection: socket.socket, announced_a_body: bool) -> bool:
    """Whether an answered connection is to be drained of what is left of its request until
    the client closes, for at most `LINGER_S`: closing a socket with unread data resets the
    connection, and a client still sending loses the answer already sent to it. A request
    without a body, and nothing left of it to read, is closed at once."""
    connection.setblocking(False)
    if announced_a_body:
        return True
    try:
        return bool(connection.recv(1, socket.MSG_PEEK))
    except BlockingIOError:
        return False


def _emptied(handed: queue.SimpleQueue[socket.socket]) -> list[socket.socket]:
    taken = []
    with contextlib.suppress(queue.Empty):
        while True:
            taken.append(handed.get_nowait())
    return taken
