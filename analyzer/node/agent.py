"""The node agent: its volumes' NVMe statistics read every few seconds, and the daemon's own
cycle run on them (`ebs-analyzer node`); a capture of what it reads, and a replay of one.

The analysis is the central daemon's, unchanged: the same inventory from EC2 (the node's
volumes and instance only), the same normalization, bucket model, rules, alert book, Slack,
Alertmanager and `/metrics`. Only the region's metrics differ: they come from the pages the
node read (`source.NodeMetrics`), at the node's period of a few seconds instead of CloudWatch's
minute, so a drain shows seconds after it starts. CloudWatch is asked only for BurstBalance,
a few times an hour, to anchor the bucket model.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

import structlog

from analyzer.analyze.rules import RuleSet
from analyzer.collect import devices
from analyzer.collect.aws import NO_REGION, Clients, default_region
from analyzer.collect.boundaries import Describer, MetricData
from analyzer.collect.capture import Capture, Writer
from analyzer.collect.cloudwatch import CloudWatch
from analyzer.collect.describe import Ec2Rds
from analyzer.collect.described import RecordedDescriber
from analyzer.collect.devices import Device, DeviceError
from analyzer.collect.inventory import InstanceTypeCache, discover
from analyzer.collect.logpage import PageError, parse
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region
from analyzer.collect.window import Window, floor_to
from analyzer.deliver.server import Server
from analyzer.errors import AwsAccessError, AwsCallError, ConfigError, UnreadableError
from analyzer.live import daemon
from analyzer.live.cycle import Analyzer, CycleResult
from analyzer.live.daemon import Daemon
from analyzer.model import metrics
from analyzer.model.limits import has_burst_balance
from analyzer.model.metrics import Measure, Namespace
from analyzer.model.resources import (
    DbInstance,
    Initialization,
    Instance,
    InstanceType,
    Inventory,
    Modification,
    Volume,
)
from analyzer.node.balance import Anchor
from analyzer.node.counters import Counters
from analyzer.node.source import NodeMetrics
from analyzer.settings import Settings

log = structlog.get_logger(__name__)

DEFAULT_EVERY_S = 5
"""Seconds between reads: the period of the node's series."""
ANCHOR_EVERY_S = 600.0
"""How often CloudWatch's BurstBalance is read to anchor the bucket model: one metric per
bucket volume every ten minutes, 4,320 a month ($0.04 at $0.01 per 1,000)."""
ANCHOR_SPAN_S = 1_800.0
"""The readings asked for each time: the latest of the last half hour (none while idle)."""
KEEP_MARGIN_S = 600.0
_NONE_FOUND = (
    "no EBS volume under {root}/class/nvme: not a Nitro instance, no EBS volume attached, or "
    "the host's sysfs not mounted there (--sys-root)"
)


def region_of(settings: Settings) -> str:
    """The node's region: the first the settings name, else the SDKs' default one."""
    region = (settings.region or [default_region() or ""])[0]
    if not region:
        raise ConfigError(NO_REGION)
    return region


def node_settings(settings: Settings, every_s: int) -> Settings:
    """The daemon's settings as a node runs them: a cycle every read, on data up to the read
    just taken (no settle delay: the page is the truth as of now), every metric each cycle.
    A node reads its own volumes whatever other nodes cover: no coverage asked."""
    return settings.model_copy(
        update={
            "interval": float(every_s),
            "settle_delay": 0.0,
            "polling": "full",
            "node_coverage_url": None,
        }
    )


@dataclass
class Reader:
    """The node's reads: which EBS volumes it has, their pages into the counters, CloudWatch's
    balance readings into the anchors; each written to a capture where one is kept."""

    metrics: NodeMetrics
    every_s: int
    sys_root: Path = Path("/sys")
    dev_root: Path = Path("/dev")
    cloudwatch: MetricData | None = None
    capture: Writer | None = None
    read: Callable[[Device], bytes] = devices.read_page
    clock: Callable[[], float] = time.time
    keep_s: float = 3 * 3600.0
    _devices: list[Device] = field(default_factory=list)
    _discovered: bool = False
    _sampled: float | None = None
    _anchored: float | None = None
    reads: dict[str, int] = field(default_factory=dict)
    """Page reads by outcome (`ok`, `error`), for the node's own metrics."""

    def discover(self) -> list[Device]:
        """The node's EBS volumes, found again (at each inventory refresh); said when they
        change."""
        found = devices.discover(self.sys_root, self.dev_root)
        if found != self._devices or self._sampled is None:
            log.info("node.devices", volumes=[d.volume_id for d in found])
        self._devices = found
        self._discovered = True
        return self._devices

    @property
    def volume_ids(self) -> list[str]:
        return [d.volume_id for d in self._devices]

    def sample(self) -> None:
        """Read every volume's page, unless that was done less than half a period ago."""
        now = self.clock()
        if self._sampled is not None and now - self._sampled < self.every_s / 2:
            return
        self._sampled = now
        for device in self._devices if self._discovered else self.discover():
            self._sample(device, now)
        self.anchor(now)

    def _sample(self, device: Device, now: float) -> None:
        vid = device.volume_id
        try:
            page = self.read(device)
            stats = parse(page, device.where)
        except (DeviceError, PageError) as exc:
            self.reads["error"] = self.reads.get("error", 0) + 1
            if self.metrics.unreadable.get(vid) != str(exc):
                log.warning("node.read_failed", volume_id=vid, error=str(exc))
            self.metrics.unreadable[vid] = str(exc)
            if self.capture is not None:
                self.capture.error(now, vid, str(exc))
            return
        self.reads["ok"] = self.reads.get("ok", 0) + 1
        self.metrics.unreadable.pop(vid, None)
        counters = self.metrics.counters.setdefault(vid, Counters(self.keep_s))
        if counters.add(now, stats):
            log.info("node.counter_reset", volume_id=vid)
        if self.capture is not None:
            self.capture.page(now, vid, page)

    def anchor(self, now: float) -> None:
        """CloudWatch's latest BurstBalance of each bucket volume, every `ANCHOR_EVERY_S`."""
        if self.cloudwatch is None:
            return
        if self._anchored is not None and now - self._anchored < ANCHOR_EVERY_S:
            return
        self._anchored = now
        volumes = list(self.metrics.volumes.values())
        for vid, found in readings(self.cloudwatch, volumes, [now]).items():
            kept = self.metrics.anchors.setdefault(vid, [])
            for anchor in found:
                if not kept or kept[-1].t < anchor.t:
                    kept.append(anchor)
                    if self.capture is not None:
                        self.capture.balance(anchor.t, vid, anchor.percent)
            del kept[:-8]


def readings(
    cloudwatch: MetricData, volumes: Sequence[Volume], moments: Sequence[float]
) -> dict[str, list[Anchor]]:
    """By volume id, oldest first: CloudWatch's BurstBalance as a node reading it at each of
    `moments` (epoch seconds, in order) takes it, the latest of the `ANCHOR_SPAN_S` before, in
    one request. Where CloudWatch does not answer, none, and one warning saying why: the
    balance is then unknown, never guessed."""
    wanted = [_balance_query(v) for v in volumes if has_burst_balance(v)]
    if not wanted or not moments:
        return {}
    ends = [floor_to(datetime.fromtimestamp(m, UTC), 60) for m in moments]
    window = Window(ends[0] - timedelta(seconds=ANCHOR_SPAN_S), ends[-1], 60)
    found, stats = cloudwatch.fetch(wanted, window)
    if stats.errors:
        log.warning("node.balance_unread", error=stats.errors[0])
    out: dict[str, list[Anchor]] = {}
    for query, series in found.items():
        points = series.points()
        kept: list[Anchor] = []
        for end in ends:
            since = end - timedelta(seconds=ANCHOR_SPAN_S)
            seen = [(stamp, value) for stamp, value in points if since <= stamp < end]
            if not seen:
                continue
            stamp, percent = seen[-1]
            at = stamp.timestamp() + 30.0  # the middle of the minute CloudWatch averaged
            if not kept or kept[-1].t < at:
                kept.append(Anchor(at, percent))
        if kept:
            out[query.resource_id] = kept
    return out


def _balance_query(volume: Volume) -> MetricQuery:
    metric = metrics.feeding(Namespace.EBS, Measure.BURST_BALANCE)
    assert metric is not None  # the catalogue has it
    dims = metrics.dimensions(metric, volume.volume_id) or ()
    return MetricQuery(volume.volume_id, "AWS/EBS", metric.name, dims, metric.statistic, 60)


@dataclass
class NodeDescriber:
    """The region's Describe* calls, narrowed to the node's volumes and their instance: a node
    never describes the whole region."""

    inner: Ec2Rds
    volume_ids: Callable[[], Sequence[str]]
    _attached: list[str] = field(default_factory=list)

    @property
    def region(self) -> str:
        return self.inner.region

    def volumes(self) -> list[Volume]:
        ids = list(self.volume_ids())
        found = self.inner.volumes_of(ids) if ids else []
        self._attached = sorted({v.attached_to for v in found if v.attached_to})
        return found

    def instances(self) -> list[Instance]:
        if not self._attached:
            self.volumes()
        return self.inner.instances_of(self._attached) if self._attached else []

    def instance_types(self, names: Sequence[str]) -> list[InstanceType]:
        return self.inner.instance_types(names)

    def offered_instance_types(self) -> list[InstanceType]:
        return self.inner.offered_instance_types()

    def orderable_db_classes(self, engine: str) -> set[str]:
        return self.inner.orderable_db_classes(engine)

    def db_instances(self) -> list[DbInstance]:
        return []  # RDS storage is not on any node

    def volume_modifications(self) -> dict[str, list[Modification]]:
        mine = set(self.volume_ids())
        return {k: v for k, v in self.inner.volume_modifications().items() if k in mine}

    def volume_initializations(self) -> dict[str, Initialization]:
        mine = set(self.volume_ids())
        return {k: v for k, v in self.inner.volume_initializations().items() if k in mine}


def _knowing(metrics_: NodeMetrics, analyzer: Analyzer) -> Callable[[], None]:
    """Before each fetch: the node's metrics told the volumes and instance last described."""
    seen: list[Mapping[str, Inventory]] = []

    def know() -> None:
        found = analyzer.inventories()
        if seen and seen[0] is found:
            return
        seen[:] = [found]
        metrics_.know(found.values())

    return know


def replay(capture: Capture, settings: Settings, ruleset: RuleSet, every_s: int) -> CycleResult:
    """One cycle at the end of a capture, over everything it holds, as `once` runs one over
    CloudWatch's history: the same rows and findings. The capture's inventory describes its
    volumes, and its readings anchor their balances: nothing calls AWS. A capture of pages
    alone is described through EC2 in the region found as every command finds it, and each
    bucket volume it has no reading of is anchored on CloudWatch as the node would have read
    it, every `ANCHOR_EVERY_S` from the first page."""
    end = capture.end
    assert end is not None  # `capture.read` refuses a capture without a page
    region = capture.inventory.region if capture.inventory else region_of(settings)
    start = min(r.t for r in capture.reads)
    node = NodeMetrics(region)
    for read in capture.reads:
        if read.stats is None:
            node.unreadable[read.volume_id] = read.error or "unreadable"
            continue
        node.unreadable.pop(read.volume_id, None)
        counters = node.counters.setdefault(read.volume_id, Counters(end - start + KEEP_MARGIN_S))
        counters.add(read.t, read.stats)
    for reading in capture.balances:
        node.anchors.setdefault(reading.volume_id, []).append(Anchor(reading.t, reading.percent))
    cloudwatch: CloudWatch | None = None
    if capture.inventory is not None:
        describer: Describer = RecordedDescriber(capture.inventory)
    else:
        ids = capture.volume_ids()
        clients = Clients.for_region(region)
        describer = NodeDescriber(Ec2Rds(clients), lambda: ids)
        # A refusal leaves the balances unknown (said once), not the pages unread.
        cloudwatch = CloudWatch(clients.cloudwatch, region, contain_refusals=True)
    config = node_settings(settings, every_s).model_copy(update={"region": [region]})
    analyzer = Analyzer(
        config, ruleset, connect=lambda name: Region(name, describer, node), resolution_s=every_s
    )
    analyzer.billed = lambda _: False
    analyzer.qualified = node.qualified
    analyzer.past_days = False
    know = _knowing(node, analyzer)
    moments = [start + i * ANCHOR_EVERY_S for i in range(int((end - start) // ANCHOR_EVERY_S) + 1)]

    once = threading.Lock()

    def before() -> None:
        know()
        nonlocal cloudwatch
        # The poller fetches its batches in threads, each calling this first: one asks.
        with once:
            if cloudwatch is not None:
                unanchored = [v for v in node.volumes.values() if v.volume_id not in node.anchors]
                node.anchors.update(readings(cloudwatch, unanchored, moments))
                cloudwatch = None  # once: the capture's span is past

    node.before = before
    return analyzer.run(datetime.fromtimestamp(end, UTC))


def capture_for(reader: Reader, seconds: float, out: IO[str], describe: Describer | None) -> int:
    """Read every `every_s` for `seconds`, writing each page (and the inventory first, where
    EC2 describes it) to `out`; the number of pages written."""
    writer = Writer(out)
    reader.capture = writer
    if not reader.discover():
        raise ConfigError(_NONE_FOUND.format(root=reader.sys_root))
    if describe is not None:
        try:
            inventory = discover(describe, InstanceTypeCache(), with_rds=False)
        except (AwsAccessError, AwsCallError) as exc:
            # The pages are the capture; a replay can describe their volumes later.
            log.warning("node.capture_without_inventory", error=str(exc))
        else:
            writer.inventory(reader.clock(), inventory)
            reader.metrics.know([inventory])
    written = 0
    stop = reader.clock() + seconds
    while True:
        before = reader.reads.get("ok", 0)
        reader.sample()
        written += reader.reads.get("ok", 0) - before
        if reader.clock() + reader.every_s > stop:
            if not written and reader.metrics.unreadable:
                reason = next(iter(reader.metrics.unreadable.values()))
                raise UnreadableError(f"no page could be read: {reason}")
            return written
        time.sleep(reader.every_s)


def connected(
    region: str,
    every_s: int,
    sys_root: Path,
    dev_root: Path,
    clients: Clients | None = None,
) -> tuple[NodeMetrics, Reader, NodeDescriber]:
    """The node's metrics, its reader and its describer, in its region through boto3's chain."""
    clients = clients or Clients.for_region(region)
    metrics_ = NodeMetrics(region)
    reader = Reader(
        metrics_,
        every_s,
        sys_root,
        dev_root,
        cloudwatch=CloudWatch(clients.cloudwatch, region),
    )
    describer = NodeDescriber(Ec2Rds(clients), lambda: [d.volume_id for d in reader.discover()])
    return metrics_, reader, describer


def attach(analyzer: Analyzer, metrics_: NodeMetrics, reader: Reader, every_s: int) -> None:
    """The analyzer reads the node: its metrics at the node's period, none of them billed, each
    cycle's reads taken as the cycle fetches."""
    analyzer.resolution_s = every_s
    analyzer.billed = lambda _: False
    analyzer.qualified = metrics_.qualified
    analyzer.past_days = False
    know = _knowing(metrics_, analyzer)

    def before() -> None:
        know()
        reader.sample()

    metrics_.before = before


def once(analyzer: Analyzer, reader: Reader) -> CycleResult:
    """Two reads `every_s` apart (a rate needs two), then one cycle: `once` on this node."""
    if not reader.discover():
        raise ConfigError(_NONE_FOUND.format(root=reader.sys_root))
    analyzer.refresh_inventory()
    reader.metrics.know(analyzer.inventories().values())
    reader.sample()
    time.sleep(reader.every_s)
    return analyzer.run(datetime.now(UTC))


Make = Callable[[Settings, RuleSet, Callable[[str], Region]], Analyzer]
"""How the node's analyzer is built from its settings, its rules and how a region is read."""


def standalone(config: Settings, ruleset: RuleSet, connect: Callable[[str], Region]) -> Analyzer:
    """An analyzer on its own, for one cycle (`node --once`): no daemon around it."""
    return Analyzer(config, ruleset, connect=connect).offering()


def analyzer_for(
    settings: Settings,
    ruleset: RuleSet,
    every_s: int,
    sys_root: Path,
    dev_root: Path,
    make: Make = standalone,
    read: Callable[[Device], bytes] = devices.read_page,
) -> tuple[Analyzer, Reader]:
    """The node's analyzer and its reader: the node's settings in its region, each region read
    through the node's metrics and describer, the analyzer attached to the reads. `make` builds
    the analyzer: on its own for one cycle, or inside the daemon (`serve`)."""
    config = node_settings(settings, every_s)
    region = region_of(config)
    metrics_, reader, describer = connected(region, every_s, sys_root, dev_root)
    reader.read = read
    analyzer = make(
        config.model_copy(update={"region": [region]}),
        ruleset,
        lambda name: Region(name, describer, metrics_),
    )
    attach(analyzer, metrics_, reader, every_s)
    return analyzer, reader


def serve(
    settings: Settings,
    ruleset: RuleSet,
    every_s: int,
    sys_root: Path,
    dev_root: Path,
    read: Callable[[Device], bytes] = devices.read_page,
) -> tuple[Daemon, Server, Reader]:
    """The node agent as a daemon: the central daemon's cycle, publication, alerts and state
    file, on the node's reads (`read`: the ioctl, unless a test stands in for the kernel)."""
    built: list[tuple[Daemon, Server]] = []

    def in_daemon(config: Settings, rules: RuleSet, connect: Callable[[str], Region]) -> Analyzer:
        # A node's pages hold minutes, not the fortnight a fix is weighed on.
        built.append(daemon.build(config, rules, connect=connect, past=False))
        return built[0][0].analyzer

    _, reader = analyzer_for(settings, ruleset, every_s, sys_root, dev_root, in_daemon, read)
    process, server = built[0]
    return process, server, reader
