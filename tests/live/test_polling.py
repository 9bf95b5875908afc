"""Adaptive polling over a fleet: what it costs, and that it still warns in time.

The fleet's metric data is computed from the bucket model for any minute (a fake of the
MetricData boundary), so that hundreds of volumes run through many cycles in a second.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from structlog.testing import capture_logs

from analyzer import settings
from analyzer.analyze import rules
from analyzer.analyze.alerts import AlertBook
from analyzer.collect import fetch
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region
from analyzer.live.cycle import Analyzer
from analyzer.model.limits import volume_envelope
from analyzer.model.metrics import Tier
from analyzer.model.resources import Instance, Volume
from analyzer.model.units import KIB
from tests.fakes import M5, FakeDescriber, FakeMetricData

START = datetime(2026, 11, 21, 0, 0, tzinfo=UTC)
GP2_BUCKET = 5.4e6


@dataclass
class Load:
    """What a volume does: `iops` of `io` bytes, from `since` (seconds after START) on."""

    iops: float
    io: float = 16 * KIB
    since: float = 0.0
    before: float = 0.0


@dataclass
class Fleet:
    volumes: dict[str, tuple[Volume, Load]] = field(default_factory=dict)
    instances: list[Instance] = field(default_factory=list)
    late_s: float = 0.0
    """CloudWatch publishes a minute this long after it ends (as of `now`)."""
    now: datetime | None = None

    def add_instance(self, loads: list[tuple[str, int, Load]], detailed: bool = False) -> None:
        iid = f"i-{len(self.instances):04d}"
        for kind, size, load in loads:
            vid = f"vol-{len(self.volumes):05d}"
            iops = 3_000 if kind == "gp3" else None
            volume = Volume(vid, "us-east-1", kind, size, "in-use", iops, None, iid)
            self.volumes[vid] = (volume, load)
        self.instances.append(
            Instance(iid, "us-east-1", "m5.large", "running", detailed_monitoring=detailed)
        )

    def iops(self, vid: str, t: float) -> float:
        _, load = self.volumes[vid]
        return load.iops if t >= load.since else load.before

    def balance(self, vid: str, t: float) -> float:
        """BurstBalance of a gp2 volume that starts full, from the bucket model."""
        volume, load = self.volumes[vid]
        envelope = volume_envelope(volume)
        assert envelope is not None and envelope.bucket is not None
        baseline = envelope.bucket.baseline
        drain = max(load.iops - baseline, 0.0) * max(t - load.since, 0.0)
        return max(100.0 - 100.0 * drain / GP2_BUCKET, 0.0)

    def value(self, query: MetricQuery, stamp: datetime) -> float | None:
        if self.now is not None and stamp + timedelta(seconds=60 + self.late_s) > self.now:
            return None  # not published yet
        t = (stamp - START).total_seconds()
        if query.resource_id.startswith("i-"):
            return self._instance(query, t)
        iops = self.iops(query.resource_id, t)
        _, load = self.volumes[query.resource_id]
        per_period = {
            "VolumeReadOps": iops * 60,
            "VolumeWriteOps": 0.0,
            "VolumeReadBytes": iops * 60 * load.io,
            "VolumeWriteBytes": 0.0,
            "VolumeIOPSExceededCheck": 0.0,
            "VolumeThroughputExceededCheck": 0.0,
        }
        if query.metric == "BurstBalance":
            return self.balance(query.resource_id, t + 30)
        return per_period.get(query.metric, 0.0)

    def _instance(self, query: MetricQuery, t: float) -> float:
        mine = [v for v, (vol, _) in self.volumes.items() if vol.attached_to == query.resource_id]
        if query.metric in ("EBSIOBalance%", "EBSByteBalance%"):
            return 100.0
        # A period's sum over each of its minutes, as CloudWatch adds them up.
        minutes = [t + 60 * k for k in range(query.period_s // 60)]
        if query.metric == "EBSReadOps":
            return sum(self.iops(v, m) for v in mine for m in minutes) * 60
        if query.metric == "EBSReadBytes":
            return sum(self.iops(v, m) * self.volumes[v][1].io for v in mine for m in minutes) * 60
        return 0.0

    def analyzer(self, **config: object) -> tuple[Analyzer, FakeMetricData]:
        describer = FakeDescriber(
            found_volumes=[v for v, _ in self.volumes.values()], found_instances=self.instances
        )
        describer.types = {"m5.large": M5}
        metrics = FakeMetricData(self.value)
        analyzer = Analyzer(
            settings.load({"region": ["us-east-1"], **config}),
            rules.load(),
            connect=lambda r: Region(r, describer, metrics),
            adaptive=True,
        )
        return analyzer, metrics


def run(
    fleet: Fleet, minutes: int, start_at: float, steady: bool = True, **config: object
) -> tuple[Analyzer, int, dict]:
    """The daemon's loop over the fleet: a cycle a minute from `start_at` seconds, the alert
    book in between. The analyzer, the metrics requested, and when each alert first fired.
    `steady`: tell the analyzer which alerts fire steadily, as the daemon does."""
    analyzer, _ = fleet.analyzer(**config)
    book = AlertBook(4 * 3600, 300)
    requested = 0
    fired: dict[tuple[str, str], float] = {}
    for minute in range(minutes):
        now = START + timedelta(seconds=start_at + minute * 60 + 5)
        alerted = {(a.finding.resource.region, a.resource_id) for a in book}
        steady_now = book.steady(analyzer.rules.daily()) if steady else None
        result = analyzer.run(now, alerted, steady_now)
        requested += result.snapshot.stats.metrics_requested
        book.update(now, result.findings, result.pending)
        for alert in book.firing():
            fired.setdefault((alert.rule, alert.resource_id), (now - START).total_seconds())
    return analyzer, requested, fired


YACE_PER_VOLUME_HOUR = 420
"""YACE scraping 7 metrics a volume every minute."""


def mostly_quiet_fleet() -> Fleet:
    """300 volumes on 60 instances: a quiet root and three idle volumes each; of the 60 data
    volumes, 30 idle, 24 active (gp3 at a third of its IOPS), 6 hot (gp3 at 97 %)."""
    fleet = Fleet()
    for n in range(60):
        if n < 6:
            data = ("gp3", 500, Load(2_900))
        elif n < 30:
            data = ("gp3", 500, Load(1_000))
        else:
            data = ("gp2", 200, Load(0))
        idle = [("gp3", 100, Load(0))] * 3
        fleet.add_instance([("gp2", 8, Load(3)), *idle, data])
    return fleet


def test_a_mostly_quiet_fleet_costs_a_tenth_of_a_scraper() -> None:
    fleet = mostly_quiet_fleet()
    analyzer, requested, fired = run(fleet, minutes=20, start_at=4 * 3600.0)
    per_volume_hour = requested / (len(fleet.volumes) * 20 / 60)
    assert per_volume_hour <= YACE_PER_VOLUME_HOUR / 10, per_volume_hour
    tiers = analyzer.tiers()
    volumes = {rid: tier for (_, rid), tier in tiers.items() if rid.startswith("vol-")}
    counts = {t: sum(1 for tier in volumes.values() if tier is t) for t in Tier}
    assert counts == {Tier.IDLE: 270, Tier.ACTIVE: 24, Tier.HOT: 6}
    hot = {rid for rid, tier in volumes.items() if tier is Tier.HOT}
    assert {rid for (rule, rid) in fired if rule == "volume-iops-cap"} == hot


@pytest.mark.parametrize("size_gib", [1, 100])
@pytest.mark.parametrize("offset_s", [0, 150, 300, 450, 590])
def test_a_quiet_volume_that_starts_draining_is_warned_twice_as_early_as_an_alarm(
    size_gib: int, offset_s: int
) -> None:
    """The worst case: a full gp2 bucket on an idle volume that starts draining at 3,000 IOPS,
    at any moment of its idle cadence. A BurstBalance < 20 % alarm fires once 80 % of the
    bucket is gone; the forecast must come with at least twice its lead."""
    start_at = 4 * 3600.0
    since = start_at + 20 * 60 + offset_s  # idle for twenty minutes first
    fleet = Fleet()
    fleet.add_instance([("gp2", 8, Load(3)), ("gp2", size_gib, Load(3_000, since=since))])
    drainer = "vol-00001"
    volume, _ = fleet.volumes[drainer]
    envelope = volume_envelope(volume)
    assert envelope is not None and envelope.bucket is not None
    empty_after = GP2_BUCKET / (3_000 - envelope.bucket.baseline)
    alarm_lead = 0.2 * empty_after  # the alarm at its earliest: the moment 20 % is left
    _, _, fired = run(fleet, minutes=60, start_at=start_at)
    warned = fired[("gp2-burst-exhaustion", drainer)]
    lead = since + empty_after - warned
    assert lead >= 2 * alarm_lead, (lead, alarm_lead)


Transition = tuple[int, str, bool]
"""The minute an alert changed, its state then and whether it was clearing."""


@pytest.mark.parametrize("late_s", [0.0, 150.0])
@pytest.mark.parametrize("shift_s", [0.0, 20.0, 40.0])
def test_steady_alerts_are_read_less_often_and_change_at_most_two_minutes_later(
    late_s: float, shift_s: float
) -> None:
    """Four hot volumes, each alert fired:
    - a gp3 volume at its IOPS cap for 25 minutes, then idle: its alert clears;
    - a gp2 volume draining its credits: warned of, then empty, then critical;
    - a gp3 volume at its IOPS cap with a workload that stops while nothing else changes;
    - a gp3 volume at its IOPS cap and at 72 % of its throughput, which no alert names.
    The loads change at any second of a minute (`shift_s`), and CloudWatch's newest minute
    comes in time or after the settle delay (`late_s`). Every alert goes through the same
    states as when every hot volume is read every minute, each change at most two minutes
    later, none of them a clearing that was not; the steady volumes are read as their data
    goes stale (every second minute: a sum's newest minute is read once the next is there),
    the fourth every minute."""
    start_at = 4 * 3600.0
    fleet = Fleet(late_s=late_s)
    fleet.add_instance(
        [
            ("gp3", 500, Load(0, since=start_at + 25 * 60 + shift_s, before=2_900)),
            ("gp2", 100, Load(1_500, since=start_at - 40 * 60 + shift_s)),
            ("gp3", 500, Load(0, since=start_at + 45 * 60 + shift_s, before=2_900)),
            ("gp3", 500, Load(2_900, io=32 * KIB)),
        ]
    )

    def lifecycle(steady: bool) -> tuple[dict[tuple[str, str], list[Transition]], dict]:
        analyzer, metrics = fleet.analyzer()
        polls: dict[str, int] = {}
        answer = metrics.fetch

        def counted(queries, window):  # type: ignore[no-untyped-def]
            for rid in {q.resource_id for q in queries}:
                polls[rid] = polls.get(rid, 0) + 1
            return answer(queries, window)

        metrics.fetch = counted  # type: ignore[method-assign]
        book = AlertBook(4 * 3600, 300)
        changes: dict[tuple[str, str], list[Transition]] = {}
        daily = analyzer.rules.daily()
        for minute in range(75):
            now = START + timedelta(seconds=start_at + minute * 60 + 5)
            fleet.now = now
            if minute == 15:
                polls.clear()  # from here on, every alert has fired
            alerted = {(a.finding.resource.region, a.resource_id) for a in book}
            result = analyzer.run(now, alerted, book.steady(daily) if steady else None)
            book.update(now, result.findings, result.pending)
            for alert in book:
                seen = changes.setdefault((alert.rule, alert.resource_id), [])
                state = (alert.state.value, alert.absent_since is not None)
                if not seen or seen[-1][1:] != state:
                    seen.append((minute, *state))
        return changes, polls

    every_minute, polled_then = lifecycle(steady=False)
    steady, polled_now = lifecycle(steady=True)
    assert steady.keys() == every_minute.keys()
    for key, then in every_minute.items():
        now = steady[key]
        assert [t[1:] for t in now] == [t[1:] for t in then], key
        assert all(0 <= b[0] - a[0] <= 2 for a, b in zip(then, now, strict=True)), (key, then, now)
    assert {
        ("volume-iops-cap", "vol-00000"),
        ("gp2-burst-exhaustion", "vol-00001"),
        ("volume-burst-credits-exhausted", "vol-00001"),
        ("volume-iops-cap", "vol-00002"),
        ("volume-iops-cap", "vol-00003"),
    } <= steady.keys()
    assert [t[1] for t in steady[("volume-iops-cap", "vol-00000")]][-1] == "resolved"
    assert polled_then["vol-00002"] == polled_then["vol-00003"] == 60
    assert polled_now["vol-00003"] == 60  # its throughput is in play, and no alert names it
    assert polled_now["vol-00002"] <= (40 if late_s else 35)
    assert polled_now["vol-00001"] < polled_then["vol-00001"]


def test_a_budget_stretches_the_quiet_tiers_and_says_so() -> None:
    fleet = mostly_quiet_fleet()
    _, free, _ = run(fleet, minutes=30, start_at=4 * 3600.0)
    with capture_logs() as logs:
        analyzer, bounded, fired = run(fleet, minutes=30, start_at=4 * 3600.0, budget=20)
    # The budget weighs the hot volumes at the interval, steady or not: it binds once.
    [binding] = [e for e in logs if e["event"] == "budget.binding"]
    assert binding["idle_cadence_s"] > 600 and binding["active_cadence_s"] > 300
    assert bounded < free
    hot = {rid for (_, rid), tier in analyzer.tiers().items() if tier is Tier.HOT}
    assert {rid for (rule, rid) in fired if rule == "volume-iops-cap"} == hot


def test_a_long_forecast_horizon_keeps_its_buckets_hot_before_it_fires() -> None:
    """With a 6-hour horizon, a bucket 4 hours from empty is polled every interval, though
    neither its rate (67 % of the burst limit) nor its balance makes it hot."""
    from analyzer.analyze.kinds.credit_forecast import CreditForecast
    from tests.helpers import ruleset_of

    fleet = Fleet()
    # gp2 550 GiB: 1,650 IOPS baseline; at 2,000 IOPS a full bucket lasts 4.3 hours.
    fleet.add_instance([("gp2", 550, Load(2_000, since=4 * 3600 - 600))])
    analyzer, _ = fleet.analyzer()
    rule = CreditForecast(
        id="slow", resource_types=["volume"], severity="info", horizon="6h", rate_window="5m"
    )
    analyzer.rules = ruleset_of(rule)
    analyzer.run(START + timedelta(hours=4))
    assert analyzer.tiers()[("us-east-1", "vol-00000")] is Tier.HOT
    analyzer, _ = fleet.analyzer()
    analyzer.run(START + timedelta(hours=4))  # the shipped rules look an hour ahead
    assert analyzer.tiers()[("us-east-1", "vol-00000")] is Tier.ACTIVE


def test_calls_are_in_flight_together_and_taken_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first cycle over 300 volumes is several GetMetricData calls: they wait for CloudWatch
    side by side, and what they bring is the same as one call at a time would bring."""
    fleet = mostly_quiet_fleet()
    analyzer, metrics = fleet.analyzer()
    at_once = {"now": 0, "most": 0}
    lock = threading.Lock()
    answer = metrics.fetch

    def slow_fetch(queries, window):  # type: ignore[no-untyped-def]
        with lock:
            at_once["now"] += 1
            at_once["most"] = max(at_once["most"], at_once["now"])
        time.sleep(0.05)  # CloudWatch's answer on its way
        try:
            return answer(queries, window)
        finally:
            with lock:
                at_once["now"] -= 1

    metrics.fetch = slow_fetch  # type: ignore[method-assign]
    result = analyzer.run(START + timedelta(hours=4, seconds=5))
    assert at_once["most"] > 1
    monkeypatch.setattr(fetch, "FETCHES_IN_FLIGHT", 1)
    serial, _ = fleet.analyzer()
    again = serial.run(START + timedelta(hours=4, seconds=5))
    assert result.snapshot.stats.metrics_requested == again.snapshot.stats.metrics_requested
    assert [f.summary for f in result.findings] == [f.summary for f in again.findings]


def test_coverage_moving_plans_again_and_the_rates_come_back_when_it_ends() -> None:
    """A draining gp2 volume: found while the daemon reads it, left to its node once Prometheus
    says a node reads it (no rate asked, nothing found, a cheaper bill), and read again, its
    history backfilled, once the node stops answering."""
    from analyzer.collect.coverage import NodeCoverage
    from tests.prometheus_endpoint import vector

    fleet = Fleet()
    fleet.add_instance([("gp2", 100, Load(2_000))])
    analyzer, metrics = fleet.analyzer(node_coverage_url="http://prometheus:9090")
    answer = [vector()]
    analyzer.coverage.prometheus = NodeCoverage(
        "http://prometheus:9090", get=lambda url, timeout: (200, answer[0])
    )
    asked: list[MetricQuery] = []
    inner = metrics.fetch

    def counting(queries, window):  # type: ignore[no-untyped-def]
        asked.extend(queries)
        return inner(queries, window)

    metrics.fetch = counting  # type: ignore[method-assign]

    book = AlertBook(4 * 3600, 300)

    def cycle(minute: int):  # type: ignore[no-untyped-def]
        asked.clear()
        now = START + timedelta(seconds=3_600 + minute * 60 + 5)
        result = analyzer.run(now)
        book.update(now, result.findings, result.pending, result.unknown)
        return result

    first = cycle(0)
    found = {f.rule for f in first.findings + first.pending}
    assert found and all("burst" in rule for rule in found)
    assert first.projection is not None
    assert {a.rule for a in book if a.resource_id == "vol-00000"} == found
    answer[0] = vector("vol-00000")
    covered = cycle(1)
    assert {q.metric for q in asked if q.resource_id == "vol-00000"} <= {"VolumeStalledIOCheck"}
    assert not {q.metric for q in asked if q.resource_id == "i-0000"} & {"EBSReadOps"}
    assert covered.findings == [] and covered.pending == []
    # The alert it had is handed over to the node, which alerts on the same rates: resolved
    # here at once, saying why, rather than held (and repeated) beside the node's.
    left = [a for a in book if a.resource_id == "vol-00000" and a.state.value != "resolved"]
    assert left == []
    assert covered.projection is not None
    assert covered.projection.dollars() < first.projection.dollars()
    reading = covered.reading("us-east-1", "vol-00000")
    assert reading is not None and reading.status.value == "node_agent"
    answer[0] = vector()
    back = cycle(2)
    assert "VolumeReadOps" in {q.metric for q in asked if q.resource_id == "vol-00000"}
    assert {f.rule for f in back.findings + back.pending} == found


def test_an_instance_whose_volumes_are_all_hot_is_capped_on_their_sum_without_its_own_counts() -> (
    None
):
    """Six gp3 volumes at their 3,000 IOPS cap on an m5.large: 18,000 IOPS, 96 % of the
    18,750 its type allows. Every volume is hot, and so read every minute with its bytes: the
    instance's counts are theirs, not asked, and its cap is found all the same."""
    fleet = Fleet()
    fleet.add_instance([("gp3", 500, Load(3_000))] * 6)
    analyzer, metrics = fleet.analyzer()
    asked: list[str] = []
    value = metrics.value

    def answer(query: MetricQuery, stamp: datetime) -> float | None:
        asked.append(query.metric)
        return value(query, stamp)

    metrics.value = answer
    book = AlertBook(4 * 3600, 300)
    fired = set()
    for minute in range(25):
        now = START + timedelta(seconds=4 * 3600 + minute * 60 + 5)
        if minute == 5:
            asked.clear()  # the first cycles: before the instance is hot
        result = analyzer.run(now, {(a.finding.resource.region, a.resource_id) for a in book})
        book.update(now, result.findings, result.pending)
        fired |= {(a.rule, a.resource_id) for a in book.firing()}
    assert ("instance-iops-cap", "i-0000") in fired
    assert "EBSReadOps" not in asked and "VolumeReadOps" in asked
    tiers = {rid: tier for (_, rid), tier in analyzer.tiers().items()}
    assert tiers["i-0000"] is Tier.HOT


def _polls(fleet: Fleet, minutes: int, start_at: float) -> dict[str, list[tuple[int, str]]]:
    """The daemon's loop over the fleet: by resource id, the (minute, metric) of every query
    asked of it (one per metric a poll, whatever its datapoints)."""
    analyzer, metrics = fleet.analyzer()
    fetch = metrics.fetch
    minute = 0
    out: dict[str, list[tuple[int, str]]] = {}

    def recorded(queries, window):  # type: ignore[no-untyped-def]
        for q in queries:
            out.setdefault(q.resource_id, []).append((minute, q.metric))
        return fetch(queries, window)

    metrics.fetch = recorded  # type: ignore[method-assign]
    book = AlertBook(4 * 3600, 300)
    for minute in range(minutes):
        now = START + timedelta(seconds=start_at + minute * 60 + 5)
        result = analyzer.run(now, {(a.finding.resource.region, a.resource_id) for a in book})
        book.update(now, result.findings, result.pending)
    return out


def _minutes(polls: list[tuple[int, str]], metric: str, after: int = 0) -> list[int]:
    return sorted({m for m, name in polls if name == metric and m >= after})


def test_an_idle_instance_stands_guard_and_its_idle_volumes_are_read_hourly() -> None:
    """Six idle volumes on an m5.large: alone, each would be read every 10 minutes (its
    instance's bucket, full to 20 % at the burst rate in 24 minutes). The instance's own two
    counts, every 5 minutes, bound all six instead."""
    fleet = Fleet()
    fleet.add_instance([("gp2", 8, Load(3)), *[("gp3", 100, Load(0))] * 5])
    polls = _polls(fleet, minutes=50, start_at=4 * 3600.0)
    # The first cycle reads every volume, and no guard: it stands from the second on.
    assert _minutes(polls["i-0000"], "EBSReadOps") == _minutes(polls["i-0000"], "EBSReadOps", 1)
    guard = _minutes(polls["i-0000"], "EBSReadOps", after=1)
    assert 8 <= len(guard) <= 11, guard  # every 5 minutes, not every cycle
    assert len(_minutes(polls["i-0000"], "EBSIOBalance%", after=1)) <= 1
    for vid in (f"vol-{n:05d}" for n in range(6)):
        assert len(_minutes(polls[vid], "VolumeReadOps", after=1)) <= 1, (vid, polls[vid])
    # Six volumes at 12 metrics an hour each cost 72; guarded, 12 a volume-hour at most.
    after_first = sum(1 for found in polls.values() for m, _ in found if m >= 1)
    assert after_first / 6 / (49 / 60) <= 12


def test_a_load_on_a_guarded_volume_is_read_the_cycle_its_guard_shows_it() -> None:
    """A guarded volume that starts draining its bucket: its instance's counts show it at the
    guard's first read after, and every volume of the instance is read in that same cycle.
    The instance has basic monitoring: its counts come as five-minute sums, the one holding
    the drain's start complete five minutes at most after it, and in CloudWatch the settle
    delay after that; the guard reads them within five minutes. Twelve minutes at worst:
    what a volume read every 10 minutes gives."""
    start = 4 * 3600.0
    fleet = Fleet()
    late = Load(3_000, since=start + 17 * 60)
    fleet.add_instance([("gp2", 100, late), *[("gp3", 100, Load(0))] * 4])
    polls = _polls(fleet, minutes=40, start_at=start)
    guard = _minutes(polls["i-0000"], "EBSReadOps", after=1)
    seen = min(_minutes(polls["vol-00000"], "VolumeReadOps", after=17))
    assert seen in guard and seen - 17 <= 12, (seen, guard)
    assert not any(17 <= m < seen for m in _minutes(polls["vol-00001"], "VolumeReadOps"))
    for vid in (f"vol-{n:05d}" for n in range(5)):
        assert seen in _minutes(polls[vid], "VolumeReadOps"), vid
    # The drain is read every minute from then on, its bucket with it.
    assert _minutes(polls["vol-00000"], "BurstBalance", after=seen) == list(range(seen, 40))


def test_an_instance_whose_volumes_near_its_baseline_has_its_balances_read_every_minute() -> None:
    """Two gp3 volumes on an m5.large (3,600 IOPS baseline) with detailed monitoring: at
    1,000 IOPS together the instance's bucket cannot fall, and its balances are not read every
    cycle; once the second volume's load takes the sum to 3,400 IOPS, they are read from the
    cycle its volumes show it on, every minute (with basic monitoring, at every five-minute
    point AWS publishes)."""
    start = 4 * 3600.0
    fleet = Fleet()
    fleet.add_instance(
        [("gp3", 500, Load(1_000)), ("gp3", 500, Load(2_400, since=start + 20 * 60))],
        detailed=True,
    )
    polls = _polls(fleet, minutes=40, start_at=start)
    before = _minutes(polls["i-0000"], "EBSIOBalance%", after=1)
    before = [m for m in before if m < 20]
    assert len(before) <= 4, before
    shown = min(m for m in _minutes(polls["vol-00001"], "VolumeReadOps") if m >= 20 + 2)
    read = _minutes(polls["i-0000"], "EBSIOBalance%", after=shown)
    assert read[0] == shown and read == list(range(shown, 40)), (shown, read)
    # Its rates are its volumes' sum: its own counts are not asked for them.
    assert not _minutes(polls["i-0000"], "EBSReadOps", after=shown)


def test_a_volume_active_by_its_load_alone_is_read_at_its_idle_cadence() -> None:
    """A gp3 volume at a third of its IOPS alone on an m5.large: it has no bucket, and the
    instance's stays full, so nothing about it changes but its load, which can rise as fast as
    an idle volume's. It is read for the active tier's metrics at its idle cadence (15
    minutes: at its most it would take the instance's bucket hours to bring to 20 %), not
    every 5 minutes; once its load nears its cap it is read every minute."""
    start = 4 * 3600.0
    fleet = Fleet()
    fleet.add_instance([("gp3", 500, Load(2_950, before=1_000, since=start + 40 * 60))])
    polls = _polls(fleet, minutes=55, start_at=start)
    reads = [m for m in _minutes(polls["vol-00000"], "VolumeReadBytes", after=1) if m < 40]
    assert len(reads) == 3 and all(b - a == 15 for a, b in itertools.pairwise(reads)), reads
    capped = min(m for m in _minutes(polls["vol-00000"], "VolumeIOPSExceededCheck") if m > 40)
    assert capped - 40 <= 15, capped
    assert _minutes(polls["vol-00000"], "VolumeReadOps", after=capped) == list(range(capped, 55))


def test_a_guard_beside_a_busy_volume_takes_its_counts_off_and_sees_a_drain_in_time() -> None:
    """A busy gp3 volume (1,000 IOPS, read on its own) beside a gp2 volume and four idle gp3
    on an m5.large with detailed monitoring: the instance's counts stand guard over the five
    idle ones, read with the busy volume every 10 minutes (as often as the idle volumes would
    be read: the instance's bucket, full to 20 % at their burst in 24 minutes), the busy
    volume's counts taken off minute by minute. The gp2 volume starts draining 17 minutes in:
    it is read the cycle the guard shows it, no later than reading it every 10 minutes would
    have."""
    start = 4 * 3600.0
    fleet = Fleet()
    late = Load(3_000, since=start + 17 * 60)
    idle = [("gp3", 100, Load(0))] * 4
    fleet.add_instance([("gp3", 500, Load(1_000)), ("gp2", 100, late), *idle], detailed=True)
    polls = _polls(fleet, minutes=40, start_at=start)
    guard = _minutes(polls["i-0000"], "EBSReadOps", after=1)
    assert 3 <= len(guard) <= 5, guard
    assert all(b - a == 10 for a, b in itertools.pairwise(m for m in guard if m < 17)), guard
    # The busy volume is read with it: its counts cover the minutes the guard's do.
    assert set(guard) <= set(_minutes(polls["vol-00000"], "VolumeReadOps")), guard
    for vid in (f"vol-{n:05d}" for n in range(1, 6)):
        assert len([m for m in _minutes(polls[vid], "VolumeReadOps", after=1) if m < 17]) <= 1
    seen = min(_minutes(polls["vol-00001"], "VolumeReadOps", after=17))
    assert seen in guard and seen - 17 <= 12, (seen, guard)
    assert _minutes(polls["vol-00001"], "BurstBalance", after=seen) == list(range(seen, 40))
    # Busy alone, the instance's counts are the busy volume's: no guarded volume is read.
    quiet = Fleet()
    quiet.add_instance([("gp3", 500, Load(1_000)), *[("gp3", 100, Load(0))] * 5], detailed=True)
    polls = _polls(quiet, minutes=40, start_at=start)
    assert len(_minutes(polls["i-0000"], "EBSReadOps", after=1)) >= 3
    for vid in (f"vol-{n:05d}" for n in range(1, 6)):
        assert len(_minutes(polls[vid], "VolumeReadOps", after=1)) <= 1, polls[vid]


@pytest.mark.parametrize("detailed", [True, False])
def test_beside_a_busy_volume_a_drain_is_seen_no_later_than_reading_each_volume(
    detailed: bool,
) -> None:
    """Whichever minute a guarded gp2 volume starts draining, its instance's counts show it
    as soon as its own reads every 10 minutes would: at most 12 minutes in. With basic
    monitoring the counts are five-minute sums, and the guard is read as the one that ends
    its cadence lands."""
    start = 4 * 3600.0
    worst = 0
    for offset in range(15, 25):
        fleet = Fleet()
        late = Load(3_000, since=start + offset * 60)
        idle = [("gp3", 100, Load(0))] * 4
        fleet.add_instance(
            [("gp3", 500, Load(1_000)), ("gp2", 100, late), *idle], detailed=detailed
        )
        polls = _polls(fleet, minutes=offset + 16, start_at=start)
        assert len(_minutes(polls["i-0000"], "EBSReadOps", after=1)) >= 2
        seen = min(_minutes(polls["vol-00001"], "VolumeReadOps", after=offset))
        worst = max(worst, seen - offset)
    assert worst <= 12, worst


def test_a_burst_on_an_active_volume_is_read_in_full_the_minute_its_balance_falls() -> None:
    """A gp2 volume of 100 GiB a little above its baseline (active, its bucket at full: it
    drains it, slowly) is read every 5 minutes, and its BurstBalance alone every minute
    between. A burst to 3,000 IOPS 20 minutes in shows in the balance of its first minute:
    the volume is read in full that cycle, and every minute while the balance falls."""
    start = 4 * 3600.0
    fleet = Fleet()
    fleet.add_instance([("gp2", 100, Load(3_000, since=start + 20 * 60, before=320))])
    polls = _polls(fleet, minutes=30, start_at=start)
    rates = _minutes(polls["vol-00000"], "VolumeReadOps", after=1)
    before = [m for m in rates if m < 20]
    assert 3 <= len(before) <= 5, before
    assert _minutes(polls["vol-00000"], "BurstBalance", after=1) == list(range(1, 30))
    seen = min(m for m in rates if m >= 20)
    # The burst's first minute ends 21 minutes in, published at once; the cycle after reads it.
    assert seen == 21, rates
    assert [m for m in rates if m >= seen] == list(range(seen, 30))
