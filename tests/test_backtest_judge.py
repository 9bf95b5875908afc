"""How the backtest judges alerts against what a balance really did: exhaustions, leads, false
warnings, and a `BurstBalance < 20 %` alarm on the same data, per resource and in total."""

from __future__ import annotations

from datetime import datetime

import pytest

from analyzer.backtest import exhaustions, judge
from analyzer.model.findings import Bottleneck, Severity
from analyzer.model.metrics import Measure
from analyzer.replay import Fired
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
