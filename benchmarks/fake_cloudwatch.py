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
zero I/O, full idle time. `nodes`: six volumes an instance, as databases and search nodes are
laid out, by instance (`NODES`): most instances quiet, a few with a busy or a hot data volume,
and late drainers, whose daily job starts while the benchmark runs (`LATE`). `shared`: six
volumes an instance too (`SHARED`), most idle, a data volume at a third of a limit on most
instances, and a few draining or at a cap. Still a function of resource, metric and minute,
and nothing else.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VOLUMES_PER_INSTANCE = 5
"""In every mix but `nodes`."""
NODE_VOLUMES = 6
IO_BYTES = 16 * 1024

MIXES: dict[str, tuple[tuple[int, str], ...]] = {
    "today": ((60, "idle"), (30, "quiet"), (8, "busy"), (2, "hot")),
    "busy": ((10, "idle"), (30, "quiet"), (37, "busy"), (20, "draining"), (3, "capped")),
    "idle": ((83, "idle"), (13, "quiet"), (2, "hot"), (2, "draining")),
}
"""Of every 100 volumes, in index order: how many of each kind."""

_QUIET_NODE = ("idle", "quiet", "idle", "idle", "idle", "idle")
NODES: tuple[tuple[str, ...], ...] = (
    _QUIET_NODE,
    _QUIET_NODE,
    _QUIET_NODE,
    _QUIET_NODE,
    ("idle", "surge", "surge", "idle", "idle", "idle"),
    _QUIET_NODE,
    ("idle", "busy", "quiet", "idle", "idle", "idle"),
    ("idle", "busy", "busy", "idle", "idle", "idle"),
    ("idle", "hot", "quiet", "idle", "idle", "idle"),
    ("idle", "late", "quiet", "idle", "idle", "idle"),
)
"""The `nodes` mix, by instance, every ten instances: a root volume and five data volumes
each. Six instances quiet; two with busy data volumes (1,000 IOPS each, under a third of an
m5.large's EBS baseline together); one with a hot volume (2,900 of its 3,000 IOPS); a late
drainer (`late`: a gp2 volume whose daily job drains its bucket); and an instance whose two
`surge` volumes' daily job drains the instance's EBS bucket, though neither volume nears its
own limits."""
MIXES["nodes"] = ((60, "idle"), (15, "quiet"), (3, "busy"), (2, "hot"), (2, "late"), (3, "surge"))
"""What `nodes` comes to, of every 100 volumes (rounded): for the report."""

_THIRD_NODE = ("idle", "busy", "idle", "idle", "idle", "idle")
SHARED: tuple[tuple[str, ...], ...] = (
    *(_THIRD_NODE,) * 6,
    ("idle", "draining", "idle", "idle", "idle", "idle"),
    ("idle", "capped", "idle", "idle", "idle", "idle"),
)
"""The `shared` mix, by instance, every eight instances: six volumes each, a root and a data
volume in use and four idle. Of 240 volumes on 40 instances: 200 idle, 30 at a third of a limit
(`busy`: 1,000 of a gp3's 3,000 IOPS), 5 gp2 draining their bucket (some empty within minutes,
then held at their baseline) and 5 gp3 at their IOPS cap."""
MIXES["shared"] = ((83, "idle"), (13, "busy"), (2, "draining"), (2, "capped"))
"""What `shared` comes to, of every 100 volumes (rounded): for the report."""
LAYOUTS = {"nodes": NODES, "shared": SHARED}
"""The mixes laid out by instance."""

mix = "today"
"""The mix this process serves (set from its arguments)."""


def per_instance(of: str | None = None) -> int:
    return NODE_VOLUMES if (of or mix) in LAYOUTS else VOLUMES_PER_INSTANCE


def volume_kind(index: int, of: str | None = None) -> str:
    layout = LAYOUTS.get(of or mix)
    if layout is not None:
        return layout[index // NODE_VOLUMES % len(layout)][index % NODE_VOLUMES]
    slot = index % 100
    for count, kind in MIXES[of or mix]:
        if slot < count:
            return kind
        slot -= count
    raise AssertionError("a mix covers 100 slots")


@dataclass(frozen=True)
class Job:
    """A daily job that drains a bucket: it asks `demand` for `length_s` from the same moment
    every day, is held to `baseline` once the bucket is empty, and leaves the bucket to refill
    at `baseline` after it. Levels in percent of `bucket` (credits)."""

    demand: float
    baseline: float
    bucket: float
    length_s: float = 3_600.0

    def level(self, into: float) -> float:
        """The balance `into` seconds after today's job started (negative: before it)."""
        if into < 0:
            into += 86_400  # yesterday's job, refilled since
        spent = (self.demand - self.baseline) * min(into, self.length_s) / self.bucket * 100
        level = max(0.0, 100.0 - spent)
        if into > self.length_s:
            level = min(100.0, level + self.baseline * (into - self.length_s) / self.bucket * 100)
        return level

    def rate(self, into: float) -> float:
        """What the job does `into` seconds after today's start: its demand while credits last,
        the baseline once they are gone, nothing outside it."""
        if into < 0 or into >= self.length_s:
            return 0.0
        return self.demand if self.level(into) > 0 else self.baseline


LATE = Job(demand=3_000.0, baseline=300.0, bucket=5_400_000.0)
"""A gp2 volume of 100 GiB (300 IOPS baseline, 5.4 million credits) run at its 3,000 IOPS
burst: empty 2,000 s in, after which the job runs at the baseline."""
M5_LARGE = Job(demand=15_000.0, baseline=3_600.0, bucket=30 * 60 * (18_750.0 - 3_600.0))
"""Two `surge` volumes at 7,500 IOPS each (of their 16,000) on an m5.large (3,600 IOPS
baseline, 18,750 at most, 30 minutes at the most a day: Amazon EC2 User Guide): its
EBSIOBalance% is empty 2,392 s in."""
SURGE_IO_BYTES = 4 * 1024
"""Small operations, so that the surge drains the instance's IOPS bucket alone."""


def late_start(index: int) -> int:
    """Seconds after the benchmark's first cycle at which a late volume's or surging instance's
    job starts, the same time every day: between 5 and 25 minutes in, by the instance."""
    return 300 + (index // NODE_VOLUMES // len(NODES) * 420) % 1_200


def _job_into(index: int, stamp: int) -> float:
    """Seconds since the job of the instance of volume `index` started today (negative before)."""
    since = (stamp - DRAIN_REFERENCE - late_start(index)) % 86_400
    return since if since < 43_200 else since - 86_400


IOPS = {
    "idle": 0.0,
    "quiet": 3.0,
    "busy": 1_000.0,
    "hot": 2_900.0,
    "draining": 1_500.0,
    "capped": 3_000.0,
    "late": 0.0,
    "surge": 0.0,
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
    return volume_kind(index) in ("draining", "late", "surge")


def runs_jobs(index: int) -> bool:
    """A volume of a daily job, whose periods longer than a minute are aggregated minute by
    minute (a `draining` volume's are its value at the period's start, as they always were:
    20 % of the busy mix, a daily minimum each, would take the fake minutes to answer)."""
    return volume_kind(index) in ("late", "surge")


def _iops(index: int, kind: str, stamp: int) -> float:
    if kind == "draining" and burst_balance(index, stamp) == 0.0:
        return DRAIN_BASELINE_IOPS
    if kind == "late":
        return LATE.rate(_job_into(index, stamp))
    if kind == "surge":
        return M5_LARGE.rate(_job_into(index, stamp)) / 2
    return IOPS[kind]


def _volume_value(index: int, metric: str, period: int, stamp: int = 0) -> float:
    kind = volume_kind(index)
    iops = _iops(index, kind, stamp)
    size = SURGE_IO_BYTES if kind == "surge" else IO_BYTES
    match metric:
        case "VolumeReadOps":
            return iops * period * 0.7
        case "VolumeWriteOps":
            return iops * period * 0.3
        case "VolumeReadBytes":
            return iops * period * 0.7 * size
        case "VolumeWriteBytes":
            return iops * period * 0.3 * size
        case "BurstBalance":
            if kind == "late":
                return LATE.level(_job_into(index, stamp))
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
    return range(index * per_instance(), (index + 1) * per_instance())


def _instance_value(index: int, metric: str, period: int, stamp: int = 0) -> float:
    volumes = _attached(index)
    if metric == "EBSIOBalance%" and any(volume_kind(v) == "surge" for v in volumes):
        return M5_LARGE.level(_job_into(volumes[0], stamp))
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
        index = int(volume.split("-")[1]) // per_instance()
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
        mine = _attached(index) if instance else (index,)
        if period > 60 and any(map(runs_jobs, mine)):
            # Each datapoint the statistic of its period's minutes, as CloudWatch has it.
            values = [_over(value, index, metric, stat["Stat"], period, t) for t in stamps]
        elif any(map(drains, mine)):
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


def _over(
    value: Callable[[int, str, int, int], float],
    index: int,
    metric: str,
    statistic: str,
    period: int,
    start: int,
) -> float:
    """A period's datapoint from its minutes: their sum, mean, least or most."""
    minutes = [value(index, metric, 60, t) for t in range(start, start + period, 60)]
    if statistic == "Sum":
        return sum(minutes)
    if statistic == "Minimum":
        return min(minutes)
    if statistic == "Maximum":
        return max(minutes)
    return sum(minutes) / len(minutes)


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
