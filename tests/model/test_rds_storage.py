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
        ("db2-se", 399, 1),
        ("db2-ae", 400, 4),
        ("oracle-ee", 199, 1),
        ("oracle-se2", 200, 4),
        ("custom-oracle-ee", 200, 4),
        ("sqlserver-se", 16_000, 1),
    ],
)
def test_rds_stripes_from_400_gib_or_200_for_oracle(engine, size, stripes):
    """RDS's striping table: Db2, MariaDB, MySQL, PostgreSQL from 400 GiB, Oracle from 200;
    SQL Server never."""
    assert rds_storage.rds_stripes(engine, size) == stripes


def test_rds_gp2_striped_bursts_to_12000_with_four_buckets():
    envelope = rds_storage.db_storage_envelope(db("mysql", "gp2", 400))
    assert envelope.iops == 12_000
    assert envelope.baseline_iops == 1_200  # four 100 GiB volumes at 300 each
    assert envelope.bucket.capacity == 4 * 5_400_000
    # Four full buckets at 12,000 IOPS last as long as one 100 GiB volume at 3,000.
    assert envelope.bucket.full_burst_seconds == pytest.approx(2_000)


@pytest.mark.parametrize(
    ("size", "baseline_iops", "mibps"),
    [(400, 1_200, 512), (2_000, 6_000, 1_000), (21_336, 64_000, 1_000)],
)
def test_rds_gp2_striped_throughput_is_rds_range_not_baseline_iops_times_256_kib(
    size, baseline_iops, mibps
):
    """RDS gives striped gp2 500 to 1,000 MiB/s of throughput, credits or not (four volumes of
    128 to 250 MiB/s); the baseline IOPS times 256 KiB (300 MiB/s at 400 GiB) is no limit of
    its own."""
    envelope = rds_storage.db_storage_envelope(db("postgres", "gp2", size))
    assert envelope.baseline_iops == baseline_iops
    assert envelope.throughput_limit(credits_left=False) == mibps * MIB
    assert 500 * MIB <= envelope.throughput_limit(credits_left=True) <= 1_000 * MIB


def test_rds_gp2_unstriped_is_one_volume():
    assert rds_storage.db_storage_envelope(db("mysql", "gp2", 200)) == limits.gp2(200)
    assert rds_storage.db_storage_envelope(db("sqlserver-se", "gp2", 2_000)) == limits.gp2(2_000)


@pytest.mark.parametrize(
    ("engine", "size", "iops", "throughput", "want_iops", "want_mib"),
    [
        ("postgres", 399, None, None, 3_000, 125),
        ("postgres", 400, None, None, 12_000, 500),
        ("db2-se", 400, None, None, 12_000, 500),
        ("mysql", 1_000, 20_000, 1_000, 20_000, 1_000),
        ("mysql", 20_000, 64_000, 4_000, 64_000, 4_000),
        ("sqlserver-se", 1_000, None, None, 3_000, 125),
        ("sqlserver-se", 2_000, 16_000, 1_000, 16_000, 1_000),
    ],
)
def test_rds_gp3_included_performance(engine, size, iops, throughput, want_iops, want_mib):
    envelope = rds_storage.db_storage_envelope(db(engine, "gp3", size, iops, throughput))
    assert (envelope.iops, envelope.throughput_bps) == (want_iops, want_mib * MIB)


@pytest.mark.parametrize(
    ("engine", "storage", "size", "iops", "want_mib"),
    [
        # Striped: the IOPS spread over four volumes, up to 256,000 IOPS and 4,000 MiB/s.
        ("postgres", "io1", 1_000, 20_000, 2_000),
        ("postgres", "io1", 64_000, 256_000, 4_000),
        ("mysql", "io2", 64_000, 256_000, 4_000),
        ("oracle-ee", "io1", 300, 10_000, 2_000),
        # One volume below the threshold: at most 500 MiB/s.
        ("mysql", "io1", 300, 15_000, 500),
        ("mysql", "io2", 300, 15_000, 500),
        ("mysql", "io1", 300, 1_000, 250),
        # SQL Server: one volume, up to 64,000 IOPS and 1,000 MiB/s.
        ("sqlserver-ee", "io1", 16_000, 64_000, 1_000),
        ("sqlserver-ee", "io2", 16_000, 64_000, 1_000),
    ],
)
def test_rds_provisioned_iops_storage_follows_rds_ranges(engine, storage, size, iops, want_mib):
    envelope = rds_storage.db_storage_envelope(db(engine, storage, size, iops))
    assert envelope.iops == iops
    assert envelope.throughput_bps == want_mib * MIB
    assert envelope.bucket is None


def test_rds_storage_without_a_model():
    assert rds_storage.db_storage_envelope(db("mysql", "aurora", 300)) is None
    assert rds_storage.db_storage_envelope(db("mysql", "io1", 300)) is None  # no IOPS described


def test_additional_storage_volumes_add_their_limits_to_the_instances_storage():
    """SQL Server on gp3 200 GiB (3,000 IOPS and 125 MiB/s included) with RDSDBDATA2, io2
    1,000 GiB at 20,000 IOPS (Amazon RDS API Reference, AdditionalStorageVolume: gp3 or io2,
    20 GiB to 64 TiB): the instance's storage carries both."""
    from dataclasses import replace

    from analyzer.model.resources import StorageVolume

    primary = db("sqlserver-se", "gp3", 200)
    with_data2 = replace(
        primary, additional_volumes=(StorageVolume("RDSDBDATA2", "io2", 1_000, 20_000),)
    )
    alone = rds_storage.db_storage_envelope(primary)
    both = rds_storage.db_storage_envelope(with_data2)
    assert (alone.iops, alone.throughput_bps) == (3_000, 125 * MIB)
    io2 = rds_storage.db_storage_envelope(replace(primary, storage_type="io2", iops=20_000))
    assert both.iops == 23_000
    assert both.throughput_bps == alone.throughput_bps + io2.throughput_bps
    assert not both.approximate  # no bucket to tell apart: the sum is the limit


def test_an_rds_instance_at_its_primary_volumes_cap_is_not_capped_with_its_additional_volume():
    from dataclasses import replace

    from analyzer.model.metrics import Measure
    from analyzer.model.resources import InstanceType, StorageVolume
    from tests.helpers import analyze, db_state, series

    big = InstanceType("r5.8xlarge", 30_000, 30_000, 850 * 10**6, 850 * 10**6, nitro=True)
    primary = replace(db("sqlserver-se", "gp3", 200), class_info=big)
    measures = {
        Measure.IOPS: series([3_000] * 30),
        Measure.READ_IOPS: series([2_000] * 30),
        Measure.WRITE_IOPS: series([1_000] * 30),
        Measure.THROUGHPUT: series([3_000 * 16 * 1024] * 30),
    }
    capped = analyze(db_state(primary, measures)).firing
    assert [f.bottleneck.value for f in capped] == ["volume_iops"]
    data2 = StorageVolume("RDSDBDATA2", "io2", 1_000, 20_000)
    both = replace(primary, additional_volumes=(data2,))
    assert analyze(db_state(both, measures)).firing == []


def test_a_dedicated_log_volume_is_a_bottleneck_of_its_own_with_the_fix_rds_allows():
    """A Dedicated Log Volume: 1,024 GiB and 3,000 Provisioned IOPS, fixed (Amazon RDS User
    Guide, "Using a dedicated log volume (DLV)"). Pinned there beside storage of 40,000 IOPS,
    the fix is to turn it off, so that the logs share the storage."""
    from dataclasses import replace

    from analyzer.model.metrics import Measure
    from analyzer.model.resources import InstanceType
    from tests.helpers import analyze, db_state, series

    assert (rds_storage.LOG_VOLUME_GIB, rds_storage.LOG_VOLUME_IOPS) == (1_024, 3_000)
    big = InstanceType("r6i.4xlarge", 40_000, 40_000, 1_250 * 10**6, 1_250 * 10**6, nitro=True)
    dlv = replace(db("postgres", "io2", 2_000, 40_000), class_info=big, dedicated_log_volume=True)
    assert rds_storage.log_volume_envelope(dlv).iops == 3_000
    assert rds_storage.log_volume_envelope(replace(dlv, dedicated_log_volume=False)) is None
    measures = {
        Measure.IOPS: series([6_000] * 30),
        Measure.THROUGHPUT: series([6_000 * 16 * 1024] * 30),
        Measure.LOG_IOPS: series([3_000] * 30),
        Measure.LOG_THROUGHPUT: series([3_000 * 16 * 1024] * 30),
    }
    [finding] = analyze(db_state(dlv, measures)).firing
    assert finding.rule == "rds-log-volume-iops-cap"
    assert finding.bottleneck.value == "log_volume_iops"
    assert "pinned at its 3,000 IOPS log volume cap" in finding.summary
    [fix] = finding.remedies
    assert fix.action.startswith("Turn off the Dedicated Log Volume (fixed at 3,000 IOPS)")
    assert "the storage's 40,000 IOPS carry both (9,000 IOPS now)" in fix.action
