"""One cycle over fakes of the two AWS boundaries: no moto, no boto3, no simulator."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region
from analyzer.live.cycle import Analyzer
from analyzer.model.resources import Instance, Volume
from tests.fakes import M5, FakeDescriber, FakeMetricData, quiet_past
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
        return quiet_past(query)  # a fortnight quiet: this drain is news
    return per_minute.get(query.metric, 0.0)


def shop_analyzer(metrics: FakeMetricData | None = None, **options: bool) -> Analyzer:
    """The draining shop volume on its m5.large, read through `metrics` (`shop_metrics`)."""
    describer = FakeDescriber(
        found_volumes=[SHOP], found_instances=[Instance("i-1", "us-east-1", "m5.large", "running")]
    )
    read = metrics if metrics is not None else FakeMetricData(shop_metrics)
    config = settings.load({"region": ["us-east-1"]})
    return Analyzer(config, rules.load(), connect=lambda r: Region(r, describer, read), **options)


def test_a_cycle_over_the_boundaries_finds_the_draining_volume() -> None:
    metrics = FakeMetricData(shop_metrics)
    result = shop_analyzer(metrics).run(T0)
    [finding] = [f for f in result.findings if f.resource.resource_id == "vol-shop"]
    assert finding.rule == "gp2-burst-exhaustion"
    assert finding.remedies and finding.next_bottleneck is not None
    [volume] = [s for s in result.snapshot.resources if s.ref.resource_id == "vol-shop"]
    assert volume.outlook is not None
    assert volume.outlook.seconds_to_empty == finding.seconds_to_empty
    [instance] = [s for s in result.snapshot.resources if s.ref.resource_id == "i-1"]
    assert instance.resource.type_info == M5
    # What the rules read (30 min with the shipped ones) and ten minutes more: the history kept.
    assert metrics.windows[0].end - metrics.windows[0].start == timedelta(minutes=40)


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


QUIET = Volume("vol-quiet", "us-east-1", "gp2", 500, "in-use", attached_to="i-1")


def shop_and_quiet(query: MetricQuery, start: object) -> float | None:
    """The shop's volume draining; beside it a quiet one, its bucket full."""
    if query.resource_id == QUIET.volume_id:
        return 100.0 if query.metric == "BurstBalance" else 0.0
    return shop_metrics(query, start)


def two_accounts(**more) -> Analyzer:
    """Accounts prod and staging, each with the shop's volume, a quiet one and their
    instance."""
    describer = FakeDescriber(
        found_volumes=[SHOP, QUIET],
        found_instances=[Instance("i-1", "us-east-1", "m5.large", "running")],
    )
    metrics = FakeMetricData(shop_and_quiet)
    config = settings.load(
        {
            "region": ["us-east-1"],
            "accounts": [
                {"id": "111111111111", "name": "prod", **more},
                {"id": "222222222222", "name": "staging"},
            ],
        }
    )
    return Analyzer(
        config,
        rules.load(),
        connect_account=lambda account, r: Region(r, describer, metrics, account),
        adaptive=True,
    )


def test_one_volume_id_in_two_accounts_is_two_resources_each_with_its_finding() -> None:
    result = two_accounts().run(T0)
    found = {
        (f.resource.account_id, f.resource.account_name)
        for f in result.findings
        if f.resource.resource_id == "vol-shop"
    }
    assert found == {("111111111111", "prod"), ("222222222222", "staging")}
    assert result.reading("111111111111/us-east-1", "vol-shop") is not None
    assert result.reading("222222222222/us-east-1", "vol-shop") is not None


def test_three_shards_watch_the_fleet_once_between_them() -> None:
    """Every resource in exactly one shard, and the three reports together are the one a
    single process gives: the same readings and the same findings."""
    volumes = [SHOP]
    instances = [Instance("i-1", "us-east-1", "m5.large", "running")]
    for n in range(2, 30):
        instances.append(Instance(f"i-{n}", "us-east-1", "m5.large", "running"))
        volumes += [
            Volume(f"vol-{n}-{k}", "us-east-1", "gp2", 200, "in-use", attached_to=f"i-{n}")
            for k in range(2)
        ]
    describer = FakeDescriber(found_volumes=volumes, found_instances=instances)

    def report(**sharding: int) -> tuple[dict[str, object], set[tuple[str, str]]]:
        config = settings.load({"region": ["us-east-1"], **sharding})
        metrics = FakeMetricData(shop_metrics)
        analyzer = Analyzer(config, rules.load(), connect=lambda r: Region(r, describer, metrics))
        result = analyzer.run(T0)
        readings = {r.ref.resource_id: r.status for r in result.readings}
        return readings, {(f.rule, f.resource.resource_id) for f in result.findings}

    whole, found = report()
    parts = [report(shard=i, total_shards=3) for i in range(3)]
    assert sum(len(readings) for readings, _ in parts) == len(whole)
    assert {k: v for readings, _ in parts for k, v in readings.items()} == whole
    assert set().union(*(f for _, f in parts)) == found
    assert all(readings for readings, _ in parts)  # each shard has its share


def test_once_weighs_the_fixes_on_the_volume_s_fortnight_and_a_failure_costs_only_that() -> None:
    import structlog

    from analyzer.collect.window import Window
    from analyzer.errors import AwsAccessError
    from analyzer.model.series import Series
    from analyzer.model.state import FetchStats

    class PastFails(FakeMetricData):
        def fetch(self, queries, window: Window):  # type: ignore[no-untyped-def]
            out, stats = super().fetch(queries, window)
            if window.period_s == 60 and window.end - window.start > timedelta(days=1):
                out = {q: Series.failed("Throttling: Rate exceeded") for q in queries}
                stats = FetchStats(metrics_requested=len(queries), metrics_failed=len(queries))
                stats.errors.append("Throttling: Rate exceeded")
            return out, stats

    class PastUnreachable(FakeMetricData):
        def fetch(self, queries, window: Window):  # type: ignore[no-untyped-def]
            if window.period_s == 60 and window.end - window.start > timedelta(days=1):
                raise AwsAccessError("cloudwatch:GetMetricData in us-east-1: Read timeout")
            return super().fetch(queries, window)

    fakes = (FakeMetricData, PastFails, PastUnreachable)
    for metrics in (fake(shop_metrics) for fake in fakes):
        analyzer = shop_analyzer(metrics)
        result = analyzer.run(T0)
        asked = result.snapshot.stats.metrics_requested
        with structlog.testing.capture_logs() as logged:
            weighed = analyzer.proven(result, T0)
        [finding] = [f for f in weighed.findings if f.resource.resource_id == "vol-shop"]
        # Four sums of the volume over fourteen days, by the minute, counted in the run's bill;
        # a throttled first one ends the read, the rest not asked.
        unreachable = isinstance(metrics, PastUnreachable)
        read = 0 if unreachable else 1 if isinstance(metrics, PastFails) else 4
        assert weighed.snapshot.stats.metrics_requested == asked
        assert weighed.snapshot.stats.past_requested == read
        assert weighed.snapshot.stats.billed == asked + read
        assert weighed.snapshot.stats.outcome == "success"
        pasts = [r.past for r in finding.remedies if r.change is not None]
        if unreachable:
            assert pasts and all(p is None for p in pasts)
            [warning] = [e for e in logged if e["event"] == "past.unread"]
            assert warning["reason"].endswith("Read timeout")
        elif isinstance(metrics, PastFails):
            assert pasts and all(p is None for p in pasts)
            [warning] = [e for e in logged if e["event"] == "past.unread"]
            assert warning["reason"] == "Throttling: Rate exceeded" and warning["failed"] == 1
        else:
            assert pasts and all(p is not None and p.days == 14.0 for p in pasts)
            assert not [e for e in logged if e["event"] == "past.unread"]


def test_the_cycles_free_pages_go_back_before_a_fortnight_is_read(monkeypatch) -> None:
    """The fortnight's answers are the cycle's heaviest moment: the heap is trimmed first, and
    only where something is read."""
    import dataclasses

    from analyzer.live import cycle, proofs

    events: list[str] = []
    monkeypatch.setattr(cycle.heap, "give_back", lambda: events.append("give_back") or True)
    reading = proofs.Proofs.read

    def read(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        events.append("read")
        return reading(self, *args, **kwargs)

    monkeypatch.setattr(proofs.Proofs, "read", read)
    analyzer = shop_analyzer()
    result = analyzer.run(T0)
    analyzer.proven(result, T0)
    assert events == ["give_back", "read"]
    quiet = dataclasses.replace(result, findings=[])
    analyzer.proven(quiet, T0)
    assert events == ["give_back", "read"]  # nothing to weigh: nothing read, nothing trimmed


EMPTIED = Volume("vol-batch", "us-east-1", "gp2", 80, "in-use", attached_to="i-1")
EMPTIED_AT = T0 - timedelta(hours=1)


def drained_an_hour_ago(query: MetricQuery, at: datetime) -> float | None:
    """gp2 80 GiB: a batch at 1,200 IOPS of 16 KiB emptied its bucket an hour ago, and it has
    run at its 240 IOPS baseline since; before the batch, a trickle."""
    if query.resource_id != EMPTIED.volume_id or query.period_s != 60:
        return quiet_past(query)
    if at >= EMPTIED_AT:
        iops, balance = 240.0, 0.0
    elif at >= EMPTIED_AT - timedelta(minutes=93):
        iops, balance = 1_200.0, 50.0
    else:
        iops, balance = 20.0, 100.0
    per_minute = {
        "VolumeReadOps": iops * 60,
        "VolumeReadBytes": iops * 60 * 16_384,
        "BurstBalance": balance,
        "VolumeIdleTime": 0.0,
    }
    return per_minute.get(query.metric, 0.0)


def test_once_sizes_an_empty_bucket_s_fix_for_the_demand_its_past_shows_before_the_drain() -> None:
    describer = FakeDescriber(
        found_volumes=[EMPTIED],
        found_instances=[Instance("i-1", "us-east-1", "m5.large", "running")],
    )
    metrics = FakeMetricData(drained_an_hour_ago)
    config = settings.load({"region": ["us-east-1"]})
    analyzer = Analyzer(config, rules.load(), connect=lambda r: Region(r, describer, metrics))
    result = analyzer.run(T0)
    [found] = [f for f in result.findings if f.rule == "volume-burst-credits-exhausted"]
    # The run's own window shows only the baseline: sized for the burst, 1,000 GiB.
    assert found.credit is not None and found.credit.rate_before_empty is None
    assert "Grow to 1,000 GiB" in " ".join(r.action for r in found.remedies)
    [weighed] = [f for f in analyzer.proven(result, T0).findings if f.rule == found.rule]
    # The fortnight shows the drain at 1,200 IOPS: a fifth more room is 1,440 IOPS, 480 GiB.
    assert weighed.credit is not None and weighed.credit.rate_before_empty == 1_200.0
    assert weighed.summary.endswith(", down from 1,200 IOPS while credits lasted.")
    actions = " ".join(r.action for r in weighed.remedies)
    assert "Grow to 480 GiB" in actions and "1,000 GiB" not in actions
    [grown] = [r for r in weighed.remedies if "Grow to 480 GiB" in r.action]
    assert grown.past is not None and grown.past.held


def test_a_sample_projects_the_bill_the_daemon_comes_to_once_its_alerts_fire() -> None:
    """`cost --sample`: one read now, and the bill of the tiers the daemon's cycles then keep,
    the draining volume's alert firing steadily; not the first cycle's, which reads it every
    minute before any alert fires."""
    from analyzer.analyze.alerts import AlertBook

    def draining(query: MetricQuery, start: datetime) -> float | None:
        minutes = (start - T0).total_seconds() / 60 + 60
        if query.metric == "BurstBalance":
            return max(95.0 - 0.3 * minutes, 0.0)
        return 1_500.0 * 60 if query.metric == "VolumeReadOps" else 0.0

    def analyzer() -> Analyzer:
        return shop_analyzer(FakeMetricData(draining), adaptive=True)

    sampled, stats = analyzer().sampled(T0)
    assert stats.metrics_requested > 0
    daemon, book = analyzer(), AlertBook(4 * 3600, 300)
    projected = []
    for k in range(20):
        now = T0 + timedelta(minutes=k)
        alerted = {(a.finding.resource.scope, a.resource_id) for a in book}
        result = daemon.run(now, alerted, book.steady(daemon.rules.daily()))
        book.update(now, result.findings, result.pending)
        assert result.projection is not None
        projected.append(result.projection.dollars())
    assert book.steady(daemon.rules.daily())  # its alert fires steadily by the end
    assert sampled["us-east-1"].dollars() == pytest.approx(projected[-1]), projected
    assert projected[0] > projected[-1], projected
