"""The daemon itself beside its replay, on real recorded load: what each warns, and when.

    .venv/bin/python benchmarks/live.py --cache /tmp/realload           # the real-load fleet
    .venv/bin/python benchmarks/live.py --from incident-3-fortnight     # a recording
    .venv/bin/python benchmarks/live.py --series nyc_taxi --days 3

Each resource's recording (the real-load fleet of `benchmarks/realload.py`, one resource at a
time, in parallel; or the recording given) is read three ways over the same days:
- the daemon (`analyzer/played.py`): the process `run` builds, its cycles on a stepped clock,
  against a CloudWatch that publishes each minute `--lag` after it ends (0: the moment it ends);
- its replay (`backtest`), reading each minute as the daemon does (`settle_delay`, and the same
  `publication_lag`);
- the replay of every minute the moment it ends: when the data first allowed each warning.
For every alert, its fired time live beside the replay's; for every exhaustion, the lead the
daemon gave beside the replay's, the data's and the alarm's (judged on the same published
data). Then, on the recording's first day (no past for any resource), the burst warnings the
daemon and its replay fired per resource. The cycles run as fast as the machine allows, one
after the other: none is skipped; a failed cycle is counted and printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import realload

from analyzer import logs
from analyzer.analyze import prices, rules
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.states import states_for
from analyzer.collect import recording
from analyzer.collect.recording import Recording
from analyzer.model import units
from analyzer.offline.backtest import WARNING, Backtest, backtest, judge
from analyzer.offline.replay import EVERY_MINUTE, Sight
from analyzer.played import play
from analyzer.settings.reading import Reading
from analyzer.sim.recorded import scenarios

RESOLVE_AFTER_S = 300.0
PHASE_S = 20.0
"""Seconds into each minute the daemon's cycles run (its first cycle starts at a jitter)."""
WITHIN_S = 60.0
"""The aim: the daemon warns no more than this after the data first allowed it."""


@dataclass(frozen=True)
class Compared:
    """One recording read three ways over the same span."""

    name: str
    live: Backtest
    replayed: Backtest
    allowed: Backtest
    cycles: int
    failed: int
    metrics: int
    resource_hours: float
    first_day: tuple[int, int, int] | None
    """Burst warnings on the first day: live, replayed, resources with a balance."""
    seconds: float


def _replay(history: Recording, start: datetime, end: datetime, sight: Sight) -> Backtest:
    ruleset = rules.load([Path("builtin")])
    return backtest(
        history.inventories,
        history.raw,
        ruleset,
        Catalog(prices.load(None)),
        start,
        end,
        RESOLVE_AFTER_S,
        history.past,
        sight,
    )


def _played(
    history: Recording, start: datetime, end: datetime, lag_s: float
) -> tuple[Backtest, int, int, int]:
    ruleset = rules.load([Path("builtin")])
    given = {"publication_lag": lag_s, "resolve_after": RESOLVE_AFTER_S}
    done = play(history, ruleset, start, end, lag_s=lag_s, phase_s=PHASE_S, given=given)
    states = [
        state
        for region, inventory in history.inventories.items()
        for state in states_for(inventory, history.raw.get(region, {}))
    ]
    lived = judge(states, done.replay.fired, start, end, lag_s)
    return lived, done.cycles, done.failed, done.metrics


def _bursts(result: Backtest) -> int:
    return sum(1 for f in result.fired if f.bottleneck.is_credits and f.severity.rank >= WARNING)


def compare(name: str, history: Recording, days: float, lag_s: float) -> Compared:
    logs.configure("error")  # the alerts are the table, not the log
    began = time.monotonic()
    sight = Sight(Reading().settle_delay, lag_s)
    end = history.end - timedelta(minutes=1)
    start = end - timedelta(days=days)
    lived, cycles, failed, metrics = _played(history, start, end, lag_s)
    replayed = _replay(history, start, end, sight)
    allowed = _replay(history, start, end, EVERY_MINUTE)
    resources = history.resources()
    first = None
    reach = rules.load([Path("builtin")]).reach()
    day_start = history.start + timedelta(seconds=reach + 600)
    if day_start + timedelta(days=1) < start:
        day_end = day_start + timedelta(days=1)
        live_day, *_ = _played(history, day_start, day_end, lag_s)
        replay_day = _replay(history, day_start, day_end, sight)
        first = (_bursts(live_day), _bursts(replay_day), len(replay_day.by_resource))
    hours = resources * (end - start).total_seconds() / 3600
    seconds = time.monotonic() - began
    lived, replayed, allowed = (_bare(r) for r in (lived, replayed, allowed))
    return Compared(name, lived, replayed, allowed, cycles, failed, metrics, hours, first, seconds)


def _bare(result: Backtest) -> Backtest:
    """What a worker sends back: without the states judged, nor the fixes offered."""
    fired = [replace(f, fix=None) for f in result.fired]
    return replace(result, states=[], fired=fired)


def _realload(driven: realload.Driven, cache: str | None, days: float, lag: float) -> Compared:
    return compare(driven.name, realload.recorded(driven, cache), days, lag)


def _clock(moment: datetime | None) -> str:
    return moment.strftime("%m-%d %H:%M:%S") if moment else "-"


def _lead(seconds: float | None) -> str:
    return units.duration(seconds) if seconds is not None else "none"


def alerts_table(found: Sequence[Compared]) -> None:
    print("| resource | rule | replay fired | daemon fired | apart |")
    print("|---|---|---|---|---|")
    for one in found:
        theirs = {(f.rule, f.resource_id): [] for f in one.replayed.fired}
        for f in one.replayed.fired:
            theirs[(f.rule, f.resource_id)].append(f.fired_at)
        mine = {(f.rule, f.resource_id): [] for f in one.live.fired}
        for f in one.live.fired:
            mine[(f.rule, f.resource_id)].append(f.fired_at)
        for key in sorted(set(theirs) | set(mine)):
            a, b = theirs.get(key, []), mine.get(key, [])
            for i in range(max(len(a), len(b))):
                x = a[i] if i < len(a) else None
                y = b[i] if i < len(b) else None
                apart = units.duration((y - x).total_seconds()) if x and y else "unmatched"
                print(f"| {key[1]} | {key[0]} | {_clock(x)} | {_clock(y)} | {apart} |")


def exhaustions_table(found: Sequence[Compared]) -> tuple[int, int, float]:
    """Print one row an exhaustion; the exhaustions, those warned within `WITHIN_S` of when
    the data allowed, and the largest gap between the daemon's lead and its replay's."""
    print("| resource | empty at | data allowed | replay | daemon | alarm |")
    print("|---|---|---|---|---|---|")
    total = prompt = 0
    worst = 0.0
    for one in found:
        rows = zip(
            one.allowed.exhaustions, one.replayed.exhaustions, one.live.exhaustions, strict=True
        )
        for allowed, replayed, live in rows:
            total += 1
            lead, ideal = live.lead_seconds or 0.0, allowed.lead_seconds or 0.0
            if ideal - lead <= WITHIN_S:
                prompt += 1
            worst = max(worst, abs((replayed.lead_seconds or 0.0) - lead))
            print(
                f"| {live.resource_id} | {_clock(live.started_at)} | "
                f"{_lead(allowed.lead_seconds)} | {_lead(replayed.lead_seconds)} | "
                f"{_lead(live.lead_seconds)} | {_lead(live.alarm_lead_seconds)} |"
            )
    return total, prompt, worst


def _median(values: list[float]) -> str:
    return units.duration(statistics.median(values)) if values else "-"


def summary(found: Sequence[Compared], lag: float, wall: float) -> None:
    print("\n## Every alert, fired by the daemon and by its replay\n")
    alerts_table(found)
    print("\n## Every exhaustion: the lead each gave\n")
    total, prompt, worst = exhaustions_table(found)
    live = [q for one in found for q in one.live.by_resource.values()]
    replayed = [q for one in found for q in one.replayed.by_resource.values()]
    leads = [lead for q in live for lead in q.leads]
    theirs = [lead for q in replayed for lead in q.leads]
    alarm = [lead for q in live for lead in q.alarm_leads]
    cycles = sum(one.cycles for one in found)
    failed = sum(one.failed for one in found)
    hours = sum(one.resource_hours for one in found)
    metrics = sum(one.metrics for one in found)
    print(
        f"\nCloudWatch published each minute {units.duration(lag) if lag else 'as it ended'}; "
        f"the daemon's cycles ran {units.duration(PHASE_S)} into each minute."
    )
    print(
        f"- {prompt} of {total} exhaustions warned by the daemon no more than "
        f"{units.duration(WITHIN_S)} after the data allowed it; its lead and the replay's "
        f"differ by at most {units.duration(worst)}."
    )
    behind = sum(
        1
        for one in found
        for e in one.live.exhaustions
        if e.alarm_lead_seconds is not None
        and (e.lead_seconds or 0.0) < e.alarm_lead_seconds - PHASE_S
    )
    print(
        f"- Median lead: the daemon {_median(leads)}, its replay {_median(theirs)}, the alarm "
        f"{_median(alarm)}; later than the alarm: the daemon {behind} (beyond its cycle's "
        f"{units.duration(PHASE_S)} into the minute), its replay "
        f"{sum(q.later_than_alarm for q in replayed)}."
    )
    print(
        f"- False warnings: the daemon {sum(q.false_warnings for q in live)}, its replay "
        f"{sum(q.false_warnings for q in replayed)}, the alarm "
        f"{sum(q.alarm_false_episodes for q in live)}."
    )
    firsts = [one.first_day for one in found if one.first_day is not None]
    if firsts:
        worse = sum(1 for live_n, replay_n, _ in firsts if live_n > replay_n + 1)
        print(
            f"- First day (no past): burst warnings, the daemon {sum(f[0] for f in firsts)}, "
            f"its replay {sum(f[1] for f in firsts)}, over {sum(f[2] for f in firsts)} "
            f"resources; {worse} resource(s) where the daemon fired more than its replay + 1."
        )
    print(
        f"- {cycles} cycles, {failed} failed, none skipped; "
        f"{metrics / hours if hours else 0:.1f} metrics asked per resource-hour (the backfill "
        f"and the past included); {wall:.0f} s."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--from", dest="source", help="a recording (file or shipped name)")
    parser.add_argument("--series", action="append", help="only these real series, by name")
    parser.add_argument("--cache", help="keep the simulated data in this directory")
    parser.add_argument("--days", type=float, default=2.0, help="the last days read (2)")
    parser.add_argument(
        "--lag", type=float, default=0.0, help="CloudWatch's publication lag, seconds (0)"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    began = time.monotonic()
    if args.source:
        history = recording.read(recording.resolve(args.source))
        found = [compare(args.source, history, args.days, args.lag)]
    else:
        chosen = scenarios(tuple(args.series) if args.series else None)
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            found = list(
                pool.map(
                    _realload,
                    chosen,
                    [args.cache] * len(chosen),
                    [args.days] * len(chosen),
                    [args.lag] * len(chosen),
                    chunksize=1,
                )
            )
    summary(found, args.lag, time.monotonic() - began)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
