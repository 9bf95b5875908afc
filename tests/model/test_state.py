"""A cycle's snapshot and each resource's state: staleness, data age, balances, outcomes."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from analyzer.analyze.states import build
from analyzer.model.findings import Bottleneck
from analyzer.model.metrics import Measure
from analyzer.model.state import FetchStats, Mismatch
from tests.helpers import T0, minutes, series, shop_volume, volume_state

DATA_END = T0 + minutes(40)
"""The shop volume's rates cover T0 to T0 + 30 min: its newest period ends 10 min before."""


@pytest.mark.parametrize(
    ("asked_until", "stale"),
    [
        (None, False),  # not asked this cycle (a quiet tier): as old as its cadence
        (T0 + minutes(30), False),
        (T0 + minutes(32), False),  # two periods late: still current
        (T0 + minutes(32) + timedelta(seconds=1), True),
        (DATA_END, True),
    ],
)
def test_a_resource_is_stale_when_its_data_ends_more_than_two_periods_before_what_was_asked(
    asked_until, stale
):
    state = shop_volume()
    asked = {"us-east-1": {"vol-1": asked_until}} if asked_until else {}
    snap = build(DATA_END, DATA_END, [state], asked_until=asked)
    assert snap.stale(state) is stale
    assert snap.data_age_s(state) == 600.0


def test_a_resource_without_rates_has_no_age_and_is_never_stale():
    silent = volume_state("gp3", 100, {}, iops=3_000)
    snap = build(DATA_END, DATA_END, [silent], asked_until={"us-east-1": {"vol-1": DATA_END}})
    assert snap.data_age_s(silent) is None
    assert not snap.stale(silent)


def test_a_state_stays_recent_until_its_first_recent_series_goes_stale():
    """Two periods after the newest minute of each series it has (`STALE_PERIODS`): the
    soonest of them. A series already stale does not count."""
    state = volume_state(
        "gp2",
        50,
        {
            Measure.IOPS: series([100.0] * 30),
            Measure.BURST_BALANCE: series([90.0] * 29),
            Measure.THROUGHPUT: series([1.0] * 10),
        },
    )
    at = T0 + timedelta(minutes=30)
    # The balance ends a minute before the rates: it goes stale first.
    assert state.recent_until(at) == T0 + timedelta(minutes=29 + 2)
    assert state.has_recent_data(T0 + timedelta(minutes=31))
    assert volume_state("gp2", 50, {}).recent_until(at) is None


def test_data_age_is_never_negative():
    state = shop_volume()
    snap = build(T0 + minutes(10), T0 + minutes(10), [state])
    assert snap.data_age_s(state) == 0.0


# gp2 50 GiB: 150 IOPS baseline into a 5.4 M credit bucket: 100 × 150 / 5.4e6 % a second.
EARNED_PER_MINUTE = 100 * 150 / 5.4e6 * 60


@pytest.mark.parametrize(
    ("at", "most"),
    [
        (T0 + minutes(30), 40.0),  # its reading is recent: the reading itself
        # idle since its last reading, which stands for the middle of the minute it averages
        (T0 + minutes(60), 40.0 + 30.5 * EARNED_PER_MINUTE),
        (T0 + minutes(60 * 24), 100.0),  # never more than full
    ],
)
def test_an_idle_bucket_can_have_earned_at_most_its_baseline_since_its_last_reading(at, most):
    assert shop_volume().balance_at_most(Measure.BURST_BALANCE, at) == pytest.approx(most)


def test_no_balance_reading_gives_no_balance():
    quiet = volume_state("gp2", 50, {Measure.IOPS: series([10] * 30)})
    assert quiet.balance_at_most(Measure.BURST_BALANCE, T0 + minutes(30)) is None


@pytest.mark.parametrize(
    ("balance", "left", "iops_limit"),
    [(40.0, True, 3_000.0), (1.0, False, 150.0), (None, True, 3_000.0)],
)
def test_an_empty_bucket_leaves_the_baseline_and_a_missing_one_is_not_empty(
    balance, left, iops_limit
):
    measures = {Measure.IOPS: series([150] * 30)}
    if balance is not None:
        measures[Measure.BURST_BALANCE] = series([balance] * 30)
    state = volume_state("gp2", 50, measures)
    at = T0 + minutes(30)
    assert state.credits_left(Measure.BURST_BALANCE, at) is left
    assert state.iops_limit(at) == iops_limit


@pytest.mark.parametrize(
    ("requested", "failed", "outcome", "share"),
    [
        (10, 0, "success", 0.0),
        (10, 4, "partial", 0.4),
        (10, 10, "failed", 1.0),
        (0, 0, "success", 0.0),
    ],
)
def test_a_poll_outcome_follows_its_failed_metrics(requested, failed, outcome, share):
    stats = FetchStats(metrics_requested=requested, metrics_failed=failed)
    assert (stats.outcome, stats.failed_share) == (outcome, share)


def test_fetch_stats_add_up():
    total = FetchStats(Counter(ok=1), 10, 100, ["a"], Counter(full=10), 1)
    total.merge(
        FetchStats(Counter(ok=2, error=1), 5, 50, ["b"], Counter(idle=5), 2, ["Throttling"])
    )
    assert total == FetchStats(
        Counter(ok=3, error=1), 15, 150, ["a", "b"], Counter(full=10, idle=5), 3, ["Throttling"]
    )


def test_a_mismatch_says_how_far_above_its_limit_the_data_stays():
    found = Mismatch(Bottleneck.VOLUME_THROUGHPUT, 125.0, 150.0, 600.0)
    assert found.text() == (
        "the volume throughput limit model disagrees with what CloudWatch shows: "
        "120% of it on average over 10 min"
    )


def test_a_label_names_the_resource_as_an_operator_knows_it():
    assert shop_volume().label == "vol-1 (gp2 50 GiB on i-1)"


def test_a_snapshot_finds_its_resources_by_region_and_id():
    state = shop_volume()
    snap = build(DATA_END, DATA_END, [state])
    assert snap.get("us-east-1", "vol-1") is state
    assert snap.get("eu-west-1", "vol-1") is None


def test_a_modified_volume_is_judged_only_on_what_came_after_its_limits_began():
    """Its minutes, its balance, its past days' minima since then; its day profile not at all
    where the change fell within it. What it did stays whole (`measure`)."""
    from dataclasses import replace

    import numpy as np

    from analyzer.model.past import Grid, Past

    minima = series([80.0, 60.0, 40.0, 95.0], start=T0 - timedelta(days=3), period_s=86_400)
    grid = Grid(T0 - timedelta(days=3), 300, np.zeros(3 * 288, dtype=np.float32))
    state = replace(
        volume_state("gp2", 50, {Measure.BURST_BALANCE: series([0.0] * 10 + [100.0] * 2)}),
        past=Past({Measure.BURST_BALANCE: minima}, {Measure.BURST_BALANCE: grid}),
    )
    assert state.balance(Measure.BURST_BALANCE, T0 + minutes(12)) == 100.0
    changed = replace(state, limits_since=T0 + minutes(10))
    assert len(changed.in_force(Measure.BURST_BALANCE)) == 2
    assert len(changed.measure(Measure.BURST_BALANCE)) == 12
    assert changed.balance(Measure.BURST_BALANCE, T0 + minutes(10)) is None
    assert changed.balance(Measure.BURST_BALANCE, T0 + minutes(12)) == 100.0
    assert changed.minima(Measure.BURST_BALANCE).values.tolist() == []  # type: ignore[union-attr]
    assert changed.days(Measure.BURST_BALANCE) is None
    assert state.days(Measure.BURST_BALANCE) is grid
    earlier = replace(state, limits_since=T0 - timedelta(days=4))
    assert earlier.days(Measure.BURST_BALANCE) is grid
    assert len(earlier.minima(Measure.BURST_BALANCE) or ()) == 4
