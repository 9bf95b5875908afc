"""The daemon's cycles over a large fleet, side by side with a bare boto3 loop.

    .venv/bin/python benchmarks/fleet.py --volumes 10000 --cycles 30 [--mix busy]

A fake CloudWatch (`fake_cloudwatch.py`) runs in a process of its own and generates the
fleet's datapoints on the fly; the inventory is handed to the analyzer in memory. Each cycle
runs the analyzer as the daemon does (adaptive polling, the alerts' fixes weighed on their
past a few a cycle, the alert book, /metrics rendered and kept until the next cycle's, the
garbage collector kept off long-lived data, a minute of simulated time between cycles) and
records every GetMetricData request it makes; then a bare loop on a boto3 client of the same
configuration issues exactly those requests again. Both are measured in
this process: wall time, CPU time (the fake's work is in the other process), and the peak
resident memory of the analyzer's cycles (taken before the bare loop runs). The first cycle
backfills the lookback; the others are the steady state (thirty cycles take the fleet through
three idle cadences, so that most cycles are past the first round of staggered polls).

`--mix` picks the fleet (see `fake_cloudwatch.py`): `today`'s, mostly idle; `idle`, five in
six volumes idle and a few hot or draining (what `docs/metrics.md` quotes the cost of); or
`busy`, mostly active with a fifth of the volumes draining their burst credits. Memory per
resource is reported beside the peak: the peak less the process's resident memory just before
the fleet is built (after the imports, both clients and the rules), over the resources watched.
`--trace-memory N` also prints the N largest allocation sites, by line, after the first cycle
and after the last (tracemalloc slows the cycles and adds its own memory: its runs' times and
peaks are not figures).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

import boto3

from analyzer import logs
from analyzer import settings as settings_mod
from analyzer.analyze import rules
from analyzer.analyze.alerts import AlertBook
from analyzer.collect.aws import Clients
from analyzer.collect.cloudwatch import CloudWatch
from analyzer.collect.regions import Region
from analyzer.deliver.exporter import Published
from analyzer.live.cycle import Analyzer
from analyzer.live.heap import Heap
from analyzer.live.proofs import Proofs
from analyzer.model.resources import (
    DbInstance,
    Initialization,
    Instance,
    InstanceType,
    Modification,
    Volume,
)
from analyzer.model.units import MB

HERE = Path(__file__).resolve().parent
REGION = "us-east-1"
START = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
M5 = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, 8 * 1024**3, nitro=True)
KINDS = {
    "idle": ("gp3", 100),
    "quiet": ("gp2", 50),
    "busy": ("gp3", 500),
    "hot": ("gp3", 500),
    "draining": ("gp2", 100),
    "capped": ("gp3", 500),
    "late": ("gp2", 100),
    "surge": ("gp3", 500),
}
PROVISIONED = {"surge": 16_000}
"""gp3 IOPS where not the 3,000 included."""
sys.path.insert(0, str(HERE))
from fake_cloudwatch import (  # noqa: E402
    LATE,
    M5_LARGE,
    MIXES,
    Job,
    late_start,
    per_instance,
    volume_kind,
)


def fleet(volumes: int, mix: str) -> tuple[list[Volume], list[Instance]]:
    out = []
    each = per_instance(mix)
    for n in range(volumes):
        name = volume_kind(n, mix)
        kind, size = KINDS[name]
        iid = f"i-{n // each:08d}"
        iops = PROVISIONED.get(name, 3_000) if kind == "gp3" else None
        out.append(Volume(f"vol-{n:08d}", REGION, kind, size, "in-use", iops, None, iid))
    count = (volumes + each - 1) // each
    return out, [Instance(f"i-{n:08d}", REGION, "m5.large", "running") for n in range(count)]


@dataclass(frozen=True)
class Drain:
    """A drain that starts while the benchmark runs: a `late` volume's bucket, or the EBS
    bucket of an instance whose `surge` volumes drain it."""

    resource_id: str
    empty_at: datetime
    alarm_at: datetime
    """The end of the first minute whose balance is below 20 %: the earliest a
    `BurstBalance < 20 %` alarm (or its instance twin) can fire."""


def late_drains(volumes: int, mix: str) -> list[Drain]:
    out = []
    each = per_instance(mix)
    for n in range(volumes):
        kind = volume_kind(n, mix)
        job: Job | None = {"late": LATE, "surge": M5_LARGE}.get(kind)
        if job is None or (kind == "surge" and n % each != 1):
            continue
        rid = f"vol-{n:08d}" if kind == "late" else f"i-{n // each:08d}"
        start = START - timedelta(seconds=5) + timedelta(seconds=late_start(n))
        minute = next(m for m in range(0, 7_200, 60) if job.level(m) < 20.0)
        empty = next(t for t in range(0, 7_200) if job.level(t) <= 0.0)
        out.append(
            Drain(rid, start + timedelta(seconds=empty), start + timedelta(seconds=minute + 60))
        )
    return out


@dataclass
class Describer:
    """The fleet's inventory, in memory: what is measured is the polling and the analysis."""

    found_volumes: list[Volume]
    found_instances: list[Instance]
    region: str = REGION

    def volumes(self) -> list[Volume]:
        return self.found_volumes

    def instances(self) -> list[Instance]:
        return self.found_instances

    def instance_types(self, names: Sequence[str]) -> list[InstanceType]:
        return [M5] if "m5.large" in names else []

    def volume_modifications(self) -> dict[str, list[Modification]]:
        return {}

    def volume_initializations(self) -> dict[str, Initialization]:
        return {}

    def offered_instance_types(self) -> list[InstanceType]:
        return [M5]

    def orderable_db_classes(self, engine: str) -> set[str]:
        return set()

    def db_instances(self) -> list[DbInstance]:
        return []


@dataclass
class Recorder:
    """A boto3 CloudWatch client that keeps a copy of every request made through it, pickled
    to a temporary file: the copies are the benchmark's, and kept in memory, even pickled, they
    would weigh on the analyzer's peak (a first cycle at 10,000 volumes asks for 45,000 metrics;
    twelve cycles of the busy mix, 300,000)."""

    client: Any
    copies: IO[bytes]
    made: int = 0

    def get_metric_data(self, **kwargs: Any) -> Any:
        pickle.dump(kwargs, self.copies, protocol=pickle.HIGHEST_PROTOCOL)
        self.made += 1
        return self.client.get_metric_data(**kwargs)

    def replay(self) -> None:
        """Read the copies from the first on."""
        self.copies.seek(0)

    def next_copy(self) -> Any:
        return pickle.load(self.copies)


def point_at(endpoint: str) -> None:
    """Both clients reach the fake through the standard chain, as a user's would."""
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION=REGION,
        AWS_ENDPOINT_URL_CLOUDWATCH=endpoint,
    )


@dataclass
class Cycle:
    wall_s: float
    cpu_s: float
    bare_wall_s: float
    bare_cpu_s: float
    requests: int
    metrics: int
    analyzer_peak_mb: float
    rss_after_mb: float
    """The process's resident memory just after the cycle."""
    groups: Counter[str] = field(default_factory=Counter)
    """The metrics asked, by the kind of resource they are about (`group_of`)."""


def measure(fn: Any) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def rss_mb() -> float:
    """The process's resident memory now (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024**2


def top_sites(snapshot: tracemalloc.Snapshot, count: int) -> str:
    stats = snapshot.statistics("lineno")
    total = sum(s.size for s in stats)
    lines = [f"  traced {total / 1024**2:,.1f} MiB in {len(stats):,} sites; the largest:"]
    for s in stats[:count]:
        frame = s.traceback[0]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        lines.append(f"  {s.size / 1024**2:8.1f} MiB {s.count:10,} blocks  {where}")
    return "\n".join(lines)


def daemon_cycle(
    analyzer: Analyzer, book: AlertBook, heap: Heap, now: datetime
) -> tuple[Published, set[tuple[str, str]], float | None]:
    """A cycle as the daemon runs it: what the alert book holds read hot, the findings taken
    into the book, /metrics published; the cycle's result is dropped, what is published
    kept, with the (rule, resource id) of every alert firing and the month's bill the daemon
    projects (dollars)."""
    alerted = {(a.finding.resource.region, a.resource_id) for a in book}
    steady = book.steady(analyzer.rules.daily())
    try:
        result = analyzer.proven(analyzer.run(now, alerted, steady), now, alerted)
        book.update(now, result.findings, result.pending)
        firing = book.firing()
        projected = result.projection.dollars() if result.projection else None
        return (
            Published.of(result.readings, firing),
            {(a.finding.rule, a.resource_id) for a in firing},
            projected,
        )
    finally:
        heap.after_cycle()  # as the daemon does after each cycle


@dataclass
class Run:
    cycles: list[Cycle]
    resources: int
    baseline_mb: float
    warned: dict[tuple[str, str], datetime]
    """By (rule, resource id), the cycle its alert first fired in."""
    firing: set[tuple[str, str]]
    """What fires after the last cycle."""
    projected: list[float]
    """Each steady cycle's projection of the month's bill (dollars), as the daemon exports it."""
    sampled: tuple[float, int]
    """`ebs-analyzer cost --sample`'s figure, read at the start (dollars a month), and the
    metrics its read asked for."""
    cost: dict[str, float]
    """`ebs-analyzer cost`'s columns for the fleet (dollars a month)."""
    weighed: list[int]
    """After each cycle, how many resources' fortnights have been read to weigh fixes."""
    firing_count: list[int]
    """After each cycle, how many resources an alert fires for."""


@dataclass
class Seen:
    """What each cycle showed beyond its cost (`Run`)."""

    warned: dict[tuple[str, str], datetime] = field(default_factory=dict)
    projected: list[float] = field(default_factory=list)
    weighed: list[int] = field(default_factory=list)
    firing: list[int] = field(default_factory=list)

    def after(
        self,
        k: int,
        now: datetime,
        firing: set[tuple[str, str]],
        projected: float | None,
        proofs: Proofs | None,
    ) -> None:
        for key in firing:
            self.warned.setdefault(key, now)
        if k and projected is not None:
            self.projected.append(projected)
        self.weighed.append(len(proofs.storage) if proofs is not None else 0)
        self.firing.append(len({rid for _, rid in firing}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(
    volumes: int, cycles: int, mix: str = "today", trace: int = 0, polling: str = "adaptive"
) -> Run:
    port = free_port()
    fake = [sys.executable, str(HERE / "fake_cloudwatch.py"), str(port), mix]
    server = subprocess.Popen(fake)
    copies = tempfile.TemporaryFile()  # noqa: SIM115 (closed below)
    try:
        time.sleep(1.0)
        point_at(f"http://127.0.0.1:{port}")
        # The analyzer's clients as the product builds them: CloudWatch's, which reads, and
        # the EC2 and RDS clients a daemon's inventory holds (this fleet is described without
        # AWS, but their models are part of what a daemon keeps).
        clients = Clients.for_region(REGION)
        recorder = Recorder(clients.cloudwatch, copies)
        inventory_clients = (clients.ec2, clients.rds)
        config = settings_mod.load({"region": [REGION], "polling": polling})
        loaded = rules.load()
        baseline_mb = rss_mb()  # what does not grow with the fleet
        if trace:
            tracemalloc.start()
        found_volumes, found_instances = fleet(volumes, mix)
        describer = Describer(found_volumes, found_instances)
        # The alerts' fixes weighed on their past, a few a cycle, as the daemon does.
        analyzer = analyzer_over(config, loaded, describer, recorder, polling, Proofs())
        book = AlertBook(4 * 3600, 300)
        heap = Heap()

        runs: list[tuple[float, float, int, float]] = []
        shown: list[tuple[Published, set[tuple[str, str]], float | None]] = []
        seen = Seen()
        for k in range(cycles):
            now = START + timedelta(seconds=60 * k + 5)
            made = recorder.made
            # What is published stays until the next cycle's replaces it, as in the daemon.
            wall, cpu, shown[:] = measure(
                lambda: [daemon_cycle(analyzer, book, heap, now)]  # noqa: B023
            )
            runs.append((wall, cpu, recorder.made - made, rss_mb()))
            seen.after(k, now, *shown[0][1:], analyzer.proofs)
            if trace and k in (0, cycles - 1):
                print(f"after cycle {k}:", file=sys.stderr)
                print(top_sites(tracemalloc.take_snapshot(), trace), file=sys.stderr)
        # The analyzer's peak, before the bare loop parses anything.
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        del inventory_clients
        # The bare loop's client as boto3 builds it, after the analyzer's peak: not its memory.
        bare = boto3.client("cloudwatch", region_name=REGION)
        out = []
        recorder.replay()
        for k, (wall, cpu, made, after) in enumerate(runs):
            sent = [recorder.next_copy() for _ in range(made)]
            bare_wall, bare_cpu, _ = measure(lambda: [bare.get_metric_data(**r) for r in sent])  # noqa: B023
            asked = [q for r in sent for q in r["MetricDataQueries"]]
            groups = Counter(group_of(q, mix) for q in asked)
            out.append(
                Cycle(wall, cpu, bare_wall, bare_cpu, len(sent), len(asked), peak_mb, after, groups)
            )
            metrics = len(asked)
            print(
                f"cycle {k:2d}: {wall:6.2f} s wall, {cpu:6.2f} s CPU; bare loop {bare_wall:6.2f} s "
                f"wall, {bare_cpu:6.2f} s CPU; {len(sent)} requests, {metrics} metrics; "
                f"RSS after it {after:,.0f} MB",
                file=sys.stderr,
            )
        firing = shown[0][1] if shown else set()
        cost = {c: p.dollars() for c, p in analyzer.costs()[REGION].items()}
        return Run(
            out,
            len(found_volumes) + len(found_instances),
            baseline_mb,
            seen.warned,
            firing,
            seen.projected,
            sample(config, loaded, describer, polling),
            cost,
            seen.weighed,
            seen.firing,
        )
    finally:
        copies.close()
        server.terminate()
        server.wait()


def analyzer_over(
    config: settings_mod.Settings,
    loaded: rules.RuleSet,
    describer: Describer,
    client: Any,
    polling: str,
    proofs: Proofs | None = None,
) -> Analyzer:
    """An analyzer of the fleet `describer` lists, reading CloudWatch through `client`, its
    inventory described."""
    region = Region(REGION, describer, CloudWatch(client, REGION))
    analyzer = Analyzer(
        config, loaded, connect=lambda _: region, adaptive=polling == "adaptive", proofs=proofs
    )
    analyzer.refresh_inventory()
    return analyzer


def sample(
    config: settings_mod.Settings, loaded: rules.RuleSet, describer: Describer, polling: str
) -> tuple[float, int]:
    """What `ebs-analyzer cost --sample` says of the fleet at the start: a fresh analyzer's
    (`Analyzer.sampled`), reading through a client of its own, after the measured cycles."""
    client = Clients.for_region(REGION).cloudwatch
    analyzer = analyzer_over(config, loaded, describer, client, polling)
    if not hasattr(analyzer, "sampled"):
        return 0.0, 0  # a revision from before `cost --sample` (`--against`)
    projections, stats = analyzer.sampled(START + timedelta(seconds=5))
    return sum(p.dollars() for p in projections.values()), stats.metrics_requested


def group_of(query: dict[str, Any], mix: str) -> str:
    """What a query is about: a volume's kind in the mix, or an instance."""
    dimensions = {d["Name"]: d["Value"] for d in query["MetricStat"]["Metric"]["Dimensions"]}
    volume = dimensions.get("VolumeId")
    if volume is None:
        return "instance"
    return volume_kind(int(volume.split("-")[1]), mix)


def group_lines(volumes: int, mix: str, measured: Run, first: int) -> list[str]:
    """Metrics per resource-hour by group, over the cycles from `first` on."""
    cycles = measured.cycles[first:]
    if not cycles:
        return []
    hours = len(cycles) / 60
    asked: Counter[str] = Counter()
    for cycle in cycles:
        asked.update(cycle.groups)
    found_volumes, found_instances = fleet(volumes, mix)
    counts = Counter(volume_kind(int(v.volume_id.split("-")[1]), mix) for v in found_volumes)
    counts["instance"] = len(found_instances)
    on_volumes = sum(n for group, n in asked.items())
    each = ", ".join(
        f"{group} {asked[group] / (n * hours):.1f} ({n})" for group, n in sorted(counts.items())
    )
    return [
        f"from cycle {first} over {len(cycles)} cycles: {on_volumes / (volumes * hours):.1f} "
        f"metrics per volume-hour, instances' included; per resource-hour by group "
        f"(how many): {each}"
    ]


def steady_rate(volumes: int, measured: Run) -> float:
    """Metrics requested per volume-hour over the cycles after the first."""
    steady = measured.cycles[1:]
    return sum(c.metrics for c in steady) / (volumes * len(steady) / 60)


def leads(volumes: int, mix: str, measured: Run) -> list[tuple[Drain, float | None]]:
    """Each late drain with how long before its bucket empties its first alert fired (None:
    never, within the run)."""
    out = []
    for drain in late_drains(volumes, mix):
        first = [at for (_, rid), at in measured.warned.items() if rid == drain.resource_id]
        lead = (drain.empty_at - min(first)).total_seconds() if first else None
        out.append((drain, lead))
    return out


def drain_lines(volumes: int, mix: str, measured: Run) -> list[str]:
    lines = []
    for drain, lead in leads(volumes, mix, measured):
        alarm = (drain.empty_at - drain.alarm_at).total_seconds()
        said = (
            "not warned within the run"
            if lead is None
            else f"warned {lead / 60:.1f} min before empty, {lead / alarm:.1f}x the alarm's lead"
        )
        lines.append(
            f"late drain {drain.resource_id}: empty at {drain.empty_at:%H:%M:%S}; "
            f"a 20 % alarm {alarm / 60:.1f} min before; {said}"
        )
    return lines


PRICE_PER_METRIC = 0.01 / 1000
"""GetMetricData in us-east-1 (DOMAIN.md)."""


def bill_lines(volumes: int, measured: Run) -> list[str]:
    """The steady cycles' spend, as a month, beside what the daemon projected over them and
    what `ebs-analyzer cost` gives from the inventory alone."""
    steady = measured.cycles[1:]
    spent = sum(c.metrics for c in steady) * PRICE_PER_METRIC * (30 * 1_440 / len(steady))
    line = f"steady spend, as a month: ${spent:,.2f}"
    if measured.projected:
        low, high = min(measured.projected), max(measured.projected)
        mean = statistics.mean(measured.projected)
        line += (
            f"; the daemon's projection over the same cycles ${low:,.2f} to ${high:,.2f}, "
            f"mean ${mean:,.2f} ({mean / spent - 1:+.0%})"
        )
    columns = ", ".join(f"{c} ${d:,.2f}" for c, d in measured.cost.items())
    lines = [line, f"`ebs-analyzer cost` from the inventory alone: {columns}"]
    sampled, read = measured.sampled
    if read:
        lines.append(
            f"`ebs-analyzer cost --sample` at the start: ${sampled:,.2f} "
            f"({sampled / spent - 1:+.0%} of the steady spend), reading {read:,} metrics"
        )
    return lines


def weighing_line(measured: Run) -> str:
    """How fast the alerts' fixes are weighed on their fortnights: what a fleet's catch-up
    takes."""
    weighed, firing = measured.weighed, measured.firing_count
    cycles = len(weighed)
    per_cycle = (weighed[-1] - weighed[0]) / (cycles - 1) if cycles > 1 else 0.0
    line = (
        f"fixes weighed on their fortnights: {weighed[0]:,} resources in the first cycle, "
        f"{per_cycle:.1f} a cycle after it, {weighed[-1]:,} in all; "
        f"{firing[-1]:,} resources with an alert firing"
    )
    left = firing[-1] - weighed[-1]
    if left > 0 and per_cycle > 0:
        line += f"; the rest at this pace in about {left / per_cycle:,.0f} more cycles"
    return line


def summary(volumes: int, mix: str, measured: Run) -> dict[str, Any]:
    """What `--json` prints: what another revision's run is compared on."""
    return {
        "steady_per_volume_hour": steady_rate(volumes, measured),
        "firing": sorted(map(list, measured.firing)),
        "leads": {d.resource_id: lead for d, lead in leads(volumes, mix, measured)},
    }


def report(volumes: int, measured: Run, mix: str = "today", counted_from: int = 1) -> str:
    cycles = measured.cycles
    first, steady = cycles[0], cycles[1:]
    minutes = len(cycles)
    per_volume_hour = sum(c.metrics for c in cycles) / (volumes * minutes / 60)
    steady_per_volume_hour = steady_rate(volumes, measured)
    rss_mb = first.analyzer_peak_mb

    def median(values: list[float]) -> float:
        return statistics.median(values) if values else float("nan")

    per_thousand = (rss_mb - measured.baseline_mb) / (measured.resources / 1000)
    wall = median([c.wall_s for c in steady])
    cpu = median([c.cpu_s for c in steady])
    bare_wall = median([c.bare_wall_s for c in steady])
    bare_cpu = median([c.bare_cpu_s for c in steady])
    return "\n".join(
        [
            f"fleet: {volumes:,} volumes on {-(-volumes // per_instance(mix)):,} instances, "
            f"mix {mix} "
            f"({', '.join(f'{n} % {kind}' for n, kind in MIXES[mix])}); "
            f"{minutes} cycles of a minute",
            f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
            f"first cycle (backfill): analyzer {first.wall_s:.2f} s wall / {first.cpu_s:.2f} s "
            f"CPU; bare loop {first.bare_wall_s:.2f} s / {first.bare_cpu_s:.2f} s; "
            f"{first.metrics:,} metrics",
            f"steady cycle (median): analyzer {wall:.2f} s wall / {cpu:.2f} s CPU; bare loop "
            f"{bare_wall:.2f} s / {bare_cpu:.2f} s; "
            f"CPU beyond the bare loop {cpu - bare_cpu:.2f} s; "
            f"wall {wall / bare_wall if bare_wall else float('nan'):.2f}x the bare loop's",
            f"peak RSS of the analyzer's cycles: {rss_mb:,.0f} MB; after the last cycle "
            f"{cycles[-1].rss_after_mb:,.0f} MB",
            f"resources watched: {measured.resources:,}; RSS before the fleet is built "
            f"{measured.baseline_mb:,.0f} MB; (peak - that) per 1,000 resources: "
            f"{per_thousand:,.1f} MB",
            f"metrics requested per volume-hour: {per_volume_hour:.1f} over the run, "
            f"{steady_per_volume_hour:.1f} in steady state (YACE, 7 a minute: 420)",
            *group_lines(volumes, mix, measured, counted_from),
            *bill_lines(volumes, measured),
            weighing_line(measured),
            *drain_lines(volumes, mix, measured),
        ]
    )


def elsewhere(args: argparse.Namespace, polling: str, rev: str | None) -> dict[str, Any]:
    """The same run in a process of its own: with `polling`, or with the analyzer and rules of
    git revision `rev` (the benchmark and its fake stay this tree's)."""
    command = [
        sys.executable,
        str(HERE / "fleet.py"),
        f"--volumes={args.volumes}",
        f"--cycles={args.cycles}",
        f"--mix={args.mix}",
        f"--polling={polling}",
        "--json",
    ]
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tree:
        if rev is not None:
            archive = subprocess.run(
                ["git", "-C", str(HERE.parent), "archive", rev, "analyzer", "rules"],
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
            env["PYTHONPATH"] = tree
        done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def comparison(args: argparse.Namespace, measured: Run) -> str:
    """This run beside the same fleet read in full, and beside `--against`'s revision."""
    mine = summary(args.volumes, args.mix, measured)
    others = [("this version, `polling: full`", elsewhere(args, "full", None))]
    if args.against:
        others.append((f"revision {args.against}", elsewhere(args, "adaptive", args.against)))
    lines = [f"{'run':34s} {'metrics/volume-hour':>20s}  same alerts  late drains warned (min)"]
    for name, found in [("this version", mine), *others]:
        same = "yes" if found["firing"] == mine["firing"] else "NO"
        warned = ", ".join(
            "never" if lead is None else f"{lead / 60:.1f}" for lead in found["leads"].values()
        )
        lines.append(f"{name:34s} {found['steady_per_volume_hour']:20.1f}  {same:11s}  {warned}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--volumes", type=int, default=1_000)
    parser.add_argument("--cycles", type=int, default=30)
    parser.add_argument("--mix", choices=sorted(MIXES), default="today")
    parser.add_argument("--trace-memory", type=int, default=0, metavar="N")
    parser.add_argument("--polling", choices=("adaptive", "full"), default="adaptive")
    parser.add_argument(
        "--from-cycle",
        type=int,
        default=1,
        metavar="N",
        help="count the metrics per group from cycle N on (0: the first, the backfill)",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="also run the fleet read in full, and `--against`'s revision, each in a process "
        "of its own, and compare their bills, alerts and late drains' warnings",
    )
    parser.add_argument("--against", metavar="REV", help="a git revision to compare with")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    logs.configure("warning")
    measured = run(args.volumes, args.cycles, args.mix, args.trace_memory, args.polling)
    if args.json:
        print(json.dumps(summary(args.volumes, args.mix, measured)))
        return 0
    print(report(args.volumes, measured, args.mix, args.from_cycle))
    if args.compare:
        print(comparison(args, measured))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
