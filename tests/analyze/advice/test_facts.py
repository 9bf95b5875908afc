"""What AWS allows a volume modification, and what io1's IOPS carry."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer.analyze.advice.facts import io1_iops_for, modification_context
from analyzer.model.resources import Modification, Volume
from analyzer.model.units import KIB, MIB
from tests.helpers import T0


def volume(*modifications: Modification) -> Volume:
    return Volume("vol-1", "us-east-1", "gp2", 50, "in-use", modifications=modifications)


def done(hours_ago: float) -> Modification:
    return Modification("completed", T0 - timedelta(hours=hours_ago), 100)


@pytest.mark.parametrize(
    ("mibps", "iops"),
    [
        (125, 500),
        (250, 1_000),
        (500, 2_000),  # the last rate 256 KiB per IOPS carries
        (501, 32_064),  # past 500 MiB/s: 16 KiB per IOPS, Nitro only
        (510, 32_640),
        (1_000, 64_000),  # io1's ceiling
    ],
)
def test_io1_iops_carry_256_kib_each_up_to_500_mibps_then_16_kib(mibps, iops):
    assert io1_iops_for(mibps) == pytest.approx(iops)


def test_io1_beyond_500_mibps_never_asks_fewer_than_32001_iops():
    # 500.1 MiB/s at 16 KiB per IOPS would be 32,006: the floor is above 32,000 either way.
    assert io1_iops_for(500.1) >= 32_001
    assert io1_iops_for(500.0001) == 32_001


@given(st.floats(min_value=0.1, max_value=1_000))
def test_io1_iops_for_a_rate_carry_that_rate(mibps):
    iops = io1_iops_for(mibps)
    per_iops = 256 * KIB if mibps <= 500 else 16 * KIB
    assert iops * per_iops >= mibps * MIB * (1 - 1e-12)


@given(st.floats(min_value=0.1, max_value=999), st.floats(min_value=0, max_value=1))
def test_more_throughput_never_needs_fewer_io1_iops(mibps, more):
    assert io1_iops_for(mibps + more) >= io1_iops_for(mibps)


def test_a_volume_never_modified_adds_nothing():
    assert modification_context(volume(), T0) == ""


def test_modifications_older_than_a_day_do_not_count():
    assert modification_context(volume(done(24), done(30), done(48)), T0) == ""


@pytest.mark.parametrize(("count", "left"), [(1, 3), (2, 2), (3, 1)])
def test_the_modifications_left_of_the_days_four(count, left):
    day = [done(h) for h in (1, 5, 9)[:count]]
    assert modification_context(volume(*day), T0) == (
        f"; {left} of its 4 modifications in 24 h left"
    )


def test_four_in_a_day_say_when_the_next_is_possible():
    # The oldest of the four, 20 h ago at 16:00 on Friday, frees a place at 16:00 Saturday.
    day = [done(h) for h in (1, 5, 9, 20)]
    assert modification_context(volume(*day), T0) == (
        "; its 4 modifications in 24 h are spent: the next is possible from Sat 16:00 UTC"
    )


def test_one_under_way_is_said_before_the_days_count():
    under_way = Modification("optimizing", T0 - timedelta(minutes=20), 40, "gp3 50 GiB 3,000 IOPS")
    assert modification_context(volume(done(2), under_way), T0) == (
        "; a modification is under way (optimizing, 40 %, to gp3 50 GiB 3,000 IOPS, since "
        "11:40 UTC): until it completes the volume's limits lie between the old and the new, "
        "and the next must wait for it"
    )


def test_one_under_way_without_progress_or_target_says_so_plainly():
    under_way = Modification("modifying", T0 - timedelta(minutes=5))
    context = modification_context(volume(under_way), T0)
    assert context.startswith("; a modification is under way (modifying, to new values, since ")
    assert "%" not in context


@pytest.mark.parametrize("state", ["completed", "failed"])
def test_a_finished_modification_is_not_under_way(state):
    finished = Modification(state, T0 - timedelta(minutes=5), 100, "gp3")
    assert modification_context(volume(finished), T0) == ("; 3 of its 4 modifications in 24 h left")
