"""A stand-in for Slack's webhook (or an Alertmanager) on 127.0.0.1: answers from a script,
records what it got: the bodies, and the path and headers of each request."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class QuietServer(ThreadingHTTPServer):
    """A test's HTTP stand-in: a client that gives up on a slow or hanging answer is the point
    of the fault it plays, not news for stderr."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class LocalServer:
    """An HTTP stand-in on 127.0.0.1, on a free port, served from a thread of its own from
    `start` to `stop`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def root(self) -> str:
        """http://host:port."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class Receiver(LocalServer):
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.seen: list[tuple[str, dict[str, str]]] = []
        """(path, headers) of each request, beside its body in `requests`."""
        self.script: deque[tuple[int, dict[str, str]]] = deque()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                receiver.seen.append((self.path, dict(self.headers.items())))
                receiver.requests.append(json.loads(self.rfile.read(length)))
                status, headers = receiver.script.popleft() if receiver.script else (200, {})
                # A scripted "X-Delay" is a receiver slower than the sender's timeout.
                time.sleep(float(headers.get("X-Delay", 0)))
                body = b"ok" if status == 200 else b"error"
                self.send_response(status)
                for name, value in headers.items():
                    if name != "X-Delay":
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        super().__init__(Handler)

    @property
    def url(self) -> str:
        """The webhook's URL (`root` is without its path)."""
        return f"{self.root}/services/T000/B000/secret-token"

    def answer(self, *responses: tuple[int, dict[str, str]]) -> None:
        self.script.extend(responses)
