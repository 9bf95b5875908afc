"""A rate clearly above a modelled limit is the model's error: no cap finding, no fix."""

from analyzer.model.findings import Bottleneck
from analyzer.model.metrics import Measure
from analyzer.model.resources import DbInstance, InstanceType
from analyzer.model.units import GIB, KIB, MB, MIB
from tests.helpers import analyze, db_state, series, volume_state

# r5.12xlarge: 40,000 IOPS and 1,187.5 MB/s of EBS (9,500 Mbps): enough not to bind here.
R5_12XL = InstanceType(
    "r5.12xlarge", 40_000, 40_000, 1_187.5 * MB, 1_187.5 * MB, 384 * GIB, nitro=True
)


def test_rds_io1_far_above_one_volume_s_throughput_cap_is_a_mismatch():
    """PostgreSQL io1, 1,000 GiB at 20,000 IOPS, moving 937 MiB/s: more than the 500 MiB/s the
    model gives it, which is one io1 volume's rule, not RDS's."""
    db = DbInstance(
        "pg",
        "us-east-1",
        "postgres",
        "db.r5.12xlarge",
        "io1",
        1_000,
        "available",
        20_000,
        class_info=R5_12XL,
    )
    iops = [7_500.0] * 30
    state = db_state(
        db,
        {
            Measure.IOPS: series(iops),
            Measure.READ_IOPS: series(iops),
            Measure.WRITE_IOPS: series([0.0] * 30),
            Measure.THROUGHPUT: series([937 * MIB] * 30),
            Measure.FREEABLE_MEMORY: series([100 * GIB] * 30),
        },
    )
    analysis = analyze(state)
    [judged] = analysis.snapshot.resources
    assert [m.bottleneck for m in judged.mismatches] == [Bottleneck.VOLUME_THROUGHPUT]
    assert not [f for f in analysis.firing if f.bottleneck is Bottleneck.VOLUME_THROUGHPUT]


def test_a_volume_at_its_cap_is_no_mismatch():
    state = volume_state(
        "gp3",
        100,
        {Measure.IOPS: series([3_000] * 30), Measure.THROUGHPUT: series([3_000 * 16 * KIB] * 30)},
        iops=3_000,
        throughput=125,
    )
    analysis = analyze(state)
    [judged] = analysis.snapshot.resources
    assert judged.mismatches == ()
    assert [f.rule for f in analysis.firing] == ["volume-iops-cap"]
