"""Buckets driven by real recorded load: each series read with its period and time of day,
shaped (idle at and below its median), scaled to ask `load` times the baseline on average,
held at its own time of day, and run through the simulator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from analyzer.sim import recorded
from analyzer.sim.recorded import (
    LEAST_RATE,
    MOST_LEVEL,
    SIZES,
    Driven,
    Load,
    _held,
    level,
    load,
    loads,
    scenarios,
    simulate,
)

VALUES = st.floats(0, 1e6, allow_nan=False)


def test_every_shipped_series_is_listed_and_read_with_its_period_and_time_of_day() -> None:
    names = loads()
    assert names == tuple(sorted(names)) and len(names) == 8
    assert "nyc_taxi" in names
    taxi = load("nyc_taxi")
    assert (taxi.period_s, taxi.offset_s) == (1_800, 0.0)
    assert taxi.values[:2].tolist() == [10_844, 8_127]
    cpu = load("ec2_cpu_utilization_24ae8d")
    assert (cpu.period_s, cpu.offset_s) == (300, 14.5 * 3600)


def test_a_series_of_fewer_than_two_rows_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "one-row-only.csv").write_text("timestamp,value\n2014-07-01 00:00:00,1\n")
    monkeypatch.setattr(recorded, "DATA", tmp_path)
    with pytest.raises(ValueError, match="fewer than two rows"):
        load("one-row-only")


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, st.integers(2, 200), elements=VALUES))
def test_the_shape_is_idle_up_to_the_median_and_never_negative(values: np.ndarray) -> None:
    shape = Load("x", values, 60, 0.0).shape()
    assert shape.min() >= 0
    assert np.all(shape[values <= np.quantile(values, 0.5)] == 0)


def test_the_shape_is_one_at_its_top_quantile() -> None:
    values = np.arange(1001, dtype=np.float64)  # median 500, 99.5 % quantile 995
    shape = Load("x", values, 60, 0.0).shape()
    assert shape[500] == 0 and shape[995] == pytest.approx(1.0)
    assert shape[1000] == pytest.approx(500 / 495)


@pytest.mark.parametrize(
    ("t", "expected"),
    [(0, 3.0), (3_599, 3.0), (3_600, 1.0), (7_199, 1.0), (7_200, 2.0), (10_800, 3.0)],
)
def test_each_value_is_held_for_its_period_at_its_time_of_day(t: float, expected: float) -> None:
    # Three hourly values from 01:00: 01:00 → 1, 02:00 → 2, then 00:00 wraps round to 3.
    at = _held(np.array([1.0, 2.0, 3.0]), 3_600, 3_600.0)
    assert at(t) == expected


@settings(max_examples=50, deadline=None)
@given(
    arrays(np.float64, st.integers(1, 100), elements=st.floats(0, 10, allow_nan=False)),
    st.floats(0.01, 0.99),
)
def test_level_makes_the_capped_shape_average_the_mean(shape: np.ndarray, mean: float) -> None:
    factor = level(shape, mean)
    assert 0 <= factor <= MOST_LEVEL
    reached = float(np.minimum(shape * factor, 1.0).mean())
    if factor < MOST_LEVEL:
        assert reached == pytest.approx(mean, abs=1e-6)
    else:  # idle too often to ask that much
        assert reached <= mean + 1e-9


@pytest.mark.parametrize(
    ("driven", "name", "resource_id", "is_db"),
    [
        (
            Driven("nyc_taxi", "gp2", 100),
            "gp2-100-nyc_taxi-x0.8",
            "vol-gp2-100-nyc-taxi-x08",
            False,
        ),
        (
            Driven("occupancy_6005", "st1", 500, 1.0),
            "st1-500-occupancy_6005-x1",
            "vol-st1-500-occupancy-6005-x1",
            False,
        ),
        (
            Driven("nyc_taxi", "rds-gp2", 200),
            "rds-gp2-200-nyc_taxi-x0.8",
            "rds-gp2-200-nyc-taxi-x08",
            True,
        ),
    ],
)
def test_a_driven_resource_is_named_after_what_drives_it(
    driven: Driven, name: str, resource_id: str, is_db: bool
) -> None:
    assert (driven.name, driven.resource_id, driven.is_db) == (name, resource_id, is_db)
    if is_db:
        db = driven.database()
        assert (db.db_instance_id, db.storage_type, db.allocated_gib) == (resource_id, "gp2", 200)
        assert db.tags == {"Name": name}
    else:
        volume = driven.volume()
        assert (volume.volume_id, volume.volume_type) == (resource_id, driven.kind)
        assert volume.attached_to == "i-" + resource_id.removeprefix("vol-")


@pytest.mark.parametrize("load_factor", [0.5, 0.8, 1.0])
def test_the_demand_asks_load_times_the_baseline_on_average(load_factor: float) -> None:
    driven = Driven("nyc_taxi", "gp2", 100, load_factor)
    series = load("nyc_taxi")
    asked = driven.demand(3_000.0, 300.0)
    samples = [asked(i * series.period_s) for i in range(len(series.values))]
    assert all(s == 0 or LEAST_RATE <= s <= 3_000 for s in samples)
    assert np.mean(samples) == pytest.approx(load_factor * 300, rel=0.01)


@pytest.mark.parametrize("name", loads())
def test_a_volumes_demand_asks_one_rate_through_each_period_it_says_it_holds(name: str) -> None:
    """The simulator asks a held demand once a minute: it must be true, second by second, over
    periods on each side of midnight and of the series' wrap."""
    demand = Driven(name, "gp2", 100).volume_demand(3_000.0, 300.0, 16 * 1024, 0.6)
    series = load(name)
    assert (demand.held_s, demand.held_from_s) == (series.period_s, series.offset_s)
    held = int(series.period_s)
    wrap = len(series.values) * held
    for first in (-2 * held, 86_400 - held, wrap - 2 * held, 3 * 86_400):
        start = int(series.offset_s) + (first // held) * held
        for period in range(start, start + 3 * held, held):
            assert demand.held(period, held) and not demand.held(period + 1, held)
            rates = {demand.iops(float(t)) for t in range(period, period + held)}
            assert len(rates) == 1, (name, period)


def test_a_kind_without_a_bucket_cannot_be_driven() -> None:
    with pytest.raises(ValueError, match="gp3: no burst bucket"):
        simulate(Driven("nyc_taxi", "gp3", 100), days=0.01)


@pytest.mark.parametrize(
    ("driven", "rates"),
    [
        (Driven("nyc_taxi", "gp2", 100), "VolumeReadOps"),
        (Driven("nyc_taxi", "st1", 500), "VolumeReadOps"),
        (Driven("nyc_taxi", "rds-gp2", 200), "ReadIOPS"),
    ],
)
def test_a_short_run_simulates_the_resource_minute_by_minute(driven: Driven, rates: str) -> None:
    inventory, data = simulate(driven, days=0.05)  # 72 minutes
    assert {rid for rid, _ in data} <= {driven.resource_id, f"i-{driven.resource_id[4:]}"}
    assert len(data[(driven.resource_id, rates)]) == 72
    if driven.is_db:
        assert [d.db_instance_id for d in inventory.db_instances] == [driven.resource_id]
        assert len(data[(driven.resource_id, "BurstBalance")]) == 72
    else:
        [volume] = inventory.volumes
        [instance] = inventory.instances
        assert volume.volume_id == driven.resource_id
        assert instance.volume_ids == (volume.volume_id,)
        assert instance.instance_id == volume.attached_to


def test_every_series_drives_every_size() -> None:
    assert len(scenarios()) == len(loads()) * len(SIZES)
    chosen = scenarios(("nyc_taxi",))
    assert [(d.kind, d.size_gib, d.load) for d in chosen] == list(SIZES)
    assert {d.series for d in chosen} == {"nyc_taxi"}
