"""Rule tests: input series for one resource, and the alerts expected at given times.

In the spirit of `promtool test rules`. A test file holds `tests`, each with a resource, its
series (one value per `interval`, in promtool's notation), and expectations: at a time after
the start, exactly these rules fire for the resource (and, where given, are pending). The
rules run through `replay`, as the daemon's cycles would have run them.

```yaml
tests:
  - name: a gp2 volume drains, then runs at its baseline
    resource:
      volume: {type: gp2, size_gib: 50}
    series:
      iops: 1500x119
      throughput: 6144000x119
      burst_balance: 100-0.5x119
    expect:
      - at: 30m
        firing: []
      - at: 1h40m
        firing: [gp2-burst-exhaustion]
```

Series values are the analyzer's per-second measures (IOPS; bytes a second; balances in
percent; freeable memory in bytes). `a+bxn` is a, then a+b, … n more steps; `axn` repeats a;
`_` is a missing datapoint, `_xn` n of them. `past` gives a balance's daily minima of the
whole days before the start (`burst_balance: 34 21 8`), which `credit_trend` rules read.
Without it, each balance of the series has a quiet fortnight behind it (full every day);
`past: {burst_balance: ""}` makes the resource new, a bucket `credit_forecast` judges young.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.analyze import prices
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.rules import RuleSet
from analyzer.model import units
from analyzer.model.limits import instance_envelope, instance_type_envelope, volume_envelope
from analyzer.model.metrics import Measure
from analyzer.model.past import Past
from analyzer.model.rds_storage import db_storage_envelope, log_volume_envelope
from analyzer.model.resources import DbInstance, Instance, InstanceType, Volume
from analyzer.model.series import Series, Status
from analyzer.model.state import ResourceState
from analyzer.model.units import GIB, MB, Duration, PositiveDuration
from analyzer.offline.replay import BALANCES, PAST_DAYS, replay
from analyzer.yamlfile import read_model

START = datetime(2026, 1, 5, tzinfo=UTC)
"""A Monday: every test starts then unless it says otherwise."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class TypeSpec(_Strict):
    """An instance type's EBS limits and memory, as DescribeInstanceTypes gives them."""

    name: str
    baseline_iops: float = Field(gt=0)
    maximum_iops: float | None = Field(default=None, gt=0)
    baseline_mbps: float = Field(gt=0)
    """MB a second (AWS quotes instance EBS throughput in MB/s)."""
    maximum_mbps: float | None = Field(default=None, gt=0)
    memory_gib: float | None = Field(default=None, gt=0)
    nitro: bool = True

    def info(self) -> InstanceType:
        return InstanceType(
            self.name,
            baseline_iops=self.baseline_iops,
            maximum_iops=self.maximum_iops or self.baseline_iops,
            baseline_throughput_bps=self.baseline_mbps * MB,
            maximum_throughput_bps=(self.maximum_mbps or self.baseline_mbps) * MB,
            memory_bytes=int(self.memory_gib * GIB) if self.memory_gib else None,
            nitro=self.nitro,
        )


class VolumeSpec(_Strict):
    type: str
    size_gib: int = Field(gt=0)
    iops: int | None = Field(default=None, gt=0)
    throughput_mibps: int | None = Field(default=None, gt=0)
    instance: TypeSpec | None = None
    """The type of the instance it is attached to, where its limits matter (Xen, HDD)."""


class InstanceSpec(_Strict):
    type: TypeSpec
    detailed_monitoring: bool = True


class DbSpec(_Strict):
    engine: str
    instance_class: TypeSpec
    """Named `db.…`, with the EBS limits and memory of its EC2 type."""
    storage_type: str
    allocated_gib: int = Field(gt=0)
    iops: int | None = Field(default=None, gt=0)
    throughput_mibps: int | None = Field(default=None, gt=0)
    dedicated_log_volume: bool = False
    """Its logs on a Dedicated Log Volume, read through the `log_iops` and `log_throughput`
    series."""


class ResourceSpec(_Strict):
    volume: VolumeSpec | None = None
    instance: InstanceSpec | None = None
    db_instance: DbSpec | None = None

    @model_validator(mode="after")
    def _one(self) -> ResourceSpec:
        given = [k for k in ("volume", "instance", "db_instance") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError("give exactly one of volume, instance, db_instance")
        return self


class Expectation(_Strict):
    at: Duration
    """After the start of the series."""
    firing: list[str] = Field(default_factory=list)
    pending: list[str] | None = None


class RuleTest(_Strict):
    name: str
    resource: ResourceSpec
    interval: PositiveDuration = 60.0
    start: datetime = START
    series: dict[Measure, str]
    past: dict[Measure, str] = Field(default_factory=dict)
    """Daily minima of the whole days before `start`, one a day, the newest last. Without
    it, each balance of the series has a quiet fortnight behind it (full every day): a
    resource that has run for weeks; `past: {burst_balance: ""}` makes it new."""
    expect: list[Expectation] = Field(min_length=1)
    resolve_after: Duration = 300.0


class RuleTestFile(_Strict):
    tests: list[RuleTest] = Field(min_length=1)


TERM = re.compile(
    r"^(?:(?P<missing>_)(?:x(?P<missing_n>\d+))?"
    r"|(?P<a>[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
    r"(?:(?P<sign>[-+])(?P<b>\d+(?:\.\d+)?(?:e[-+]?\d+)?))?(?:x(?P<n>\d+))?)$"
)


def expand(text: str) -> list[float | None]:
    """promtool's series notation: `1 2 3`, `1+1x2` (1 2 3), `5x2` (5 5 5), `_x2`."""
    values: list[float | None] = []
    for term in str(text).split():
        match = TERM.match(term)
        if match is None:
            raise ValueError(f"{term!r}: expected a number, a+bxn, a-bxn, axn, _ or _xn")
        if match["missing"]:
            values += [None] * int(match["missing_n"] or 1)
            continue
        a = float(match["a"])
        b = float(match["b"] or 0.0) * (-1 if match["sign"] == "-" else 1)
        n = int(match["n"] or 0)
        values += [a + b * i for i in range(n + 1)]
    return values


def _series(text: str, start: datetime, interval: float) -> Series:
    points = [
        (start + timedelta(seconds=i * interval), v)
        for i, v in enumerate(expand(text))
        if v is not None
    ]
    return Series.of(points, int(interval), Status.OK if points else Status.NO_DATA)


def state_of(test: RuleTest) -> ResourceState:
    """The resource's state, from the test's spec, series and past days."""
    measures = MappingProxyType(
        {m: _series(text, test.start, test.interval) for m, text in test.series.items()}
    )
    state = _state(test, measures)
    # A quiet fortnight: as many full days as the replay keeps of a past (`PAST_DAYS`).
    given = test.past or {m: f"100x{PAST_DAYS - 1}" for m in measures if m in BALANCES}
    past = {}
    for measure, text in given.items():
        days = len(expand(text))
        past[measure] = _series(text, test.start - timedelta(days=days), DAY_S)
    return replace(state, past=Past(minima=MappingProxyType(past))) if past else state


DAY_S = 86_400.0


def _state(test: RuleTest, measures: Mapping[Measure, Series]) -> ResourceState:
    spec, region = test.resource, "test"
    if spec.volume is not None:
        v = spec.volume
        info = v.instance.info() if v.instance else None
        volume = Volume(
            "vol-test", region, v.type, v.size_gib, "in-use", v.iops, v.throughput_mibps, "i-test"
        )
        return ResourceState(volume.ref, volume, volume_envelope(volume, info), measures, Status.OK)
    if spec.instance is not None:
        info = spec.instance.type.info()
        instance = Instance(
            "i-test", region, info.name, "running", spec.instance.detailed_monitoring, (), info
        )
        return ResourceState(
            instance.ref, instance, instance_envelope(instance), measures, Status.OK
        )
    assert spec.db_instance is not None
    d = spec.db_instance
    db = DbInstance(
        "db-test",
        region,
        d.engine,
        d.instance_class.name,
        d.storage_type,
        d.allocated_gib,
        "available",
        d.iops,
        d.throughput_mibps,
        class_info=d.instance_class.info(),
        dedicated_log_volume=d.dedicated_log_volume,
    )
    return ResourceState(
        db.ref,
        db,
        db_storage_envelope(db),
        measures,
        Status.OK,
        class_envelope=instance_type_envelope(db.class_info),
        log_envelope=log_volume_envelope(db),
    )


@dataclass(frozen=True, slots=True)
class Failure:
    test: str
    at: float
    what: str

    def text(self, path: Path) -> str:
        return f"{path}: test {self.test!r} at {units.duration(self.at)}: {self.what}"


def run_test(test: RuleTest, ruleset: RuleSet, catalog: Catalog) -> list[Failure]:
    state = state_of(test)
    last = max(e.at for e in test.expect)
    done = replay(
        [state],
        ruleset,
        catalog,
        test.start,
        test.start + timedelta(seconds=last),
        resolve_after_s=test.resolve_after,
        step_s=test.interval,
    )
    failures = []
    for expected in test.expect:
        at = test.start + timedelta(seconds=expected.at)
        if at not in done.firing_at:
            failures.append(Failure(test.name, expected.at, "not a multiple of the interval"))
            continue
        got = sorted(rule for rule, _ in done.firing_at[at])
        if got != sorted(expected.firing):
            wanted = sorted(expected.firing)
            failures.append(Failure(test.name, expected.at, f"expected firing {wanted}, got {got}"))
        if expected.pending is not None:
            waiting = sorted(rule for rule, _ in done.pending_at[at])
            if waiting != sorted(expected.pending):
                failures.append(
                    Failure(
                        test.name,
                        expected.at,
                        f"expected pending {sorted(expected.pending)}, got {waiting}",
                    )
                )
    return failures


def load(path: Path) -> RuleTestFile:
    return read_model(path, RuleTestFile)


@dataclass(frozen=True, slots=True)
class Outcome:
    tests: int
    failures: list[str]


def run_files(paths: Sequence[Path], ruleset: RuleSet) -> Outcome:
    """Every test of every file: one line per failure. A broken file is a ConfigError naming
    it, before any test runs."""
    files = [(path, load(path)) for path in paths]
    catalog = Catalog(prices.load())
    failures: list[str] = []
    for path, document in files:
        for test in document.tests:
            failures += [f.text(path) for f in run_test(test, ruleset, catalog)]
    return Outcome(sum(len(d.tests) for _, d in files), failures)
