"""A rate clearly above a modelled limit is the model's error: no cap finding, no fix."""

from analyzer.model.findings import Bottleneck
from analyzer.model.metrics import Measure
from analyzer.model.resources import DbInstance, InstanceType
from analyzer.model.units import GIB, KIB, MB, MIB
from tests.helpers import analyze, db_state, series, volume_state

# r5.12xlarge: 40,000 IOPS and 1,187.5 MB/s of EBS (9,500 Mbps): enough not to bind here.
R6IN_32XL = InstanceType(
    "r6in.32xlarge", 400_000, 400_000, 12_500 * MB, 12_500 * MB, 1_024 * GIB, nitro=True
)
"""100 Gbps of EBS bandwidth: the class is far from any limit here."""


def test_rds_io1_far_above_its_modelled_throughput_is_a_mismatch():
    """PostgreSQL io1, 1,000 GiB at 20,000 IOPS, moving 2,400 MiB/s: more than the 2,000 MiB/s
    the model gives its four stripes of 5,000 IOPS. The model is what is in doubt."""
    db = DbInstance(
        "pg",
        "us-east-1",
        "postgres",
        "db.r6in.32xlarge",
        "io1",
        1_000,
        "available",
        20_000,
        class_info=R6IN_32XL,
    )
    iops = [7_500.0] * 30
    state = db_state(
        db,
        {
            Measure.IOPS: series(iops),
            Measure.READ_IOPS: series(iops),
            Measure.WRITE_IOPS: series([0.0] * 30),
            Measure.THROUGHPUT: series([2_400 * MIB] * 30),
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
