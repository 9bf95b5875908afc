"""One cycle over fakes of the two AWS boundaries: no moto, no boto3, no simulator."""

from __future__ import annotations

from datetime import timedelta

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region
from analyzer.live.cycle import Analyzer
from analyzer.model.resources import Instance, Volume
from tests.fakes import M5, FakeDescriber, FakeMetricData
from tests.helpers import T0

SHOP = Volume("vol-shop", "us-east-1", "gp2", 50, "in-use", attached_to="i-1")


def shop_metrics(query: MetricQuery, _start: object) -> float | None:
    """Incident 1's volume: 1,500 IOPS of 4 KiB reads with 40 % of its credits left."""
    per_minute = {
        "VolumeReadOps": 1_500 * 60,
        "VolumeReadBytes": 1_500 * 60 * 4096,
        "BurstBalance": 40.0,
        "VolumeIdleTime": 0.0,
    }
    if query.resource_id != SHOP.volume_id or query.period_s != 60:
        return None  # no past days: a balance flat at 40 % would say it never moves
    return per_minute.get(query.metric, 0.0)


def test_a_cycle_over_the_boundaries_finds_the_draining_volume() -> None:
    describer = FakeDescriber(
        found_volumes=[SHOP], found_instances=[Instance("i-1", "us-east-1", "m5.large", "running")]
    )
    metrics = FakeMetricData(shop_metrics)
    config = settings.load({"region": ["us-east-1"]})
    analyzer = Analyzer(config, rules.load(), connect=lambda r: Region(r, describer, metrics))
    result = analyzer.run(T0)
    [finding] = [f for f in result.findings if f.resource.resource_id == "vol-shop"]
    assert finding.rule == "gp2-burst-exhaustion"
    assert finding.remedies and finding.next_bottleneck is not None
    [volume] = [s for s in result.snapshot.resources if s.ref.resource_id == "vol-shop"]
    assert volume.outlook is not None
    assert volume.outlook.seconds_to_empty == finding.seconds_to_empty
    [instance] = [s for s in result.snapshot.resources if s.ref.resource_id == "i-1"]
    assert instance.resource.type_info == M5
    assert metrics.windows[0].end - metrics.windows[0].start == timedelta(hours=1)  # the lookback


def test_history_reaches_as_far_back_as_the_rules_read() -> None:
    from analyzer.analyze.kinds.caps import IopsCap
    from tests.helpers import ruleset_of

    describer = FakeDescriber(found_volumes=[SHOP])
    metrics = FakeMetricData(shop_metrics)
    config = settings.load({"region": ["us-east-1"]})
    held = IopsCap(id="held", resource_types=["volume"], severity="warning", **{"for": "2h"})
    analyzer = Analyzer(config, ruleset_of(held), connect=lambda r: Region(r, describer, metrics))
    analyzer.run(T0)
    # two hours of `for`, fifteen minutes of window, ten minutes to spare
    assert metrics.windows[0].end - metrics.windows[0].start == timedelta(hours=2, minutes=25)


def test_the_bill_is_projected_again_when_a_tier_moves() -> None:
    load = {"iops": 0.0}

    def metrics_of(query: MetricQuery, _start: object) -> float | None:
        if query.metric == "BurstBalance":
            return 100.0
        return load["iops"] * 60 if query.metric == "VolumeReadOps" else 0.0

    describer = FakeDescriber(
        found_volumes=[SHOP], found_instances=[Instance("i-1", "us-east-1", "m5.large", "running")]
    )
    metrics = FakeMetricData(metrics_of)
    config = settings.load({"region": ["us-east-1"]})
    analyzer = Analyzer(
        config, rules.load(), connect=lambda r: Region(r, describer, metrics), adaptive=True
    )
    quiet = [analyzer.run(T0 + timedelta(minutes=k)).projection for k in range(3)]
    assert quiet[0] is not None and quiet[1] is quiet[2]  # nothing moved: not worked out again
    load["iops"] = 1_500.0  # draining at once: hot at its next poll
    busy = [analyzer.run(T0 + timedelta(minutes=k)).projection for k in range(3, 15)]
    before, after = quiet[-1], busy[-1]
    assert before is not None and after is not None
    assert after.dollars() > before.dollars()
