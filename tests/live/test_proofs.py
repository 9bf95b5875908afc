"""The daemon's fixes weighed on their past: a few resources a cycle, new alerts first, and
what a read showed kept for hours, never the minutes behind it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region
from analyzer.collect.window import Window
from analyzer.errors import AwsAccessError
from analyzer.live.cycle import Analyzer, CycleResult
from analyzer.live.proofs import KEEP_S, REWEIGH_AFTER_S, Proofs
from analyzer.model.resources import Instance, Volume
from analyzer.model.series import Series
from analyzer.model.state import FetchStats
from tests.fakes import FakeDescriber, FakeMetricData, quiet_past
from tests.helpers import T0

VOLUMES = [
    Volume(f"vol-{n}", "us-east-1", "gp2", 50, "in-use", attached_to="i-1") for n in range(5)
]


def draining(query: MetricQuery, _at: datetime) -> float | None:
    """Each volume: 1,500 IOPS of 4 KiB reads with 40 % of its credits left (incident 1)."""
    if query.period_s != 60:
        return quiet_past(query)
    per_minute = {
        "VolumeReadOps": 1_500 * 60,
        "VolumeReadBytes": 1_500 * 60 * 4096,
        "BurstBalance": 40.0,
        "VolumeIdleTime": 0.0,
    }
    return per_minute.get(query.metric, 0.0)


class PastCounted(FakeMetricData):
    """Counts the volumes whose fortnight is asked, and can be made to fail those reads."""

    unreachable: bool = False

    def fetch(
        self, queries: Sequence[MetricQuery], window: Window
    ) -> tuple[dict[MetricQuery, Series], FetchStats]:
        if window.period_s == 60 and window.end - window.start > timedelta(days=1):
            # A read begins with the volume's read operations: one entry a volume read.
            asked = self.__dict__.setdefault("asked", [])
            asked.extend(q.resource_id for q in queries if q.metric == "VolumeReadOps")
            if self.unreachable:
                raise AwsAccessError("cloudwatch:GetMetricData in us-east-1: Read timeout")
        return super().fetch(queries, window)

    def take(self) -> list[str]:
        return self.__dict__.pop("asked", [])


def daemon_analyzer(reads: int = 3) -> tuple[Analyzer, PastCounted]:
    describer = FakeDescriber(
        found_volumes=VOLUMES,
        found_instances=[Instance("i-1", "us-east-1", "m5.large", "running")],
    )
    metrics = PastCounted(draining)
    config = settings.load({"region": ["us-east-1"]})
    analyzer = Analyzer(
        config,
        rules.load(),
        connect=lambda r: Region(r, describer, metrics),
        # No time bound: these tests count reads; the budget's own test sets one.
        proofs=Proofs(reads_per_cycle=reads, budget_s=None),
    )
    return analyzer, metrics


def weighed(result: CycleResult) -> set[str]:
    """The volumes whose every volume fix carries its past."""
    return {
        f.resource.resource_id
        for f in result.findings
        if f.resource.resource_id.startswith("vol-")
        and all(r.past is not None for r in f.remedies if r.change is not None)
    }


def cycle(
    analyzer: Analyzer, at: datetime, alerted: set[tuple[str, str]] | None = None
) -> CycleResult:
    alerted = alerted if alerted is not None else set()
    return analyzer.proven(analyzer.run(at), at, alerted)


def test_a_few_volumes_are_read_a_cycle_and_what_they_showed_is_kept() -> None:
    analyzer, metrics = daemon_analyzer(reads=3)
    first = cycle(analyzer, T0)
    read = metrics.take()
    assert len(read) == 3 and weighed(first) == set(read)
    everyone = {("us-east-1", v.volume_id) for v in VOLUMES}
    second = cycle(analyzer, T0 + timedelta(minutes=1), everyone)
    assert len(metrics.take()) == 2
    assert weighed(second) == {v.volume_id for v in VOLUMES}
    # Kept: nothing read again for hours, every fix still says its past.
    for minutes in (2, 30, 200):
        later = cycle(analyzer, T0 + timedelta(minutes=minutes), everyone)
        assert metrics.take() == []
        assert weighed(later) == {v.volume_id for v in VOLUMES}
    # Figures, not minutes: a few per fix.
    assert analyzer.proofs is not None
    kept = analyzer.proofs.storage[("us-east-1", "vol-0")]
    assert kept.fits and all(fit.days == 14.0 for fit in kept.fits.values())
    # Read again once they are a week old, a few a cycle.
    cycle(analyzer, T0 + timedelta(seconds=KEEP_S), everyone)
    assert len(metrics.take()) == 3


def test_the_alerts_about_to_be_raised_are_read_before_those_raised_already() -> None:
    analyzer, metrics = daemon_analyzer(reads=2)
    raised = {("us-east-1", v.volume_id) for v in VOLUMES[:3]}
    cycle(analyzer, T0, raised)
    assert sorted(metrics.take()) == ["vol-3", "vol-4"]


def test_a_volume_no_finding_names_any_more_is_forgotten() -> None:
    analyzer, _ = daemon_analyzer(reads=5)
    result = analyzer.run(T0)
    analyzer.proven(result, T0)
    assert analyzer.proofs is not None and len(analyzer.proofs.storage) == 5
    kept = [f for f in result.findings if f.resource.resource_id != "vol-0"]
    from dataclasses import replace

    # Missing for a cycle or two, it is kept; an hour on, forgotten.
    analyzer.proven(replace(result, findings=kept), T0 + timedelta(minutes=1))
    assert len(analyzer.proofs.storage) == 5
    analyzer.proven(replace(result, findings=kept), T0 + timedelta(seconds=REWEIGH_AFTER_S))
    assert ("us-east-1", "vol-0") not in analyzer.proofs.storage
    assert len(analyzer.proofs.storage) == 4


def test_a_read_that_fails_is_tried_again_after_an_hour_not_every_cycle() -> None:
    analyzer, metrics = daemon_analyzer(reads=5)
    metrics.unreachable = True
    first = cycle(analyzer, T0)
    assert metrics.take() and weighed(first) == set()
    metrics.unreachable = False
    everyone = {("us-east-1", v.volume_id) for v in VOLUMES}
    cycle(analyzer, T0 + timedelta(minutes=1), everyone)
    assert metrics.take() == []
    again = cycle(analyzer, T0 + timedelta(seconds=REWEIGH_AFTER_S), everyone)
    assert len(metrics.take()) == 5
    assert weighed(again) == {v.volume_id for v in VOLUMES}


def test_an_instance_s_memory_comes_from_the_cloudwatch_agent_and_a_refusal_costs_only_it() -> None:
    from analyzer.analyze.catalog import NO_OFFERS, Catalog
    from analyzer.analyze.prices import PriceList
    from analyzer.errors import AwsAccessError
    from analyzer.live.proofs import Due
    from analyzer.model.resources import ResourceType
    from tests.fakes import M5
    from tests.helpers import instance_state, snapshot_of

    class Listing:
        region = "us-east-1"
        refuse = False

        def list_metrics(self, namespace: str, dimension: str, metric=None):  # type: ignore[no-untyped-def]
            if self.refuse:
                raise AwsAccessError("cloudwatch:ListMetrics in us-east-1: AccessDenied")
            return [("mem_used_percent", (("InstanceId", "i-1"),))]

    def value(query: MetricQuery, _at: datetime) -> float | None:
        return {"CPUUtilization": 35.0, "mem_used_percent": 25.0}.get(query.metric)

    snapshot = snapshot_of(instance_state(M5))
    listing = Listing()
    region = Region("us-east-1", FakeDescriber(), FakeMetricData(value), listing=listing)
    catalog = Catalog(PriceList(), NO_OFFERS)
    for refuse in (False, True):
        listing.refuse = refuse
        proofs, stats = Proofs(), FetchStats()
        due = Due(peaks={"us-east-1": [(ResourceType.INSTANCE, "i-1")]})
        proofs.read(due, [], snapshot, lambda _: region, T0, 120.0, stats, catalog)
        kept = proofs.peaks[("us-east-1", "i-1")]
        assert kept.cpu == (35.0, 14.0)
        # A quarter of m5.large's 8 GiB, over the same fortnight; unknown where refused.
        assert kept.memory == (None if refuse else (2.0, 14.0))
        assert stats.metrics_failed == (1 if refuse else 0)


def test_past_the_cycle_s_time_the_rest_waits_for_the_next_cycle_without_failing() -> None:
    analyzer, metrics = daemon_analyzer(reads=5)
    assert analyzer.proofs is not None
    analyzer.proofs.budget_s = 0.0  # spent after the first read
    first = cycle(analyzer, T0)
    assert len(metrics.take()) == 1 and len(weighed(first)) == 1
    # Not marked as failed: read the next cycle, one more each time.
    cycle(analyzer, T0 + timedelta(minutes=1), {("us-east-1", v.volume_id) for v in VOLUMES})
    assert len(metrics.take()) == 1


def test_an_empty_bucket_sized_anew_from_its_past_is_not_read_again_every_hour() -> None:
    """Its fixes were sized for the rate its past showed before it emptied: the next cycles'
    findings, sized for the burst again before that, name fixes the read already saw."""
    from tests.live.test_cycle import EMPTIED, drained_an_hour_ago

    describer = FakeDescriber(
        found_volumes=[EMPTIED],
        found_instances=[Instance("i-1", "us-east-1", "m5.large", "running")],
    )
    metrics = PastCounted(drained_an_hour_ago)
    config = settings.load({"region": ["us-east-1"]})
    analyzer = Analyzer(
        config, rules.load(), connect=lambda r: Region(r, describer, metrics), proofs=Proofs()
    )
    key = {("us-east-1", EMPTIED.volume_id)}
    for minutes in (0, 61, 125, 300):
        result = cycle(analyzer, T0 + timedelta(minutes=minutes), key if minutes else set())
        [finding] = [f for f in result.findings if f.rule == "volume-burst-credits-exhausted"]
        assert "Grow to 480 GiB" in " ".join(r.action for r in finding.remedies)
    assert metrics.take() == [EMPTIED.volume_id]
