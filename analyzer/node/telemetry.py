"""The node agent's own metrics, beside the daemon's: what it read of its volumes' pages."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from analyzer.node.agent import Reader

OUTCOMES = ("ok", "error")


class NodeCollector(Collector):
    """Read from the reader at each scrape: no state of its own to drift."""

    def __init__(self, reader: Reader, node: str) -> None:
        self.reader = reader
        self.node = node

    def collect(self) -> Iterator[Metric]:
        reader = self.reader
        info = GaugeMetricFamily(
            "ebs_analyzer_node_info",
            "The node agent: the node it runs on and the period it reads the pages at.",
            labels=["node", "every_seconds"],
        )
        info.add_metric([self.node, str(reader.every_s)], 1)
        yield info
        reads = CounterMetricFamily(
            "ebs_analyzer_node_page_reads",
            "EBS NVMe statistics pages read, by outcome (error: the device or the page refused; "
            "the log says why).",
            labels=["outcome"],
        )
        for outcome in OUTCOMES:
            reads.add_metric([outcome], reader.reads.get(outcome, 0))
        yield reads
        volumes = GaugeMetricFamily(
            "ebs_analyzer_node_volumes",
            "EBS volumes attached to this node, by whether their page was read last time.",
            labels=["readable"],
        )
        unreadable = sum(1 for vid in reader.volume_ids if vid in reader.metrics.unreadable)
        volumes.add_metric(["true"], len(reader.volume_ids) - unreadable)
        volumes.add_metric(["false"], unreadable)
        yield volumes
        resets = CounterMetricFamily(
            "ebs_analyzer_node_counter_resets",
            "Times a volume's counters went back (detached and attached again, or the instance "
            "stopped and started).",
            labels=["volume_id"],
        )
        for vid, counters in sorted(reader.metrics.counters.items()):
            resets.add_metric([vid], counters.resets)
        yield resets
        read_at = GaugeMetricFamily(
            "ebs_analyzer_node_volume_read_timestamp_seconds",
            "Epoch seconds of the last good read of a volume's page; none for a volume whose "
            "last read failed. The central daemon leaves the rates of a volume read in the last "
            "minute to this node (node_coverage_url).",
            labels=["volume_id"],
        )
        for vid, counters in sorted(reader.metrics.counters.items()):
            last = counters.last
            if last is not None and vid not in reader.metrics.unreadable:
                read_at.add_metric([vid], last.t)
        yield read_at
