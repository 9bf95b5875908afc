"""Rule kind for RDS memory pressure: reads driven by a working set larger than memory.

When FreeableMemory stays a small share of the class's memory while read IOPS are high and
dominate writes, the database is reading from storage what it cannot keep in memory. Faster
storage treats the symptom; a class with more memory removes the reads (incident 3: read IOPS
fell from 3,000 to 80 once memory was scaled up).
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import Field

from analyzer.analyze.kinds.base import RuleBase
from analyzer.model import units
from analyzer.model.findings import Bottleneck, Finding
from analyzer.model.metrics import Measure
from analyzer.model.resources import DbInstance, ResourceType
from analyzer.model.series import recent, window_evidence
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import GIB, PositiveDuration, Unit


class MemoryPressure(RuleBase):
    kind: Literal["memory_pressure"] = "memory_pressure"
    free_memory_ratio: float = Field(default=0.1, gt=0, lt=1)
    """FreeableMemory below this share of the class's memory counts as pressure."""
    min_read_iops: float = Field(default=200.0, ge=0)
    read_share: float = Field(default=0.7, gt=0, le=1)
    """Reads must be at least this share of all I/O."""
    window: PositiveDuration = 1800.0
    min_fraction: float = Field(default=0.8, gt=0, le=1)
    min_datapoints: int = Field(default=5, ge=1)

    supported: ClassVar[frozenset[ResourceType]] = frozenset({ResourceType.DB_INSTANCE})

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        db = state.resource
        if not isinstance(db, DbInstance) or db.class_info is None:
            return None
        memory = db.class_info.memory_bytes
        free = recent(state.measure(Measure.FREEABLE_MEMORY), at, self.window)
        if not memory or len(free) < self.min_datapoints:
            return None
        reads = dict(recent(state.measure(Measure.READ_IOPS), at, self.window).points())
        writes = dict(recent(state.measure(Measure.WRITE_IOPS), at, self.window).points())
        hits = [
            t
            for t, v in free.points()
            if self._pressed(v, memory, reads.get(t, 0.0), writes.get(t, 0.0))
        ]
        if len(hits) < self.min_fraction * len(free):
            return None
        mean_free = free.mean() or 0.0
        read_iops = sum(reads.get(t, 0.0) for t in hits) / len(hits)
        write_iops = sum(writes.get(t, 0.0) for t in hits) / len(hits)
        share = read_iops / (read_iops + write_iops)
        return self.finding(
            state,
            Bottleneck.MEMORY,
            self.window,
            summary=_summary(state, read_iops, share, mean_free, memory),
            observed=round(100 * mean_free / memory, 2),
            limit=100 * self.free_memory_ratio,
            unit=Unit.PERCENT,
            evidence={
                **window_evidence(free, self.window),
                "pressed_datapoints": len(hits),
                "read_iops": read_iops,
                "write_iops": write_iops,
                "read_share": round(share, 4),
                "freeable_memory_bytes": mean_free,
                "memory_bytes": memory,
                "instance_class": db.instance_class,
            },
        )

    def _pressed(self, freeable: float, memory: float, read: float, write: float) -> bool:
        """One datapoint: little free memory while reads are high and dominate."""
        total = read + write
        return (
            freeable < self.free_memory_ratio * memory
            and read >= self.min_read_iops
            and total > 0
            and read / total >= self.read_share
        )


def _summary(
    state: ResourceState, read_iops: float, share: float, mean_free: float, memory: float
) -> str:
    return (
        f"{state.label}: {units.iops(read_iops).replace('IOPS', 'read IOPS')} "
        f"({share:.0%} of its I/O) while FreeableMemory is {mean_free / GIB:.1f} GiB of "
        f"{memory / GIB:.0f} GiB ({mean_free / memory:.0%}): the working set does not fit in "
        f"memory. A class with more memory, not faster storage, is the likely cure."
    )
