"""The envelope must match the figures in DOMAIN.md, AWS's own tables included."""

from datetime import UTC, datetime

import pytest

from analyzer.model import limits
from analyzer.model.resources import InstanceType, Volume
from analyzer.model.units import KIB, MB, MIB, Unit

BOTH = {Unit.IOPS, Unit.BYTES_PER_SECOND}
M5_LARGE = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)


@pytest.mark.parametrize(
    ("size_gib", "burst_seconds"),
    [
        # AWS's gp2 burst duration table: a full bucket at 3,000 IOPS.
        (1, 1_862),
        (33, 1_862),
        (100, 2_000),
        (250, 2_400),
        (334, 2_703),
        (500, 3_600),
        (750, 7_200),
    ],
)
def test_gp2_full_bucket_lasts_as_in_the_aws_table(size_gib: int, burst_seconds: int) -> None:
    bucket = limits.gp2(size_gib).bucket
    assert bucket is not None
    assert bucket.full_burst_seconds == pytest.approx(burst_seconds, abs=1)


@pytest.mark.parametrize("size_gib", [1_000, 2_000, 5_334, 16_384])
def test_gp2_from_1000_gib_has_no_burst(size_gib: int) -> None:
    envelope = limits.gp2(size_gib)
    assert envelope.bucket is None
    assert not envelope.bursts


@pytest.mark.parametrize(
    ("size_gib", "baseline"),
    [
        (1, 100),
        (33, 100),
        (34, 102),
        (50, 150),
        (100, 300),
        (250, 750),
        (5_334, 16_000),
        (16_384, 16_000),
    ],
)
def test_gp2_baseline_is_3_iops_per_gib_between_100_and_16000(size_gib: int, baseline: int) -> None:
    assert limits.gp2(size_gib).baseline_iops == baseline


def test_gp2_refill_from_empty_with_no_io() -> None:
    bucket = limits.gp2(100).bucket
    assert bucket is not None
    assert bucket.refill_seconds == pytest.approx(18_000)


@pytest.mark.parametrize(
    ("size_gib", "with_credits_mib", "without_credits_mib"),
    [
        (50, 128, 37.5),  # 150 IOPS x 256 KiB once the bucket is empty
        (100, 128, 75),
        (170, 128, 127.5),
        (200, 250, 128),  # 250 MiB/s between 170 and 334 GiB only while credits last
        (334, 250, 250),
        (1_000, 250, 250),
    ],
)
def test_gp2_throughput_cap_depends_on_size_and_credits(
    size_gib: int, with_credits_mib: float, without_credits_mib: float
) -> None:
    envelope = limits.gp2(size_gib)
    assert envelope.throughput_limit(credits_left=True) == with_credits_mib * MIB
    assert envelope.throughput_limit(credits_left=False) == without_credits_mib * MIB


def test_gp2_iops_limit_is_burst_while_credits_last_then_baseline() -> None:
    envelope = limits.gp2(50)
    assert envelope.iops_limit(credits_left=True) == 3_000
    assert envelope.iops_limit(credits_left=False) == 150


@pytest.mark.parametrize(
    ("factory", "size_gib", "burst_seconds"),
    [
        (limits.st1, 1_024, 4_993),
        (limits.st1, 2_048, 4_993),
        (limits.sc1, 1_024, 15_420),
        (limits.sc1, 3_200, 15_420),
    ],
)
def test_hdd_full_bucket_duration(factory, size_gib: int, burst_seconds: int) -> None:  # type: ignore[no-untyped-def]
    bucket = factory(size_gib).bucket
    assert bucket.full_burst_seconds == pytest.approx(burst_seconds, rel=0.001)


@pytest.mark.parametrize(
    ("factory", "size_gib", "baseline_mib", "burst_mib", "max_iops"),
    [
        (limits.st1, 1_024, 40, 250, 500),
        (limits.st1, 16_384, 500, 500, 500),
        (limits.sc1, 1_024, 12, 80, 250),
        (limits.sc1, 16_384, 192, 250, 250),
    ],
)
def test_hdd_baseline_and_burst(factory, size_gib, baseline_mib, burst_mib, max_iops) -> None:  # type: ignore[no-untyped-def]
    envelope = factory(size_gib)
    assert envelope.baseline_throughput_bps == pytest.approx(baseline_mib * MIB)
    assert envelope.throughput_bps == pytest.approx(burst_mib * MIB)
    assert envelope.iops == max_iops


def test_gp3_defaults_when_the_api_omits_them() -> None:
    envelope = limits.gp3(None, None)
    assert (envelope.iops, envelope.throughput_bps) == (3_000, 125 * MIB)
    assert limits.gp3(16_000, 1_000).throughput_bps == 1_000 * MIB


@pytest.mark.parametrize(
    ("iops", "nitro", "iops_limit", "throughput_mib"),
    [
        (1_000, True, 1_000, 250),  # 1,000 x 256 KiB
        (2_000, True, 2_000, 500),  # capped at 500 MiB/s
        (32_000, True, 32_000, 500),
        (64_000, True, 64_000, 1_000),  # above 32,000: IOPS x 16 KiB
        (64_000, False, 32_000, 500),  # non-Nitro instances stop at 32,000
    ],
)
def test_io1(iops: int, nitro: bool, iops_limit: float, throughput_mib: float) -> None:
    envelope = limits.io1(iops, nitro)
    assert envelope.iops == iops_limit
    assert envelope.throughput_bps == pytest.approx(throughput_mib * MIB)


@pytest.mark.parametrize(
    ("iops", "throughput_mib"), [(1_000, 256), (10_000, 2_560), (32_000, 4_000), (256_000, 4_000)]
)
def test_io2_throughput_is_0_256_mib_per_iops_up_to_4000(iops: int, throughput_mib: float) -> None:
    assert limits.io2(iops).throughput_bps == pytest.approx(throughput_mib * MIB)


def test_io2_delivers_at_most_32000_iops_off_nitro() -> None:
    """AWS: io2 attached to an instance not built on Nitro delivers at most 32,000 IOPS."""
    assert limits.XEN_MAX_IOPS == 32_000
    assert limits.io2(64_000, nitro=False).iops == 32_000
    assert limits.io2(64_000, nitro=True).iops == 64_000
    assert limits.io2(64_000, nitro=None).iops == 64_000  # unknown: a current generation


def test_standard_is_marked_approximate() -> None:
    assert limits.standard().approximate


def test_volume_envelope_dispatches_on_type() -> None:
    def volume(kind: str, **kw: int) -> Volume:
        return Volume("vol-1", "us-east-1", kind, kw.pop("size", 100), "in-use", **kw)  # type: ignore[arg-type]

    assert limits.volume_envelope(volume("gp2")) == limits.gp2(100)
    assert limits.volume_envelope(volume("io2", iops=5_000)) == limits.io2(5_000)
    assert limits.volume_envelope(
        volume("io2", iops=50_000), InstanceType("m4.large", nitro=False)
    ) == limits.io2(50_000, False)
    assert limits.volume_envelope(
        volume("io1", iops=50_000), InstanceType("m4.large", nitro=False)
    ) == limits.io1(50_000, False)
    assert limits.volume_envelope(volume("future-type")) is None
    assert limits.has_burst_balance(volume("gp2"))
    assert not limits.has_burst_balance(volume("gp2", size=1_000))
    assert not limits.has_burst_balance(volume("gp3"))


@pytest.mark.parametrize(("state", "reported"), [("modifying", True), ("optimizing", False)])
def test_a_gp2_keeps_its_burst_balance_until_its_move_to_gp3_is_optimizing(
    state: str, reported: bool
) -> None:
    """DescribeVolumes says gp3 from the start; the gp2's bucket, and its BurstBalance, last
    while the modification is `modifying`."""
    from analyzer.model.resources import Modification

    made = Modification(
        state,
        datetime(2026, 11, 21, 12, tzinfo=UTC),
        target_fields=(("volume_type", "gp3"), ("iops", 3_000), ("throughput_mibps", 125)),
        original_fields=(("volume_type", "gp2"), ("size_gib", 100)),
    )
    volume = Volume("vol-1", "us-east-1", "gp3", 100, "in-use", 3_000, 125, modifications=(made,))
    assert limits.has_burst_balance(volume) is reported


def test_instance_envelope_reads_mb_per_second() -> None:
    info = InstanceType("r6i.8xlarge", 40_000, 40_000, 1_250 * MB, 1_250 * MB)
    envelope = limits.instance_type_envelope(info)
    assert envelope is not None
    assert envelope.throughput_bps == 1_250_000_000
    assert not envelope.bursts
    small = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB)
    burst = limits.instance_type_envelope(small)
    assert burst is not None and burst.bursts
    assert burst.iops_limit(credits_left=False) == 3_600
    assert limits.instance_type_envelope(InstanceType("t1.micro")) is None


def test_hdd_charge_range_from_merged_to_a_mib_per_operation():
    """st1/sc1 merge contiguous I/O into 1 MiB operations (AWS's st1/sc1 documentation: eight
    sequential 128 KiB I/Os count as one); small random I/O counts 1 MiB each."""
    bucket = limits.st1(2048).bucket
    assert bucket.charge_range(400, 50 * MIB) == (50 * MIB, 400 * MIB)
    # Above the 500 IOPS cap only merged I/O can pass: its bytes, exactly.
    assert bucket.charge_range(800, 100 * MIB) == (100 * MIB, 100 * MIB)
    assert bucket.consumption(400, 50 * MIB) == 400 * MIB
    # gp2: one figure, an I/O above 256 KiB counting as several.
    assert limits.gp2(100).bucket.charge_range(100, 100 * 512 * KIB) == (200, 200)


def test_hdd_iops_count_merged_operations_above_the_cap():
    st1 = limits.st1(2048)
    assert st1.counted_iops(800, 100 * MIB) == 100  # merged: 100 MiB/s of 1 MiB operations
    assert st1.counted_iops(500, 8 * MIB) == 500  # held at the cap: counted as submitted
    assert st1.counted_iops(100, 200 * MIB) == 200  # 2 MiB I/O counts twice
    assert limits.gp3(16_000, 1_000).counted_iops(20_000, 100 * MIB) == 20_000


def test_gp2_baseline_and_the_size_that_carries_a_rate():
    """Amazon EBS User Guide, General Purpose SSD volumes (gp2): 3 IOPS per GiB, at least 100
    and at most 16,000 IOPS. Sizing reads the same figures as the model."""
    assert limits.gp2_baseline(20) == 100  # the floor: 20 GiB is not 60 IOPS
    assert limits.gp2_baseline(80) == 240
    assert limits.gp2_baseline(1_000) == 3_000
    assert limits.gp2_baseline(6_000) == 16_000
    assert limits.gp2_size_for(1_200) == 400
    assert limits.gp2_size_for(1_201) == 401
    assert limits.gp2_size_for(50) == 1
    assert limits.gp2_size_for(99_000) == 5_334
    for size in (1, 33, 34, 400, 5_333, 5_334):
        assert limits.gp2_baseline(limits.gp2_size_for(limits.gp2_baseline(size))) == (
            limits.gp2_baseline(size)
        )


def test_the_published_volume_figures_the_model_and_the_fixes_read():
    """Amazon EBS User Guide, "Amazon EBS volume types" (General Purpose SSD: gp3 includes
    3,000 IOPS and 125 MiB/s, up to 80,000 IOPS at 500 a GiB and 2,000 MiB/s at 0.25 MiB/s per
    IOPS; Provisioned IOPS SSD: io1 up to 64,000 IOPS at 50 a GiB and 1,000 MiB/s, io2 up to
    256,000 IOPS at 1,000 a GiB and 4,000 MiB/s, 0.256 MiB/s per IOPS; Throughput Optimized
    HDD: st1 from 125 GiB, 40 MiB/s per TiB of baseline up to 500 MiB/s; 16 TiB volumes)."""
    assert (limits.GP3_INCLUDED_IOPS, limits.GP3_INCLUDED_MIBPS) == (3_000, 125)
    assert (limits.GP3_MAX_IOPS, limits.GP3_IOPS_PER_GIB) == (80_000, 500)
    assert (limits.GP3_MAX_MIBPS, limits.GP3_MIBPS_PER_IOPS) == (2_000, 0.25)
    assert (limits.IO1_MAX_IOPS, limits.IO1_IOPS_PER_GIB, limits.IO1_MAX_MIBPS) == (
        64_000, 50, 1_000,
    )  # fmt: skip
    assert (limits.IO2_MAX_IOPS, limits.IO2_IOPS_PER_GIB, limits.IO2_MAX_MIBPS) == (
        256_000, 1_000, 4_000,
    )  # fmt: skip
    assert limits.IO2_MIBPS_PER_IOPS == 0.256
    assert (limits.ST1_MIN_GIB, limits.ST1_MIBPS_PER_TIB, limits.ST1_MAX_MIBPS) == (125, 40, 500)
    assert limits.MAX_VOLUME_GIB == 16_384
    assert (
        limits.gp3(None, None).iops == 3_000 and limits.gp3(None, None).throughput_bps == 125 * MIB
    )
    assert limits.io2(10_000).throughput_bps == pytest.approx(2_560 * MIB)
    assert limits.io2(20_000).throughput_bps == 4_000 * MIB  # its ceiling


def test_how_soon_a_full_bucket_reaches_the_alarm_at_its_burst_rate():
    # A full gp2 bucket (5.4 million credits) on a 1 GiB volume (100 IOPS baseline) drained at
    # 3,000 IOPS: 80 % of it in 1,490 s (Amazon EBS User Guide, General Purpose SSD volumes).
    assert limits.full_to_alarm_s(limits.gp2(1).bucket) == pytest.approx(0.8 * 5.4e6 / 2_900)
    assert limits.full_to_alarm_s(limits.gp2(1).bucket) == pytest.approx(1_490, abs=1)
    # st1 holds 1 TiB of credits a TiB and bursts 250 MiB/s a TiB over a 40 MiB/s baseline
    # (Throughput Optimized HDD volumes); sc1 80 over 12.
    assert limits.full_to_alarm_s(limits.st1(1024).bucket) == pytest.approx(0.8 * 1024**2 / 210)
    assert limits.full_to_alarm_s(limits.sc1(1024).bucket) == pytest.approx(0.8 * 1024**2 / 68)
    # A bucket that cannot drain: baseline at the burst rate.
    assert limits.full_to_alarm_s(limits.st1(16_384).bucket) is None


def test_an_instance_bucket_holds_thirty_minutes_at_its_maximum():
    # Amazon EC2 User Guide, "Amazon EBS-optimized instance types": a type whose baseline is
    # below its maximum bursts at the maximum for at least 30 minutes once a day.
    assert limits.INSTANCE_BURST_S == 1_800
    m5 = limits.instance_type_envelope(M5_LARGE)
    assert limits.instance_full_to_alarm_s(m5, None) == pytest.approx(0.8 * 1_800)
    # Volumes that reach only part of the way above the baseline drain it slower.
    slower = limits.instance_full_to_alarm_s(m5, (3_600 + 15_150 / 2, 81.25e6))
    assert slower == pytest.approx(2 * 0.8 * 1_800)
    # Volumes that cannot go above its baseline do not drain it at all.
    assert limits.instance_full_to_alarm_s(m5, (3_000.0, 80e6)) is None
    big = InstanceType("m5.8xlarge", 30_000, 30_000, 850e6, 850e6, nitro=True)
    assert limits.instance_full_to_alarm_s(limits.instance_type_envelope(big), None) is None


def test_an_instance_limit_binds_only_where_its_volumes_can_go_beyond_its_baseline():
    m5 = limits.instance_type_envelope(M5_LARGE)
    one_gp2 = limits.reach([limits.gp2(100)])
    assert one_gp2 == (3_000, 128 * MIB)
    # 3,000 IOPS stay under the 3,600 of the baseline; 128 MiB/s exceed its 81.25 MB/s.
    assert limits.binding_units(m5, one_gp2) == {Unit.BYTES_PER_SECOND}
    assert limits.binding_units(m5, limits.reach([limits.gp3(3_000, 125)] * 2)) == BOTH
    assert limits.binding_units(m5, (100.0, 1e6)) == set()
    # A volume whose limits are unknown, or an instance without figures: either may bind.
    assert limits.reach([limits.gp2(100), None]) is None
    assert limits.binding_units(m5, None) == BOTH
    assert limits.binding_units(None, (1.0, 1.0)) == BOTH
