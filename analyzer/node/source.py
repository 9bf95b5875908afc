"""The region as a node sees it: its own volumes and instance, described by EC2, and their
metrics answered from the NVMe statistics the node read instead of from CloudWatch.

The metrics keep CloudWatch's names and statistics (the catalogue's), so that normalization,
the bucket model and every rule read a node's series exactly as they read CloudWatch's, only
at a period of a few seconds:

| asked | answered from the page |
|---|---|
| VolumeReadOps, VolumeWriteOps, VolumeReadBytes, VolumeWriteBytes (Sum) | the counters' growth |
| VolumeTotalReadTime, VolumeTotalWriteTime (Sum, seconds) | the time counters (µs) / 10⁶ |
| VolumeQueueLength (Average) | the queue length read in the period |
| Volume{IOPS,Throughput}ExceededCheck (Maximum) | 1 where the exceeded time grew |
| BurstBalance (Average) | the bucket model, anchored on CloudWatch's reading (`balance.py`) |
| EBSReadOps, …, EBSWriteBytes of the instance (Sum) | the sums over its volumes |
| InstanceEBS{IOPS,Throughput}ExceededCheck | 1 where a volume's instance time grew |

What the page does not hold (the stalled-I/O and attached-EBS status checks, the instance's
EBS balances) has no data here. A volume whose page could not be read answers an error that
says why, never zeros.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from analyzer.collect.logpage import Stats
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window
from analyzer.model import metrics
from analyzer.model.limits import CreditBucket, volume_envelope
from analyzer.model.metrics import Measure, Namespace, Part
from analyzer.model.resources import Instance, Inventory, Volume
from analyzer.model.series import Series
from analyzer.model.state import FetchStats, ResourceState
from analyzer.node import balance
from analyzer.node.balance import Anchor
from analyzer.node.counters import Counters

Read = Callable[[Counters, float, float, int], Series]
US = 1e6


def _sum(value: Callable[[Stats], float]) -> Read:
    return lambda c, start, end, period: c.sums(value, start, end, period)


def _flag(value: Callable[[Stats], float]) -> Read:
    return lambda c, start, end, period: c.flags(value, start, end, period)


VOLUME: dict[Measure | Part, Read] = {
    Part.READ_OPS: _sum(lambda s: s.read_ops),
    Part.WRITE_OPS: _sum(lambda s: s.write_ops),
    Part.READ_BYTES: _sum(lambda s: s.read_bytes),
    Part.WRITE_BYTES: _sum(lambda s: s.write_bytes),
    Part.READ_TIME: _sum(lambda s: s.read_time_us / US),
    Part.WRITE_TIME: _sum(lambda s: s.write_time_us / US),
    Measure.QUEUE_LENGTH: lambda c, start, end, period: c.averages(
        lambda s: s.queue_length, start, end, period
    ),
    Measure.IOPS_EXCEEDED: _flag(lambda s: s.volume_iops_exceeded_us),
    Measure.THROUGHPUT_EXCEEDED: _flag(lambda s: s.volume_throughput_exceeded_us),
}
"""AWS/EBS metrics, by what they feed (the catalogue names them), as the page answers them."""
INSTANCE: dict[Measure | Part, Read] = {
    Part.READ_OPS: VOLUME[Part.READ_OPS],
    Part.WRITE_OPS: VOLUME[Part.WRITE_OPS],
    Part.READ_BYTES: VOLUME[Part.READ_BYTES],
    Part.WRITE_BYTES: VOLUME[Part.WRITE_BYTES],
    Measure.IOPS_EXCEEDED: _flag(lambda s: s.instance_iops_exceeded_us),
    Measure.THROUGHPUT_EXCEEDED: _flag(lambda s: s.instance_throughput_exceeded_us),
}
"""AWS/EC2 metrics, by what they feed: the instance's EBS I/O is the sum over its volumes, all
of which the node sees; an exceeded check, any volume's."""
FLAGS = frozenset({Measure.IOPS_EXCEEDED, Measure.THROUGHPUT_EXCEEDED})


def _feeds(namespace: Namespace, name: str) -> Measure | Part | None:
    try:
        return metrics.named(namespace, name).feeds
    except KeyError:
        return None


@dataclass
class NodeMetrics:
    """GetMetricData answered from the node's samples (see the module's table)."""

    region: str
    counters: dict[str, Counters] = field(default_factory=dict)
    """By volume id: the samples of each volume the node reads."""
    unreadable: dict[str, str] = field(default_factory=dict)
    """By volume id: why its page could not be read last time."""
    anchors: dict[str, list[Anchor]] = field(default_factory=dict)
    """By volume id, oldest first: CloudWatch's BurstBalance readings."""
    volumes: dict[str, Volume] = field(default_factory=dict)
    instances: dict[str, Instance] = field(default_factory=dict)
    """What the node's inventory last held: the bucket model needs each volume's type and
    size, and an instance's sums its volumes."""
    before: Callable[[], None] | None = None
    """Run before each fetch: the node's reads, taken just before the cycle reads them."""

    def know(self, inventories: Iterable[Inventory]) -> None:
        """The volumes and instances of these inventories, described as the cycle uses them."""
        self.volumes = {v.volume_id: v for inv in inventories for v in inv.volumes}
        self.instances = {i.instance_id: i for inv in inventories for i in inv.instances}

    def fetch(
        self, queries: Sequence[MetricQuery], window: Window
    ) -> tuple[dict[MetricQuery, Series], FetchStats]:
        if self.before is not None:
            self.before()
        stats = FetchStats()
        stats.metrics_requested = stats.free = len(queries)
        start, end = window.start.timestamp(), window.end.timestamp()
        out: dict[MetricQuery, Series] = {}
        for query in queries:
            series = self._answer(query, start, end)
            stats.datapoints += len(series)
            if series.error is not None:
                stats.metrics_failed += 1
                stats.errors.append(series.error)
            out[query] = series
        return out, stats

    def _answer(self, query: MetricQuery, start: float, end: float) -> Series:
        period = query.period_s
        if query.namespace == Namespace.EBS.value:
            feeds = _feeds(Namespace.EBS, query.metric)
            if feeds in VOLUME or feeds is Measure.BURST_BALANCE:
                return self._volume(query.resource_id, feeds, start, end, period)
        if query.namespace == Namespace.EC2.value:
            feeds = _feeds(Namespace.EC2, query.metric)
            if feeds in INSTANCE:
                return self._instance(query.resource_id, feeds, start, end, period)
        # What the page does not hold (status checks, the instance's balances): no data.
        return Series(period_s=period)

    def _volume(
        self, volume_id: str, feeds: Measure | Part, start: float, end: float, period: int
    ) -> Series:
        if volume_id in self.unreadable:
            return Series.failed(self.unreadable[volume_id], period)
        mine = self.counters.get(volume_id)
        if mine is None:
            return Series(period_s=period)
        if feeds is Measure.BURST_BALANCE:
            return self._balance(volume_id, mine, start, end, period)
        return VOLUME[feeds](mine, start, end, period)

    def _balance(
        self, volume_id: str, mine: Counters, start: float, end: float, period: int
    ) -> Series:
        bucket = self._bucket(volume_id)
        if bucket is None:
            return Series(period_s=period)
        anchors = self.anchors.get(volume_id, [])
        return balance.modelled(bucket, mine, anchors, start, end, period)

    def qualified(self, state: ResourceState, end: datetime) -> str | None:
        """Where a volume's balance at `end` is carried from a reading before the node's first
        page, what it was carried across and how far off it may be (`balance.carried`)."""
        volume_id = state.ref.resource_id
        mine = self.counters.get(volume_id)
        bucket = self._bucket(volume_id) if isinstance(state.resource, Volume) else None
        if mine is None or bucket is None:
            return None
        found = balance.carried(bucket, mine, self.anchors.get(volume_id, []), end.timestamp())
        return found.text() if found is not None else None

    def _bucket(self, volume_id: str) -> CreditBucket | None:
        """The credit bucket of a volume the node knows, on its instance; None without one."""
        volume = self.volumes.get(volume_id)
        if volume is None:
            return None
        instance = self.instances.get(volume.attached_to or "")
        envelope = volume_envelope(volume, instance.type_info if instance else None)
        return envelope.bucket if envelope is not None else None

    def _instance(
        self, instance_id: str, feeds: Measure | Part, start: float, end: float, period: int
    ) -> Series:
        instance = self.instances.get(instance_id)
        if instance is None:
            return Series(period_s=period)
        parts = []
        for vid in instance.volume_ids:
            if vid in self.unreadable:
                return Series.failed(self.unreadable[vid], period)
            if vid not in self.counters:
                # Its other volumes' I/O is not the instance's: unknown, never understated.
                return Series(period_s=period)
            parts.append(INSTANCE[feeds](self.counters[vid], start, end, period))
        if not parts:
            return Series(period_s=period)
        return _combined(parts, period, flags=feeds in FLAGS)


def _combined(parts: list[Series], period: int, flags: bool) -> Series:
    """The sum of the parts per period (the highest, for checks), where every part has it:
    a period one volume has no sample for is not the instance's whole I/O."""
    stamps = set(parts[0].timestamps)
    for part in parts[1:]:
        stamps &= set(part.timestamps)
    tables: list[Mapping[object, float]] = [dict(p.points()) for p in parts]
    pick = max if flags else sum
    return Series.of([(t, pick(table[t] for table in tables)) for t in stamps], period)
