"""Prometheus: the last finished cycle as gauges, and the daemon's own metrics.

The snapshot's series are built and rendered once, when the daemon publishes a finished
cycle; a scrape sends that text and renders only the daemon's own metrics, and never calls
AWS. Series of resources that disappeared disappear with the next publication.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from analyzer.analyze.alerts import Alert
from analyzer.analyze.savings import Saving
from analyzer.deliver.deflated import Deflated
from analyzer.deliver.labels import (
    ACCOUNT_ID,
    ACCOUNT_NAME,
    BOTTLENECK,
    ID_LABELS,
    INSTANCE_ID,
    KUBERNETES_CLUSTER,
    NAMESPACE,
    PERSISTENTVOLUMECLAIM,
    REGION,
    RESOURCE_ID,
    RESOURCE_TYPE,
    RULE,
    SEVERITY,
)
from analyzer.deliver.telemetry import Telemetry
from analyzer.model.reading import DbDetails, InstanceDetails, Reading, VolumeDetails
from analyzer.model.resources import ResourceRef, ResourceType

prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]


@dataclass(frozen=True, slots=True)
class Published:
    """What a finished cycle leaves for scrapes: immutable, swapped in whole. The series'
    text is worked out once here, from the cycle's readings, not on every scrape: family by
    family, each dropped once written (a large fleet's hundreds of thousands of samples are
    never all held at once), and only the text is kept, compressed as it is written, not the
    readings (while the next cycle works out its own, two sets of them would be alive)."""

    exposition: Deflated

    @classmethod
    def of(
        cls,
        readings: Sequence[Reading],
        firing: Sequence[Alert],
        savings: Weighed | None = None,
    ) -> Published:
        families = snapshot_families(readings, firing)
        if savings is not None:
            families = chain(families, savings_families(*savings))
        return cls(Deflated.of(rendered(families)))


Weighed = tuple[Sequence[Saving], Mapping[str, int]]
"""The savings offered, and the volumes by how far their long past is read (`weighed`,
`reading`, `unread`)."""


Spec = tuple[str, str, Callable[[Any], float | None]]
"""(metric suffix, help, value from a reading or its details); None leaves the series out."""


def _ratio(percent: float | None) -> float | None:
    return None if percent is None else percent / 100


_RATES: tuple[Spec, ...] = (
    ("iops", "I/O operations per second in the latest complete period.", lambda r: r.iops),
    (
        "throughput_bytes_per_second",
        "Bytes per second in the latest complete period.",
        lambda r: r.throughput_bytes_per_second,
    ),
    (
        "data_age_seconds",
        "How old its newest datapoint is at the cycle's data end; its values are left out "
        "while stale.",
        lambda r: r.data_age_seconds,
    ),
    ("iops_limit", "The IOPS limit in force now.", lambda r: r.iops_limit),
    (
        "throughput_limit_bytes_per_second",
        "The throughput limit in force now, bytes per second.",
        lambda r: r.throughput_limit_bytes_per_second,
    ),
)

_BUCKET: tuple[Spec, ...] = (
    (
        "burst_balance_ratio",
        "Share of the burst bucket left (0-1).",
        lambda r: _ratio(r.burst_balance_percent),
    ),
    (
        "burst_seconds_to_empty",
        "Seconds until a burst bucket is empty at the current drain; absent while not draining.",
        lambda r: r.seconds_to_empty,
    ),
    (
        "burst_seconds_to_full",
        "Seconds until a refilling burst bucket is full again at the present rate; absent while "
        "full or draining.",
        lambda r: r.seconds_to_full,
    ),
)

_VOLUME: tuple[Spec, ...] = (
    *_RATES,
    *_BUCKET,
    ("size_bytes", "Provisioned size in bytes.", lambda r: r.details.size_gib * 1024**3),
)

_INSTANCE: tuple[Spec, ...] = (
    *_RATES,
    (
        "burst_balance_ratio",
        "Share of the EBS burst bucket left (0-1), the lower of "
        "EBSIOBalance% and EBSByteBalance%; types whose baseline is below maximum.",
        lambda r: _ratio(r.burst_balance_percent),
    ),
)

_DB: tuple[Spec, ...] = (
    *_RATES,
    *_BUCKET,
    (
        "storage_iops_limit",
        "The storage's IOPS limit (all its striped volumes).",
        lambda r: r.details.storage_iops_limit,
    ),
    (
        "storage_throughput_limit_bytes_per_second",
        "The storage's throughput limit.",
        lambda r: r.details.storage_throughput_limit_bytes_per_second,
    ),
    (
        "class_iops_limit",
        "The instance class's EBS IOPS limit.",
        lambda r: r.details.class_iops_limit,
    ),
    (
        "class_throughput_limit_bytes_per_second",
        "The instance class's EBS throughput limit.",
        lambda r: r.details.class_throughput_limit_bytes_per_second,
    ),
    (
        "class_burst_balance_ratio",
        "The instance class's EBS burst bucket left (0-1).",
        lambda r: _ratio(r.details.class_burst_balance_percent),
    ),
    (
        "freeable_memory_bytes",
        "FreeableMemory: memory the database does not use.",
        lambda r: r.details.freeable_memory_bytes,
    ),
    ("memory_bytes", "The instance class's memory.", lambda r: r.details.memory_bytes),
    (
        "allocated_storage_bytes",
        "Allocated storage in bytes.",
        lambda r: r.details.allocated_gib * 1024**3,
    ),
)


def _families(
    prefix: str,
    what: str,
    labels: tuple[str, ...],
    ids: Callable[[Reading], Sequence[str]],
    rows: Sequence[Reading],
    specs: Sequence[Spec],
) -> Iterator[Gauge]:
    """A family for each spec over the same rows: each row's label values worked out once."""
    named = [ids(r) for r in rows]
    for suffix, doc, value in specs:
        values = (value(r) for r in rows)
        yield Gauge(f"{prefix}_{suffix}", f"{what}: {doc}", labels, zip(named, values, strict=True))


@dataclass(frozen=True, slots=True)
class Gauge:
    """A gauge family as its text is written: its label names once, and each series' label
    values and value. prometheus_client's families hold a dict of labels for every sample:
    at 10,000 volumes a family's samples took megabytes at the cycle's peak, for text that is
    written once."""

    name: str
    documentation: str
    labels: tuple[str, ...]
    series: Iterable[tuple[Sequence[str], float | None]]
    """Read once, as the text is written; a series whose value is None is left out."""


def _owned(owned: bool) -> tuple[str, ...]:
    """The account labels, where there are accounts."""
    return (ACCOUNT_ID, ACCOUNT_NAME) if owned else ()


def _owner(ref: ResourceRef, owned: bool) -> tuple[str, ...]:
    return (ref.account_id, ref.account_name) if owned else ()


def _claimed(claimed: bool) -> tuple[str, ...]:
    """The claim labels, where any volume has a claim."""
    return (NAMESPACE, PERSISTENTVOLUMECLAIM, KUBERNETES_CLUSTER) if claimed else ()


def _claim(ref: ResourceRef, claimed: bool) -> tuple[str, ...]:
    """A volume's claim, by kube-state-metrics' label names; empty for a volume without one."""
    if not claimed:
        return ()
    claim = ref.claim
    return (claim.namespace, claim.name, claim.cluster or "") if claim is not None else ("",) * 3


def _volume_families(
    rows: Sequence[Reading], owned: bool = False, claimed: bool = False
) -> Iterator[Gauge]:
    labels = (
        *_owned(owned),
        REGION,
        ID_LABELS[ResourceType.VOLUME],
        "volume_type",
        INSTANCE_ID,
        *_claimed(claimed),
    )

    def ids(r: Reading) -> tuple[str, ...]:
        assert isinstance(r.details, VolumeDetails)
        where = (r.ref.region, r.ref.resource_id, r.details.volume_type, r.attached_to or "")
        return (*_owner(r.ref, owned), *where, *_claim(r.ref, claimed))

    yield from _families("ebs_analyzer_volume", "Volume", labels, ids, rows, _VOLUME)
    yield Gauge(
        "ebs_analyzer_volume_up",
        "Volume: 1 when the latest cycle had its data (status ok; model_mismatch where it "
        "contradicts a modelled limit; impaired where AWS reports its I/O stalled; initializing "
        "while it fetches its blocks from a snapshot), 0 on no data, stale data or an error, "
        "and with status node_agent where a node agent reads its rates (node_coverage_url).",
        (*labels, "status"),
        [((*ids(r), r.status.value), float(r.status.had_data)) for r in rows],
    )


def _instance_families(rows: Sequence[Reading], owned: bool = False) -> Iterator[Gauge]:
    labels = (*_owned(owned), REGION, ID_LABELS[ResourceType.INSTANCE])

    def ids(r: Reading) -> tuple[str, ...]:
        return (*_owner(r.ref, owned), r.ref.region, r.ref.resource_id)

    def kind(r: Reading) -> str:
        assert isinstance(r.details, InstanceDetails)
        return r.details.instance_type

    yield from _families(
        "ebs_analyzer_instance_ebs", "Instance EBS (all its volumes)", labels, ids, rows, _INSTANCE
    )
    yield Gauge(
        "ebs_analyzer_instance_info",
        "Instance: its type, as a label; always 1.",
        (*labels, "instance_type"),
        [((*ids(r), kind(r)), 1.0) for r in rows],
    )


def _db_families(rows: Sequence[Reading], owned: bool = False) -> Iterator[Gauge]:
    labels = (*_owned(owned), REGION, ID_LABELS[ResourceType.DB_INSTANCE])

    def ids(r: Reading) -> tuple[str, ...]:
        return (*_owner(r.ref, owned), r.ref.region, r.ref.resource_id)

    def info(r: Reading) -> tuple[str, ...]:
        assert isinstance(r.details, DbDetails)
        return (*ids(r), r.details.engine, r.details.instance_class, r.details.storage_type)

    yield from _families("ebs_analyzer_db_instance", "RDS instance", labels, ids, rows, _DB)
    yield Gauge(
        "ebs_analyzer_db_instance_info",
        "RDS instance: engine, class and storage type as labels; always 1.",
        (*labels, "engine", "instance_class", "storage_type"),
        [(info(r), 1.0) for r in rows],
    )


def snapshot_families(rows: Sequence[Reading], firing: Sequence[Alert]) -> Iterator[Gauge]:
    """The series of a cycle's readings and firing alerts, one family at a time."""
    of: dict[ResourceType, list[Reading]] = {kind: [] for kind in ResourceType}
    for r in rows:
        of[r.ref.resource_type].append(r)
    # The account labels are on every series once any resource has an account: a dashboard's
    # account variable then matches all of them.
    owned = any(r.ref.account_id for r in rows)
    owned = owned or any(a.finding.resource.account_id for a in firing)
    # Likewise the claim labels, once any volume has a claim: a fleet without one keeps its
    # series as they were.
    claimed = any(r.ref.claim is not None for r in of[ResourceType.VOLUME])
    claimed = claimed or any(a.finding.resource.claim is not None for a in firing)
    yield from _volume_families(of[ResourceType.VOLUME], owned, claimed)
    yield from _instance_families(of[ResourceType.INSTANCE], owned)
    yield from _db_families(of[ResourceType.DB_INSTANCE], owned)
    yield _finding_family(firing, owned, claimed)


def savings_families(found: Sequence[Saving], counts: Mapping[str, int]) -> Iterator[Gauge]:
    """Each saving offered, the fleet's total, and how far the volumes' long pasts are read:
    a total over volumes not yet weighed is no total, and says so beside it."""
    owned = any(s.labels.get("account_id") for s in found)
    claimed = any(s.labels.get("claim") for s in found)
    labels = (
        *_owned(owned),
        REGION,
        RESOURCE_ID,
        "kind",
        *((NAMESPACE, PERSISTENTVOLUMECLAIM) if claimed else ()),
    )

    def values(saving: Saving) -> tuple[str, ...]:
        got = saving.labels
        owner = (got.get("account_id", ""), got.get("account_name", "")) if owned else ()
        claim = tuple(got.get("claim", "/").split("/", 1)) if claimed else ()
        return (*owner, got.get("region", ""), saving.resource_id, saving.kind, *claim)

    yield Gauge(
        "ebs_analyzer_savings_monthly_dollars",
        "What a volume's cut would save a month (an unattached volume: what it costs), in the "
        "price list's currency; proven on its longest past (ebs-analyzer savings). Never pages.",
        labels,
        [(values(s), s.monthly_saving) for s in found],
    )
    weighed = counts.get("weighed", 0)
    yield Gauge(
        "ebs_analyzer_savings_fleet_monthly_dollars",
        "The savings offered together, a month; absent until a volume's long past is read "
        "whole (ebs_analyzer_savings_volumes says how many are).",
        (),
        [((), round(sum(s.monthly_saving for s in found), 2))] if weighed else [],
    )
    yield Gauge(
        "ebs_analyzer_savings_volumes",
        "Volumes by how far their long past is read for savings: weighed (read whole), "
        "reading (a stretch a day, three at most), unread (the last read failed).",
        ("state",),
        [((state,), float(counts.get(state, 0))) for state in ("weighed", "reading", "unread")],
    )


class _Fixed(Collector):
    def __init__(self, families: Sequence[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        yield from self._families


def rendered(families: Iterable[Metric | Gauge]) -> Iterator[bytes]:
    """The exposition text of these series, as prometheus_client writes it, family by family.
    Gauges, which are all of a snapshot's tens of thousands of series, are written here:
    prometheus_client checks and escapes every label name of every sample, most of the cost
    of publishing a large fleet."""
    for family in families:
        if isinstance(family, Gauge):
            yield from _gauge_text(family)
        elif family.type == "gauge" and all(s.name == family.name for s in family.samples):
            yield from _gauge_text(_as_gauge(family))
        else:
            registry = CollectorRegistry(auto_describe=False)
            registry.register(_Fixed([family]))
            yield prometheus_client.generate_latest(registry)


def render(families: Iterable[Metric]) -> bytes:
    """The exposition text of these series, whole."""
    return b"".join(rendered(families))


LINES_A_PIECE = 1_000
"""Gauge lines written out together: a family of 10,000 volumes' series is never held as one
text beside its lines and its bytes."""


def _gauge_text(family: Gauge) -> Iterator[bytes]:
    name, labels = family.name, family.labels
    doc = family.documentation.replace("\\", r"\\").replace("\n", r"\n")
    lines = [f"# HELP {name} {doc}\n", f"# TYPE {name} gauge\n"]
    # The text format's labels in name order, as prometheus_client writes them.
    order = sorted(range(len(labels)), key=labels.__getitem__)
    for values, value in family.series:
        if value is None:
            continue
        text = ",".join(f'{labels[i]}="{_escaped(values[i])}"' for i in order)
        number = floatToGoString(float(value))  # type: ignore[no-untyped-call]
        lines.append(f"{name}{{{text}}} {number}\n" if text else f"{name} {number}\n")
        if len(lines) >= LINES_A_PIECE:
            yield "".join(lines).encode()
            lines.clear()
    if lines:
        yield "".join(lines).encode()


def _as_gauge(family: Metric) -> Gauge:
    """A prometheus_client gauge family, its samples' labels in its first sample's order."""
    labels = tuple(family.samples[0].labels) if family.samples else ()
    series = ((tuple(s.labels[k] for k in labels), s.value) for s in family.samples)
    return Gauge(family.name, family.documentation, labels, series)


def _escaped(value: str) -> str:
    """A label value as the text format writes it."""
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
    return value


def _finding_family(firing: Sequence[Alert], owned: bool = False, claimed: bool = False) -> Gauge:
    labels = (*_owned(owned), RULE, SEVERITY, RESOURCE_TYPE, RESOURCE_ID, BOTTLENECK)

    def values(alert: Alert) -> tuple[str, ...]:
        ref = alert.finding.resource
        return (
            *_owner(ref, owned),
            alert.rule,
            alert.severity.value,
            alert.resource_type.value,
            alert.resource_id,
            alert.finding.bottleneck.value,
            *_claim(ref, claimed),
        )

    return Gauge(
        "ebs_analyzer_finding",
        "1 while a finding is active (firing).",
        (*labels, *_claimed(claimed)),
        [(values(alert), 1.0) for alert in sorted(firing, key=lambda a: a.key)],
    )


def exposition_for(
    source: Callable[[], Published | None], process_metrics: bool = True
) -> tuple[Callable[[], Deflated], Telemetry]:
    """What /metrics sends: the last published snapshot's text, rendered when it was
    published, then the daemon's own metrics, rendered now."""
    live = CollectorRegistry(auto_describe=True)
    if process_metrics:
        prometheus_client.ProcessCollector(registry=live)
        prometheus_client.PlatformCollector(registry=live)
    telemetry = Telemetry(live)
    empty = Deflated.of(rendered(snapshot_families((), ())))

    def exposition() -> Deflated:
        published = source()
        snapshot = published.exposition if published is not None else empty
        return snapshot.followed_by(prometheus_client.generate_latest(live))

    return exposition, telemetry
