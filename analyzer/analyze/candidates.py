"""Instance types (and RDS classes) that would carry a workload, cheapest first.

From every type the region offers: those whose sustained EBS limits carry the rates asked for,
on the architectures allowed, built on Nitro where the volumes need it. Within a family the
smallest such size is the cheapest, so of each family that one, and the smallest that keeps
today's vCPUs and memory where that is a larger one. A price is asked only for the
`SHORTLIST` of each kind with the fewest vCPUs (prices follow vCPUs within a generation), then
they are ranked by their monthly price, unpriced last. Types with less memory or fewer vCPUs
than today's are kept and marked: whether the workload fits them is weighed on its own peaks
before the list is cut to the `SHOWN` (`advice/proof.fitted`), so a cheap type that fits is
not lost behind three that do not, nor a family behind its size that does not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

from analyzer.model.resources import InstanceType

SHORTLIST = 12
"""At most this many prices are asked for per decision, twice over: the smallest sizes that
carry the load, and the smallest that also keep today's vCPUs and memory."""
SHOWN = 3
"""Options shown once fitted (`advice/proof.fitted`); today's family's own candidate is added
when it is not among them."""


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
    """The types that carry the load, cheapest first, not yet cut to the `SHOWN`: of each
    family its smallest such size, and its smallest that also keeps today's vCPUs and memory
    where that is another (which is offered depends on the workload's peaks: `fitted`);
    today's family's among them where one of its sizes carries the load."""
    smallest: dict[str, InstanceType] = {}
    roomy: dict[str, InstanceType] = {}
    for info in offered:
        if not _fits(info, today, wanted):
            continue
        _smallest(smallest, info)
        if not less_than_today(info, today):
            _smallest(roomy, info)
    if not smallest:
        return []
    own = [f[family(today.name)] for f in (smallest, roomy) if family(today.name) in f]
    shortlist = list(
        {
            id(info): info
            for info in (
                *sorted(smallest.values(), key=_size_order)[:SHORTLIST],
                *sorted(roomy.values(), key=_size_order)[:SHORTLIST],
                *own,
            )
        }.values()
    )
    priced = [Candidate(info, monthly(info.name)) for info in shortlist]
    priced.sort(key=lambda c: (c.monthly is None, c.monthly or 0.0, _size_order(c.info)))
    return priced


def _smallest(by_family: dict[str, InstanceType], info: InstanceType) -> None:
    """Keep `info` as its family's where it is smaller than the one kept."""
    known = by_family.get(family(info.name))
    if known is None or _size_order(info) < _size_order(known):
        by_family[family(info.name)] = info


def same_family(name: str, other: str) -> bool:
    """Whether two type or class names are sizes of one family (`db.` aside)."""
    return family(name.removeprefix("db.")) == family(other.removeprefix("db."))


def less_than_today(candidate: InstanceType, today: InstanceType) -> list[str]:
    """What the candidate has less of than today's type: memory, vCPUs."""
    marks = []
    if (candidate.memory_bytes or 0) < (today.memory_bytes or 0):
        marks.append("less memory")
    if (candidate.vcpus or 0) < (today.vcpus or 0):
        marks.append("fewer vCPUs")
    return marks
