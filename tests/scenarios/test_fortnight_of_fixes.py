"""A gp2 volume drained to zero by a batch every night for a fortnight, read by `once` on the
fourteenth night as its bucket runs empty: every fix carries what it would have done over the
fourteen days, the one that would have throttled the batch goes after those that would not,
and the one to buy time says how much it would have bought. Over the two AWS boundaries,
faked as CloudWatch shows such a volume: its operations served through its bucket, its
BurstBalance falling to zero each night."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region
from analyzer.deliver import report
from analyzer.live.cycle import Analyzer
from analyzer.model.findings import RemedyKind
from analyzer.model.resources import Instance, Volume
from tests.fakes import M5, FakeDescriber, FakeMetricData

FIRST_NIGHT = datetime(2026, 11, 14, tzinfo=UTC)
NOW = FIRST_NIGHT + timedelta(days=14, hours=3, minutes=48)
"""The fifteenth night: the batch began at 02:00 and emptied the bucket at 03:33."""
BATCH_FROM, BATCH_MIN, BATCH_IOPS = 120, 120, 1_200.0
IO_BYTES = 16_384
BATCH = Volume("vol-batch", "us-east-1", "gp2", 80, "in-use", attached_to="i-1")
# gp2 80 GiB: 240 IOPS of baseline, 3,000 of burst, 5.4 M I/O credits (Amazon EBS User
# Guide, "General Purpose SSD volumes"); read as empty at 1 %.
BASELINE, BURST, CAPACITY = 240.0, 3_000.0, 5_400_000.0


def shown() -> tuple[np.ndarray, np.ndarray]:
    """Minute by minute from the first night to now: the IOPS CloudWatch shows (what the
    bucket let through) and BurstBalance at the end of each minute."""
    minutes = int((NOW - FIRST_NIGHT).total_seconds() // 60)
    iops, balance, credits = np.zeros(minutes), np.zeros(minutes), CAPACITY
    for minute in range(minutes):
        wanted = BATCH_IOPS if BATCH_FROM <= minute % 1440 < BATCH_FROM + BATCH_MIN else 20.0
        got = min(wanted, BURST if credits > CAPACITY / 100 else BASELINE)
        credits = min(max(credits - (got - BASELINE) * 60, 0.0), CAPACITY)
        iops[minute], balance[minute] = got, credits / CAPACITY * 100
    return iops, balance


IOPS, BALANCE = shown()


def cloudwatch(query: MetricQuery, at: datetime) -> float | None:
    if query.resource_id != BATCH.volume_id or at < FIRST_NIGHT:
        return None
    minute = int((at - FIRST_NIGHT).total_seconds() // 60)
    if minute >= len(IOPS):
        return None
    span = query.period_s / 60
    per_period = {
        "VolumeReadOps": IOPS[minute] * 60 * span,
        "VolumeReadBytes": IOPS[minute] * IO_BYTES * 60 * span,
        "BurstBalance": BALANCE[minute],
        "VolumeIdleTime": 0.0,
    }
    return per_period.get(query.metric, 0.0)


def test_the_fixes_of_a_nightly_drain_are_weighed_on_its_fortnight() -> None:
    describer = FakeDescriber(
        found_volumes=[BATCH],
        found_instances=[Instance("i-1", "us-east-1", "m5.large", "running", type_info=M5)],
    )
    config = settings.load({"region": ["us-east-1"]})
    metrics = FakeMetricData(cloudwatch)
    analyzer = Analyzer(config, rules.load(), connect=lambda r: Region(r, describer, metrics))
    result = analyzer.run(NOW)
    [before] = [f for f in result.findings if f.resource.resource_id == BATCH.volume_id]
    weighed = analyzer.proven(result, NOW)
    [finding] = [f for f in weighed.findings if f.resource.resource_id == BATCH.volume_id]
    assert finding.rule == before.rule == "volume-burst-credits-exhausted"

    # The advice's order was gp3, the stopgap, then growth; the stopgap would have throttled
    # the batch every night, so it goes last.
    kinds = [r.kind for r in before.remedies]
    assert kinds == [RemedyKind.MODIFY, RemedyKind.STOPGAP, RemedyKind.MODIFY]
    gp3, grown, stopgap = finding.remedies
    assert gp3.action.startswith("Move to gp3") and grown.action.startswith("Grow to 480 GiB")
    for held in (gp3, grown):
        assert held.past is not None and held.past.held and held.past.days == 14.0
        assert held.text().endswith(
            "would have limited 0 min of the last 14 days (held-back demand counted at its "
            "rate before)"
        )
    # Grown a GiB, the bucket comes back full and lasts 94 min at 1,200 IOPS, one more than
    # the volume's own 93: the batch's last 26 minutes throttled on each of the 13 whole
    # nights the fortnight holds, and 12 of tonight's so far (the fortnight begins at 03:48
    # of the first night, with a full bucket).
    assert stopgap.kind is RemedyKind.STOPGAP and stopgap.past is not None
    assert stopgap.past.limited_days == 14 and stopgap.past.floor
    assert stopgap.past.minutes_limited == 13 * 26 + 12
    assert stopgap.past.worst_day == (FIRST_NIGHT + timedelta(days=1)).date()
    assert stopgap.past.bought_s == 60.0
    assert stopgap.text().endswith(
        # The fortnight starts after midnight: fifteen UTC days, fourteen nights limited.
        "would have limited at least 350 min, on 14 of 15 days (a floor: held-back demand "
        "counted at its rate before), buying 1 min on the worst day"
    )

    # The JSON report carries the same figures on each option.
    rendered = report.render(
        weighed.snapshot, weighed.readings, weighed.findings, "json", weighed.projection
    )
    [row] = [f for f in json.loads(rendered)["findings"] if f["resource_id"] == "vol-batch"]
    pasts = [option["past"] for option in row["remedies"]]
    assert [p["minutes_limited"] for p in pasts] == [0, 0, 350]
    assert pasts[2]["limited_days"] == 14 and pasts[2]["bought_seconds"] == 60.0
    assert all(p["days_spanned"] == 15 for p in pasts)
    assert all(p["days"] == 14.0 and p["floor"] for p in pasts)
