import pytest

from analyzer.analyze.kinds.memory import MemoryPressure
from analyzer.model.findings import Bottleneck
from analyzer.model.metrics import Measure
from analyzer.model.resources import DbInstance, InstanceType
from analyzer.model.units import GIB, MB, Unit
from tests.helpers import db_state, series, snapshot_of

RULE = MemoryPressure(id="memory", resource_types=["db_instance"], severity="warning")
R5 = InstanceType("r5.xlarge", 6_000, 18_750, 106.25 * MB, 593.75 * MB, 32 * GIB, nitro=True)


def replica(reads, writes, free_gib):
    db = DbInstance(
        "replica", "us-east-1", "mysql", "db.r5.xlarge", "gp2", 200, "available", class_info=R5
    )
    n = 40
    measures = {
        Measure.READ_IOPS: series([reads] * n),
        Measure.WRITE_IOPS: series([writes] * n),
        Measure.IOPS: series([reads + writes] * n),
        Measure.FREEABLE_MEMORY: series([free_gib * GIB] * n),
    }
    return db_state(db, measures)


def evaluate(state):
    snap = snapshot_of(state, minutes_of_data=40)
    return RULE.evaluate(snap.resources[0], snap, snap.data_end)


def test_reads_with_little_free_memory_point_at_memory():
    finding = evaluate(replica(3_000, 50, 1.5))
    assert finding is not None
    assert finding.bottleneck is Bottleneck.MEMORY
    assert finding.unit is Unit.PERCENT
    assert finding.observed == pytest.approx(100 * 1.5 / 32, abs=0.01)
    assert finding.limit == 10
    assert (
        "3,000 read IOPS (98% of its I/O) while FreeableMemory is 1.5 GiB of 32 GiB"
        in finding.summary
    )
    assert "more memory, not faster storage" in finding.summary
    assert finding.evidence["read_iops"] == 3_000
    assert finding.evidence["memory_bytes"] == 32 * GIB


@pytest.mark.parametrize(
    ("reads", "writes", "free_gib"),
    [
        (3_000, 50, 8.0),  # memory to spare
        (100, 10, 1.5),  # few reads: memory is not driving I/O
        (1_000, 2_000, 1.5),
    ],  # writes dominate: more memory would not help
)
def test_no_memory_finding(reads, writes, free_gib):
    assert evaluate(replica(reads, writes, free_gib)) is None
