"""The report as a terminal shows it: the findings, then a table of the resources."""

from analyzer.deliver import report
from analyzer.model.metrics import Measure
from analyzer.model.resources import InstanceType
from analyzer.model.series import Status
from analyzer.model.units import MB
from tests.helpers import (
    analyze,
    instance_state,
    readings_of,
    series,
    shop_volume,
    snapshot_of,
    volume_state,
)


def shop():
    volume = shop_volume()
    instance = instance_state(
        InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB),
        {Measure.IOPS: series([1_500] * 30)},
        volume_ids=("vol-1",),
    )
    analysis = analyze(volume, instance)
    return analysis.snapshot, analysis.firing


def test_text_report_reads_at_a_glance():
    snap, findings = shop()
    text = report.to_text(snap.generated_at, readings_of(snap), findings)
    assert "FINDINGS (1)" in text
    assert "WARNING   gp2-burst-exhaustion" in text
    assert "BurstBalance 40% → 0 in 24 min at 1,500 IOPS; then throttled to 150 IOPS." in text
    assert "next: volume iops 3,000 IOPS on vol-1" in text
    assert "1,500 / 3,000 IOPS" in text
    assert "gp2 50 GiB" in text


def test_no_findings_says_so():
    snap = snapshot_of(volume_state("gp3", 100, {Measure.IOPS: series([10] * 30)}, iops=3_000))
    assert "No findings: no storage limit is holding back the 1 resource(s) with data." in (
        report.to_text(snap.generated_at, readings_of(snap), [])
    )


def test_no_findings_is_no_verdict_about_resources_without_data():
    quiet = volume_state("gp3", 100, {Measure.IOPS: series([10] * 30)}, iops=3_000)
    silent = volume_state("gp3", 100, {}, iops=3_000, volume_id="vol-2", status=Status.NO_DATA)
    failed = volume_state("gp3", 100, {}, volume_id="vol-3", status=Status.ERROR)
    snap = snapshot_of(quiet, silent, failed)
    text = report.to_text(snap.generated_at, readings_of(snap), [])
    assert (
        "No findings: no storage limit is holding back the 1 resource(s) with data. Nothing is "
        "said about the others: 1 had no data (detached, stopped or not reporting) and 1 could "
        "not be read (see below)." in text
    )
    snap = snapshot_of(silent)
    text = report.to_text(snap.generated_at, readings_of(snap), [])
    assert "No verdict: none of the 1 resource(s) could be judged: 1 had no data" in text
    assert "No findings" not in text


def test_a_credit_finding_on_a_refilling_bucket_says_when_its_credits_are_back():
    low = volume_state(
        "gp2",
        100,
        {
            Measure.IOPS: series([100] * 30),
            Measure.THROUGHPUT: series([100 * 16 * 1024] * 30),
            Measure.BURST_BALANCE: series([10.0] * 30),
        },
    )
    result = analyze(low)
    assert [f.bottleneck.value for f in result.firing] == ["burst_credits"]
    text = report.to_text(result.snapshot.generated_at, result.readings.all(), result.firing)
    assert "refilling: credits full again in 6 h 45 min at the present rate" in text
