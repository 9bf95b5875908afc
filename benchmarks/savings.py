"""Savings on a fleet mixed like a real account: what `ebs-analyzer savings` finds against a
hand computation of the same mix, what reading it costs against one poll, and whether any cut
would have throttled a minute of the fleet's own past.

    .venv/bin/python benchmarks/savings.py
    .venv/bin/python benchmarks/savings.py --copies 4        # four times the mix
    .venv/bin/python benchmarks/savings.py --copies 4 --kept 10000   # and what 10,000 cost

The fleet (one region, every volume on an m5.large): gp2 volumes quiet, busy, and at their
burst cap; io2 provisioned at 10,000, 20,000 and 40,000 IOPS with peaks well below; gp3 with
throughput bought for a migration long over; gp3 at what is included; volumes attached to
nothing for a month. Each volume's load is a function of the minute over 455 days: a base rate,
a daily busy hour, and one spike a year old that only the hourly data still holds. CloudWatch
is stood in for by that function, answering each query at its period and statistic as
CloudWatch aggregates one-minute datapoints (`Sum` per minute, `Maximum` and `SampleCount`
per coarse period), through the analyzer's own read path (`live/fleet_savings.py`).

The daemon reads the same past a stretch a day (`live/long_pasts.py`): its cycles, a minute
apart, are run over the six days up to the same moment, each volume's metrics counted by day,
and what it offers then is set beside the one read's.

With `--kept N`, what the daemon keeps of the mix's long pasts is copied to N volumes, each
with times of its own, and measured: the memory the figures and the savings weighed on them
take (`tracemalloc`, against the same process before), the file beside the state file, and
how long writing it, reading it back and weighing every volume take.

The hand computation is independent of the analyzer: each volume's peak from its function,
times 1.2, rounded up, priced by DOMAIN.md's list prices. The replay runs each cut offered
over the volume's 455 days minute by minute (`analyze/held.py`): throttled minutes must be 0.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer import logs, settings
from analyzer.analyze import prices, rules
from analyzer.analyze.advice.proof import option_limits
from analyzer.analyze.held import replay
from analyzer.collect import queries
from analyzer.collect.described import RecordedDescriber
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region
from analyzer.collect.window import Window
from analyzer.live import fleet_savings
from analyzer.live.cycle import Analyzer
from analyzer.live.long_pasts import LongPasts
from analyzer.model.demand import Demand
from analyzer.model.findings import Change
from analyzer.model.resources import (
    Instance,
    InstanceType,
    Inventory,
    ResourceType,
    Volume,
)
from analyzer.model.series import Series
from analyzer.model.state import FetchStats

REGION = "us-east-1"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
DAYS = 455
M5 = InstanceType("m5.large", 3_600, 18_750, 81.25e6, 593.75e6, 8 * 1024**3, nitro=True)
KIB = 1024


@dataclass(frozen=True)
class Load:
    """IOPS a minute: `base`, `busy` for an hour a day from `busy_hour`, and `spike` for one
    minute `spike_days` ago; every I/O `io_bytes`."""

    base: float
    busy: float
    spike: float = 0.0
    spike_days: float = 200.0
    io_bytes: float = 16 * KIB
    busy_hour: int = 14

    def iops(self, minutes: np.ndarray) -> np.ndarray:
        """The rate at each minute (seconds since the epoch of its start)."""
        rate = np.full(minutes.shape, self.base)
        hour = (minutes // 3600) % 24
        rate = np.where(hour == self.busy_hour, self.busy, rate)
        if self.spike:
            at = _floor(NOW - timedelta(days=self.spike_days))
            rate = np.where(minutes == at, self.spike, rate)
        return rate

    @property
    def peak(self) -> float:
        return max(self.base, self.busy, self.spike)


def _floor(at: datetime) -> float:
    return float(int(at.timestamp()) // 60 * 60 + 13 * 60)


@dataclass(frozen=True)
class Spec:
    name: str
    kind: str
    size: int
    load: Load | None
    iops: int | None = None
    mibps: int | None = None


MIX: tuple[Spec, ...] = (
    # gp2: quiet, busy below the burst, at the burst cap (what was asked is unknown above it).
    *(Spec(f"gp2-quiet-{n}", "gp2", 200 + 100 * n, Load(50, 500)) for n in range(6)),
    *(Spec(f"gp2-busy-{n}", "gp2", 500 + 100 * n, Load(200, 2_400)) for n in range(4)),
    *(Spec(f"gp2-capped-{n}", "gp2", 800, Load(300, 3_000)) for n in range(2)),
    # io2 provisioned far above its peaks; one spike a year old, seen only in the hourly data.
    Spec("io2-10k", "io2", 200, Load(300, 2_000), iops=10_000),
    Spec("io2-20k", "io2", 500, Load(500, 3_000, spike=8_000), iops=20_000),
    Spec("io2-40k", "io2", 1_000, Load(1_000, 12_000, spike=25_000), iops=40_000),
    Spec("io2-tight", "io2", 500, Load(2_000, 9_000), iops=10_000),
    # gp3 with throughput bought for a migration long over; gp3 at what is included.
    Spec("gp3-1000mibps", "gp3", 1_000, Load(100, 800, io_bytes=128 * KIB), 6_000, 1_000),
    Spec("gp3-500mibps", "gp3", 500, Load(100, 500, io_bytes=256 * KIB), 3_000, 500),
    *(Spec(f"gp3-included-{n}", "gp3", 100, Load(20, 400), 3_000, 125) for n in range(4)),
    # Attached to nothing for a month.
    *(Spec(f"spare-{n}", "gp2", 100 * (n + 1), None) for n in range(3)),
)


def fleet(copies: int) -> tuple[Inventory, dict[str, Spec]]:
    volumes, instances, by_id = [], [], {}
    for copy in range(copies):
        for index, spec in enumerate(MIX):
            vid = f"vol-{copy:04x}{index:04x}{0:09x}"
            if spec.load is None:
                volumes.append(
                    Volume(
                        vid,
                        REGION,
                        spec.kind,
                        spec.size,
                        "available",
                        created=NOW - timedelta(days=30),
                    )
                )
            else:
                iid = f"i-{copy:04x}{index:04x}{0:09x}"
                volumes.append(
                    Volume(vid, REGION, spec.kind, spec.size, "in-use", spec.iops, spec.mibps, iid)
                )
                instances.append(Instance(iid, REGION, "m5.large", "running", True, (vid,), M5))
            by_id[vid] = spec
    return Inventory(REGION, volumes=tuple(volumes), instances=tuple(instances)), by_id


class Functions:
    """GetMetricData answered from each volume's load function, as CloudWatch aggregates
    one-minute datapoints: a minute's `Sum`, a coarse period's `Maximum` (its busiest minute)
    and `SampleCount` (60 a minute). A volume attached to nothing has no datapoint."""

    region = REGION

    def __init__(self, by_id: dict[str, Spec]) -> None:
        self.by_id = by_id
        self.asked = 0
        self.by_volume: Counter[str] = Counter()

    def fetch(
        self, asked: Sequence[MetricQuery], window: Window
    ) -> tuple[dict[MetricQuery, Series], FetchStats]:
        self.asked += len(asked)
        self.by_volume.update(q.resource_id for q in asked)
        out = {}
        starts = window.start.timestamp() + window.period_s * np.arange(window.periods)
        for query in asked:
            spec = self.by_id[query.resource_id]
            if spec.load is None or "Read" not in query.metric:
                out[query] = Series.of(
                    [(datetime.fromtimestamp(t, UTC), 0.0) for t in starts]
                    if spec.load is not None
                    else [],
                    query.period_s,
                )
                continue
            per = window.period_s // 60
            minutes = (starts[:, None] + 60 * np.arange(per)[None, :]).ravel()
            iops = spec.load.iops(minutes).reshape(-1, per)
            counts = iops * 60 * (spec.load.io_bytes if "Bytes" in query.metric else 1)
            if query.stat == "Sum":
                values = counts.sum(axis=1)
            elif query.stat == "Maximum":
                values = counts.max(axis=1)
            else:
                values = np.full(len(starts), float(per))
            out[query] = Series.of(
                [
                    (datetime.fromtimestamp(t, UTC), float(v))
                    for t, v in zip(starts, values, strict=True)
                ],
                query.period_s,
            )
        return out, FetchStats(metrics_requested=len(asked))


# DOMAIN.md's us-east-1 list prices, a month.
def gp2_price(size: int) -> float:
    return 0.10 * size


def gp3_price(size: int, iops: int, mibps: int) -> float:
    return 0.08 * size + 0.005 * max(iops - 3_000, 0) + 0.04 * max(mibps - 125, 0)


def io2_price(size: int, iops: int) -> float:
    tiers = ((32_000, 0.065), (64_000, 0.0455), (math.inf, 0.032))
    total, floor = 0.125 * size, 0
    for ceiling, per in tiers:
        if iops > floor:
            total += (min(iops, ceiling) - floor) * per
        floor = ceiling
    return total


def by_hand(spec: Spec) -> float:
    """The monthly saving a person would work out for this volume: its peak times 1.2."""
    if spec.load is None:
        return gp2_price(spec.size) if spec.kind == "gp2" else gp3_price(spec.size, 3_000, 125)
    peak = spec.load.peak
    need_iops = math.ceil(peak * 1.2 - 1e-9)
    need_mibps = math.ceil(peak * spec.load.io_bytes / 2**20 * 1.2 - 1e-9)
    # An I/O above 256 KiB counts as several against an SSD's IOPS.
    need_iops = max(need_iops, math.ceil(need_mibps * 4))
    if spec.kind == "gp2":
        if spec.load.peak >= 3_000 * 0.95:  # at the burst cap: asked at least that
            need_iops = max(need_iops, 3_600)
        iops = max(3_000, need_iops)
        mibps = max(125, need_mibps)
        iops = max(iops, math.ceil(mibps * 4))
        return max(gp2_price(spec.size) - gp3_price(spec.size, iops, mibps), 0.0)
    if spec.kind == "gp3":
        iops = max(3_000, need_iops)
        mibps = max(125, need_mibps)
        iops = max(iops, math.ceil(mibps * 4))
        today = gp3_price(spec.size, spec.iops or 3_000, spec.mibps or 125)
        return max(today - gp3_price(spec.size, iops, mibps), 0.0)
    assert spec.iops is not None
    today = io2_price(spec.size, spec.iops)
    if need_iops < spec.iops:
        return max(today - io2_price(spec.size, max(100, need_iops)), 0.0)
    # No io2 cut: gp3 at the need, where it sells that much and costs less.
    mibps = max(125, need_mibps)
    iops = max(3_000, need_iops, math.ceil(mibps * 4))
    if iops > min(80_000, 500 * spec.size):
        return 0.0
    return max(today - gp3_price(spec.size, iops, mibps), 0.0)


def throttled(saving: object, spec: Spec, volume: Volume) -> int:
    """Minutes the cut would have limited over the volume's 455 days, minute by minute."""
    target = getattr(saving, "target", None)
    if target is None or spec.load is None:
        return 0
    option = option_limits(
        Change(ResourceType.VOLUME, volume.volume_id, dict(saving.today), target),
        volume,
    )
    assert option is not None
    start = NOW - timedelta(days=DAYS)
    minutes = start.timestamp() + 60 * np.arange(DAYS * 1440)
    iops = spec.load.iops(minutes)
    return replay(Demand.seen(start, 60, iops, iops * spec.load.io_bytes), option).minutes_limited


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=1, help="how many times the mix (1)")
    parser.add_argument(
        "--kept", type=int, default=0, help="measure what the daemon keeps for this many volumes"
    )
    args = parser.parse_args()
    logs.configure("error")
    inventory, by_id = fleet(args.copies)
    metrics = Functions(by_id)
    config = settings.load({"region": [REGION]})
    analyzer = Analyzer(
        config,
        rules.load(),
        connect=lambda r: Region(r, RecordedDescriber(inventory), metrics),
    )
    began = time.perf_counter()
    found = fleet_savings.find(analyzer, NOW)
    took = time.perf_counter() - began
    volumes = {v.volume_id: v for v in inventory.volumes}
    offered = {s.resource_id: s for s in found.savings}
    print(f"| volume | kind | found $/month | by hand $/month | throttled minutes in {DAYS} days |")
    print("|---|---|---|---|---|")
    total_found = total_hand = 0.0
    worst = 0
    for vid, spec in by_id.items():
        saving = offered.get(vid)
        hand = round(by_hand(spec), 2)
        got = saving.monthly_saving if saving is not None else 0.0
        minutes = throttled(saving, spec, volumes[vid]) if saving is not None else 0
        worst = max(worst, minutes)
        total_found += got
        total_hand += hand
        if vid.startswith("vol-0000"):
            kind = saving.kind if saving is not None else "none"
            print(f"| {spec.name} | {kind} | {got:,.2f} | {hand:,.2f} | {minutes} |")
    poll = np.mean(
        [len(queries.for_volume(v, use_agent=False)) for v in inventory.volumes if v.active]
    )
    per_volume = found.stats.metrics_requested / max(found.volumes, 1)
    print()
    print(
        f"{found.volumes} volumes ({args.copies} × the mix): found ${total_found:,.2f} a month, "
        f"by hand ${total_hand:,.2f} ({total_found / total_hand:.1%}); "
        f"most minutes any cut would have throttled: {worst}."
    )
    print(
        f"Read: {found.stats.metrics_requested:,} metrics, {per_volume:.1f} a volume, once "
        f"(one poll of a volume: {poll:.1f}); ${found.stats.metrics_requested / 100_000:,.4f}; "
        f"{took:.1f} s."
    )
    said, kept = daemon(inventory, by_id, config)
    print(said)
    if args.kept:
        print(kept_for(args.kept, kept, inventory, config))


DAEMON_DAYS = 6


def daemon(
    inventory: Inventory, by_id: dict[str, Spec], config: settings.Settings
) -> tuple[str, LongPasts]:
    """The daemon's paced read over `DAEMON_DAYS` days up to NOW, a cycle a minute: what it
    offers at the end, and the most metrics a volume cost on any one day."""
    metrics = Functions(by_id)
    kept = LongPasts()
    floor = fleet_savings.min_headroom(rules.load())
    price_list = prices.load(config.prices)
    most = 0
    began = time.perf_counter()
    for day in range(DAEMON_DAYS):
        metrics.by_volume.clear()
        start = NOW - timedelta(days=DAEMON_DAYS - 1 - day)
        for minute in range(0, 24 * 60 if day < DAEMON_DAYS - 1 else 1):
            now = start + timedelta(minutes=minute)
            kept.step({REGION: inventory}, lambda _: metrics, config, price_list, floor, now, 60)
        most = max(most, max(metrics.by_volume.values(), default=0))
    took = time.perf_counter() - began
    total = sum(s.monthly_saving for s in kept.savings())
    counts = kept.counts({REGION: inventory})
    return (
        f"Daemon: {DAEMON_DAYS} days of cycles a minute up to the same moment, a stretch a volume "
        f"a day; the most metrics a volume cost on one day: {most}; "
        f"{counts['weighed']} volumes weighed, ${total:,.2f} a month found; "
        f"{len(kept.encoded()) / max(counts['weighed'], 1):,.0f} bytes kept a volume; {took:.1f} s."
    ), kept


def _copied(at: datetime | None) -> datetime | None:
    """A time of its own (a copy shares no object, as volumes read apart share none)."""
    return datetime.fromtimestamp(at.timestamp(), UTC) if at is not None else None


def kept_for(n: int, kept: LongPasts, inventory: Inventory, config: settings.Settings) -> str:
    """The mix's kept figures copied to `n` volumes: their memory, file and times."""
    volumes = [v for v in inventory.volumes if (REGION, v.volume_id) in kept.kept]
    copies = [replace(volumes[i % len(volumes)], volume_id=f"vol-{i:017x}") for i in range(n)]
    fleet = {REGION: replace(inventory, volumes=tuple(copies))}
    floor = fleet_savings.min_headroom(rules.load())
    price_list = prices.load(config.prices)
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    many = LongPasts(budget_s=float("inf"))
    for i, volume in enumerate(copies):
        source = kept.kept[(REGION, volumes[i % len(volumes)].volume_id)]
        many.kept[(REGION, volume.volume_id)] = {
            p: replace(
                k,
                read_at=_copied(k.read_at),
                first_seen=_copied(k.first_seen),
                last_active=_copied(k.last_active),
                busiest=tuple(tuple(b) for b in k.busiest),
            )
            for p, k in source.items()
        }
    figures, _ = tracemalloc.get_traced_memory()
    began = time.perf_counter()
    last = max(k.read_at for one in many.kept.values() for k in one.values())
    many.step(fleet, lambda _: None, config, price_list, floor, last, 60, reading=False)
    weighing = time.perf_counter() - began
    weighed, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    began = time.perf_counter()
    text = many.encoded()
    encoding = time.perf_counter() - began
    began = time.perf_counter()
    again = LongPasts.from_records(json.loads(text), last)
    loading = time.perf_counter() - began
    assert again.kept.keys() == many.kept.keys()
    found = len(many.savings())
    return (
        f"Kept for {n:,} volumes ({found:,} with a saving): the figures "
        f"{(figures - before) / 1e6:,.1f} MB, with the savings weighed "
        f"{(weighed - before) / 1e6:,.1f} MB; the file {len(text) / 1e6:,.1f} MB, written in "
        f"{encoding:.2f} s, read back in {loading:.2f} s; every volume weighed in "
        f"{weighing:.1f} s (after a restart: 2 s a cycle until done)."
    )


if __name__ == "__main__":
    main()
