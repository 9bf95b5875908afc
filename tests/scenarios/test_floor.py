"""The floor of the credit policy: wherever a `BurstBalance < 20 %` alarm on the same data would
fire, a credit warning is already on, at the latest in the same minute, and it stays on while
the bucket drains or idles low (no datapoint: it refills at most at its baseline). A property
over any balance a gp2 volume can show, and over every volume of the real-load benchmark,
through the replay the backtest and the daemon run."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.analyze import prices, rules
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.states import states_for
from analyzer.model.metrics import Measure
from analyzer.model.series import Series, Status
from analyzer.model.units import KIB
from analyzer.offline.replay import replay
from analyzer.sim import recorded
from analyzer.sim.bursty import as_raw, span
from tests.helpers import T0, series, volume_state

BASELINE, BURST, CAPACITY = 300.0, 3_000.0, 5.4e6
"""gp2 100 GiB (Amazon EBS User Guide, General Purpose SSD volumes: 3 IOPS per GiB, bursts to
3,000 IOPS, 5.4 million I/O credits)."""
ALARM, CLEAR = 20.0, 30.0
EARNED_PER_MINUTE = 100.0 * BASELINE * 60 / CAPACITY
LEAD_IN = 40
"""Minutes of a full, quiet bucket before the drawn load: the history the rules read first."""
RULES = rules.load()
CATALOG = Catalog(prices.load())

segments = st.lists(
    st.tuples(st.integers(1, 40), st.sampled_from([0.0, 100.0, 300.0, 1_000.0, 2_000.0, 3_000.0])),
    min_size=2,
    max_size=12,
)


def _volume(start_percent: float, load: list[tuple[int, float]]):  # type: ignore[no-untyped-def]
    """The bucket minute by minute under `load` (minutes, IOPS asked); no BurstBalance in a
    minute without I/O, as AWS publishes none while a volume is idle."""
    credits = start_percent / 100 * CAPACITY
    iops: list[float] = [5.0] * LEAD_IN
    balance: list[tuple[int, float]] = [(m, start_percent) for m in range(LEAD_IN)]
    for minutes, asked in load:
        for _ in range(minutes):
            served = min(asked, BURST if credits > 0 else BASELINE)
            credits = min(max(credits + (BASELINE - served) * 60, 0.0), CAPACITY)
            if served > 0:
                balance.append((len(iops), 100 * credits / CAPACITY))
            iops.append(served)
    points = [(T0 + timedelta(minutes=m), v) for m, v in balance]
    return volume_state(
        "gp2",
        100,
        {
            Measure.BURST_BALANCE: Series.of(points, 60, Status.OK),
            Measure.IOPS: series(iops),
            Measure.THROUGHPUT: series([v * 16 * KIB for v in iops]),
        },
    )


@settings(max_examples=25, deadline=None)
@given(st.floats(15.0, 100.0), segments)
def test_a_warning_is_on_wherever_the_alarm_would_be(
    start_percent: float, load: list[tuple[int, float]]
) -> None:
    state = _volume(start_percent, load)
    balance = state.measure(Measure.BURST_BALANCE)
    end = state.measure(Measure.IOPS).timestamps[-1] + timedelta(minutes=1)
    done = replay([state], RULES, CATALOG, T0 + timedelta(minutes=LEAD_IN), end)
    for at, warned in done.warned_at.items():
        newest = balance.until(at).last()
        if newest is None:
            continue
        stamp, value = newest
        idle = (at - stamp).total_seconds() / 60 - 1
        if value < ALARM and value + EARNED_PER_MINUTE * idle < CLEAR:
            assert state.ref.resource_id in warned, (at, value, idle)


REAL = [d for d in recorded.scenarios() if not d.is_db]
"""The volumes of the real-load benchmark (`benchmarks/realload.py`); its RDS instances, whose
simulation takes a minute each, are judged by the benchmark alone."""


class OnRealLoad:
    """The benchmark's volumes of one size (kind, GiB, load), a class a size: a test module
    runs on one worker, each class of it may run on another (`--dist loadscope`), and each
    volume simulates a fortnight."""

    size: tuple[str, int, float]

    def test_on_real_load_a_warning_is_on_wherever_the_alarm_would_be(
        self, driven: recorded.Driven
    ) -> None:
        on_real_load_a_warning_is_on_wherever_the_alarm_would_be(driven)


class TestGp2Of100GiB(OnRealLoad):
    size = ("gp2", 100, 0.8)


class TestGp2Of250GiBAtHalfItsBaseline(OnRealLoad):
    size = ("gp2", 250, 0.5)


class TestGp2Of250GiBAtItsBaseline(OnRealLoad):
    size = ("gp2", 250, 1.0)


class TestSt1Of500GiB(OnRealLoad):
    size = ("st1", 500, 0.8)


def _sized(size: tuple[str, int, float]) -> list[recorded.Driven]:
    return [d for d in REAL if (d.kind, d.size_gib, d.load) == size]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.cls is not None and issubclass(metafunc.cls, OnRealLoad):
        metafunc.parametrize("driven", _sized(metafunc.cls.size), ids=lambda d: d.name)


def test_the_classes_hold_every_volume_of_the_benchmark_once() -> None:
    sizes = [_sized(c.size) for c in OnRealLoad.__subclasses__()]
    assert all(sizes)
    assert sorted(d.name for size in sizes for d in size) == sorted(d.name for d in REAL)


LEAD = timedelta(hours=3)
"""How long before the alarm's first minute of the day the replay starts: every window the
rules read (and any `for` they wait), so that the floor is judged as a daemon long running
would judge it. The floor itself needs no history: a daemon started at any minute holds it."""


def on_real_load_a_warning_is_on_wherever_the_alarm_would_be(driven: recorded.Driven) -> None:
    """Each benchmark volume over the day around its lowest balance of the fortnight: every
    minute of it the alarm would be on, replayed from `LEAD` before the first."""
    inventory, data = recorded.simulate(driven)
    states = states_for(inventory, as_raw(data))
    [state] = [s for s in states if s.ref.resource_id == driven.resource_id]
    balance = state.measure(Measure.BURST_BALANCE)
    start, end = span()
    lowest = min((p for p in balance.points() if p[0] >= start), key=lambda p: p[1])
    day = max(lowest[0] - timedelta(hours=12), start)
    [bucket] = state.buckets()
    assert bucket.model is not None
    earned = 100.0 * bucket.model.baseline * 60 / bucket.model.capacity
    last = min(day + timedelta(days=1), end)
    minutes = [
        day + timedelta(minutes=m) for m in range(int((last - day).total_seconds() // 60) + 1)
    ]
    alarmed = []
    for at in minutes:
        newest = balance.until(at).last()
        if newest is None:
            continue
        stamp, value = newest
        idle = (at - stamp).total_seconds() / 60 - 1
        if value < ALARM and value + earned * idle < CLEAR:
            alarmed.append((at, value, idle))
    assert alarmed or lowest[1] >= ALARM
    if not alarmed:
        return
    done = replay(states, RULES, CATALOG, max(alarmed[0][0] - LEAD, day), alarmed[-1][0])
    for at, value, idle in alarmed:
        assert state.ref.resource_id in done.warned_at[at], (at, value, idle)
