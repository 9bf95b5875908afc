import json

import pytest

from analyzer.deliver import report
from analyzer.model.metrics import Measure
from tests.helpers import (
    readings_of,
    series,
    snapshot_of,
    volume_state,
)
from tests.helpers import (
    shop_analysis as shop,
)

RESOURCE_KEYS = {
    "resource_type",
    "resource_id",
    "region",
    "account_id",
    "account_name",
    "attached_to",
    "iops",
    "throughput_bytes_per_second",
    "iops_limit",
    "throughput_limit_bytes_per_second",
    "burst_balance_percent",
    "seconds_to_empty",
    "avg_io_size_bytes",
    "status",
}
FINDING_KEYS = {
    "rule",
    "severity",
    "resource_type",
    "resource_id",
    "region",
    "account_id",
    "account_name",
    "bottleneck",
    "summary",
    "observed",
    "limit",
    "unit",
    "seconds_to_empty",
    "next_bottleneck",
    "evidence",
}


def test_json_report_follows_the_contract():
    snap, findings = shop()
    data = json.loads(report.to_json(snap, readings_of(snap), findings))
    assert data["generated_at"].endswith("Z")
    assert {r["resource_type"] for r in data["resources"]} == {"volume", "instance"}
    for resource in data["resources"]:
        assert resource.keys() >= RESOURCE_KEYS
        assert resource["status"] in ("ok", "no_data", "error")
    volume = data["resources"][0]
    assert volume["attached_to"] == "i-1"
    assert volume["iops"] == 1_500
    assert volume["iops_limit"] == 3_000
    assert volume["burst_balance_percent"] == 40
    assert volume["avg_io_size_bytes"] == 4096
    assert volume["seconds_to_empty"] == 1_450
    [finding] = data["findings"]
    assert finding.keys() >= FINDING_KEYS
    assert finding["rule"] == "gp2-burst-exhaustion"
    assert finding["next_bottleneck"]["bottleneck"] == "volume_iops"
    assert {"bottleneck", "limit", "unit"} <= finding["next_bottleneck"].keys()


def test_a_refilling_bucket_says_when_it_is_full_again():
    refilling = volume_state(
        "gp2",
        100,
        {
            Measure.IOPS: series([100] * 30),
            Measure.THROUGHPUT: series([100 * 16 * 1024] * 30),
            Measure.BURST_BALANCE: series([40.0] * 30),
        },
    )
    snap = snapshot_of(refilling)
    [row] = report.to_dict(snap.generated_at, readings_of(snap), [])["resources"]
    assert row["seconds_to_empty"] is None
    assert row["seconds_to_full"] == pytest.approx(16_200, abs=1)
    assert "full in 4 h 30 min" in report.to_text(snap.generated_at, readings_of(snap), [])
