"""Alert quality on bursty workloads: the rules against a `BurstBalance < 20 %` alarm.

    .venv/bin/python benchmarks/bursty.py                    # every scenario, the shipped rules
    .venv/bin/python benchmarks/bursty.py --rules my-rules/  # the same with other rules

Each scenario of `analyzer/sim/bursty.py` drives one volume for fourteen days with on-off
bursts of heavy-tailed lengths (from a fixed seed, so every run sees the same fortnight), after
three days of the same workload that the rules read as their past and nobody judges (the
daemon starts with the two weeks it fetches); the simulator's bucket model says when the volume
really ran empty. The backtest then replays the
rules over the fortnight minute by minute, as the daemon would have run them, and sets what
they warned beside what the alarm would have: the exhaustions each warned of ahead, the
median lead, the exhaustions the alarm warned of first ("later"), the false warnings (an
alert that no exhaustion followed while it was active; for the alarm, an episode below 20 %),
and how long a warning was on in all (for the alarm, the time below 20 %): what holding a
warning longer costs.
Scenarios run in parallel, one process each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from analyzer import logs
from analyzer.analyze import prices, rules
from analyzer.analyze.catalog import Catalog
from analyzer.model import units
from analyzer.offline.backtest import Backtest, Quality, backtest
from analyzer.offline.replay import Sight
from analyzer.settings.reading import Reading
from analyzer.sim.bursty import DAYS, SCENARIOS, WARMUP_DAYS, Bursts, as_raw, simulate, span

RESOLVE_AFTER_S = 300.0
"""The daemon's default `resolve_after`."""
SIGHT = Sight(Reading().settle_delay, Reading().publication_lag)
"""What each cycle reads, as the daemon reads it with its default settings."""


def run(scenario: Bursts, rule_dirs: list[str], days: float) -> Backtest:
    logs.configure("warning")  # the replayed alerts are the table, not the log
    ruleset = rules.load([Path(d) for d in rule_dirs])
    inventory, data = simulate(scenario, WARMUP_DAYS + days)
    start, end = span(days)
    result = backtest(
        {inventory.region: inventory},
        {inventory.region: as_raw(data)},
        ruleset,
        Catalog(prices.load(None)),
        start,
        end - timedelta(minutes=1),
        RESOLVE_AFTER_S,
        sight=SIGHT,
    )
    # Sent back from a worker without the states judged nor the fixes offered (neither pickles).
    return replace(result, states=[], fired=[replace(f, fix=None) for f in result.fired])


def _lead(leads: list[float]) -> str:
    return units.duration(statistics.median(leads)) if leads else "-"


def row(name: str, q: Quality) -> str:
    return (
        f"| {name} | {q.exhaustions} | {q.warned} | {q.later_than_alarm} | {_lead(q.leads)} | "
        f"{q.false_warnings} | {_on(q.warning_seconds)} | {q.alarm_warned} | "
        f"{_lead(q.alarm_leads)} | {q.alarm_false_episodes} | {_on(q.alarm_seconds)} |"
    )


def _on(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", action="append", default=None, help="rule dirs (builtin)")
    parser.add_argument("--scenario", action="append", help="only these scenarios, by name")
    parser.add_argument("--days", type=float, default=DAYS, help="days of each scenario")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    chosen = [s for s in SCENARIOS if not args.scenario or s.name in args.scenario]
    if not chosen:
        parser.error(f"--scenario: none of {', '.join(s.name for s in SCENARIOS)}")
    rule_dirs = args.rules or ["builtin"]
    began = time.monotonic()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(run, chosen, [rule_dirs] * len(chosen), [args.days] * len(chosen)))
    print(
        "| scenario | exhaustions | warned | later than the alarm | lead (median) | "
        "false warnings | warning on | alarm: warned | alarm: lead | alarm: false | alarm: on |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    total = Quality()
    for scenario, result in zip(chosen, results, strict=True):
        quality = result.by_resource.get(scenario.volume_id, Quality())
        total.add(quality)
        print(row(f"{scenario.name} ({scenario.volume_type} {scenario.size_gib} GiB)", quality))
    print(row("**total**", total))
    print(
        f"\n{len(chosen)} scenarios of {args.days:g} days, rules {' '.join(rule_dirs)}, "
        f"{time.monotonic() - began:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
