"""A fault proxy in front of a moto server: it forwards every request, or answers it with the
fault it is set to, the way a failing AWS endpoint would."""

from __future__ import annotations

import http.client
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from tests.receiver import LocalServer

FAULTS = ("none", "http500", "throttle", "garbage", "hang", "ec2-denied")
EC2_DENIED = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>'
    b"<Code>UnauthorizedOperation</Code>"
    b"<Message>You are not authorized to perform this operation.</Message>"
    b"</Error></Errors><RequestID>5f0c1a4e-0000-4000-8000-000000000000</RequestID></Response>"
)


class FaultProxy(LocalServer):
    """`fault` is read for each request: "none" forwards; "http500" and "throttle" answer as
    AWS does in an outage and under throttling; "garbage" answers 200 with a body that is no
    answer at all; "hang" waits `hang_s` before it forwards."""

    def __init__(self, upstream: str, hang_s: float = 3.0) -> None:
        self.fault = "none"
        self.hang_s = hang_s
        self.seen = 0
        target = urlsplit(upstream)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                proxy.seen += 1
                fault = proxy.fault
                if fault == "http500":
                    return self._answer(500, b'{"__type": "InternalFailure"}')
                if fault == "throttle":
                    return self._answer(400, b'{"__type": "ThrottlingException"}')
                if fault == "ec2-denied":
                    # EC2's query-protocol error for an action the identity may not call (EC2
                    # API Reference, "Error codes": UnauthorizedOperation, HTTP 403).
                    return self._answer(403, EC2_DENIED, "text/xml")
                if fault == "garbage":
                    return self._answer(200, b"\xff\xfe\x00 not an answer", "application/cbor")
                if fault == "hang":
                    time.sleep(proxy.hang_s)
                upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                upstream.request("POST", self.path, body, headers)
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()
                return None

            def _answer(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        super().__init__(Handler)

    @property
    def url(self) -> str:
        return self.root
