"""The central daemon beside node agents: the volumes a node reads (as a stand-in Prometheus
says) are asked of CloudWatch only what CloudWatch alone has, raise no finding here, and cost
nothing for their rates; when Prometheus fails, every volume is read from CloudWatch again."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from structlog.testing import capture_logs

from analyzer import settings
from analyzer.analyze import prices, rules
from analyzer.collect.boundaries import MetricData
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region, connect
from analyzer.collect.window import Window
from analyzer.live.cycle import Analyzer, CycleResult
from analyzer.model.metrics import Tier
from analyzer.model.series import Series
from analyzer.model.state import FetchStats
from analyzer.model.units import KIB
from analyzer.sim.workloads import Demand, steps
from tests.account import Account
from tests.prometheus_endpoint import PrometheusEndpoint

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
HEAVY_S = 3 * 3600
NOW = START + timedelta(seconds=HEAVY_S + 40 * 60 + 120)
BEYOND_NODE = {"VolumeStalledIOCheck", "StatusCheckFailed_AttachedEBS"}


@dataclass
class Counting:
    """CloudWatch, with every query it was asked kept."""

    inner: MetricData
    asked: list[MetricQuery] = field(default_factory=list)

    @property
    def region(self) -> str:
        return self.inner.region

    def fetch(
        self, queries: Sequence[MetricQuery], window: Window
    ) -> tuple[dict[MetricQuery, Series], FetchStats]:
        self.asked.extend(queries)
        return self.inner.fetch(queries, window)

    def of(self, *resource_ids: str) -> set[str]:
        return {q.metric for q in self.asked if q.resource_id in resource_ids}


@dataclass
class Fleet:
    account: Account
    node: str
    """The instance a node agent runs on: its volumes are covered."""
    covered: tuple[str, ...]
    other: str
    """An instance no node agent runs on."""
    uncovered: str
    """Its gp2 volume, draining as the covered one does."""


@pytest.fixture
def fleet(aws: None) -> Fleet:
    """Two m5.large, each with a gp2 50 GiB volume drained at 1,500 IOPS (incident 1)."""
    account = Account()
    demand = Demand(steps((0, 100), (HEAVY_S, 1_500)), io_size_bytes=4 * KIB, read_fraction=0.95)
    made = []
    for _ in range(2):
        instance = account.instance("m5.large")
        volume = account.volume("gp2", 50, instance)
        account.put(account.simulation(instance, {volume: demand}, START).run(3 * 60 + 40))
        made.append((instance, volume))
    (node, _), (other, uncovered) = made
    described = account.ec2.describe_volumes(
        Filters=[{"Name": "attachment.instance-id", "Values": [node]}]
    )["Volumes"]
    covered = tuple(v["VolumeId"] for v in described)
    return Fleet(account, node, covered, other, uncovered)


@pytest.fixture
def prometheus(fleet: Fleet) -> Iterator[PrometheusEndpoint]:
    server = PrometheusEndpoint(*fleet.covered).start()
    yield server
    server.stop()


def _analyzer(url: str | None, **more: object) -> tuple[Analyzer, Counting]:
    config = settings.load(
        {
            "region": ["us-east-1"],
            "prices": str(prices.DEMO),
            "pricing_api": False,
            "node_coverage_url": url,
            **more,
        }
    )
    counting: list[Counting] = []

    def region(name: str) -> Region:
        plain = connect(name)
        counting.append(Counting(plain.metrics))
        return Region(name, plain.describe, counting[-1])

    analyzer = Analyzer(config, rules.load(), connect=region)
    analyzer.refresh_inventory()
    return analyzer, counting[0]


def _findings(result: CycleResult, *resource_ids: str) -> set[str]:
    return {f.rule for f in result.findings if f.resource.resource_id in resource_ids}


def test_a_covered_volume_is_asked_only_what_cloudwatch_alone_has(
    fleet: Fleet, prometheus: PrometheusEndpoint
) -> None:
    assert len(fleet.covered) == 2  # the root volume and the drained gp2
    analyzer, cloudwatch = _analyzer(prometheus.root)
    result = analyzer.run(NOW)
    assert prometheus.queries  # asked each cycle
    assert cloudwatch.of(*fleet.covered) == {"VolumeStalledIOCheck"}
    # Every volume of the node's instance is covered: its EBS sums and checks too; its status
    # check and its own buckets (an m5.large bursts) only CloudWatch has.
    assert cloudwatch.of(fleet.node) == {
        "StatusCheckFailed_AttachedEBS",
        "EBSIOBalance%",
        "EBSByteBalance%",
    }
    assert {"VolumeReadOps", "BurstBalance"} <= cloudwatch.of(fleet.uncovered)
    assert "EBSReadOps" in cloudwatch.of(fleet.other)
    # The covered gp2 drains as the other does: only the uncovered one is found here.
    assert _findings(result, *fleet.covered, fleet.node) == set()
    assert _findings(result, fleet.uncovered) == {"gp2-burst-exhaustion"}
    for rid in (*fleet.covered, fleet.node):
        reading = result.reading("us-east-1", rid)
        assert reading is not None
        assert reading.status.value == "node_agent"
        assert any("node agent" in note for note in reading.notes)
    uncovered = result.reading("us-east-1", fleet.uncovered)
    assert uncovered is not None and uncovered.status.value == "ok"


def test_the_daemon_asks_covered_volumes_for_no_rate_whatever_their_tier(
    fleet: Fleet, prometheus: PrometheusEndpoint
) -> None:
    analyzer, cloudwatch = _analyzer(prometheus.root, polling="adaptive")
    analyzer.adaptive = True
    for minutes in range(3):
        analyzer.run(NOW + timedelta(minutes=minutes))
    assert cloudwatch.of(*fleet.covered) == {"VolumeStalledIOCheck"}
    assert cloudwatch.of(fleet.node) <= BEYOND_NODE | {"EBSIOBalance%", "EBSByteBalance%"}


@pytest.mark.parametrize("fault", ["down", "500", "garbage", "slow"])
def test_prometheus_failing_means_every_volume_from_cloudwatch_and_one_warning(
    fleet: Fleet, prometheus: PrometheusEndpoint, fault: str
) -> None:
    analyzer, cloudwatch = _analyzer(prometheus.root)
    assert analyzer.coverage.prometheus is not None
    analyzer.coverage.prometheus.timeout_s = 0.3
    analyzer.run(NOW)
    assert cloudwatch.of(*fleet.covered) == {"VolumeStalledIOCheck"}
    if fault == "down":
        prometheus.stop()
    elif fault == "500":
        prometheus.status = 500
    elif fault == "garbage":
        prometheus.body = b"{not json"
    else:
        prometheus.delay_s = 1.0
    cloudwatch.asked.clear()
    with capture_logs() as logs:
        result = analyzer.run(NOW + timedelta(minutes=1))
        again = analyzer.run(NOW + timedelta(minutes=2))
    assert {"VolumeReadOps", "BurstBalance"} <= cloudwatch.of(*fleet.covered)
    assert "EBSReadOps" in cloudwatch.of(fleet.node)
    assert [e["url"] for e in logs if e["event"] == "coverage.failed"] == [prometheus.root]
    for found in (result, again):
        assert "gp2-burst-exhaustion" in _findings(found, *fleet.covered)


def test_cost_counts_covered_rates_at_nothing(fleet: Fleet, prometheus: PrometheusEndpoint) -> None:
    alone, _ = _analyzer(None)
    covered, _ = _analyzer(prometheus.root)
    before = alone.costs()["us-east-1"]
    after = covered.costs()["us-east-1"]
    per_metric_idle = 30 * 86_400 / 600  # one metric every ten minutes for a month
    # All idle: two ops counts a volume before; after, the uncovered two volumes' counts, the
    # covered volumes' stalled checks and the node's instance's status check and byte
    # balance, which only CloudWatch has (what an idle uncovered instance is not asked). Its
    # gp2 volume does 3,000 IOPS at most, under its 3,600 baseline: its I/O balance cannot
    # fall, and is not asked.
    assert before["idle"].metrics[Tier.IDLE] == 4 * 2 * per_metric_idle
    assert after["idle"].metrics[Tier.IDLE] == (2 * 2 + 2 + 2) * per_metric_idle
    for column in ("hot", "full"):
        assert after[column].dollars() < 0.6 * before[column].dollars()
    # Every minute: the two stalled checks and the status check; the balances of an instance
    # without detailed monitoring every five.
    assert after["full"].dollars() == pytest.approx(
        _without_covered(alone, fleet) + (2 + 1 + 2 / 5) * 0.432, abs=0.01
    )


def _without_covered(analyzer: Analyzer, fleet: Fleet) -> float:
    """The full bill of the resources no node covers, every metric every minute."""
    from analyzer.collect import queries

    inv = analyzer.inventories()["us-east-1"]
    found = queries.for_inventory(inv, None)
    mine = (*fleet.covered, fleet.node)
    kept = [q for rid, qs in found.items() if rid not in mine for q in qs]
    # Each asked every one-minute interval, or every period where longer; $0.01 per 1,000.
    return sum(60 / max(60, q.period_s) for q in kept) * 43_200 * 1e-5


def test_the_cost_command_says_how_many_volumes_nodes_cover(
    fleet: Fleet,
    prometheus: PrometheusEndpoint,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from analyzer import cli

    monkeypatch.setenv("EBS_ANALYZER_NODE_COVERAGE_URL", prometheus.root)
    assert cli.main(["cost", "--region", "us-east-1"]) == 0
    text = capsys.readouterr().out
    assert "Node agents read 2 volume(s) of this inventory: their rates cost $0 here" in text
    prometheus.status = 503
    assert cli.main(["cost", "--region", "us-east-1"]) == 0
    assert "did not answer (HTTP 503)" in capsys.readouterr().out
