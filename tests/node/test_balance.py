"""BurstBalance between CloudWatch's readings, from the bucket model and the I/O the node counted.

The gp2 bucket (Amazon EBS User Guide, "General Purpose SSD volumes", gp2 "I/O credits and burst
performance"): 5.4 million I/O credits, a baseline of 3 IOPS per GiB (at least 100), bursts to
3,000 IOPS while credits remain. st1's bucket counts throughput (Amazon EBS User Guide,
"Throughput Optimized HDD volumes"): 40 MiB/s per TiB baseline, 1 TiB of credits per TiB.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer.collect.logpage import Stats
from analyzer.model.limits import CreditBucket, gp2, st1
from analyzer.model.series import Series, Status
from analyzer.model.units import KIB, MIB
from analyzer.node.balance import CARRY_S, Anchor, carried, modelled
from analyzer.node.counters import Counters

T = 1_764_150_000.0
"""An epoch second on a whole minute."""
PERIOD = 5


def _gp2_bucket() -> CreditBucket:
    bucket = gp2(50).bucket
    assert bucket is not None
    return bucket


def _steady(iops: float, io_bytes: float, start: float, end: float, every: float = 1.0) -> Counters:
    """Counters of a volume doing `iops` reads of `io_bytes` each from `start` to `end`."""
    counters = Counters(keep_s=10**6)
    t = start
    while t <= end:
        done = (t - start) * iops
        counters.add(T + t, Stats(read_ops=round(done), read_bytes=round(done * io_bytes)))
        t += every
    return counters


def _by_offset(series: Series) -> dict[float, float]:
    return {stamp.timestamp() - T: value for stamp, value in series.points()}


def test_the_gp2_bucket_has_the_published_figures() -> None:
    """50 GiB × 3 IOPS/GiB = 150 IOPS baseline; 5.4 million credits; 3,000 IOPS burst."""
    bucket = _gp2_bucket()
    assert (bucket.baseline, bucket.capacity, bucket.burst) == (150.0, 5_400_000.0, 3_000.0)


STEP = (1_500 - 150) * PERIOD / 5.4e6 * 100
"""What 1,500 IOPS of 4 KiB takes from a 50 GiB gp2 bucket in a period, in percent: 0.125."""


def test_steady_io_above_the_baseline_drains_the_balance_period_by_period() -> None:
    counters = _steady(1_500, 4 * KIB, -60, 120)
    balance = modelled(_gp2_bucket(), counters, [Anchor(T + 10, 80.0)], T, T + 60, PERIOD)
    assert balance.status is Status.OK and balance.period_s == PERIOD
    # Each point is the balance at the end of its period, from the anchor's period on.
    assert _by_offset(balance) == {
        at: pytest.approx(80.0 - STEP * (i + 1)) for i, at in enumerate(range(10, 60, 5))
    }


def test_only_the_part_of_the_anchors_period_after_it_is_charged() -> None:
    counters = _steady(1_500, 4 * KIB, -60, 120)
    balance = modelled(_gp2_bucket(), counters, [Anchor(T + 12.5, 80.0)], T, T + 20, PERIOD)
    assert _by_offset(balance) == {
        10: pytest.approx(80.0 - STEP / 2),
        15: pytest.approx(80.0 - STEP * 1.5),
    }


def test_a_window_after_the_anchor_carries_the_balance_from_it() -> None:
    counters = _steady(1_500, 4 * KIB, -120, 120)
    balance = modelled(_gp2_bucket(), counters, [Anchor(T - 100, 80.0)], T, T + 10, PERIOD)
    # [-100, 0) is 20 periods before the window's first.
    assert _by_offset(balance) == {
        0: pytest.approx(80.0 - STEP * 21),
        5: pytest.approx(80 - STEP * 22),
    }


def test_no_anchor_no_balance() -> None:
    """A balance the node cannot know is never guessed."""
    counters = _steady(1_500, 4 * KIB, -60, 120)
    balance = modelled(_gp2_bucket(), counters, [], T, T + 60, PERIOD)
    assert balance.status is Status.NO_DATA and len(balance) == 0


def test_an_anchor_after_the_window_gives_no_balance() -> None:
    counters = _steady(1_500, 4 * KIB, -60, 120)
    balance = modelled(_gp2_bucket(), counters, [Anchor(T + 60, 80.0)], T, T + 60, PERIOD)
    assert balance.status is Status.NO_DATA


def test_there_is_no_balance_before_the_first_anchor() -> None:
    counters = _steady(1_500, 4 * KIB, -60, 120)
    balance = modelled(_gp2_bucket(), counters, [Anchor(T + 30, 80.0)], T, T + 60, PERIOD)
    assert min(_by_offset(balance)) == 30


def test_a_later_anchor_resets_the_balance_to_its_reading() -> None:
    """The model's error never outlives the interval between CloudWatch's readings."""
    counters = _steady(1_500, 4 * KIB, -60, 120)
    anchors = [Anchor(T + 10, 80.0), Anchor(T + 30, 50.0)]
    balance = _by_offset(modelled(_gp2_bucket(), counters, anchors, T, T + 45, PERIOD))
    assert balance[25] == pytest.approx(80.0 - STEP * 4)
    assert balance[30] == pytest.approx(50.0 - STEP)
    assert balance[40] == pytest.approx(50.0 - STEP * 3)


REFILL = 150 * PERIOD / 5.4e6 * 100
"""What a 50 GiB gp2 bucket earns in an idle period, in percent."""


def test_an_idle_volume_refills_at_the_baseline_and_never_above_full() -> None:
    counters = _steady(0, 4 * KIB, -60, 600)
    anchor = 100.0 - 2.5 * REFILL
    balance = modelled(_gp2_bucket(), counters, [Anchor(T, anchor)], T, T + 30, PERIOD)
    assert list(balance.values) == [
        pytest.approx(anchor + REFILL),
        pytest.approx(anchor + 2 * REFILL),
        100.0,
        100.0,
        100.0,
        100.0,
    ]


def test_io_below_the_baseline_refills_by_what_is_left_of_it() -> None:
    counters = _steady(50, 4 * KIB, -60, 120)
    balance = modelled(_gp2_bucket(), counters, [Anchor(T, 50.0)], T, T + 10, PERIOD)
    step = (150 - 50) * PERIOD / 5.4e6 * 100
    assert list(balance.values) == [pytest.approx(50 + step), pytest.approx(50 + 2 * step)]


def test_the_balance_never_falls_below_empty() -> None:
    counters = _steady(3_000, 4 * KIB, -60, 120)
    balance = modelled(_gp2_bucket(), counters, [Anchor(T, 0.5)], T, T + 60, PERIOD)
    assert min(balance.values) == 0.0
    assert all(v >= 0.0 for v in balance.values)
    assert balance.values[-1] == 0.0


@given(
    iops=st.floats(0, 3_000),
    anchor=st.floats(0, 100),
    periods=st.integers(1, 30),
)
def test_the_balance_stays_between_empty_and_full(iops: float, anchor: float, periods: int) -> None:
    counters = _steady(iops, 16 * KIB, -10, periods * PERIOD + 10, every=2.5)
    end = T + periods * PERIOD
    balance = modelled(_gp2_bucket(), counters, [Anchor(T, anchor)], T, end, PERIOD)
    assert len(balance) == periods
    assert all(0.0 <= v <= 100.0 for v in balance.values)


def test_st1_is_charged_by_the_bytes_it_moves() -> None:
    """A 500 GiB st1 earns 40 MiB/s per TiB (19.53 MiB/s) into 500 GiB of credits; 100 reads
    of 1 MiB a second take 100 MiB/s from it."""
    bucket = st1(500).bucket
    assert bucket is not None
    assert bucket.baseline == pytest.approx(40 * MIB * 500 / 1024)
    assert bucket.capacity == 500 * 1024 * MIB
    counters = _steady(100, MIB, -60, 120)
    balance = modelled(bucket, counters, [Anchor(T, 90.0)], T, T + 15, PERIOD)
    step = (100 * MIB - bucket.baseline) * PERIOD / bucket.capacity * 100
    assert list(balance.values) == [
        pytest.approx(90.0 - step),
        pytest.approx(90.0 - 2 * step),
        pytest.approx(90.0 - 3 * step),
    ]


def test_the_points_are_stamped_on_epoch_aligned_periods() -> None:
    counters = _steady(1_500, 4 * KIB, -60, 120)
    balance = modelled(_gp2_bucket(), counters, [Anchor(T + 12.5, 80.0)], T, T + 20, PERIOD)
    assert balance.timestamps == (
        datetime.fromtimestamp(T + 10, UTC),
        datetime.fromtimestamp(T + 15, UTC),
    )


def test_a_gap_in_the_samples_is_not_modelled_as_an_idle_volume() -> None:
    """The node read nothing from 20 s to 200 s (agent stopped, longer than MAX_GAP_S) while
    the volume went on at 1,500 IOPS: the counters say 270,000 operations happened, not when.
    Unknown I/O is not "no I/O": the balance there is not known, never refilled."""
    counters = _steady(1_500, 4 * KIB, -60, 20)
    counters.add(T + 200, Stats(read_ops=1_500 * 260, read_bytes=1_500 * 260 * 4 * KIB))
    balance = _by_offset(modelled(_gp2_bucket(), counters, [Anchor(T, 50.0)], T, T + 200, PERIOD))
    assert balance[15] == pytest.approx(50.0 - 4 * STEP)
    assert all(balance.get(at, 0.0) <= balance[15] for at in range(20, 200, PERIOD))


def test_the_stretch_before_the_first_page_is_carried_across_from_a_reading_minutes_late() -> None:
    """CloudWatch's reading stands for 60 s before the node's first page: the balance is the
    reading less what the pages drained, from their first period on."""
    counters = _steady(1_500, 4 * KIB, 0, 60)
    balance = _by_offset(modelled(_gp2_bucket(), counters, [Anchor(T - 60, 80.0)], T, T + 60, 5))
    assert balance == {
        at: pytest.approx(80.0 - STEP * (i + 1)) for i, at in enumerate(range(0, 60, 5))
    }
    # Said to be at most what 60 s at the 3,000 IOPS burst could take lower: 2,850 × 60 of 5.4M.
    found = carried(_gp2_bucket(), counters, [Anchor(T - 60, 80.0)], T + 60)
    assert found is not None and found.seconds == 60
    assert found.bound == pytest.approx(2_850 * 60 / 5.4e6 * 100)
    assert found.text() == (
        "BurstBalance carried from CloudWatch's 80% of 09:39:00 UTC across the 60 s before the "
        "node's first page: up to 3.2 points lower"
    )


def test_a_reading_among_the_pages_is_not_carried_and_an_old_one_is_not_carried_across() -> None:
    counters = _steady(1_500, 4 * KIB, 0, 60)
    assert (
        carried(_gp2_bucket(), counters, [Anchor(T - 60, 80.0), Anchor(T + 30, 79.0)], T + 60)
        is None
    )
    # Ten minutes before the first page: too far to carry, unknown as before.
    old = [Anchor(T - CARRY_S - 1, 80.0)]
    assert carried(_gp2_bucket(), counters, old, T + 60) is None
    assert modelled(_gp2_bucket(), counters, old, T, T + 60, 5).status is Status.NO_DATA
