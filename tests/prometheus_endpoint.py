"""A stand-in Prometheus HTTP API: `/api/v1/query` answered as scripted."""

from __future__ import annotations

import contextlib
import json
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

from tests.receiver import LocalServer


def vector(*volume_ids: str, at: float = 1_700_000_000.0) -> bytes:
    """An instant query's answer by the API's contract: one sample per volume."""
    result = [{"metric": {"volume_id": v}, "value": [at, str(at - 5)]} for v in volume_ids]
    return json.dumps(
        {"status": "success", "data": {"resultType": "vector", "result": result}}
    ).encode()


class PrometheusEndpoint(LocalServer):
    """Answers every query with `status` and `body`, after `delay_s`; keeps the queries."""

    def __init__(self, *volume_ids: str) -> None:
        self.status = 200
        self.body = vector(*volume_ids)
        self.delay_s = 0.0
        self.queries: list[str] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                if url.path != "/api/v1/query":
                    self.send_error(404)
                    return
                endpoint.queries.extend(urllib.parse.parse_qs(url.query).get("query", []))
                time.sleep(endpoint.delay_s)
                self.send_response(endpoint.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(endpoint.body)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client gave up waiting
                    self.wfile.write(endpoint.body)

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(Handler)

    def answers(self, *volume_ids: str) -> None:
        self.status, self.body, self.delay_s = 200, vector(*volume_ids), 0.0
