"""The daemon itself over a recording, beside its replay: the same alerts, within a minute.

The recording is a gp2 volume driven by a real series (New York taxi rides, `sim/recorded.py`)
that empties its bucket on the evenings of its four days. The daemon (`analyzer/played.py`)
and `backtest`'s replay read it with the same settle delay and publication lag: they must
fire the same alerts, each the cycle's phase apart, and give every exhaustion the same lead.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from analyzer.analyze import prices, rules
from analyzer.analyze.catalog import Catalog
from analyzer.collect.recording import Recording
from analyzer.offline.backtest import Backtest, backtest, judge
from analyzer.offline.replay import Sight
from analyzer.played import Played, play
from analyzer.sim import cloudwatch
from analyzer.sim.bursty import as_raw
from analyzer.sim.recorded import Driven, simulate
from analyzer.sim.scenario import REGION

PHASE_S = 20.0
"""Seconds into each minute the daemon's cycles run."""
SETTLE_S = 120.0
HOURS = 5


@pytest.fixture(scope="module")
def recorded() -> Recording:
    driven = Driven("nyc_taxi", "gp2", 100, 0.8)
    inventory, data = simulate(driven, 4)
    raw = as_raw(data)
    stamps = [t for series in raw[driven.resource_id].values() for t in series.timestamps]
    return Recording(
        min(stamps), max(stamps) + timedelta(minutes=1), {REGION: inventory}, {REGION: raw}
    )


def _both(recorded: Recording, lag_s: float) -> tuple[Backtest, Played, Backtest]:
    """The third evening, when the bucket empties, replayed and played."""
    ruleset = rules.load([Path("builtin")])
    start = recorded.end - timedelta(hours=30)
    end = start + timedelta(hours=HOURS)
    sight = Sight(SETTLE_S, lag_s)
    replayed = backtest(
        recorded.inventories,
        recorded.raw,
        ruleset,
        Catalog(prices.load(None)),
        start,
        end,
        300.0,
        sight=sight,
    )
    given = {"settle_delay": SETTLE_S, "publication_lag": lag_s}
    played = play(recorded, ruleset, start, end, lag_s=lag_s, phase_s=PHASE_S, given=given)
    lived = judge(replayed.states, played.replay.fired, start, end, lag_s)
    return replayed, played, lived


@pytest.mark.parametrize("lag_s", [0.0, 120.0, 150.0])
def test_the_daemon_fires_what_its_replay_fires_within_the_cycle_s_phase(
    recorded: Recording, lag_s: float
) -> None:
    replayed, played, lived = _both(recorded, lag_s)
    assert played.failed == 0 and played.cycles == HOURS * 60 + 1
    fired = [(f.rule, f.resource_id) for f in replayed.fired]
    assert fired and fired == [(f.rule, f.resource_id) for f in played.replay.fired]
    for mine, theirs in zip(played.replay.fired, replayed.fired, strict=True):
        assert (mine.fired_at - theirs.fired_at).total_seconds() == PHASE_S
    # Every exhaustion: the daemon's lead is the replay's, less the phase.
    assert replayed.exhaustions and len(lived.exhaustions) == len(replayed.exhaustions)
    for mine, theirs in zip(lived.exhaustions, replayed.exhaustions, strict=True):
        assert mine.lead_seconds is not None and theirs.lead_seconds is not None
        assert theirs.lead_seconds - mine.lead_seconds == PHASE_S
        assert mine.alarm_lead_seconds == theirs.alarm_lead_seconds


def test_the_later_the_data_is_published_the_later_both_warn(recorded: Recording) -> None:
    """Each minute CloudWatch takes to publish is a minute later for the daemon and its
    replay alike; the alarm is judged on the same data."""
    prompt, _, _ = _both(recorded, 0.0)
    late, _, _ = _both(recorded, 240.0)
    firsts = [(a.fired_at, b.fired_at) for a, b in zip(prompt.fired, late.fired, strict=True)]
    assert all((b - a).total_seconds() == 240.0 for a, b in firsts)
    [was], [now] = prompt.exhaustions, late.exhaustions
    assert was.alarm_lead_seconds is not None and now.alarm_lead_seconds is not None
    assert was.alarm_lead_seconds - now.alarm_lead_seconds == 240.0


def test_published_at_once_the_daemon_warns_within_a_minute_of_the_data(
    recorded: Recording,
) -> None:
    """A balance is read the moment CloudWatch has it, a sum once its next minute is there:
    every alert comes within a minute of the replay of every minute as it ends (what the
    data first allowed), the cycle's phase aside, and no exhaustion later than the alarm."""
    replayed, played, lived = _both(recorded, 0.0)
    start, end = replayed.start, replayed.end
    allowed = backtest(
        recorded.inventories,
        recorded.raw,
        rules.load([Path("builtin")]),
        Catalog(prices.load(None)),
        start,
        end,
        300.0,
    )
    assert [f.rule for f in allowed.fired] == [f.rule for f in played.replay.fired]
    for mine, first in zip(played.replay.fired, allowed.fired, strict=True):
        assert PHASE_S <= (mine.fired_at - first.fired_at).total_seconds() <= 60 + PHASE_S
    assert all(e.lead_seconds is not None for e in lived.exhaustions)
    assert all(q.later_than_alarm == 0 for q in replayed.by_resource.values())


def test_a_cycle_that_fails_is_counted_and_the_next_goes_on(
    recorded: Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = cloudwatch.SimulatedCloudWatch.get_metric_data
    calls = {"n": 0}

    def flaky(self: cloudwatch.SimulatedCloudWatch, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] % 7 == 0:
            raise RuntimeError("CloudWatch is down")
        return answer(self, **kwargs)

    monkeypatch.setattr(cloudwatch.SimulatedCloudWatch, "get_metric_data", flaky)
    ruleset = rules.load([Path("builtin")])
    end = recorded.end - timedelta(minutes=1)
    played = play(recorded, ruleset, end - timedelta(hours=1), end, lag_s=0.0)
    assert played.cycles == 61 and 0 < played.failed < played.cycles
