"""The layers of limits a resource's I/O passes: its storage, and an instance's EBS connection."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from analyzer.model.findings import Bottleneck
from analyzer.model.limits import Envelope
from analyzer.model.metrics import Measure
from analyzer.model.resources import ResourceType
from analyzer.model.state import ResourceState
from analyzer.model.units import Unit


@dataclass(frozen=True, slots=True)
class Layer:
    """One set of limits a resource's I/O passes: storage (a volume, an RDS instance's volumes)
    or an instance's EBS connection (an EC2 instance, an RDS instance class)."""

    envelope: Envelope
    storage: bool

    @property
    def owner(self) -> ResourceType:
        return ResourceType.VOLUME if self.storage else ResourceType.INSTANCE

    def balance(self, unit: Unit) -> Measure:
        if self.storage:
            return Measure.BURST_BALANCE
        return Measure.IO_BALANCE if unit is Unit.IOPS else Measure.BYTE_BALANCE

    def limit(self, state: ResourceState, unit: Unit, at: datetime) -> float:
        credits = state.credits_left(self.balance(unit), at)
        if unit is Unit.IOPS:
            return self.envelope.iops_limit(credits)
        return self.envelope.throughput_limit(credits)

    def bottleneck(self, unit: Unit) -> Bottleneck:
        if unit is Unit.IOPS:
            return Bottleneck.VOLUME_IOPS if self.storage else Bottleneck.INSTANCE_IOPS
        return Bottleneck.VOLUME_THROUGHPUT if self.storage else Bottleneck.INSTANCE_THROUGHPUT

    def describe(self) -> str:
        return "volume" if self.storage else "instance EBS"


def layers(state: ResourceState) -> list[Layer]:
    out = []
    if state.envelope is not None:
        out.append(Layer(state.envelope, storage=state.has_storage))
    if state.class_envelope is not None:
        out.append(Layer(state.class_envelope, storage=False))
    return out
