"""Alert quality on real recorded load: the rules against a `BurstBalance < 20 %` alarm.

    .venv/bin/python benchmarks/realload.py --cache /tmp/realload  # held-out, then in-sample
    .venv/bin/python benchmarks/realload.py --in-sample --rules builtin --rules my-rules/
    .venv/bin/python benchmarks/realload.py --in-sample --series nyc_taxi

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
and how long a warning was on beside the time the alarm was. Then, as `backtest
--approve-within` weighs them (`analyzer/offline/approval.py`), the exhaustions each warning's
fix would have averted and the throttled minutes it would have saved, had it been approved
within one, five, ten and fifteen minutes (`APPROVALS_S`).

Held-out: the settings the rules were chosen among (`tune.settings`, those `backtest --tune`
weighs: the shipped rules, no burn, and the burn's `within` widened 1.5, 2 and 3 times) are
each run over every series; for each series, the setting that best meets the aim
(`shortfall`) on the *other* series is the one judged on it (leave one series out; of
settings that meet it equally, the one listed first). The held-out table is what the rules do
on load their settings were not chosen on; the in-sample table is the shipped rules on every
series; between them, the settings over every resource as `backtest --tune` prints them (each
resource replayed as `backtest --since 14d` replays it, so `--record FILE` then `ebs-analyzer
backtest --from FILE --tune` prints the same rows). `--in-sample` runs the given rules alone.
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
from pathlib import Path

from analyzer import logs
from analyzer.analyze import prices, rules
from analyzer.analyze.catalog import Catalog
from analyzer.collect import recording
from analyzer.collect.recording import Recording
from analyzer.model import resources, units
from analyzer.model.resources import Inventory
from analyzer.offline import approval, backtest_text, judged, tune, tune_text
from analyzer.offline.approval import Approval
from analyzer.offline.backtest import Quality, summed
from analyzer.offline.replay import Sight
from analyzer.settings.reading import Reading
from analyzer.sim.bursty import DAYS, WARMUP_DAYS, as_raw, span
from analyzer.sim.datapoints import Datapoints
from analyzer.sim.recorded import Driven, loads, scenarios, simulate
from analyzer.sim.scenario import FORTNIGHT_START, REGION

RESOLVE_AFTER_S = 300.0
"""The daemon's default `resolve_after`."""
SIGHT = Sight(Reading().settle_delay, Reading().publication_lag)
"""What each cycle reads, as the daemon reads it with its default settings."""
ALLOWED_FALSE = 2
"""A resource may have this many more false warnings than the alarm in a fortnight."""
FALSE_SHARE = 0.7
"""The aim: in all, no more false warnings than this share of the alarm's."""
LEAD_BEYOND_S = 600.0
"""The aim: a median lead this much beyond the alarm's."""
HOUR_S = 3600.0
APPROVALS_S = (60.0, 300.0, 600.0, 900.0)
"""The approval delays weighed: each warning's fix approved within one, five, ten and fifteen
minutes (the curve the README quotes)."""


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


Run = tuple[Quality, dict[float, Approval]]
"""A resource's quality, and its exhaustions with their warnings' fixes approved within each
of `APPROVALS_S`."""


def recorded(driven: Driven, cache: str | None) -> Recording:
    """The resource's simulated days as a recording: three of past, then the fortnight."""
    inventory, data = simulated(driven, cache)
    _, end = span(DAYS)
    return Recording(FORTNIGHT_START, end, {REGION: inventory}, {REGION: as_raw(data)})


def run(driven: Driven, rule_dirs: list[str], cache: str | None, setting: str) -> Run:
    """The resource's fortnight replayed under one of `tune.settings`, as `backtest --since
    14d --tune` replays each: the same span, the same rules, the same counting."""
    logs.configure("warning")  # the replayed alerts are the table, not the log
    loaded = rules.load([Path(d) for d in rule_dirs])
    ruleset = tune.named(tune.settings(loaded), setting).ruleset(loaded)
    replays = judged.Span.over(
        recorded(driven, cache),
        DAYS * 86400.0,
        ruleset.reach(),
        Catalog(prices.load(None)),
        RESOLVE_AFTER_S,
        SIGHT,
    )
    result = replays.replayed(ruleset)
    quality = result.by_resource.get(driven.resource_id, Quality())
    return quality, {s: approval.approve_within(result, s) for s in APPROVALS_S}


def record(path: str, each: list[Recording]) -> None:
    """The resources' recordings as one, as `record` would have made it of a fleet."""
    inventory = Inventory(
        REGION,
        volumes=tuple(v for r in each for i in r.inventories.values() for v in i.volumes),
        instances=tuple(n for r in each for i in r.inventories.values() for n in i.instances),
        db_instances=tuple(d for r in each for i in r.inventories.values() for d in i.db_instances),
    )
    raw = {REGION: {rid: m for r in each for rid, m in r.raw[REGION].items()}}
    recording.write(Path(path), Recording(each[0].start, each[0].end, {REGION: inventory}, raw))
    print(f"wrote {path}: {len(each)} resources", file=sys.stderr)


def approved(runs: list[Run]) -> list[str]:
    """The exhaustions of `runs` with each warning's fix approved within each of
    `APPROVALS_S`, in the words `backtest --approve-within` prints them."""
    lines = []
    for seconds in APPROVALS_S:
        every = Approval(seconds, tuple(a for _, by in runs for a in by[seconds].approved))
        lines.append(f"{backtest_text.headline(every)} ({backtest_text.unsaved(every)})")
    return lines


def _every(leads: list[float], exhaustions: int) -> list[float]:
    """The lead of each exhaustion: one not warned at all counts as none."""
    return leads + [0.0] * (exhaustions - len(leads))


def _lead(leads: list[float], exhaustions: int) -> str:
    """The median and the worst lead."""
    if not exhaustions:
        return "-"
    every = _every(leads, exhaustions)
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
    return q.false_warnings > q.alarm_false_episodes + ALLOWED_FALSE


def _median(leads: list[float], exhaustions: int) -> float:
    every = _every(leads, exhaustions)
    return statistics.median(every) if every else 0.0


def shortfall(by_resource: list[Quality]) -> tuple[float, ...]:
    """How far `by_resource` falls short of the aim, most important first (smaller is better):
    exhaustions warned later than the alarm, resources noisier than it by more than
    `ALLOWED_FALSE`, false warnings beyond `FALSE_SHARE` of its, the median lead short of
    `LEAD_BEYOND_S` beyond its; then the lead itself."""
    total = summed(by_resource)
    lead = _median(total.leads, total.exhaustions)
    alarm = _median(total.alarm_leads, total.exhaustions)
    return (
        total.later_than_alarm,
        sum(1 for q in by_resource if noisier(q)),
        max(0.0, total.false_warnings - FALSE_SHARE * total.alarm_false_episodes),
        max(0.0, alarm + LEAD_BEYOND_S - lead),
        -lead,
    )


def table(rows: list[tuple[str, Quality]]) -> tuple[Quality, list[str]]:
    """Print one table; its total and the resources noisier than the alarm."""
    print(
        "| resource | exhaustions | warned | lead (median / worst) | alarm: lead | "
        "later than the alarm | false warnings / the alarm's | warning on / the alarm |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, quality in rows:
        print(row(name, quality))
    total = summed([quality for _, quality in rows])
    print(row("**total**", total))
    return total, [name for name, quality in rows if noisier(quality)]


def verdict(total: Quality, noisy: list[str]) -> str:
    lead = _median(total.leads, total.exhaustions)
    alarm = _median(total.alarm_leads, total.exhaustions)
    share = total.false_warnings / total.alarm_false_episodes if total.alarm_false_episodes else 0
    return (
        f"{total.later_than_alarm} exhaustion(s) warned later than the alarm; median lead "
        f"{units.duration(lead)} against its {units.duration(alarm)} (aim: "
        f"{units.duration(alarm + LEAD_BEYOND_S)}); {total.false_warnings} false warnings, "
        f"{share:.2f} of its {total.alarm_false_episodes} (aim: {FALSE_SHARE:g}); "
        f"{len(noisy)} resource(s) with more than {ALLOWED_FALSE} false warnings beyond the "
        f"alarm's{': ' + ', '.join(noisy) if noisy else ''}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", action="append", default=None, help="rule dirs (builtin)")
    parser.add_argument("--series", action="append", help="only these series, by name")
    parser.add_argument("--cache", help="keep the simulated data in this directory")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--in-sample",
        action="store_true",
        help="only the given rules, on every series (no held-out table)",
    )
    parser.add_argument(
        "--record",
        metavar="FILE",
        help="also write every resource's simulated days as one recording, for "
        "`ebs-analyzer backtest --from FILE --tune`",
    )
    args = parser.parse_args()
    known = loads()
    if args.series and (unknown := set(args.series) - set(known)):
        parser.error(f"--series {', '.join(sorted(unknown))}: not one of {', '.join(known)}")
    chosen = scenarios(tuple(args.series) if args.series else None)
    rule_dirs = args.rules or ["builtin"]
    found = tune.settings(rules.load([Path(d) for d in rule_dirs]))
    candidates = [s.name for s in found[:1]] if args.in_sample else [s.name for s in found]
    began = time.monotonic()
    tasks = [(name, driven) for name in candidates for driven in chosen]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        done = pool.map(
            run,
            [driven for _, driven in tasks],
            [rule_dirs] * len(tasks),
            [args.cache] * len(tasks),
            [name for name, _ in tasks],
            chunksize=1,
        )
        runs = {
            (name, driven.name): found for (name, driven), found in zip(tasks, done, strict=True)
        }
        quality = {key: found[0] for key, found in runs.items()}
        if args.record:
            record(args.record, list(pool.map(recorded, chosen, [args.cache] * len(chosen))))
    first = next(iter(candidates))
    if not args.in_sample:
        picked = {}
        for series in dict.fromkeys(d.series for d in chosen):
            others = [d.name for d in chosen if d.series != series]
            picked[series] = min(
                candidates, key=lambda c: shortfall([quality[c, name] for name in others])
            )
        print("Held-out (each series judged with the settings chosen on the others):\n")
        total, noisy = table([(d.name, quality[picked[d.series], d.name]) for d in chosen])
        print(f"\nHeld-out: {verdict(total, noisy)}.")
        for line in approved([runs[picked[d.series], d.name] for d in chosen]):
            print(f"Held-out, {line}.")
        print(
            "Settings chosen without the series: "
            + "; ".join(f"{series}: {name}" for series, name in picked.items())
            + ".\n"
        )
        for name in candidates:
            every = [quality[name, d.name] for d in chosen]
            noisy = [d.name for d, q in zip(chosen, every, strict=True) if noisier(q)]
            print(f"- in-sample with {name}: {verdict(summed(every), noisy)}.")
        # The settings as `backtest --tune` sets them side by side, over every resource.
        by_setting = {
            name: {d.resource_id: quality[name, d.name] for d in chosen} for name in candidates
        }
        print("\nThe settings over every resource, as `backtest --tune` prints them:\n")
        print("\n".join(tune_text.rows_table(tune.rows(found, by_setting))))
        print("\nIn-sample (the shipped rules on every series):\n")
    total, noisy = table([(d.name, quality[first, d.name]) for d in chosen])
    print(f"\nIn-sample: {verdict(total, noisy)}.")
    for line in approved([runs[first, d.name] for d in chosen]):
        print(f"In-sample, {line}.")
    print(
        f"\n{len(chosen)} resources, {DAYS} days each, rules {' '.join(rule_dirs)}, "
        f"{len(candidates)} setting(s): {time.monotonic() - began:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
