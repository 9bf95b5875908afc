"""The daemon itself over a recording, cycle after cycle on a stepped clock: what it would have
sent, and when.

`backtest` is a model of the daemon; this is the daemon. The very process `ebs-analyzer run`
builds (`daemon.build`: the analyzer with its polling tiers and settle delay, the past it
fetches, the alert book, delivery) reads a recording played back as an AWS account
(`sim/playback.py`) whose CloudWatch publishes each datapoint `lag_s` after its minute ends.
The clock does not run: it is set to each cycle's moment, the cycle runs to its end, and the
next begins, so the recording plays as fast as the machine allows and no cycle is ever
skipped or late. What the alert book fired and resolved is read after each cycle by the code
that reads the replay's (`offline/replay.Transcript`), so that the two can be judged alike
(`offline/backtest.judge`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from analyzer import settings as settings_mod
from analyzer.analyze import prices
from analyzer.analyze.alerts import Alert
from analyzer.analyze.rules import RuleSet
from analyzer.collect.recording import Recording
from analyzer.live import daemon
from analyzer.offline.replay import Replay, Transcript
from analyzer.sim.playback import RecordedAccount
from analyzer.sim.scenario import REGION


@dataclass
class SteppedClock:
    """Simulated time that moves only when told: the moment of the cycle under way."""

    now: datetime

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Sent:
    """Every message the daemon delivered, with the simulated moment it was sent."""

    name: str = "played"
    messages: list[tuple[datetime, str]] = field(default_factory=list)

    def send(self, message: dict[str, Any], alerts: Sequence[Alert], now: datetime) -> None:
        self.messages.append((now, str(message.get("text", ""))))


@dataclass
class Played:
    """What the daemon fired over the recording, and how its cycles went."""

    replay: Replay
    """The alerts fired and resolved, at the moment of the cycle that did it."""
    cycles: int
    failed: int
    """Cycles that failed (`Daemon.cycle` returned False): counted, never silent."""
    metrics: int
    """Metric queries asked of CloudWatch over the run, the backfill included."""
    sent: list[tuple[datetime, str]]


def settings_for(recording: Recording, given: Mapping[str, object] | None = None) -> Any:
    """The daemon's settings over a recording: its regions and accounts, the demo's price
    snapshot, an address the system picks; `given` over them."""
    owners = recording.accounts()
    base: dict[str, object] = {
        "region": recording.regions() or [REGION],
        "accounts": [{"id": i, "name": n or None} for i, n in sorted(owners.items())],
        "listen": "127.0.0.1:0",
        "prices": str(prices.DEMO),
        "pricing_api": False,
    }
    return settings_mod.load({**base, **(given or {})})


def play(
    recording: Recording,
    ruleset: RuleSet,
    start: datetime,
    end: datetime,
    *,
    lag_s: float,
    phase_s: float = 0.0,
    given: Mapping[str, object] | None = None,
) -> Played:
    """The daemon's cycles from `start` to `end` (both included), one every `interval`,
    `phase_s` into each; CloudWatch publishing each datapoint `lag_s` after its period."""
    settings = settings_for(recording, given)
    clock = SteppedClock(start + timedelta(seconds=phase_s))
    played = RecordedAccount(recording, published=clock, lag_s=lag_s)

    channel = Sent()
    process, server = daemon.build(
        settings,
        ruleset,
        played.region,
        clock,
        process_metrics=False,
        fallback=channel,
        connect_account=played.account_region,
    )
    transcript = Transcript()
    cycles = failed = 0
    step = timedelta(seconds=settings.interval)
    try:
        while clock.now <= end + timedelta(seconds=phase_s):
            cycles += 1
            if not process.cycle():
                failed += 1
            transcript.take(process.book, clock.now)
            clock.now += step
    finally:
        server.stop()
    return Played(transcript.out, cycles, failed, played.asked(), channel.messages)
