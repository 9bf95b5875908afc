"""Alert quality on real recorded load: the rules against a `BurstBalance < 20 %` alarm.

    .venv/bin/python benchmarks/realload.py                    # every series, the shipped rules
    .venv/bin/python benchmarks/realload.py --rules my-rules/  # the same with other rules
    .venv/bin/python benchmarks/realload.py --series nyc_taxi --cache /tmp/realload

Each real series of `analyzer/data/realload/` (CloudWatch and other production series nobody
here wrote; see `analyzer/sim/recorded.py`) drives gp2 volumes of two sizes at three loads, an
st1 volume and an RDS instance's gp2 storage, for three days that the rules read as their past
and fourteen that are judged; the simulator's bucket model says when each bucket really ran
empty. The backtest replays the rules over the fortnight minute by minute, as the daemon would
have run them, and sets what they warned beside what the alarm would have, judged as CloudWatch
runs it (on the published 1-minute datapoints, none while a volume idles, missing data keeping
its state). Per resource and in total: the exhaustions, how many were warned, the median and
the worst lead beside the alarm's (a lead never counts from before the drain began), the
exhaustions warned later than the alarm, the false warnings beside the alarm's false episodes,
and how long a warning was on beside the time the alarm was.
Resources run in parallel, one process each; `--cache` keeps the simulated data for reruns.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import pickle
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import timedelta
from pathlib import Path

from analyzer import logs
from analyzer.analyze import prices, rules
from analyzer.analyze.catalog import Catalog
from analyzer.model import resources, units
from analyzer.model.resources import Inventory
from analyzer.offline.backtest import Backtest, Quality, backtest
from analyzer.sim.bursty import DAYS, WARMUP_DAYS, as_raw, span
from analyzer.sim.datapoints import Datapoints
from analyzer.sim.recorded import Driven, loads, scenarios, simulate

RESOLVE_AFTER_S = 300.0
"""The daemon's default `resolve_after`."""
ALLOWED_FALSE = 2
"""A resource may have this many false warnings where the alarm has fewer."""


def _shape() -> str:
    """The fields of the pickled resource types: a cache written before one changed is not
    read back (its objects would lack the new fields)."""
    kinds = (resources.Volume, resources.Instance, resources.DbInstance, Inventory)
    names = [f"{k.__name__}.{f.name}" for k in kinds for f in dataclasses.fields(k)]
    return hashlib.blake2b(" ".join(names).encode(), digest_size=4).hexdigest()


def simulated(driven: Driven, cache: str | None) -> tuple[Inventory, Datapoints]:
    path = Path(cache) / f"{driven.name}-{_shape()}.pickle" if cache else None
    if path is not None and path.exists():
        with path.open("rb") as handle:
            found: tuple[Inventory, Datapoints] = pickle.load(handle)
            return found
    made = simulate(driven, WARMUP_DAYS + DAYS)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            pickle.dump(made, handle)
    return made


def run(driven: Driven, rule_dirs: list[str], cache: str | None) -> Backtest:
    logs.configure("warning")  # the replayed alerts are the table, not the log
    ruleset = rules.load([Path(d) for d in rule_dirs])
    inventory, data = simulated(driven, cache)
    start, end = span(DAYS)
    return backtest(
        {inventory.region: inventory},
        {inventory.region: as_raw(data)},
        ruleset,
        Catalog(prices.load(None)),
        start,
        end - timedelta(minutes=1),
        RESOLVE_AFTER_S,
    )


def _lead(leads: list[float], exhaustions: int) -> str:
    """The median and the worst lead: an exhaustion not warned at all counts as none."""
    if not exhaustions:
        return "-"
    every = leads + [0.0] * (exhaustions - len(leads))
    return f"{units.duration(statistics.median(every))} / {units.duration(min(every))}"


def _on(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds else "0"


def row(name: str, q: Quality) -> str:
    return (
        f"| {name} | {q.exhaustions} | {q.warned} | {_lead(q.leads, q.exhaustions)} | "
        f"{_lead(q.alarm_leads, q.exhaustions)} | {q.later_than_alarm} | "
        f"{q.false_warnings} / {q.alarm_false_episodes} | "
        f"{_on(q.warning_seconds)} / {_on(q.alarm_seconds)} |"
    )


def noisier(q: Quality) -> bool:
    return q.false_warnings > max(q.alarm_false_episodes, ALLOWED_FALSE)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", action="append", default=None, help="rule dirs (builtin)")
    parser.add_argument("--series", action="append", help="only these series, by name")
    parser.add_argument("--cache", help="keep the simulated data in this directory")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    known = loads()
    if args.series and (unknown := set(args.series) - set(known)):
        parser.error(f"--series {', '.join(sorted(unknown))}: not one of {', '.join(known)}")
    chosen = scenarios(tuple(args.series) if args.series else None)
    rule_dirs = args.rules or ["builtin"]
    began = time.monotonic()
    count = len(chosen)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(
            pool.map(run, chosen, [rule_dirs] * count, [args.cache] * count, chunksize=1)
        )
    print(
        "| resource | exhaustions | warned | lead (median / worst) | alarm: lead | "
        "later than the alarm | false warnings / the alarm's | warning on / the alarm |"
    )
    print("|---|---|---|---|---|---|---|---|")
    total = Quality()
    noisy, later = [], 0
    for driven, result in zip(chosen, results, strict=True):
        quality = result.by_resource.get(driven.resource_id, Quality())
        total.add(quality)
        later += quality.later_than_alarm
        if noisier(quality):
            noisy.append(driven.name)
        print(row(driven.name, quality))
    print(row("**total**", total))
    print(
        f"\n{count} resources, {DAYS} days each, rules {' '.join(rule_dirs)}: "
        f"{later} exhaustion(s) warned later than the alarm; "
        f"{len(noisy)} resource(s) with more false warnings than the alarm "
        f"(at least {ALLOWED_FALSE} allowed){': ' + ', '.join(noisy) if noisy else ''}. "
        f"{time.monotonic() - began:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
