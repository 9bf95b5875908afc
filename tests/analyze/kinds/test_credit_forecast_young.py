"""`credit_forecast` on a bucket whose past, as read, holds fewer whole days than
`profile_days` (a new volume, an account just added, a recording's first days): no record can
vouch for a drain there, and no profile can call it news, so only a drain that has lasted (its
burn) speaks above the floor. A past not read says nothing of the bucket's age."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from analyzer.analyze.kinds.credit_forecast import BurnWindows, CreditForecast
from analyzer.model.findings import Finding, Severity
from analyzer.model.metrics import Measure
from analyzer.model.past import NO_PAST, Past
from analyzer.model.series import Series
from analyzer.model.state import ResourceState
from analyzer.model.units import KIB
from tests.helpers import T0, series, snapshot_of, volume_state

RULE = CreditForecast(
    id="forecast",
    resource_types=["volume"],
    severity="warning",
    burn=[BurnWindows(long=900, short=300, within=1200)],
)
MINUTES = 60


def _days(*lows: float) -> Series:
    """Daily minima of the whole days before T0, oldest first."""
    n = len(lows)
    return Series.of([(T0 - timedelta(days=n - i), low) for i, low in enumerate(lows)], 86_400)


def _gp2(balance: list[float], iops: list[float], past: Past) -> ResourceState:
    state = volume_state(
        "gp2",
        100,
        {
            Measure.BURST_BALANCE: series(balance),
            Measure.IOPS: series(iops),
            Measure.THROUGHPUT: series([v * 16 * KIB for v in iops]),
        },
    )
    return replace(state, past=past)


def _judge(state: ResourceState, rule: CreditForecast = RULE) -> Finding | None:
    snap = snapshot_of(state, rules=(rule,), minutes_of_data=MINUTES)
    return rule.evaluate(snap.resources[0], snap, snap.data_end)


LASTED = ([100.0] * 45 + [100.0 - 3 * m for m in range(1, 16)], [0.0] * 45 + [3_000.0] * 15)
"""Fifteen minutes at 3,000 IOPS on gp2 100 GiB: 55 % left, empty in about 18 minutes by the
last quarter hour's burn and by the last five minutes'."""
BEGUN = ([100.0] * 55 + [100.0 - 3 * m for m in range(1, 6)], [0.0] * 55 + [3_000.0] * 5)
"""Five minutes of the same: 85 % left, empty in 28 minutes at today's rate (within the hour's
horizon), but by the last quarter hour's burn in well over an hour."""
YOUNG = Past(minima={Measure.BURST_BALANCE: _days(100.0)})
"""One whole day read: fewer than `profile_days` (3)."""
QUIET = Past(minima={Measure.BURST_BALANCE: _days(100.0, 100.0, 100.0)})
"""Three quiet days: no drain in them, so no record, and the physics forecast speaks."""


def test_a_young_buckets_first_burst_is_not_warned_until_it_has_lasted() -> None:
    assert _judge(_gp2(*BEGUN, YOUNG)) is None
    found = _judge(_gp2(*LASTED, YOUNG))
    assert found is not None and found.severity is Severity.WARNING
    assert found.evidence["forecast"] == "burn"
    assert found.evidence["burn"]["within_s"] == 1200
    assert "its burn over the last 15 min and the last 5 min both empty it" in found.summary


def test_a_bucket_with_its_days_read_is_warned_by_the_physics_forecast_at_once() -> None:
    found = _judge(_gp2(*BEGUN, QUIET))
    assert found is not None and found.evidence["forecast"] == "physics"
    assert found.seconds_to_empty is not None and found.seconds_to_empty <= RULE.horizon


def test_a_past_not_read_says_nothing_of_age_and_the_physics_forecast_speaks() -> None:
    # The past's fetch failed, or is not due yet: no age is known, and nothing is withheld.
    found = _judge(_gp2(*BEGUN, NO_PAST))
    assert found is not None and found.evidence["forecast"] == "physics"


def test_a_past_read_empty_is_a_new_volume() -> None:
    # CloudWatch answered the fortnight with no datapoint: the volume is newer than a day.
    new = Past(minima={Measure.BURST_BALANCE: Series(period_s=86_400)})
    assert _judge(_gp2(*BEGUN, new)) is None


def test_a_young_bucket_below_the_floor_warns_whatever_its_age() -> None:
    low = [30.0] * 55 + [30.0 - 3 * m for m in range(1, 6)]
    found = _judge(_gp2(low, BEGUN[1], YOUNG))
    assert found is not None and found.evidence["forecast"] == "floor"


def test_without_burn_windows_a_young_bucket_is_judged_by_the_physics_forecast() -> None:
    # Burn off: nothing would ever let a young bucket speak above the floor, so none is held.
    found = _judge(_gp2(*BEGUN, YOUNG), RULE.model_copy(update={"burn": ()}))
    assert found is not None and found.evidence["forecast"] == "physics"


def test_profile_days_sets_how_many_days_make_a_bucket_no_longer_young() -> None:
    two = Past(minima={Measure.BURST_BALANCE: _days(100.0, 100.0)})
    assert _judge(_gp2(*BEGUN, two)) is None
    found = _judge(_gp2(*BEGUN, two), RULE.model_copy(update={"profile_days": 2}))
    assert found is not None and found.evidence["forecast"] == "physics"
