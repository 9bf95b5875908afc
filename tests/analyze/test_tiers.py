"""Which polling tier a resource belongs in, from what its data showed."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from analyzer.analyze.outlook import with_outlook
from analyzer.analyze.tiers import TierPolicy, place
from analyzer.model.findings import Bottleneck
from analyzer.model.metrics import Measure, Tier
from analyzer.model.outlook import ForecastWindows
from analyzer.model.resources import Volume
from analyzer.model.series import Status
from analyzer.model.state import ResourceState
from analyzer.model.units import KIB
from tests.helpers import T0, series, shop_volume, volume_state

AT = T0 + timedelta(minutes=30)
ONLY_THE_OUTLOOK = TierPolicy(low_balance_percent=10.0, hot_utilization=2.0)
"""A policy where neither a low balance nor a rate near a limit makes a resource hot."""


def running(
    volume_type: str, size: int, rate: float, io: float, balance: float | None = None, **limits
) -> ResourceState:
    """A volume doing `rate` operations of `io` bytes a second for the last 30 minutes, its
    BurstBalance at `balance` where given; `limits`: its provisioned IOPS and throughput."""
    measures = {
        Measure.IOPS: series([rate] * 30),
        Measure.THROUGHPUT: series([rate * io] * 30),
    }
    if balance is not None:
        measures[Measure.BURST_BALANCE] = series([balance] * 30)
    return volume_state(volume_type, size, measures, **limits)


def quiet() -> ResourceState:
    return running("gp3", 100, 10, 16 * KIB, iops=3_000, throughput=125)


@pytest.mark.parametrize(
    ("state", "previous", "alerted", "tier"),
    [
        (quiet(), None, False, Tier.IDLE),
        (quiet(), Tier.IDLE, True, Tier.HOT),
        (replace(quiet(), status=Status.ERROR), Tier.ACTIVE, False, Tier.ACTIVE),
        (replace(quiet(), status=Status.ERROR), None, False, Tier.ACTIVE),
    ],
)
def test_tiers_of_quiet_alerted_and_failed_resources(state, previous, alerted, tier) -> None:
    judged = with_outlook(state, ForecastWindows(), AT, AT)
    assert place(judged, previous, alerted, TierPolicy(), AT).tier is tier


def test_the_tier_reads_the_outlook_the_rules_read() -> None:
    """The shop's volume empties in about 25 minutes by its outlook: hot. The same data
    without an outlook is only draining: active. The classifier works out no outlook of its
    own, over windows of its own."""
    judged = with_outlook(shop_volume(), ForecastWindows(rate_s=900.0), AT, AT)
    assert judged.outlook is not None and judged.outlook.seconds_to_empty < 3600
    assert place(judged, Tier.ACTIVE, False, ONLY_THE_OUTLOOK, AT).tier is Tier.HOT
    unjudged = replace(judged, outlook=None)
    assert place(unjudged, Tier.ACTIVE, False, ONLY_THE_OUTLOOK, AT).tier is Tier.ACTIVE


def test_an_outlook_beyond_the_hot_horizon_is_active_not_hot() -> None:
    judged = with_outlook(shop_volume(), ForecastWindows(), AT, AT)
    assert judged.outlook is not None
    far = replace(ONLY_THE_OUTLOOK, hot_empty_within_s=judged.outlook.seconds_to_empty - 1)
    assert place(judged, Tier.ACTIVE, False, far, AT).tier is Tier.ACTIVE


@pytest.mark.parametrize(
    ("state", "full"),
    [
        # A third of its IOPS, no bucket: only a rise in its load can change anything.
        (lambda: running("gp3", 500, 1_000, 16 * KIB, iops=3_000, throughput=125), True),
        # gp2 of 500 GiB (1,500 IOPS baseline) at a third of its 3,000 burst: its bucket read
        # full, and not drained.
        (lambda: running("gp2", 500, 1_000, 16 * KIB, balance=100.0), True),
        # The same with a bucket not read yet: its balance says nothing.
        (lambda: running("gp2", 500, 1_000, 16 * KIB), False),
        # Not full: it refills, and would fall the moment the load came back.
        (lambda: running("gp2", 500, 1_000, 16 * KIB, balance=95.0), False),
        # Draining its bucket: active, on the active cadence.
        (lambda: running("gp2", 100, 600, 16 * KIB, balance=100.0), False),
    ],
)
def test_an_active_resource_with_its_buckets_full_and_undrained_is_read_as_an_idle_one(
    state, full
) -> None:
    judged = with_outlook(state(), ForecastWindows(), AT, AT)
    placed = place(judged, Tier.ACTIVE, False, ONLY_THE_OUTLOOK, AT)
    assert placed.tier is Tier.ACTIVE
    assert placed.full is full


def at_cap() -> ResourceState:
    """A gp3 volume at 97 % of its 3,000 IOPS, far from its throughput."""
    return running("gp3", 500, 2_910, 4 * KIB, iops=3_000, throughput=125)


def emptied() -> ResourceState:
    """A gp2 volume of 100 GiB whose credits are gone, pinned at its 300 IOPS baseline."""
    return running("gp2", 100, 300, 16 * KIB, balance=0.0)


@pytest.mark.parametrize(
    ("state", "hot_for"),
    [
        (at_cap, {Bottleneck.VOLUME_IOPS}),
        # At the baseline because the credits ran out: the bucket holds it, not the cap.
        (emptied, {Bottleneck.BURST_CREDITS}),
        (quiet, set()),
    ],
)
def test_a_hot_resource_names_the_limits_that_make_it_hot(state, hot_for) -> None:
    judged = with_outlook(state(), ForecastWindows(), AT, AT)
    placed = place(judged, Tier.ACTIVE, False, TierPolicy(), AT)
    assert placed.hot_for == hot_for
    assert placed.tier is (Tier.HOT if hot_for else Tier.IDLE)


def test_the_outlook_names_the_bucket_and_failed_data_names_nothing() -> None:
    judged = with_outlook(shop_volume(), ForecastWindows(rate_s=900.0), AT, AT)
    placed = place(judged, Tier.ACTIVE, False, ONLY_THE_OUTLOOK, AT)
    assert placed == place(judged, Tier.ACTIVE, True, ONLY_THE_OUTLOOK, AT)
    assert placed.hot_for == {Bottleneck.BURST_CREDITS}
    # Alerted but failed: hot, and nothing is known of what makes it so.
    failed = replace(quiet(), status=Status.ERROR)
    assert place(failed, Tier.HOT, True, TierPolicy(), AT).hot_for is None
    # Alerted and quiet: hot for its alert alone.
    assert (
        place(
            with_outlook(quiet(), ForecastWindows(), AT, AT), None, True, TierPolicy(), AT
        ).hot_for
        == set()
    )


def test_each_resource_s_soonest_alarm_comes_from_the_buckets_its_io_drains() -> None:
    from analyzer.analyze.tiers import alarm_times
    from analyzer.model.resources import Instance, InstanceType, Inventory, Volume

    small = InstanceType("m5.large", 3_600, 18_750, 81.25e6, 593.75e6, nitro=True)
    large = InstanceType("m5.8xlarge", 30_000, 30_000, 850e6, 850e6, nitro=True)
    inv = Inventory(
        "us-east-1",
        volumes=(
            Volume("vol-gp2", "us-east-1", "gp2", 1, "in-use", None, None, "i-large"),
            Volume("vol-gp3", "us-east-1", "gp3", 100, "in-use", 3_000, 125, "i-large"),
            Volume("vol-small", "us-east-1", "gp3", 100, "in-use", 3_000, 125, "i-small"),
        ),
        instances=(
            Instance(
                "i-large",
                "us-east-1",
                "m5.8xlarge",
                "running",
                False,
                ("vol-gp2", "vol-gp3"),
                large,
            ),
            Instance("i-small", "us-east-1", "m5.large", "running", False, ("vol-small",), small),
        ),
    )
    found = alarm_times(inv)
    assert found["vol-gp2"] == pytest.approx(0.8 * 5.4e6 / 2_900)
    # gp3 drains no bucket of its own, nor its instance's, which has none: only the caps.
    assert "vol-gp3" not in found and "i-large" not in found
    # One gp3 volume drains an m5.large's byte bucket (131 MB/s over 81.25), not its I/O one.
    drain = 125 * 1024**2 - 81.25e6
    expected = 0.8 * 1_800 * (593.75e6 - 81.25e6) / drain
    assert found["vol-small"] == pytest.approx(expected)
    assert found["i-small"] == pytest.approx(expected)


def _m5(iops: float, io: float = 16 * KIB, balance: float = 100.0) -> ResourceState:
    """An m5.large (3,600 IOPS and 81.25 MB/s baseline) whose volumes do `iops` together."""
    from tests.fakes import M5
    from tests.helpers import instance_state

    return instance_state(
        M5,
        {
            Measure.IOPS: series([iops] * 30),
            Measure.THROUGHPUT: series([iops * io] * 30),
            Measure.IO_BALANCE: series([balance] * 30),
            Measure.BYTE_BALANCE: series([balance] * 30),
        },
        volume_ids=("vol-1", "vol-2"),
    )


@pytest.mark.parametrize(
    ("iops", "balance", "minute"),
    [
        (1_000, 100.0, False),  # 28 % of the baseline: its bucket cannot fall
        (3_000, 100.0, False),  # 83 %
        (3_300, 100.0, True),  # 92 %: within a tenth of it
        (500, 97.0, True),  # below full: refilling
    ],
)
def test_an_instance_near_its_baseline_or_below_full_is_read_every_minute(
    iops: float, balance: float, minute: bool
) -> None:
    judged = with_outlook(_m5(iops, balance=balance), ForecastWindows(), AT, AT)
    placed = place(judged, Tier.IDLE, False, TierPolicy(), AT)
    assert placed.minute is minute
    assert placed.tier is (Tier.ACTIVE if minute else placed.tier)


def test_an_instance_is_near_its_baseline_by_its_volumes_latest_rates() -> None:
    """Its own sum ends where its least recently read volume's data does; each volume's own
    latest rates say where it is now."""
    from analyzer.analyze.tiers import latest_load

    old = T0 - timedelta(minutes=20)
    busy = running("gp3", 500, 2_000, 16 * KIB, iops=3_000, throughput=125)
    idle = volume_state("gp3", 100, {Measure.IOPS: series([0.0] * 5, start=old)}, iops=3_000)
    found = latest_load([busy, idle], 300.0)
    assert found.iops == pytest.approx(2_000)
    assert found.bps == pytest.approx(2_000 * 16 * KIB)
    judged = with_outlook(_m5(0.0), ForecastWindows(), AT, AT)
    assert not place(judged, Tier.IDLE, False, TierPolicy(), AT).minute
    busier = running("gp3", 500, 1_300, 16 * KIB, iops=3_000, throughput=125)
    assert place(judged, Tier.IDLE, False, TierPolicy(), AT, [busy, busier]).minute


@pytest.mark.parametrize(
    ("state", "ceiling"),
    [
        # gp3: 30 % of 125 MiB/s at 1 MiB an operation.
        (running("gp3", 100, 0, 16 * KIB, iops=3_000, throughput=125), 37.5),
        # gp2 of 100 GiB: 30 % of its 128 MiB/s, before its 300 IOPS baseline, a MiB
        # counting as four 256 KiB operations (75 a second).
        (running("gp2", 100, 0, 16 * KIB, balance=100.0), 38.4),
    ],
)
def test_the_idle_ceiling_is_the_load_at_which_a_resource_leaves_the_idle_tier(
    state: ResourceState, ceiling: float
) -> None:
    from analyzer.analyze.tiers import ASSUMED_IO_BYTES, idle_ceiling

    found = idle_ceiling(state, TierPolicy(), AT)
    assert found == pytest.approx(ceiling)
    volume = state.resource
    assert isinstance(volume, Volume)
    for rate, tier in ((found * 0.99, Tier.IDLE), (found * 1.01, Tier.ACTIVE)):
        loaded = running(
            volume.volume_type,
            volume.size_gib,
            rate,
            ASSUMED_IO_BYTES,
            balance=100.0,
            iops=volume.iops,
            throughput=volume.throughput_mibps,
        )
        judged = with_outlook(loaded, ForecastWindows(), AT, AT)
        assert place(judged, Tier.IDLE, False, TierPolicy(), AT).tier is tier, rate


def test_a_bucket_is_falling_where_its_newest_balance_is_below_the_minute_before() -> None:
    from analyzer.analyze.tiers import falling

    def gp2(balances: list[float]) -> ResourceState:
        state = running("gp2", 100, 200, 16 * KIB)
        measures = {**state.measures, Measure.BURST_BALANCE: series(balances)}
        return replace(state, measures=measures)

    [bucket] = gp2([90.0]).buckets()
    assert falling(gp2([90.0] * 29 + [89.0]), bucket, AT)
    assert not falling(gp2([89.0] + [90.0] * 29), bucket, AT)  # refilling, or steady
    assert not falling(gp2([90.0]), bucket, AT)  # one reading says nothing
    # A fall the data no longer shows as recent is not a fall now.
    assert not falling(gp2([90.0] * 20 + [89.0]), bucket, AT)
    # Below the hot tier, a falling bucket is read every minute; a hot resource is hot for it
    # too, so that it is not read as steady before an alert names the bucket.
    judged = with_outlook(gp2([90.0] * 29 + [89.0]), ForecastWindows(), AT, AT)
    assert place(judged, Tier.ACTIVE, False, ONLY_THE_OUTLOOK, AT).minute
    hot = place(judged, Tier.HOT, True, ONLY_THE_OUTLOOK, AT)
    assert hot.tier is Tier.HOT and hot.hot_for == {Bottleneck.BURST_CREDITS}
