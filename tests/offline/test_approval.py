"""`backtest --approve-within`: each warning's fix approved that long after it fired, in force
ten seconds later, replayed through the exhaustion it warned of.

A gp2 50 GiB volume (baseline 150 IOPS, burst 3,000) asks 1,000 IOPS from minute 0. Its
balance reaches 0.8 % at minute 10 (an exhaustion begins: 1 % or less) while it still bursts,
is empty from minute 11, where it is held at its 150 IOPS baseline, and the workload stops at
minute 20. By hand: nine throttled minutes (11 to 19), their demand the 1,000 IOPS of the
minute before the throttle bound.
"""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main
from analyzer.model.findings import Bottleneck, Change, Remedy, RemedyKind, Severity
from analyzer.model.metrics import Measure
from analyzer.model.resources import ResourceType
from analyzer.offline import approval
from analyzer.offline.backtest import Backtest, judge
from analyzer.offline.backtest_text import approval_text
from analyzer.offline.replay import Fired
from tests.helpers import T0, minutes, series, volume_state

IOPS = [1000.0] * 11 + [150.0] * 9 + [0.0] * 5
BALANCE = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1.5, 0.8] + [0.0] * 9 + [2, 4, 6, 8, 10]
THROTTLED = 9.0


def _volume(volume_id: str = "vol-1"):  # type: ignore[no-untyped-def]
    measures = {
        Measure.IOPS: series(IOPS),
        Measure.THROUGHPUT: series([v * 16_384 for v in IOPS]),
        Measure.BURST_BALANCE: series(BALANCE),
    }
    return volume_state("gp2", 50, measures, volume_id=volume_id)


def _fix(after: dict[str, object], volume_id: str = "vol-1") -> Remedy:
    before = {"volume_type": "gp2", "size_gib": 50}
    change = Change(ResourceType.VOLUME, volume_id, before, {"size_gib": 50, **after})
    return Remedy("Modify the volume", change=change, kind=RemedyKind.MODIFY)


GP3 = _fix({"volume_type": "gp3", "iops": 3000, "throughput_mibps": 125})
IO1_500 = _fix({"volume_type": "io1", "iops": 500})
"""Too small: 500 IOPS provisioned against a demand of 1,000."""


def _warning(at: float, fix: Remedy | None, rid: str = "vol-1") -> Fired:
    return Fired(
        "gp2-burst-exhaustion",
        Severity.WARNING,
        rid,
        Bottleneck.BURST_CREDITS,
        T0 + minutes(at),
        T0 + minutes(21),
        fix=fix,
    )


def _backtest(*fired: Fired, states=None) -> Backtest:  # type: ignore[no-untyped-def]
    return judge(states or [_volume()], list(fired), T0, T0 + minutes(25))


def _one(result: Backtest, seconds: float) -> approval.Approved:
    [found] = approval.approve_within(result, seconds).approved
    return found


@pytest.mark.parametrize(
    ("warned", "fix", "seconds", "outcome", "saved"),
    [
        # In force at 3:10, from minute 4 on: gp3's 3,000 IOPS carry all of it.
        (2, GP3, 60, approval.AVERTED, THROTTLED),
        # In force at 7:10: before the bucket reached 1 %.
        (2, GP3, 300, approval.AVERTED, THROTTLED),
        # In force at 10:10, from minute 11 on: the balance read 0.8 % at minute 10, but the
        # throttle had not begun.
        (2, GP3, 480, approval.AVERTED, THROTTLED),
        # In force at 11:10, from minute 12 on: minute 11 was throttled already.
        (2, GP3, 540, approval.LATE, 8.0),
        # In force at 12:10, from minute 13 on: minutes 11 and 12 were throttled already.
        (2, GP3, 600, approval.LATE, 7.0),
        # Warned only while empty (minute 13): in force from minute 15, five of nine saved.
        (13, GP3, 60, approval.LATE, 5.0),
        # In time, but 500 IOPS hold a 1,000 IOPS demand back: nothing saved.
        (2, IO1_500, 60, approval.TOO_SMALL, 0.0),
        # The warning offered no fix apply takes.
        (2, None, 60, approval.NO_FIX, 0.0),
    ],
)
def test_a_fix_approved_in_time_averts_and_a_late_one_saves_what_remains(
    warned: float, fix: Remedy | None, seconds: float, outcome: str, saved: float
) -> None:
    found = _one(_backtest(_warning(warned, fix)), seconds)
    assert found.episode.started_at == T0 + minutes(10)
    assert found.warned_at == T0 + minutes(warned)
    assert found.outcome == outcome
    assert found.averted is (outcome == approval.AVERTED)
    assert found.throttled_minutes == THROTTLED
    assert found.minutes_saved == saved
    if fix is not None:
        assert found.in_force_at == T0 + minutes(warned) + minutes(seconds / 60 + 1 / 6)
        assert found.fix == fix.fix_id


def test_an_exhaustion_no_warning_came_for_saves_nothing_but_counts_its_minutes() -> None:
    found = _one(_backtest(), 60)
    assert (found.outcome, found.warned_at, found.fix) == (approval.NOT_WARNED, None, None)
    assert (found.throttled_minutes, found.minutes_saved) == (THROTTLED, 0.0)


def test_an_info_alert_or_a_trend_warns_of_nothing_to_approve() -> None:
    info = Fired("r", Severity.INFO, "vol-1", Bottleneck.BURST_CREDITS, T0 + minutes(2), fix=GP3)
    trend = Fired(
        "t", Severity.WARNING, "vol-1", Bottleneck.BURST_CREDITS, T0, horizon_s=86_400, fix=GP3
    )
    assert _one(_backtest(info, trend), 60).outcome == approval.NOT_WARNED


def test_a_balance_at_1_percent_still_bursting_is_not_throttled() -> None:
    """Minute 10 reads 0.8 % and serves 1,000 IOPS: it had credits left."""
    result = _backtest()
    [episode] = result.exhaustions
    assert episode.started_at == T0 + minutes(10)
    assert _one(result, 60).throttled_minutes == THROTTLED  # minutes 11 to 19, not 10


def test_the_figures_count_every_exhaustion_of_every_resource() -> None:
    states = [_volume("vol-1"), _volume("vol-2"), _volume("vol-3")]
    fired = [_warning(2, GP3, "vol-1"), _warning(2, None, "vol-2")]
    found = approval.approve_within(_backtest(*fired, states=states), 300)
    assert [a.outcome for a in found.approved] == [
        approval.AVERTED,
        approval.NO_FIX,
        approval.NOT_WARNED,
    ]
    document = found.as_dict()
    assert {k: v for k, v in document.items() if k != "per_exhaustion"} == {
        "seconds": 300,
        "takes_effect_seconds": 10.0,
        "exhaustions": 3,
        "warned": 2,
        "with_fix": 1,
        "averted": 1,
        "throttled_minutes": 27.0,
        "minutes_saved": 9.0,
    }
    assert document["per_exhaustion"][0]["fix_id"] == "vol-1:type=gp3,iops=3000,throughput=125"
    assert document["per_exhaustion"][0]["in_force_at"] == "2026-11-21T12:07:10+00:00"
    text = approval_text(found)
    assert text.startswith(
        "Approved within 5 min (taking effect 10 s later): 1 of 3 exhaustions averted, "
        "9 of 27 throttled minutes saved\n  1 not warned, 1 warned with no fix apply takes\n"
    )
    assert "vol-1:type=gp3,iops=3000,throughput=125" in text


def test_the_shipped_recording_s_exhaustion_is_averted_by_its_warning_s_fix(capsys) -> None:
    """Incident 3's replica: warned seven hours ahead, with gp3 as the fix; empty for 37
    minutes, 30 of them held at its 2,400 IOPS baseline (its last day replayed)."""
    argv = ["backtest", "--from", "incident-3-fortnight", "--since", "1d", "--approve-within"]
    assert main([*argv, "5m", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)["approve_within"]
    assert (found["seconds"], found["exhaustions"], found["with_fix"]) == (300, 1, 1)
    assert (found["averted"], found["throttled_minutes"], found["minutes_saved"]) == (1, 30, 30)
    [one] = found["per_exhaustion"]
    assert one["fix_id"] == "orders-replica:type=gp3"
    # Warned at 09:25, as the daemon reads the data: two minutes after the minute that showed
    # it ended (`settle_delay`); approved five minutes later, in force ten seconds after that.
    assert one["in_force_at"] == "2026-11-13T09:30:10+00:00"
    assert main([*argv, "90s"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Backtest ")  # the usual report first
    assert (
        "\n\nApproved within 90 s (taking effect 10 s later): 1 of 1 exhaustions averted, "
        "30 of 30 throttled minutes saved\n"
    ) in out


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("0", "--approve-within 0: must be above 0 and at most 1h"),
        ("2h", "--approve-within 2h: must be above 0 and at most 1h"),
        ("soon", "--approve-within soon: 'soon' is not a duration such as 90s, 15m, 1h"),
    ],
)
def test_a_bad_duration_is_one_line_and_exit_2(capsys, given: str, said: str) -> None:
    argv = ["backtest", "--from", "incident-3-fortnight", f"--approve-within={given}"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"ebs-analyzer: error: {said}\n")
