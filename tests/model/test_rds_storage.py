import pytest

from analyzer.model import limits, rds_storage
from analyzer.model.resources import DbInstance
from analyzer.model.units import MIB


def db(
    engine: str, storage: str, size: int, iops: int | None = None, throughput: int | None = None
) -> DbInstance:
    return DbInstance(
        "db-1", "us-east-1", engine, "db.r5.xlarge", storage, size, "available", iops, throughput
    )


@pytest.mark.parametrize(
    ("engine", "size", "stripes"),
    [
        ("mysql", 399, 1),
        ("mysql", 400, 4),
        ("mariadb", 400, 4),
        ("postgres", 1_000, 4),
        ("oracle-ee", 199, 1),
        ("oracle-se2", 200, 4),
        ("sqlserver-se", 1_000, 1),
    ],
)
def test_rds_stripes_from_400_gib_or_200_for_oracle(engine, size, stripes):
    assert rds_storage.rds_stripes(engine, size) == stripes


def test_rds_gp2_striped_bursts_to_12000_with_four_buckets():
    envelope = rds_storage.db_storage_envelope(db("mysql", "gp2", 400))
    assert envelope.iops == 12_000
    assert envelope.baseline_iops == 1_200  # four 100 GiB volumes at 300 each
    assert envelope.bucket.capacity == 4 * 5_400_000
    # Four full buckets at 12,000 IOPS last as long as one 100 GiB volume at 3,000.
    assert envelope.bucket.full_burst_seconds == pytest.approx(2_000)


def test_rds_gp2_unstriped_is_one_volume():
    assert rds_storage.db_storage_envelope(db("mysql", "gp2", 200)) == limits.gp2(200)


@pytest.mark.parametrize(
    ("engine", "size", "iops", "throughput", "want_iops", "want_mib"),
    [
        ("postgres", 399, None, None, 3_000, 125),
        ("postgres", 400, None, None, 12_000, 500),
        ("mysql", 1_000, 20_000, 1_000, 20_000, 1_000),
        ("sqlserver-se", 1_000, None, None, 3_000, 125),
    ],
)
def test_rds_gp3_included_performance(engine, size, iops, throughput, want_iops, want_mib):
    envelope = rds_storage.db_storage_envelope(db(engine, "gp3", size, iops, throughput))
    assert (envelope.iops, envelope.throughput_bps) == (want_iops, want_mib * MIB)


def test_rds_provisioned_storage():
    assert rds_storage.db_storage_envelope(db("oracle-ee", "io1", 300, 10_000)) == limits.io1(
        10_000
    )
    assert rds_storage.db_storage_envelope(db("mysql", "io2", 300, 40_000)) == limits.io2(40_000)
    assert rds_storage.db_storage_envelope(db("mysql", "aurora", 300)) is None
