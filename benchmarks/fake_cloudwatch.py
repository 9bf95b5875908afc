"""A local stand-in for CloudWatch's GetMetricData that generates a fleet's datapoints on the fly.

It speaks the protocol botocore uses for CloudWatch here (JSON 1.0, `X-Amz-Target`), so the
analyzer and a bare boto3 loop reach it through an unmodified boto3 client (`endpoint_url`).
Each datapoint is a function of the resource, the metric and the minute, so any window of any
size is answered without storing anything. Run it in a process of its own, so that its work
is not counted as the client's.

The fleet (ids `vol-00000000`, attached five to an instance `i-00000000`): of every 100
volumes, 60 idle gp3 (no I/O), 30 quiet gp2 (3 IOPS), 8 busy gp3 (1,000 IOPS), 2 near their
3,000 IOPS limit.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VOLUMES_PER_INSTANCE = 5
IO_BYTES = 16 * 1024


def volume_kind(index: int) -> str:
    slot = index % 100
    if slot < 60:
        return "idle"
    if slot < 90:
        return "quiet"
    if slot < 98:
        return "busy"
    return "hot"


IOPS = {"idle": 0.0, "quiet": 3.0, "busy": 1_000.0, "hot": 2_900.0}


def _volume_value(index: int, metric: str, period: int) -> float:
    iops = IOPS[volume_kind(index)]
    match metric:
        case "VolumeReadOps":
            return iops * period * 0.7
        case "VolumeWriteOps":
            return iops * period * 0.3
        case "VolumeReadBytes":
            return iops * period * 0.7 * IO_BYTES
        case "VolumeWriteBytes":
            return iops * period * 0.3 * IO_BYTES
        case "BurstBalance":
            return 100.0
        case "VolumeIdleTime":
            return float(period) if iops == 0 else 0.0
        case "VolumeTotalReadTime" | "VolumeTotalWriteTime":
            return iops * period * 0.0005
        case "VolumeQueueLength":
            return iops * 0.0005
    return 0.0


def _instance_value(index: int, metric: str, period: int) -> float:
    volumes = range(index * VOLUMES_PER_INSTANCE, (index + 1) * VOLUMES_PER_INSTANCE)
    if metric in ("EBSIOBalance%", "EBSByteBalance%"):
        return 100.0
    name = {
        "EBSReadOps": "VolumeReadOps",
        "EBSWriteOps": "VolumeWriteOps",
        "EBSReadBytes": "VolumeReadBytes",
        "EBSWriteBytes": "VolumeWriteBytes",
    }.get(metric)
    if name is None:
        return 0.0
    return sum(_volume_value(v, name, period) for v in volumes)


PER_ATTACHMENT = {
    "VolumeIOPSExceededCheck",
    "VolumeThroughputExceededCheck",
    "VolumeStalledIOCheck",
}
"""AWS/EBS metrics AWS publishes with InstanceId and VolumeId together, and only so."""


def _published(metric: str, dimensions: dict[str, str]) -> str | None:
    """The resource a query's dimensions name, if AWS publishes the metric with exactly these
    dimensions; None otherwise (CloudWatch then answers an empty series)."""
    volume, instance = dimensions.get("VolumeId"), dimensions.get("InstanceId")
    if volume is not None and metric in PER_ATTACHMENT:
        index = int(volume.split("-")[1]) // VOLUMES_PER_INSTANCE
        return (
            volume if dimensions == {"VolumeId": volume, "InstanceId": f"i-{index:08d}"} else None
        )
    if len(dimensions) != 1:
        return None
    return volume if volume is not None else instance


def _result(query: dict[str, Any], start: float, end: float) -> dict[str, Any]:
    stat = query["MetricStat"]
    metric = stat["Metric"]["MetricName"]
    dimensions = {d["Name"]: d["Value"] for d in stat["Metric"].get("Dimensions", [])}
    resource = _published(metric, dimensions)
    period = int(stat["Period"])
    first = int(start // period * period)
    if first < start:
        first += period
    stamps = range(first, int(end), period) if resource is not None else range(0)
    if resource is None:
        point = 0.0
    else:
        index = int(resource.split("-")[1])
        value = _instance_value if resource.startswith("i-") else _volume_value
        point = value(index, metric, period)
    return {
        "Id": query["Id"],
        "Label": metric,
        "Timestamps": list(stamps),
        "Values": [point] * len(stamps),
        "StatusCode": "Complete",
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        request = json.loads(body)
        start, end = float(request["StartTime"]), float(request["EndTime"])
        queries = request.get("MetricDataQueries", [])
        answer = json.dumps(
            {"MetricDataResults": [_result(q, start, end) for q in queries], "Messages": []}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a benchmark prints its own figures."""


def serve(port: int) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 9911)
