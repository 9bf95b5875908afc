"""Bursty workloads over a fortnight: on-off bursts with heavy-tailed lengths and gaps.

Most volumes that run out of burst credits are not drained by a steady load but by bursts:
mostly idle, then a few minutes at the volume's burst rate, now and then a burst ten times
longer than the usual one, or a busy spell of hours. Each scenario here draws such a schedule
from a seed (Pareto lengths and gaps, quieter nights, a few busy spells), drives one volume
with it through the simulator second by second, and so gets the truth from the bucket model:
the exhaustions that really happen, and the near misses that do not. `benchmarks/bursty.py`
backtests the shipped rules over them; the tests replay a few.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from analyzer.model import limits
from analyzer.model.resources import Instance, InstanceType, Inventory, Volume
from analyzer.model.series import Series
from analyzer.model.units import KIB, MB, MIB
from analyzer.sim.datapoints import Datapoints
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.scenario import FORTNIGHT_START, REGION
from analyzer.sim.workloads import Demand

DAYS = 14
WARMUP_DAYS = 3
"""Simulated before the fortnight, so that the rules start it with a past to read, as the
daemon, which fetches the last two weeks, would."""
DRAWN_DAYS = 21
"""Each schedule is drawn for this long, whatever part of it is simulated."""
HOST = InstanceType(
    "r6i.8xlarge", 40_000, 40_000, 1_250 * MB, 1_250 * MB, 256 * 1024 * MIB, True, 32
)
"""An instance whose EBS limits no single volume here reaches: the volume's bucket is all
that binds."""


@dataclass(frozen=True)
class Bursts:
    """One volume and the bursts asked of it, drawn from `seed`.

    Burst lengths are Pareto-distributed from `burst_min_s` with tail index `burst_tail` (the
    smaller, the more often a burst lasts ten times the usual one), capped at `burst_max_s`;
    gaps likewise. Each burst asks a level drawn between `level` as fractions of the volume's
    burst rate; between bursts the volume idles at `idle` of its baseline. Nights (00:00 to
    06:00 UTC) have gaps `night_gaps` times longer. `spells` busy spells a fortnight hold
    `spell_level` of the burst rate for `spell_hours`, with bursts on top."""

    name: str
    volume_type: str
    size_gib: int
    seed: int
    burst_min_s: float = 60.0
    burst_tail: float = 1.3
    burst_max_s: float = 3 * 3600.0
    gap_min_s: float = 300.0
    gap_tail: float = 1.1
    gap_max_s: float = 12 * 3600.0
    level: tuple[float, float] = (0.7, 1.1)
    idle: float = 0.2
    night_gaps: float = 3.0
    spells: int = 0
    spell_level: tuple[float, float] = (0.15, 0.3)
    spell_hours: tuple[float, float] = (2.0, 6.0)

    @property
    def volume_id(self) -> str:
        return f"vol-{self.name}"

    @property
    def instance_id(self) -> str:
        return f"i-{self.name}"

    def volume(self) -> Volume:
        return Volume(
            self.volume_id,
            REGION,
            self.volume_type,
            self.size_gib,
            "in-use",
            attached_to=self.instance_id,
            tags={"Name": self.name},
        )

    def demand(self) -> Demand:
        """The schedule as the simulator asks it: IOPS at each second from the start."""
        envelope = limits.volume_envelope(self.volume())
        if envelope is None or envelope.bucket is None:
            raise ValueError(f"{self.volume_type}: no burst bucket to drive")
        hdd = envelope.merges
        size = 1024 * KIB if hdd else 16 * KIB
        # Rates in operations of `size`: gp2 counts IOPS, st1/sc1 their throughput in MiB.
        burst = envelope.throughput_bps / size if hdd else envelope.iops
        baseline = envelope.baseline_throughput_bps / size if hdd else envelope.bucket.baseline
        starts, levels = self.schedule(burst, baseline)
        return Demand(_stepwise(starts, levels), size, 0.3 if hdd else 0.6, sequential=hdd)

    def schedule(self, burst: float, baseline: float) -> tuple[list[float], list[float]]:
        """The moments the asked rate changes, and the rate from each."""
        rng = np.random.default_rng(self.seed)
        span = DRAWN_DAYS * 86_400.0
        changes: list[tuple[float, float]] = []
        t = float(rng.uniform(0, self.gap_min_s))
        while t < span:
            night = (t % 86_400.0) < 6 * 3600.0
            gap = _pareto(rng, self.gap_min_s, self.gap_tail, self.gap_max_s)
            t += gap * (self.night_gaps if night else 1.0)
            length = _pareto(rng, self.burst_min_s, self.burst_tail, self.burst_max_s)
            changes.append((t, float(rng.uniform(*self.level)) * burst))
            changes.append((t + length, -1.0))
            t += length
        spells = []
        for _ in range(self.spells):
            begin = float(rng.uniform(0, span))
            hours = float(rng.uniform(*self.spell_hours))
            spells.append((begin, begin + hours * 3600.0, float(rng.uniform(*self.spell_level))))
        moments = sorted(
            {round(m) for m, _ in changes}
            | {round(s) for s, _, _ in spells}
            | {round(e) for _, e, _ in spells}
            | {0}
        )
        bursts = sorted((round(m), level) for m, level in changes)
        levels = []
        current = -1.0
        cursor = 0
        for moment in moments:
            while cursor < len(bursts) and bursts[cursor][0] <= moment:
                current = bursts[cursor][1]
                cursor += 1
            floor = self.idle * baseline
            for begin, end, level in spells:
                if begin <= moment < end:
                    floor = max(floor, level * burst)
            levels.append(max(current, floor) if current > 0 else floor)
        return [float(m) for m in moments], levels


def _pareto(rng: np.random.Generator, least: float, tail: float, most: float) -> float:
    return float(min(least * (1.0 + rng.pareto(tail)), most))


def _stepwise(starts: list[float], levels: list[float]) -> Callable[[float], float]:
    def demand(t: float) -> float:
        index = bisect.bisect_right(starts, t) - 1
        return levels[index] if index >= 0 else 0.0

    return demand


SCENARIOS: tuple[Bursts, ...] = (
    Bursts("gp2-200-sparse", "gp2", 200, seed=11, gap_min_s=600.0),
    Bursts("gp2-100-heavy", "gp2", 100, seed=12, burst_min_s=90.0, gap_min_s=600.0),
    Bursts("gp2-100-spells", "gp2", 100, seed=13, gap_min_s=900.0, spells=4),
    Bursts(
        "gp2-250-chatty",
        "gp2",
        250,
        seed=18,
        burst_min_s=30.0,
        burst_tail=1.6,
        burst_max_s=1_200.0,
        gap_min_s=300.0,
    ),
    Bursts("gp2-50-small", "gp2", 50, seed=14, burst_min_s=45.0, gap_min_s=900.0),
    Bursts("gp2-500-long", "gp2", 500, seed=15, burst_min_s=240.0, gap_min_s=1_800.0),
    Bursts("st1-500-scans", "st1", 500, seed=16, burst_min_s=300.0, gap_min_s=3_600.0),
    Bursts("st1-2048-etl", "st1", 2_048, seed=17, burst_min_s=600.0, gap_min_s=3_600.0, spells=3),
)
"""The bursty fortnights the backtest is measured on: gp2 of four sizes and st1 of two, from
sparse short bursts to heavy ones and long busy spells."""


def simulate(scenario: Bursts, days: float = DAYS) -> tuple[Inventory, Datapoints]:
    """The scenario's volume on its instance over `days` from `FORTNIGHT_START`, and its
    datapoints."""
    volume = scenario.volume()
    instance = Instance(
        scenario.instance_id,
        REGION,
        HOST.name,
        "running",
        volume_ids=(volume.volume_id,),
        type_info=HOST,
    )
    sim = Simulation(
        SimInstance(instance.instance_id, HOST, [SimVolume(volume, scenario.demand())], True),
        FORTNIGHT_START,
    )
    data = sim.run(int(days * 1440))
    return Inventory(REGION, volumes=(volume,), instances=(instance,)), data


def as_raw(data: Datapoints) -> dict[str, dict[str, Series]]:
    """Datapoints as the backtest reads CloudWatch's answers: by resource id, then metric."""
    out: dict[str, dict[str, Series]] = {}
    for (rid, metric), points in data.items():
        period = 60
        if len(points) > 1:
            period = round((points[1][0] - points[0][0]).total_seconds())
        out.setdefault(rid, {})[metric] = Series.of(points, period)
    return out


def span(days: float = DAYS) -> tuple[datetime, datetime]:
    """The days judged: `days` after the warm-up days."""
    start = FORTNIGHT_START + timedelta(days=WARMUP_DAYS)
    return start, start + timedelta(days=days)
