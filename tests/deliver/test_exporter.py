from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from analyzer.analyze.alerts import Alert, AlertBook
from analyzer.deliver.deflated import Deflated
from analyzer.deliver.exporter import Gauge, Published, exposition_for, snapshot_families
from analyzer.deliver.telemetry import Telemetry
from analyzer.model.metrics import Measure
from analyzer.model.reading import Reading
from analyzer.model.resources import InstanceType
from analyzer.model.series import Status
from analyzer.model.state import FetchStats
from analyzer.model.units import KIB, MB
from tests.helpers import (
    T0,
    analyze,
    assert_golden,
    db_state,
    in_account,
    instance_state,
    promtool,
    series,
    shop_volume,
    volume_state,
)

M5 = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)


def replica():

    from analyzer.model.resources import DbInstance
    from analyzer.model.units import GIB

    r5 = InstanceType("r5.xlarge", 6_000, 18_750, 106.25 * MB, 593.75 * MB, 32 * GIB, nitro=True)
    db = DbInstance(
        "orders-replica",
        "us-east-1",
        "mysql",
        "db.r5.xlarge",
        "gp2",
        200,
        "available",
        class_info=r5,
    )
    measures = {
        Measure.IOPS: series([2_550] * 30),
        Measure.READ_IOPS: series([2_500] * 30),
        Measure.WRITE_IOPS: series([50] * 30),
        Measure.THROUGHPUT: series([2_550 * 16 * KIB] * 30),
        Measure.BURST_BALANCE: series([40.0] * 30),
        Measure.IO_BALANCE: series([100.0] * 30),
        Measure.BYTE_BALANCE: series([100.0] * 30),
        Measure.FREEABLE_MEMORY: series([1.5 * GIB] * 30),
    }
    return db_state(db, measures)


def published(include_spare=True):
    shop = shop_volume("vol-shop", "i-shop")
    spare = volume_state(
        "gp3",
        100,
        {},
        volume_id="vol-spare",
        attached_to=None,
        iops=3_000,
        throughput=125,
        status=Status.NO_DATA,
    )
    instance = instance_state(
        M5,
        {
            Measure.IOPS: series([1_500] * 30),
            Measure.THROUGHPUT: series([1_500 * 4 * KIB] * 30),
            Measure.IO_BALANCE: series([100] * 30),
            Measure.BYTE_BALANCE: series([100] * 30),
        },
        volume_ids=("vol-shop",),
        instance_id="i-shop",
    )
    states = [shop, instance, replica()] + ([spare] if include_spare else [])
    analysis = analyze(*states)
    snap = analysis.snapshot
    book = AlertBook(4 * 3600, 300)
    book.update(snap.generated_at, analysis.firing, [])
    return Shown.of(analysis.readings.all(), book.firing())


@dataclass(frozen=True)
class Shown:
    """What was published, with the readings and alerts it was published from (the daemon
    keeps only the text)."""

    readings: tuple[Reading, ...]
    firing: tuple[Alert, ...]
    exposition: Deflated

    @classmethod
    def of(cls, readings: Sequence[Reading], firing: Sequence[Alert]) -> Shown:
        return cls(tuple(readings), tuple(firing), Published.of(readings, firing).exposition)


def as_metric(family: Gauge) -> Metric:
    """A snapshot's family as prometheus_client holds one, for its own rendering."""
    metric = GaugeMetricFamily(family.name, family.documentation, labels=family.labels)
    for values, value in family.series:
        if value is not None:
            metric.add_metric(list(values), float(value))
    return metric


class _Families(Collector):
    def __init__(self, families: Sequence[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        yield from self._families


def exposition(current):
    """What /metrics sends, checked against prometheus_client's own rendering of the same
    series in one registry."""
    text, telemetry = exposition_for(lambda: current, process_metrics=False)
    registry = CollectorRegistry(auto_describe=True)
    shown = current or Shown.of((), ())
    families = snapshot_families(shown.readings, shown.firing)
    registry.register(_Families([as_metric(f) for f in families]))
    together = Telemetry(registry)
    stats = FetchStats(metrics_requested=25, datapoints=4_500)
    stats.requests["success"] = 1
    for t in (telemetry, together):
        t.wall_clock = (T0 + timedelta(minutes=32)).timestamp
        t.cycle_done(stats, 1.5, T0 + timedelta(minutes=32), backfill=True)
        t.notified("slack", "success")
    served = text().text().decode()
    assert served == generate_latest(registry).decode()
    return served


def test_the_snapshot_is_rendered_once_when_published():
    current = published()
    text, _ = exposition_for(lambda: current, process_metrics=False)
    assert text().text().startswith(current.exposition.text())
    assert b"ebs_analyzer_volume_iops{" in current.exposition.text()


def test_metrics_exposition_is_golden():
    assert_golden("metrics.prom", exposition(published()))


def test_promtool_accepts_the_exposition():
    result = promtool("check", "metrics", stdin=exposition(published()))
    assert result.returncode == 0, result.stdout + result.stderr


def test_series_of_resources_that_disappear_disappear():
    assert 'volume_id="vol-spare"' in exposition(published(include_spare=True))
    assert 'volume_id="vol-spare"' not in exposition(published(include_spare=False))


def test_before_the_first_cycle_only_help_and_type_lines():
    text = exposition(None)
    assert "ebs_analyzer_volume_iops" in text
    assert "ebs_analyzer_volume_iops{" not in text


@given(
    st.lists(
        st.tuples(
            st.text(max_size=12),
            st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(10**12), 10**12),
        ),
        max_size=8,
    )
)
def test_gauges_are_written_as_prometheus_client_writes_them(samples):
    """The snapshot's gauges are written without prometheus_client's per-sample checks; the
    text is the same, quotes, backslashes and newlines in label values included."""
    from prometheus_client import CollectorRegistry, generate_latest

    from analyzer.deliver.exporter import _Fixed, render

    family = GaugeMetricFamily("ebs_analyzer_x", 'a "doc"\\ with\nlines', labels=["z", "a"])
    for value, number in samples:
        family.add_metric([value, value[::-1]], float(number))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed([family]))
    assert render([family]) == generate_latest(registry)
    # The snapshot's own families, which hold each series' label values alone.
    series = [((value, value[::-1]), float(number)) for value, number in samples]
    gauge = Gauge("ebs_analyzer_x", family.documentation, ("z", "a"), series)
    assert render([gauge]) == generate_latest(registry)


def owned_published():
    """Two accounts, each with an RDS instance named alike, and a volume."""
    prod = in_account(replica(), "111111111111", "prod")
    staging = in_account(replica(), "222222222222", "staging")
    shop = in_account(shop_volume("vol-shop", "i-shop"), "111111111111", "prod")
    analysis = analyze(prod, staging, shop)
    book = AlertBook(4 * 3600, 300)
    book.update(analysis.snapshot.generated_at, analysis.firing, [])
    return Shown.of(analysis.readings.all(), book.firing())


def test_with_accounts_every_resource_series_and_finding_names_its_account():
    text = exposition(owned_published())
    samples = [line for line in text.splitlines() if line.startswith("ebs_analyzer_")]
    resource = [
        s
        for s in samples
        if s.startswith(("ebs_analyzer_volume", "ebs_analyzer_db_instance", "ebs_analyzer_finding"))
    ]
    assert resource
    assert all('account_id="' in s and 'account_name="' in s for s in resource)
    # The same RDS identifier in two accounts: two series, apart by their account.
    up = [s for s in resource if s.startswith("ebs_analyzer_db_instance_burst_balance_ratio{")]
    assert len(up) == 2
    assert {'account_name="prod"' in s for s in up} == {True, False}
    findings = [s for s in samples if s.startswith("ebs_analyzer_finding{")]
    assert len({s.split('account_id="')[1][:12] for s in findings}) == 2
    result = promtool("check", "metrics", stdin=text)
    assert result.returncode == 0, result.stdout + result.stderr


def test_without_accounts_no_series_has_an_account_label():
    text = exposition(published())
    assert "account_id" not in text and "ebs_analyzer_account_" not in text


def claimed_published():
    """A claim's volume, and a volume without one, each draining on its instance."""
    from tests.helpers import as_claim

    claim = as_claim(shop_volume("vol-claim", "i-shop"))
    plain = shop_volume("vol-shop", "i-other")
    analysis = analyze(claim, plain)
    book = AlertBook(4 * 3600, 300)
    book.update(analysis.snapshot.generated_at, analysis.firing, [])
    return Shown.of(analysis.readings.all(), book.firing())


def test_a_claims_volume_series_and_findings_carry_its_namespace_and_claim():
    text = exposition(claimed_published())
    samples = [line for line in text.splitlines() if line.startswith("ebs_analyzer_")]
    volume = [s for s in samples if s.startswith(("ebs_analyzer_volume", "ebs_analyzer_finding"))]
    claim = [s for s in volume if 'vol-claim"' in s]
    plain = [s for s in volume if 'vol-shop"' in s]
    assert claim and plain
    assert any(s.startswith("ebs_analyzer_finding{") for s in claim)
    assert any(s.startswith("ebs_analyzer_finding{") for s in plain)
    assert all(
        'namespace="db"' in s and 'persistentvolumeclaim="data-postgres-0"' in s for s in claim
    )
    # The others' are empty, which Prometheus reads as absent: no series of its own.
    assert all('namespace=""' in s and 'persistentvolumeclaim=""' in s for s in plain)
    assert all('kubernetes_cluster="prod"' in s for s in claim)
    assert all('kubernetes_cluster=""' in s for s in plain)
    assert not any("persistentvolumeclaim" in s for s in samples if "_instance_" in s)
    result = promtool("check", "metrics", stdin=text)
    assert result.returncode == 0, result.stdout + result.stderr


def test_without_claims_no_series_has_a_claim_label():
    text = exposition(published())
    assert "persistentvolumeclaim" not in text and "namespace=" not in text


def test_savings_are_gauges_with_the_fleets_total_and_how_far_they_are_read() -> None:
    from tests.deliver.test_savings import SPARE, _cut

    text = Published.of([], [], ([_cut(), SPARE], {"weighed": 2, "reading": 1})).exposition
    body = text.text().decode()
    assert (
        'ebs_analyzer_savings_monthly_dollars{kind="iops_above_need",namespace="db",'
        'persistentvolumeclaim="data-0",region="us-east-1",resource_id="vol-1"} 1066.0'
    ) in body
    assert 'namespace="",persistentvolumeclaim=""' in body  # the spare has no claim
    assert "ebs_analyzer_savings_fleet_monthly_dollars 1106.0" in body
    assert 'ebs_analyzer_savings_volumes{state="reading"} 1.0' in body
    assert 'ebs_analyzer_savings_volumes{state="unread"} 0.0' in body


def test_no_fleet_total_before_a_volume_is_weighed() -> None:
    body = Published.of([], [], ([], {"weighed": 0, "reading": 5})).exposition.text().decode()
    assert "\nebs_analyzer_savings_fleet_monthly_dollars " not in body
    assert 'ebs_analyzer_savings_volumes{state="reading"} 5.0' in body
