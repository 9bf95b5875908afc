"""The node agent's own metrics, read from its reader at each scrape."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from analyzer.collect.devices import Device
from analyzer.collect.logpage import Stats
from analyzer.node.agent import Reader
from analyzer.node.counters import Counters
from analyzer.node.source import NodeMetrics
from analyzer.node.telemetry import NodeCollector


def test_what_the_node_read_is_on_its_metrics() -> None:
    metrics = NodeMetrics("us-east-1")
    reader = Reader(metrics, 5)
    reader._devices = [
        Device("vol-a", "nvme1", Path("/dev/nvme1n1")),
        Device("vol-b", "nvme2", Path("/dev/nvme2n1")),
    ]
    reader.reads = {"ok": 7, "error": 2}
    metrics.unreadable["vol-b"] = "vol-b: needs CAP_SYS_ADMIN"
    counters = metrics.counters.setdefault("vol-a", Counters(600))
    counters.add(0, Stats(read_ops=10))
    counters.add(5, Stats(read_ops=2))  # went back: a reset
    registry = CollectorRegistry()
    registry.register(NodeCollector(reader, "node-a"))
    text = generate_latest(registry).decode()
    assert 'ebs_analyzer_node_info{every_seconds="5",node="node-a"} 1.0' in text
    assert 'ebs_analyzer_node_page_reads_total{outcome="ok"} 7.0' in text
    assert 'ebs_analyzer_node_page_reads_total{outcome="error"} 2.0' in text
    assert 'ebs_analyzer_node_volumes{readable="true"} 1.0' in text
    assert 'ebs_analyzer_node_volumes{readable="false"} 1.0' in text
    assert 'ebs_analyzer_node_counter_resets_total{volume_id="vol-a"} 1.0' in text
    assert 'ebs_analyzer_node_volume_read_timestamp_seconds{volume_id="vol-a"} 5.0' in text


def test_a_volume_whose_last_read_failed_has_no_read_timestamp() -> None:
    metrics = NodeMetrics("us-east-1")
    reader = Reader(metrics, 5)
    metrics.counters.setdefault("vol-a", Counters(600)).add(3, Stats(read_ops=1))
    metrics.counters.setdefault("vol-b", Counters(600)).add(4, Stats(read_ops=1))
    metrics.unreadable["vol-b"] = "vol-b: device gone"
    registry = CollectorRegistry()
    registry.register(NodeCollector(reader, "node-a"))
    text = generate_latest(registry).decode()
    assert 'ebs_analyzer_node_volume_read_timestamp_seconds{volume_id="vol-a"} 3.0' in text
    assert 'read_timestamp_seconds{volume_id="vol-b"}' not in text
