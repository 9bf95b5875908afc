"""One time to empty per resource per cycle: the finding, the report row and the `/metrics`
gauge agree, whatever the rate window of the rule that applies.

The loads below rise steadily through the hour, so each window gives a different drain (and no
single change of load, from which the forecast would read instead): a second computation with
any other window would show up as a disagreement.
"""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from analyzer.analyze import rules as rule_files
from analyzer.deliver.exporter import Published
from analyzer.deliver.rows import resource_row
from analyzer.model.metrics import Measure
from analyzer.model.resources import DbInstance, InstanceType
from analyzer.model.state import ResourceState
from analyzer.model.units import GIB, KIB, MB, MIB
from tests.helpers import analyze, db_state, series, volume_state

WINDOWS = ["5m", "10m", "15m", "30m"]
R5 = InstanceType("r5.xlarge", 6_000, 18_750, 106.25 * MB, 593.75 * MB, 32 * GIB, nitro=True)


def _rising(low: float, high: float, minutes: int = 60) -> list[float]:
    return [low + (high - low) * i / (minutes - 1) for i in range(minutes)]


def st1_volume() -> ResourceState:
    """1 TiB st1 whose sequential load rose steadily from 100 to 250 MiB/s over the hour."""
    bps = _rising(100 * MIB, 250 * MIB)
    return volume_state(
        "st1",
        1_024,
        {
            Measure.IOPS: series([b / MIB for b in bps]),
            Measure.THROUGHPUT: series(bps),
            Measure.BURST_BALANCE: series([60.0] * 60),
        },
    )


def gp2_volume() -> ResourceState:
    """gp2 100 GiB whose reads rose steadily from 1,000 to 2,500 IOPS over the hour."""
    iops = _rising(1_000, 2_500)
    return volume_state(
        "gp2",
        100,
        {
            Measure.IOPS: series(iops),
            Measure.THROUGHPUT: series([v * 16 * KIB for v in iops]),
            Measure.BURST_BALANCE: series([70.0] * 60),
        },
    )


def rds_gp2() -> ResourceState:
    """MySQL on gp2 800 GiB (four stripes: 2,400 IOPS baseline), reads rising steadily to 9,000."""
    db = DbInstance(
        "orders", "us-east-1", "mysql", "db.r5.xlarge", "gp2", 800, "available", class_info=R5
    )
    iops = _rising(3_000, 9_000)
    measures = {
        Measure.IOPS: series(iops),
        Measure.READ_IOPS: series(iops),
        Measure.WRITE_IOPS: series([0.0] * 60),
        Measure.THROUGHPUT: series([v * 16 * KIB for v in iops]),
        Measure.BURST_BALANCE: series([50.0] * 60),
        Measure.FREEABLE_MEMORY: series([20 * GIB] * 60),
    }
    return db_state(db, measures)


CASES = {
    "gp2": (gp2_volume, "gp2-burst-exhaustion", "ebs_analyzer_volume_burst_seconds_to_empty"),
    "st1": (st1_volume, "hdd-burst-exhaustion", "ebs_analyzer_volume_burst_seconds_to_empty"),
    "rds": (rds_gp2, "rds-burst-exhaustion", "ebs_analyzer_db_instance_burst_seconds_to_empty"),
}


def _with_window(rule_id: str, window: str):
    """The shipped rules, with this rule's rate window (and a horizon that lets it fire)."""
    update = {"rate_window": float(window[:-1]) * 60, "horizon": 86400.0}
    return [
        rule.model_copy(update=update) if rule.id == rule_id else rule
        for rule in rule_files.load().rules
    ]


def _gauge(published: Published, name: str) -> float:
    text = published.exposition.text().decode()
    [sample] = [
        s
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == name
    ]
    return float(sample.value)


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_finding_report_and_gauge_give_one_time_to_empty(case: str, window: str) -> None:
    make, rule_id, gauge = CASES[case]
    analysis = analyze(make(), rules=_with_window(rule_id, window), minutes_of_data=60)
    [finding] = [f for f in analysis.firing if f.rule == rule_id]
    [reading] = analysis.readings.all()
    row = resource_row(reading)
    assert finding.seconds_to_empty is not None
    assert row["seconds_to_empty"] == pytest.approx(finding.seconds_to_empty, abs=0.05)
    assert _gauge(Published.of([reading], ()), gauge) == row["seconds_to_empty"]
    assert finding.evidence["window_seconds"] == float(window[:-1]) * 60


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_rule_window_changes_the_one_answer(case: str) -> None:
    """The agreement above is not luck: each window gives its own time to empty."""
    make, rule_id, _ = CASES[case]
    answers = set()
    for window in WINDOWS:
        analysis = analyze(make(), rules=_with_window(rule_id, window), minutes_of_data=60)
        [state] = analysis.snapshot.resources
        assert state.outlook is not None
        answers.add(round(state.outlook.seconds_to_empty))
    assert len(answers) == len(WINDOWS)


def test_without_a_forecast_rule_the_kind_defaults_decide() -> None:
    analysis = analyze(gp2_volume(), rules=(), minutes_of_data=60)
    [state] = analysis.snapshot.resources
    assert state.windows.rate_s == 300.0
    assert state.outlook is not None
    [reading] = analysis.readings.all()
    assert resource_row(reading)["seconds_to_empty"] == pytest.approx(
        state.outlook.seconds_to_empty, abs=0.05
    )
