"""A local stand-in for CloudWatch's GetMetricData that generates a fleet's datapoints on the fly.

It speaks the protocol botocore uses for CloudWatch here (JSON 1.0, `X-Amz-Target`), so the
analyzer and a bare boto3 loop reach it through an unmodified boto3 client (`endpoint_url`).
Each datapoint is a function of the resource, the metric and the minute, so any window of any
size is answered without storing anything. Run it in a process of its own, so that its work
is not counted as the client's.

The fleet (ids `vol-00000000`, attached five to an instance `i-00000000`) comes in two mixes,
chosen by the second argument. `today` (the default): of every 100 volumes, 60 idle gp3 (no
I/O), 30 quiet gp2 (3 IOPS), 8 busy gp3 (1,000 IOPS), 2 near their 3,000 IOPS limit. `busy`:
of every 100, 10 idle gp3, 30 quiet gp2, 37 busy gp3, 20 gp2 of 100 GiB draining their burst
credits (1,500 IOPS against a 300 IOPS baseline: BurstBalance falls 4/3 points a minute from a
level set by the volume's index, and once empty the volume runs at its baseline), and 3 gp3
at their 3,000 IOPS cap (VolumeIOPSExceededCheck 1). Idle volumes are answered as in `today`:
zero I/O, full idle time. Still a function of resource, metric and minute, and nothing else.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VOLUMES_PER_INSTANCE = 5
IO_BYTES = 16 * 1024

MIXES: dict[str, tuple[tuple[int, str], ...]] = {
    "today": ((60, "idle"), (30, "quiet"), (8, "busy"), (2, "hot")),
    "busy": ((10, "idle"), (30, "quiet"), (37, "busy"), (20, "draining"), (3, "capped")),
    "idle": ((83, "idle"), (13, "quiet"), (2, "hot"), (2, "draining")),
}
"""Of every 100 volumes, in index order: how many of each kind."""

mix = "today"
"""The mix this process serves (set from its arguments)."""


def volume_kind(index: int, of: str | None = None) -> str:
    slot = index % 100
    for count, kind in MIXES[of or mix]:
        if slot < count:
            return kind
        slot -= count
    raise AssertionError("a mix covers 100 slots")


IOPS = {
    "idle": 0.0,
    "quiet": 3.0,
    "busy": 1_000.0,
    "hot": 2_900.0,
    "draining": 1_500.0,
    "capped": 3_000.0,
}

DRAIN_REFERENCE = 1_795_262_400
"""2026-11-21 12:00 UTC, the benchmark's first cycle: a draining volume's balance is set there."""
DRAIN_BASELINE_IOPS = 300.0
"""A gp2 volume of 100 GiB."""
DRAIN_PER_MINUTE = (IOPS["draining"] - DRAIN_BASELINE_IOPS) * 60 / 5_400_000 * 100
"""Points of BurstBalance a minute: the drain over a bucket of 5.4 million credits."""


def burst_balance(index: int, stamp: int) -> float:
    """A draining volume's BurstBalance at a minute: from 2 to 98 at the reference minute
    (spread over the volumes by index), falling by DRAIN_PER_MINUTE; full before, empty after."""
    start = 2.0 + (index * 37) % 97
    level = start - DRAIN_PER_MINUTE * (stamp - DRAIN_REFERENCE) / 60
    return min(100.0, max(0.0, level))


def drains(index: int) -> bool:
    return volume_kind(index) == "draining"


def _volume_value(index: int, metric: str, period: int, stamp: int = 0) -> float:
    kind = volume_kind(index)
    iops = IOPS[kind]
    if kind == "draining" and burst_balance(index, stamp) == 0.0:
        iops = DRAIN_BASELINE_IOPS
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
            return burst_balance(index, stamp) if kind == "draining" else 100.0
        case "VolumeIOPSExceededCheck":
            return 1.0 if kind == "capped" else 0.0
        case "VolumeIdleTime":
            return float(period) if iops == 0 else 0.0
        case "VolumeTotalReadTime" | "VolumeTotalWriteTime":
            return iops * period * 0.0005
        case "VolumeQueueLength":
            return iops * 0.0005
    return 0.0


def _attached(index: int) -> range:
    return range(index * VOLUMES_PER_INSTANCE, (index + 1) * VOLUMES_PER_INSTANCE)


def _instance_value(index: int, metric: str, period: int, stamp: int = 0) -> float:
    volumes = _attached(index)
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
    return sum(_volume_value(v, name, period, stamp) for v in volumes)


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
        values = []
    else:
        index = int(resource.split("-")[1])
        instance = resource.startswith("i-")
        value = _instance_value if instance else _volume_value
        if any(map(drains, _attached(index))) if instance else drains(index):
            # Values that change from minute to minute: one at each datapoint's start.
            values = [value(index, metric, period, t) for t in stamps]
        else:
            values = [value(index, metric, period)] * len(stamps)
    return {
        "Id": query["Id"],
        "Label": metric,
        "Timestamps": list(stamps),
        "Values": values,
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
    mix = sys.argv[2] if len(sys.argv) > 2 else "today"
    if mix not in MIXES:
        raise SystemExit(f"unknown mix {mix!r}: one of {', '.join(MIXES)}")
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 9911)
