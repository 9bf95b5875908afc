"""The simulator's GetMetricData on 127.0.0.1, over the protocol botocore speaks to CloudWatch
(JSON 1.0, `X-Amz-Target`), for tests that run the analyzer as a process of its own.

moto's server answers GetMetricData by scanning every datapoint of the account for every query
and period: a fleet of a dozen volumes takes it longer than the analyzer's read timeout. The
simulator keeps each series under the dimensions AWS publishes it with and answers only an
exact match, as CloudWatch does (`analyzer.sim.cloudwatch`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any

from analyzer.sim.cloudwatch import SimulatedCloudWatch
from tests.receiver import LocalServer


def _when(value: float | str) -> datetime:
    return datetime.fromtimestamp(float(value), UTC)


class CloudWatchEndpoint(LocalServer):
    def __init__(self, cloudwatch: SimulatedCloudWatch) -> None:
        self.requests = 0
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                target = self.headers.get("X-Amz-Target", "")
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if not target.endswith(".GetMetricData"):
                    self._answer(400, {"__type": "InvalidAction", "message": target})
                    return
                endpoint.requests += 1
                request["StartTime"] = _when(request["StartTime"])
                request["EndTime"] = _when(request["EndTime"])
                answer = cloudwatch.get_metric_data(**request)
                for result in answer["MetricDataResults"]:
                    result["Timestamps"] = [t.timestamp() for t in result["Timestamps"]]
                self._answer(200, answer)

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-amz-json-1.0")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        super().__init__(Handler)

    @property
    def url(self) -> str:
        return self.root
