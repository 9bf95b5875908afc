"""Prometheus: the last finished cycle as gauges, and the daemon's own metrics.

The snapshot's series are built and rendered once, when the daemon publishes a finished
cycle; a scrape sends that text and renders only the daemon's own metrics, and never calls
AWS. Series of resources that disappeared disappear with the next publication.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from analyzer.analyze.alerts import Alert
from analyzer.deliver.labels import (
    BOTTLENECK,
    ID_LABELS,
    INSTANCE_ID,
    REGION,
    RESOURCE_ID,
    RESOURCE_TYPE,
    RULE,
    SEVERITY,
)
from analyzer.deliver.rows import resource_row
from analyzer.deliver.telemetry import Telemetry
from analyzer.model.resources import ResourceType
from analyzer.model.state import Snapshot

prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]


@dataclass(frozen=True, slots=True)
class Published:
    """What a finished cycle leaves for scrapes: immutable, swapped in whole. The report
    rows (forecasts included), the series and their text are worked out once here, not on
    every scrape."""

    snapshot: Snapshot
    firing: tuple[Alert, ...]
    rows: tuple[Row, ...]
    families: tuple[Metric, ...]
    exposition: bytes

    @classmethod
    def of(cls, snapshot: Snapshot, firing: Sequence[Alert]) -> Published:
        rows = tuple(resource_row(s, snapshot) for s in snapshot.resources)
        families = tuple(_snapshot_families(rows, firing))
        return cls(snapshot, tuple(firing), rows, families, render(families))


Row = dict[str, Any]
Spec = tuple[str, str, Callable[[Row], float | None]]
"""(metric suffix, help, value from a report row); None leaves the series out."""


def _key(key: str) -> Callable[[Row], float | None]:
    return lambda r: r[key]


def _ratio(key: str) -> Callable[[Row], float | None]:
    return lambda r: None if r[key] is None else r[key] / 100


_RATES: tuple[Spec, ...] = (
    ("iops", "I/O operations per second in the latest complete period.", _key("iops")),
    (
        "throughput_bytes_per_second",
        "Bytes per second in the latest complete period.",
        _key("throughput_bytes_per_second"),
    ),
    (
        "data_age_seconds",
        "How old its newest datapoint is at the cycle's data end; its values are left out "
        "while stale.",
        _key("data_age_seconds"),
    ),
    ("iops_limit", "The IOPS limit in force now.", _key("iops_limit")),
    (
        "throughput_limit_bytes_per_second",
        "The throughput limit in force now, bytes per second.",
        _key("throughput_limit_bytes_per_second"),
    ),
)

_BUCKET: tuple[Spec, ...] = (
    (
        "burst_balance_ratio",
        "Share of the burst bucket left (0-1).",
        _ratio("burst_balance_percent"),
    ),
    (
        "burst_seconds_to_empty",
        "Seconds until a burst bucket is empty at the current drain; absent while not draining.",
        _key("seconds_to_empty"),
    ),
    (
        "burst_seconds_to_full",
        "Seconds until a refilling burst bucket is full again at the present rate; absent while "
        "full or draining.",
        _key("seconds_to_full"),
    ),
)

_VOLUME: tuple[Spec, ...] = (
    *_RATES,
    *_BUCKET,
    ("size_bytes", "Provisioned size in bytes.", lambda r: r["size_gib"] * 1024**3),
)

_INSTANCE: tuple[Spec, ...] = (
    *_RATES,
    (
        "burst_balance_ratio",
        "Share of the EBS burst bucket left (0-1), the lower of "
        "EBSIOBalance% and EBSByteBalance%; types whose baseline is below maximum.",
        _ratio("burst_balance_percent"),
    ),
)

_DB: tuple[Spec, ...] = (
    *_RATES,
    *_BUCKET,
    (
        "storage_iops_limit",
        "The storage's IOPS limit (all its striped volumes).",
        _key("storage_iops_limit"),
    ),
    (
        "storage_throughput_limit_bytes_per_second",
        "The storage's throughput limit.",
        _key("storage_throughput_limit_bytes_per_second"),
    ),
    ("class_iops_limit", "The instance class's EBS IOPS limit.", _key("class_iops_limit")),
    (
        "class_throughput_limit_bytes_per_second",
        "The instance class's EBS throughput limit.",
        _key("class_throughput_limit_bytes_per_second"),
    ),
    (
        "class_burst_balance_ratio",
        "The instance class's EBS burst bucket left (0-1).",
        _ratio("class_burst_balance_percent"),
    ),
    (
        "freeable_memory_bytes",
        "FreeableMemory: memory the database does not use.",
        _key("freeable_memory_bytes"),
    ),
    ("memory_bytes", "The instance class's memory.", _key("memory_bytes")),
    (
        "allocated_storage_bytes",
        "Allocated storage in bytes.",
        lambda r: r["allocated_gib"] * 1024**3,
    ),
)


def _families(
    prefix: str,
    what: str,
    labels: Sequence[str],
    ids: Callable[[Row], Sequence[str]],
    rows: Sequence[Row],
    specs: Sequence[Spec],
) -> Iterator[Metric]:
    for suffix, doc, value in specs:
        yield _family(
            f"{prefix}_{suffix}", f"{what}: {doc}", labels, [(ids(r), value(r)) for r in rows]
        )


def _family(
    name: str,
    doc: str,
    labels: Sequence[str],
    samples: Sequence[tuple[Sequence[str], float | None]],
) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, doc, labels=labels)
    for values, value in samples:
        if value is not None:
            family.add_metric(list(values), float(value))
    return family


HAD_DATA = frozenset({"ok", "model_mismatch", "impaired", "initializing"})


def _volume_families(rows: list[Row]) -> Iterator[Metric]:
    labels = (REGION, ID_LABELS[ResourceType.VOLUME], "volume_type", INSTANCE_ID)

    def ids(r: Row) -> tuple[str, ...]:
        return (r["region"], r["resource_id"], r["volume_type"], r["attached_to"] or "")

    yield from _families("ebs_analyzer_volume", "Volume", labels, ids, rows, _VOLUME)
    yield _family(
        "ebs_analyzer_volume_up",
        "Volume: 1 when the latest cycle had its data (status ok; model_mismatch where it "
        "contradicts a modelled limit; impaired where AWS reports its I/O stalled; initializing "
        "while it fetches its blocks from a snapshot), 0 on no data, stale data or an error.",
        (*labels, "status"),
        [((*ids(r), r["status"]), float(r["status"] in HAD_DATA)) for r in rows],
    )


def _instance_families(rows: list[Row]) -> Iterator[Metric]:
    labels = (REGION, ID_LABELS[ResourceType.INSTANCE])

    def ids(r: Row) -> tuple[str, ...]:
        return (r["region"], r["resource_id"])

    yield from _families(
        "ebs_analyzer_instance_ebs", "Instance EBS (all its volumes)", labels, ids, rows, _INSTANCE
    )
    yield _family(
        "ebs_analyzer_instance_info",
        "Instance: its type, as a label; always 1.",
        (*labels, "instance_type"),
        [((*ids(r), r["instance_type"]), 1.0) for r in rows],
    )


def _db_families(rows: list[Row]) -> Iterator[Metric]:
    labels = (REGION, ID_LABELS[ResourceType.DB_INSTANCE])

    def ids(r: Row) -> tuple[str, ...]:
        return (r["region"], r["resource_id"])

    yield from _families("ebs_analyzer_db_instance", "RDS instance", labels, ids, rows, _DB)
    yield _family(
        "ebs_analyzer_db_instance_info",
        "RDS instance: engine, class and storage type as labels; always 1.",
        (*labels, "engine", "instance_class", "storage_type"),
        [((*ids(r), r["engine"], r["instance_class"], r["storage_type"]), 1.0) for r in rows],
    )


def _snapshot_families(rows: Sequence[Row], firing: Sequence[Alert]) -> Iterator[Metric]:
    of = {
        kind: [r for r in rows if r["resource_type"] == kind]
        for kind in ("volume", "instance", "db_instance")
    }
    yield from _volume_families(of["volume"])
    yield from _instance_families(of["instance"])
    yield from _db_families(of["db_instance"])
    yield _finding_family(firing)


class _Fixed(Collector):
    def __init__(self, families: Sequence[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        yield from self._families


def render(families: Sequence[Metric]) -> bytes:
    """The exposition text of these series, as prometheus_client writes it. Gauges, which
    are all of a snapshot's tens of thousands of series, are written here: prometheus_client
    checks and escapes every label name of every sample, most of the cost of publishing a
    large fleet."""
    parts = []
    for family in families:
        if family.type == "gauge" and all(s.name == family.name for s in family.samples):
            parts.append(_gauge_text(family))
        else:
            registry = CollectorRegistry(auto_describe=False)
            registry.register(_Fixed([family]))
            parts.append(prometheus_client.generate_latest(registry).decode())
    return "".join(parts).encode()


def _gauge_text(family: Metric) -> str:
    name = family.name
    doc = family.documentation.replace("\\", r"\\").replace("\n", r"\n")
    lines = [f"# HELP {name} {doc}\n", f"# TYPE {name} gauge\n"]
    for sample in family.samples:
        labels = ",".join(f'{k}="{_escaped(v)}"' for k, v in sorted(sample.labels.items()))
        value = floatToGoString(sample.value)  # type: ignore[no-untyped-call]
        lines.append(f"{name}{{{labels}}} {value}\n" if labels else f"{name} {value}\n")
    return "".join(lines)


def _escaped(value: str) -> str:
    """A label value as the text format writes it."""
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
    return value


class SnapshotCollector(Collector):
    def __init__(self, source: Callable[[], Published | None]) -> None:
        self._source = source

    def collect(self) -> Iterator[Metric]:
        published = self._source()
        if published is not None:
            yield from published.families
        else:
            yield from _snapshot_families((), ())


def _finding_family(firing: Sequence[Alert]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(
        "ebs_analyzer_finding",
        "1 while a finding is active (firing).",
        labels=[RULE, SEVERITY, RESOURCE_TYPE, RESOURCE_ID, BOTTLENECK],
    )
    for alert in sorted(firing, key=lambda a: a.key):
        family.add_metric(
            [
                alert.rule,
                alert.severity.value,
                alert.resource_type.value,
                alert.resource_id,
                alert.finding.bottleneck.value,
            ],
            1.0,
        )
    return family


def exposition_for(
    source: Callable[[], Published | None], process_metrics: bool = True
) -> tuple[Callable[[], bytes], Telemetry]:
    """What /metrics sends: the last published snapshot's text, rendered when it was
    published, then the daemon's own metrics, rendered now."""
    live = CollectorRegistry(auto_describe=True)
    if process_metrics:
        prometheus_client.ProcessCollector(registry=live)
        prometheus_client.PlatformCollector(registry=live)
    telemetry = Telemetry(live)
    empty = render(tuple(_snapshot_families((), ())))

    def exposition() -> bytes:
        published = source()
        snapshot = published.exposition if published is not None else empty
        return snapshot + prometheus_client.generate_latest(live)

    return exposition, telemetry


def registry_for(
    source: Callable[[], Published | None], process_metrics: bool = True
) -> tuple[CollectorRegistry, Telemetry]:
    """One registry of everything /metrics sends (for tests and tools that want a registry)."""
    registry = CollectorRegistry(auto_describe=True)
    registry.register(SnapshotCollector(source))
    if process_metrics:
        prometheus_client.ProcessCollector(registry=registry)
        prometheus_client.PlatformCollector(registry=registry)
    return registry, Telemetry(registry)
