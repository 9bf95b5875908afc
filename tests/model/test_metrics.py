"""The metric catalogue: statistics as DOMAIN.md gives them, and the one place names live."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from analyzer.model import metrics
from analyzer.model.metrics import CATALOGUE, Measure, Namespace, Part, When

CHECKS = (
    Measure.IOPS_EXCEEDED,
    Measure.THROUGHPUT_EXCEEDED,
    Measure.STALLED_IO,
    Measure.ATTACHED_EBS_FAILED,
)
AT_CAP = (Measure.IOPS_AT_CAP, Measure.THROUGHPUT_AT_CAP)
PACKAGE = Path(__file__).resolve().parents[2] / "analyzer"


def test_names_are_unique_within_a_namespace() -> None:
    keys = [(m.namespace, m.name) for m in CATALOGUE]
    assert len(keys) == len(set(keys))
    feeds = [(m.namespace, m.feeds) for m in CATALOGUE]
    assert len(feeds) == len(set(feeds)), "one metric per thing it feeds"


@pytest.mark.parametrize("metric", CATALOGUE, ids=lambda m: f"{m.namespace}:{m.name}")
def test_statistics_follow_the_domain(metric: metrics.Metric) -> None:
    """DOMAIN.md, "CloudWatch": rates from Sum, never Average (it means something else on
    Nitro); balances and queue length Average; the checks (exceeded, stalled I/O, attached
    EBS: 1 in a minute that failed) Maximum; AWS/RDS metrics
    are already per second, so their Average over a period is the rate."""
    if metric.namespace is Namespace.RDS:
        expected = "Average"
    elif isinstance(metric.feeds, Part) or metric.feeds in AT_CAP:
        # The agent's exceeded times: microseconds of each collection interval, summed.
        expected = "Sum"
    elif metric.feeds in CHECKS:
        expected = "Maximum"
    else:
        expected = "Average"
    assert metric.statistic == expected


def test_each_namespace_has_what_normalization_needs() -> None:
    for namespace in (Namespace.EBS, Namespace.EC2):
        for part in (Part.READ_OPS, Part.WRITE_OPS, Part.READ_BYTES, Part.WRITE_BYTES):
            assert metrics.feeding(namespace, part) is not None
    for part in (Part.READ_RATE, Part.WRITE_RATE, Part.READ_BYTE_RATE, Part.WRITE_BYTE_RATE):
        assert metrics.feeding(Namespace.RDS, part) is not None


def test_conditional_metrics() -> None:
    assert metrics.named("AWS/EBS", "BurstBalance").when is When.BUCKET
    assert metrics.named("AWS/EC2", "EBSIOBalance%").when is When.EBS_BURST
    assert metrics.named("AWS/EBS", "VolumeIOPSExceededCheck").when is When.NITRO


def test_no_other_module_spells_a_metric_name() -> None:
    names = {m.name for m in CATALOGUE}
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "metrics.py" and path.parent.name == "model":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.value}")
    assert found == []


def test_the_agent_metrics_stand_for_the_volume_metrics_in_their_units() -> None:
    """Amazon CloudWatch User Guide, "Collect Amazon EBS NVMe driver metrics": the agent's
    `diskio_ebs_*` metrics are the NVMe statistics' counters, the times "in microseconds"; its
    awsnvmereceiver publishes them as cumulative sums and its cumulativetodelta processor as
    their growth over each collection interval, unit None. Each stands for the AWS/EBS metric
    feeding the same part, in that metric's unit (seconds for times)."""
    agent = metrics.of(Namespace.AGENT)
    assert {m.name for m in agent} == {
        "diskio_ebs_total_read_ops",
        "diskio_ebs_total_write_ops",
        "diskio_ebs_total_read_bytes",
        "diskio_ebs_total_write_bytes",
        "diskio_ebs_total_read_time",
        "diskio_ebs_total_write_time",
        "diskio_ebs_volume_queue_length",
        "diskio_ebs_volume_performance_exceeded_iops",
        "diskio_ebs_volume_performance_exceeded_tp",
    }
    for m in agent:
        instead = metrics.named(Namespace.EBS, m.instead_of or "")
        assert metrics.agent_instead(instead.name) is m
        assert m.tier is instead.tier, m.name
        assert m.unit == "None"
        if isinstance(m.feeds, Part):
            assert m.feeds is instead.feeds
        if m.name.endswith(("_time", "_iops", "_tp")):
            assert m.scale == 1e-6, f"{m.name}: microseconds to seconds"
        else:
            assert m.scale == 1.0
    assert metrics.agent_instead("BurstBalance") is None
    assert metrics.agent_instead("VolumeStalledIOCheck") is None


def test_a_metric_s_dimensions_are_the_names_it_is_published_with() -> None:
    reads = metrics.named(Namespace.EBS, "VolumeReadOps")
    checked = metrics.named(Namespace.EBS, "VolumeIOPSExceededCheck")
    assert metrics.dimensions(reads, "vol-1", "i-1") == (("VolumeId", "vol-1"),)
    assert metrics.dimensions(checked, "vol-1", "i-1") == (
        ("InstanceId", "i-1"),
        ("VolumeId", "vol-1"),
    )
    assert metrics.dimensions(checked, "vol-1") is None
