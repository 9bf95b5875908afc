"""The layers of limits a resource's I/O passes, and the credit buckets behind them.

A volume has one layer (its storage), an EC2 instance one (its EBS connection), an RDS instance
two (its striped storage, and the EBS connection of its instance class). Each layer caps IOPS
and throughput; a layer that bursts has a bucket of credits whose balance CloudWatch reports.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.model import metrics
from analyzer.model.findings import Bottleneck
from analyzer.model.limits import CreditBucket, Envelope
from analyzer.model.metrics import Measure, Namespace
from analyzer.model.resources import ResourceType
from analyzer.model.units import Unit


@dataclass(frozen=True, slots=True)
class Layer:
    """One set of limits a resource's I/O passes: storage (a volume, an RDS instance's volumes)
    or an instance's EBS connection (an EC2 instance, an RDS instance class)."""

    envelope: Envelope
    storage: bool
    log: bool = False
    """An RDS instance's Dedicated Log Volume: storage of its own, read through its own
    metrics."""

    @property
    def owner(self) -> ResourceType:
        """Whose unit its throughput reads in: storage in MiB/s, an instance's EBS in MB/s."""
        return ResourceType.VOLUME if self.storage else ResourceType.INSTANCE

    def balance(self, unit: Unit) -> Measure:
        """The balance that tells whether this layer's `unit` limit still has credits."""
        if self.storage:
            return Measure.BURST_BALANCE
        return Measure.IO_BALANCE if unit is Unit.IOPS else Measure.BYTE_BALANCE

    def rate(self, unit: Unit) -> Measure:
        """The measure of the I/O that passes this layer, in `unit`."""
        if unit is Unit.IOPS:
            return Measure.LOG_IOPS if self.log else Measure.IOPS
        return Measure.LOG_THROUGHPUT if self.log else Measure.THROUGHPUT

    def limit(self, unit: Unit, credits_left: bool) -> float:
        if unit is Unit.IOPS:
            return self.envelope.iops_limit(credits_left)
        return self.envelope.throughput_limit(credits_left)

    def bottleneck(self, unit: Unit) -> Bottleneck:
        if self.log:
            iops = unit is Unit.IOPS
            return Bottleneck.LOG_VOLUME_IOPS if iops else Bottleneck.LOG_VOLUME_THROUGHPUT
        if unit is Unit.IOPS:
            return Bottleneck.VOLUME_IOPS if self.storage else Bottleneck.INSTANCE_IOPS
        return Bottleneck.VOLUME_THROUGHPUT if self.storage else Bottleneck.INSTANCE_THROUGHPUT

    def describe(self) -> str:
        if self.log:
            return "log volume"
        return "volume" if self.storage else "instance EBS"


def layers_of(
    envelope: Envelope | None, class_envelope: Envelope | None, has_storage: bool
) -> list[Layer]:
    out = []
    if envelope is not None:
        out.append(Layer(envelope, storage=has_storage))
    if class_envelope is not None:
        out.append(Layer(class_envelope, storage=False))
    return out


@dataclass(frozen=True, slots=True)
class Bucket:
    """One credit bucket of a resource, described the same way for every kind of resource."""

    balance: Measure
    rate: Measure
    unit: Unit
    baseline: float
    burst: float
    name: str
    bottleneck: Bottleneck
    model: CreditBucket | None
    """Storage buckets follow the bucket model; instance EBS buckets (None) their trend."""

    @property
    def owner(self) -> ResourceType:
        """Whose unit the rates read in: storage in MiB/s, an instance's EBS in MB/s."""
        storage = self.bottleneck is Bottleneck.BURST_CREDITS
        return ResourceType.VOLUME if storage else ResourceType.INSTANCE


def balance_metric(balance: Measure) -> str:
    """How CloudWatch names a balance (the same in AWS/EBS, AWS/EC2 and AWS/RDS)."""
    metric = metrics.feeding(Namespace.RDS, balance)
    assert metric is not None, balance
    return metric.name


def _storage_bucket(envelope: Envelope | None) -> list[Bucket]:
    bucket = envelope.bucket if envelope is not None else None
    if bucket is None:
        return []
    rate = Measure.IOPS if bucket.unit is Unit.IOPS else Measure.THROUGHPUT
    return [
        Bucket(
            Measure.BURST_BALANCE,
            rate,
            bucket.unit,
            bucket.baseline,
            bucket.burst,
            balance_metric(Measure.BURST_BALANCE),
            Bottleneck.BURST_CREDITS,
            bucket,
        )
    ]


def _instance_buckets(envelope: Envelope | None) -> list[Bucket]:
    if envelope is None:
        return []
    out = []
    if envelope.iops > envelope.baseline_iops:
        out.append(
            Bucket(
                Measure.IO_BALANCE,
                Measure.IOPS,
                Unit.IOPS,
                envelope.baseline_iops,
                envelope.iops,
                balance_metric(Measure.IO_BALANCE),
                Bottleneck.INSTANCE_BURST_CREDITS,
                None,
            )
        )
    if envelope.throughput_bps > envelope.baseline_throughput_bps:
        out.append(
            Bucket(
                Measure.BYTE_BALANCE,
                Measure.THROUGHPUT,
                Unit.BYTES_PER_SECOND,
                envelope.baseline_throughput_bps,
                envelope.throughput_bps,
                balance_metric(Measure.BYTE_BALANCE),
                Bottleneck.INSTANCE_BURST_CREDITS,
                None,
            )
        )
    return out


def buckets_of(
    resource_type: ResourceType, envelope: Envelope | None, class_envelope: Envelope | None
) -> list[Bucket]:
    """A volume's bucket, an instance's EBS buckets, or both for a DB instance (its storage
    and its class)."""
    match resource_type:
        case ResourceType.VOLUME:
            return _storage_bucket(envelope)
        case ResourceType.INSTANCE:
            return _instance_buckets(envelope)
    return _storage_bucket(envelope) + _instance_buckets(class_envelope)
