"""Instance types (and RDS classes) that would carry a workload, cheapest first.

From every type the region offers: those whose sustained EBS limits carry the rates asked for,
on the architectures allowed, built on Nitro where the volumes need it. Within a family the
smallest such size is the cheapest, so one per family; a price is asked only for the
`SHORTLIST` with the fewest vCPUs (prices follow vCPUs within a generation), then they are
ranked by their monthly price, unpriced last. Types with less memory or fewer vCPUs than
today's are kept and marked: whether the workload fits is the operator's call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

from analyzer.model.resources import InstanceType

SHORTLIST = 12
"""At most this many prices are asked for per decision."""
SHOWN = 3
"""Options shown; today's family's own candidate is added when it is not among them."""


@dataclass(frozen=True, slots=True)
class Candidate:
    info: InstanceType
    monthly: float | None

    @property
    def name(self) -> str:
        return self.info.name


@dataclass(frozen=True, slots=True)
class Wanted:
    """What the new type must sustain, and what it may be."""

    throughput_bps: float = 0.0
    iops: float = 0.0
    memory_bytes: int = 0
    nitro: bool = False
    architectures: frozenset[str] | None = None
    """None: any."""
    families: Container[str] | None = None
    """None: any; otherwise only these families (an RDS engine's classes)."""
    names: Container[str] | None = None
    """None: any; otherwise only these type names."""


def family(name: str) -> str:
    return name.split(".", 1)[0]


SPECIAL = re.compile(r"^(?:p\d|g\d|gr\d|inf\d|trn\d|dl\d|f\d|vt\d|mac\d|u\d*[a-z]*-|hpc\d)")
"""Families bought for something else (GPUs, accelerators, FPGAs, Macs, High Memory, HPC):
never offered for EBS bandwidth unless today's type is one of them."""


def special(name: str) -> bool:
    return SPECIAL.match(name) is not None


def sustained(info: InstanceType) -> tuple[float, float]:
    """EBS throughput and IOPS a type holds for as long as the load lasts: its baseline (a
    type that bursts falls back to it once its EBS credits are spent)."""
    return (
        info.baseline_throughput_bps or info.maximum_throughput_bps or 0.0,
        info.baseline_iops or info.maximum_iops or 0.0,
    )


def _fits(info: InstanceType, today: InstanceType, wanted: Wanted) -> bool:
    throughput, iops = sustained(info)
    allowed = wanted.architectures
    return (
        info.name != today.name
        and throughput >= wanted.throughput_bps
        and iops >= wanted.iops
        and (info.memory_bytes or 0) >= wanted.memory_bytes
        and (not wanted.nitro or bool(info.nitro))
        and (allowed is None or not allowed.isdisjoint(info.architectures))
        and (wanted.families is None or family(info.name) in wanted.families)
        and (wanted.names is None or info.name in wanted.names)
        and ".metal" not in info.name
        and (special(today.name) or not special(info.name))
    )


def _size_order(info: InstanceType) -> tuple[float, float, float]:
    return (info.vcpus or 0, info.memory_bytes or 0, sustained(info)[0])


def candidates(
    today: InstanceType,
    offered: Sequence[InstanceType],
    wanted: Wanted,
    monthly: Callable[[str], float | None],
) -> list[Candidate]:
    """The cheapest few types that fit, and the smallest of today's family that does."""
    smallest: dict[str, InstanceType] = {}
    for info in offered:
        if not _fits(info, today, wanted):
            continue
        known = smallest.get(family(info.name))
        if known is None or _size_order(info) < _size_order(known):
            smallest[family(info.name)] = info
    if not smallest:
        return []
    own = smallest.get(family(today.name))
    shortlist = sorted(smallest.values(), key=_size_order)[:SHORTLIST]
    if own is not None and own not in shortlist:
        shortlist.append(own)
    priced = [Candidate(info, monthly(info.name)) for info in shortlist]
    priced.sort(key=lambda c: (c.monthly is None, c.monthly or 0.0, _size_order(c.info)))
    shown = priced[:SHOWN]
    if own is not None and all(c.info is not own for c in shown):
        shown += [c for c in priced if c.info is own]
    return shown


def less_than_today(candidate: InstanceType, today: InstanceType) -> list[str]:
    """What the candidate has less of than today's type: memory, vCPUs."""
    marks = []
    if (candidate.memory_bytes or 0) < (today.memory_bytes or 0):
        marks.append("less memory")
    if (candidate.vcpus or 0) < (today.vcpus or 0):
        marks.append("fewer vCPUs")
    return marks
