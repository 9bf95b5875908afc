"""How the backtest judges alerts against what a balance really did: exhaustions, leads, false
warnings, and a `BurstBalance < 20 %` alarm on the same data, per resource and in total."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pytest

from analyzer.model.findings import Bottleneck, Severity
from analyzer.model.metrics import Measure
from analyzer.offline.backtest import exhaustions, judge
from analyzer.offline.replay import Fired
from tests.helpers import T0, minutes, series, volume_state

# A balance, a minute a point: down to empty at minute 10, a few credits earned and spent
# again (still below 20 %), up to 50 %, a near miss at 8 %, and up again.
BALANCE = [
    *(60, 50, 40, 30, 20, 15, 10, 5, 2, 1.5, 0.5, 0.0, 3, 6, 0.8, 0.2, 4, 10, 19),
    *(30, 40, 50, 40, 30, 19, 12, 8, 12, 25, 40),
]
EMPTY_AT = T0 + minutes(10)
NEAR_MISS_AT = T0 + minutes(24)


def _state(volume_id: str = "vol-1", values: list[float] = BALANCE):  # type: ignore[no-untyped-def]
    return volume_state(volume_id=volume_id, measures={Measure.BURST_BALANCE: series(values)})


def _alert(
    start: float, end: float | None, rid: str = "vol-1", severity: Severity = Severity.WARNING
) -> Fired:
    resolved = T0 + minutes(end) if end is not None else None
    return Fired("r", severity, rid, Bottleneck.BURST_CREDITS, T0 + minutes(start), resolved)


def test_runs_at_empty_without_a_recovery_to_the_alarm_level_are_one_exhaustion() -> None:
    [empty] = exhaustions(_state())
    assert empty.started_at == EMPTY_AT
    assert empty.ended_at == T0 + minutes(16)  # the end of the second run at empty


def test_a_recovery_to_the_alarm_level_parts_two_exhaustions() -> None:
    values = [10, 0.5, 0.0, 10, 25, 10, 1.0, 5]
    starts = [e.started_at for e in exhaustions(_state(values=values))]
    assert starts == [T0 + minutes(1), T0 + minutes(6)]


def test_an_early_warning_and_a_false_one_are_told_apart() -> None:
    fired = [_alert(1, 14), _alert(23, 27)]
    result = judge([_state()], fired, T0, T0 + minutes(30))
    [empty] = result.exhaustions
    assert empty.warned_at == T0 + minutes(1)
    assert empty.lead_seconds == 9 * 60
    # The alarm saw 15 % (minute 5) once that minute was over: four minutes ahead; and it
    # went off again at the near miss.
    assert empty.alarm_at == T0 + minutes(6)
    quality = result.by_resource["vol-1"]
    assert (quality.exhaustions, quality.warned, quality.false_warnings) == (1, 1, 1)
    assert quality.later_than_alarm == 0
    # On: minutes 1 to 14 and 23 to 27; the alarm: below 20 % from minute 5 to 19 and
    # 24 to 28.
    assert quality.warning_seconds == (13 + 4) * 60
    assert quality.alarm_seconds == (14 + 4) * 60
    assert (quality.alarm_warned, quality.alarm_episodes, quality.alarm_false_episodes) == (1, 2, 1)
    assert quality.leads == [540.0] and quality.alarm_leads == [240.0]


@pytest.mark.parametrize(
    ("fired", "later"),
    [
        ([_alert(7, 14)], 1),  # warned after the alarm
        ([], 1),  # not warned at all
        ([_alert(6, 14)], 0),  # warned with the alarm
        ([_alert(2, 14, severity=Severity.INFO)], 1),  # info warns of nothing
    ],
)
def test_an_exhaustion_the_alarm_saw_first_is_later_than_the_alarm(
    fired: list[Fired], later: int
) -> None:
    result = judge([_state()], fired, T0, T0 + minutes(30))
    assert result.by_resource["vol-1"].later_than_alarm == later


def test_the_total_adds_up_every_resource_and_json_gives_both() -> None:
    quiet = [90.0] * 30
    states = [_state("vol-1"), _state("vol-2"), _state("vol-3", quiet)]
    fired = [_alert(1, 14, "vol-1"), _alert(20, 28, "vol-3")]
    result = judge(states, fired, T0, T0 + minutes(30))
    total = result.quality()
    assert total["exhaustions"] == 2 and total["warned"] == 1
    assert total["false_warnings"] == 1 and total["later_than_alarm"] == 1
    assert total["alarm"]["false_episodes"] == 2
    assert set(total["resources"]) == {"vol-1", "vol-2", "vol-3"}
    assert total["resources"]["vol-3"]["false_warnings"] == 1
    assert total["resources"]["vol-2"]["warned"] == 0


def test_exhaustions_before_the_judged_span_are_left_out() -> None:
    result = judge([_state()], [], EMPTY_AT + minutes(1), T0 + minutes(30))
    assert result.exhaustions == []
    assert result.by_resource["vol-1"].alarm_episodes == 1  # the near miss only
    assert isinstance(result.start, datetime)


def test_time_on_counts_overlapping_warnings_once_and_only_within_the_span() -> None:
    fired = [_alert(1, 14), _alert(3, 16, severity=Severity.CRITICAL), _alert(25, None)]
    quality = judge([_state()], fired, T0 + minutes(2), T0 + minutes(28)).by_resource["vol-1"]
    # 2 to 16, and 25 to the end of the span at 28.
    assert quality.warning_seconds == (14 + 3) * 60


def test_a_lead_never_counts_from_before_the_drain_began() -> None:
    """A warning held over from an earlier drain foresaw nothing of this one: the lead counts
    from the bucket's last peak (minute 3 here, 70 %), the alarm's likewise."""
    values = [40, 25, 50, 70, 60, 45, 30, 18, 9, 0.5, 0.2, 5, 30]
    fired = [_alert(1, None)]
    [empty] = judge([_state(values=values)], fired, T0, T0 + minutes(12)).exhaustions
    assert empty.warned_at == T0 + minutes(1)
    assert empty.began_at == T0 + minutes(3)
    assert empty.lead_seconds == 6 * 60
    assert empty.alarm_lead_seconds == 1 * 60  # 18 % at minute 7, known at 8; empty at 9


def test_warnings_that_follow_one_another_are_one_and_so_is_their_false_warning() -> None:
    near_miss = [90, 60, 30, 15, 12, 25, 60, 90, 90, 90]
    fired = [
        _alert(1, 3),  # the forecast, early
        _alert(3, 6, severity=Severity.CRITICAL),  # and on, without a pause
        _alert(8, 9),  # apart: a second one
    ]
    quality = judge([_state(values=near_miss)], fired, T0, T0 + minutes(10)).by_resource["vol-1"]
    assert quality.false_warnings == 2
    assert quality.alarm_false_episodes == 1


def _trend(start: float, end: float | None, horizon_days: float = 7) -> Fired:
    return replace(_alert(start, end), rule="trend", horizon_s=horizon_days * 86_400)


def test_a_trend_warning_is_judged_by_what_follows_within_its_horizon_and_earns_no_lead() -> None:
    followed = judge([_state()], [_trend(0, 2)], T0, T0 + minutes(30))
    [empty] = followed.exhaustions
    assert empty.warned_at is None and empty.lead_seconds is None  # no minutes of lead
    assert followed.by_resource["vol-1"].false_warnings == 0
    # A trend whose horizon ends before the bucket empties warned of nothing.
    short = judge([_state()], [_trend(0, 2, horizon_days=5 / 1440)], T0, T0 + minutes(30))
    assert short.by_resource["vol-1"].false_warnings == 1
