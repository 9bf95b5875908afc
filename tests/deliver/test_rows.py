"""The JSON report's rows: each resource's and each finding's, as SPEC.md's contract gives them."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta, timezone
from typing import Any

import pytest

from analyzer.analyze.reading import Readings
from analyzer.analyze.states import build
from analyzer.deliver.rows import resource_row, to_dict
from analyzer.model.findings import Bottleneck, Finding, Severity
from analyzer.model.metrics import Measure
from analyzer.model.resources import DbInstance, ResourceRef, ResourceType
from analyzer.model.state import Mismatch
from analyzer.model.units import KIB, Unit
from tests.fakes import M5, R5
from tests.helpers import (
    T0,
    analyze,
    db_state,
    instance_state,
    series,
    shop_volume,
    snapshot_of,
    volume_state,
)

COMMON = [
    "resource_type",
    "resource_id",
    "name",
    "region",
    "account_id",
    "account_name",
    "kubernetes",
    "attached_to",
    "iops",
    "throughput_bytes_per_second",
    "iops_limit",
    "throughput_limit_bytes_per_second",
    "burst_balance_percent",
    "seconds_to_empty",
    "seconds_to_full",
    "avg_io_size_bytes",
    "status",
    "data_age_seconds",
    "iops_utilization",
    "throughput_utilization",
    "state",
]
"""Every row's columns, in the order the row gives them."""
VOLUME = ["volume_type", "size_gib", "multi_attach", "attachments", "latency_seconds"]
VOLUME += ["initialization"]
INSTANCE = ["instance_type", "volume_ids", "detailed_monitoring", "node"]
DB = [
    "engine",
    "instance_class",
    "storage_type",
    "allocated_gib",
    "stripes",
    "additional_volumes",
    "storage_iops_limit",
    "storage_throughput_limit_bytes_per_second",
    "class_iops_limit",
    "class_throughput_limit_bytes_per_second",
    "class_burst_balance_percent",
    "dedicated_log_volume",
    "log_volume_iops",
    "log_volume_iops_limit",
    "freeable_memory_bytes",
    "memory_bytes",
    "latency_seconds",
]
OPTIONAL = ("limits_approximate", "model_mismatch", "error", "notes")
"""Keys a resource's row has only when they are set."""

NUMBER_OR_NULL = (
    "iops",
    "throughput_bytes_per_second",
    "iops_limit",
    "throughput_limit_bytes_per_second",
    "burst_balance_percent",
    "seconds_to_empty",
    "avg_io_size_bytes",
)
"""The resource columns SPEC.md gives as a number, or null."""
STATUSES = {"ok", "no_data", "stale", "model_mismatch", "error", "impaired", "initializing"}


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def shop_instance():
    return instance_state(M5, {Measure.IOPS: series([1_500] * 30)}, volume_ids=("vol-1",))


def replica_db():
    """Incident 3's replica: MySQL on gp2 100 GiB, db.r5.xlarge, its memory mostly in use."""
    db = DbInstance(
        "db-1", "us-east-1", "mysql", "db.r5.xlarge", "gp2", 100, "available", class_info=R5
    )
    return db_state(
        db,
        {
            Measure.IOPS: series([250] * 30),
            Measure.BURST_BALANCE: series([80.0] * 30),
            Measure.FREEABLE_MEMORY: series([1e9] * 30),
            Measure.LATENCY: series([0.002] * 30),
        },
    )


def row_of(state, *others) -> dict[str, Any]:
    snap = snapshot_of(state, *others)
    reading = Readings(snap)(state.ref.region, state.ref.resource_id)
    assert reading is not None
    return json.loads(json.dumps(resource_row(reading), allow_nan=False))


@pytest.mark.parametrize(
    ("make", "columns"),
    [
        (shop_volume, COMMON + VOLUME),
        (shop_instance, COMMON + INSTANCE),
        (replica_db, COMMON + DB),
    ],
    ids=["volume", "instance", "db_instance"],
)
def test_a_resource_row_has_its_columns_in_a_fixed_order(make, columns):
    assert list(row_of(make())) == columns


@pytest.mark.parametrize("make", [shop_volume, shop_instance, replica_db])
def test_a_resource_row_types_each_column_the_contract_names(make):
    row = row_of(make())
    assert row["resource_type"] in {"volume", "instance", "db_instance"}
    assert isinstance(row["resource_id"], str)
    assert row["region"] == "us-east-1"
    assert row["attached_to"] is None or isinstance(row["attached_to"], str)
    for key in NUMBER_OR_NULL:
        assert row[key] is None or is_number(row[key]), key
    assert row["status"] in STATUSES


def test_a_volume_row_reads_incident_one():
    row = row_of(shop_volume())
    assert row["resource_type"] == "volume"
    assert row["resource_id"] == "vol-1"
    assert row["attached_to"] == "i-1"
    assert row["iops"] == 1_500.0
    assert row["throughput_bytes_per_second"] == 1_500 * 4 * KIB
    # gp2 with credits left: the burst limit caps it now, not the 150 IOPS baseline.
    assert row["iops_limit"] == 3_000.0
    assert row["throughput_limit_bytes_per_second"] == 128 * 1024**2
    assert row["burst_balance_percent"] == 40.0
    assert row["seconds_to_empty"] == 1_450.0
    assert row["seconds_to_full"] is None
    assert row["avg_io_size_bytes"] == 4_096.0
    assert row["status"] == "ok"
    assert row["iops_utilization"] == 0.5
    assert (row["volume_type"], row["size_gib"], row["attachments"]) == ("gp2", 50, ["i-1"])
    assert row["initialization"] is None


def test_an_instance_row_is_attached_to_nothing_and_lists_its_volumes():
    row = row_of(shop_instance())
    assert row["attached_to"] is None
    assert row["iops_limit"] == 18_750
    assert row["burst_balance_percent"] is None
    assert row["volume_ids"] == ["vol-1"]
    assert row["instance_type"] == "m5.large"


def test_a_db_row_is_capped_by_the_lower_of_its_storage_and_its_class():
    row = row_of(replica_db())
    assert row["storage_iops_limit"] == 3_000.0
    assert row["class_iops_limit"] == 18_750
    assert row["iops_limit"] == 3_000.0
    assert row["memory_bytes"] == 32 * 1024**3
    assert row["freeable_memory_bytes"] == 1e9
    assert row["additional_volumes"] == []


def test_a_stale_row_withholds_its_values_and_says_its_age_and_limits():
    state = shop_volume()
    data_end = T0 + timedelta(minutes=40)  # the data stops 10 min before what was asked
    snap = build(
        data_end + timedelta(seconds=120),
        data_end,
        [state],
        asked_until={"us-east-1": {"vol-1": data_end}},
    )
    [reading] = Readings(snap).all()
    row = resource_row(reading)
    assert row["status"] == "stale"
    withheld = [
        "iops",
        "throughput_bytes_per_second",
        "burst_balance_percent",
        "seconds_to_empty",
        "seconds_to_full",
        "avg_io_size_bytes",
        "iops_utilization",
        "throughput_utilization",
        "latency_seconds",
    ]
    assert {key: row[key] for key in withheld} == dict.fromkeys(withheld)
    assert row["data_age_seconds"] == 600.0
    assert row["iops_limit"] == 3_000.0


def test_a_row_has_no_optional_key_that_is_not_set():
    assert not set(OPTIONAL) & set(row_of(shop_volume()))


@pytest.mark.parametrize(
    ("change", "key", "value"),
    [
        ({"error": "cloudwatch:GetMetricData: AccessDenied"}, "error", None),
        ({"notes": ("tagged for tests",)}, "notes", ["tagged for tests"]),
        (
            {"mismatches": (Mismatch(Bottleneck.VOLUME_IOPS, 3_000.0, 3_600.0, 300.0),)},
            "model_mismatch",
            [
                "the volume iops limit model disagrees with what CloudWatch shows: "
                "120% of it on average over 5 min"
            ],
        ),
    ],
)
def test_an_optional_key_appears_once_it_is_set(change, key, value):
    row = row_of(replace(shop_volume(), **change))
    expected = value if value is not None else change[key]
    assert row[key] == expected
    assert not (set(OPTIONAL) - {key}) & set(row)


def test_an_approximate_limit_model_is_flagged():
    row = row_of(volume_state("standard", 100, {Measure.IOPS: series([50] * 30)}))
    assert row["limits_approximate"] is True


def finding(resource_id: str, seconds_to_empty: float | None = None) -> Finding:
    return Finding(
        rule="volume-iops-saturation",
        severity=Severity.CRITICAL,
        resource=ResourceRef(ResourceType.VOLUME, resource_id, "us-east-1"),
        bottleneck=Bottleneck.VOLUME_IOPS,
        summary=f"{resource_id} pinned at 3,000 IOPS",
        observed=2_990.0,
        limit=3_000.0,
        unit=Unit.IOPS,
        seconds_to_empty=seconds_to_empty,
    )


FINDING_COLUMNS = [
    "rule",
    "severity",
    "resource_type",
    "resource_id",
    "region",
    "account_id",
    "account_name",
    "kubernetes",
    "bottleneck",
    "summary",
    "observed",
    "limit",
    "unit",
    "seconds_to_empty",
    "next_bottleneck",
    "evidence",
    "remedies",
]


def test_a_finding_row_follows_the_contract():
    analysis = analyze(shop_volume(), shop_instance())
    document = to_dict(analysis.snapshot.generated_at, analysis.readings.all(), analysis.firing)
    [row] = json.loads(json.dumps(document, allow_nan=False))["findings"]
    assert list(row) == FINDING_COLUMNS
    assert row["rule"] == "gp2-burst-exhaustion"
    assert row["severity"] == "warning"
    assert (row["resource_type"], row["resource_id"], row["region"]) == (
        "volume",
        "vol-1",
        "us-east-1",
    )
    assert row["bottleneck"] == "burst_credits"
    assert row["summary"].startswith("vol-1 (gp2 50 GiB on i-1): BurstBalance 40% → 0 in 24 min")
    assert (row["observed"], row["limit"], row["unit"]) == (1_500.0, 150.0, "iops")
    assert row["seconds_to_empty"] == 1_450.0
    assert row["next_bottleneck"] == {
        "bottleneck": "volume_iops",
        "limit": 3_000.0,
        "unit": "iops",
        "resource_id": "vol-1",
        "headroom": 2.0,
        "named": None,  # the id says it: no claim, no node group
    }
    assert isinstance(row["evidence"], dict)
    assert row["evidence"]["forecast"] in {"physics", "floor", "profile", "trend"}
    first = row["remedies"][0]
    assert list(first) == [
        "action",
        "monthly_cost",
        "monthly_cost_delta",
        "currency",
        "change",
        "changes",
        "past",
        "fix_id",
    ]
    assert first["past"] is None  # no history here: said, never guessed
    assert first["fix_id"] == "vol-1:type=gp3,iops=3000,throughput=125"
    assert (first["monthly_cost"], first["monthly_cost_delta"], first["currency"]) == (
        4.0,
        -1.0,
        "USD",
    )
    assert first["change"]["from"]["volume_type"] == "gp2"
    assert first["change"]["to"]["volume_type"] == "gp3"
    assert first["changes"] == [first["change"]]


def test_a_finding_row_without_a_next_limit_or_a_bucket_gives_null():
    [row] = to_dict(T0, [], [finding("vol-1")])["findings"]
    assert row["next_bottleneck"] is None
    assert row["seconds_to_empty"] is None
    assert row["evidence"] == {}
    assert row["remedies"] == []


def test_a_finding_row_gives_its_time_to_empty_to_a_tenth_of_a_second():
    [row] = to_dict(T0, [], [finding("vol-1", 1_620.04)])["findings"]
    assert row["seconds_to_empty"] == 1_620.0


def test_the_report_is_stamped_in_utc_and_sorts_resources_but_not_findings():
    east = timezone(timedelta(hours=2))
    db = replica_db()
    west = shop_volume("vol-9")
    west = replace(west, ref=replace(west.ref, region="eu-west-1"))
    snap = snapshot_of(db, shop_instance(), shop_volume("vol-2"), shop_volume(), west)
    found = [finding("vol-2"), finding("vol-1")]
    document = to_dict(T0.astimezone(east), Readings(snap).all(), found)
    assert document["generated_at"] == "2026-11-21T12:00:00Z"
    assert [(r["region"], r["resource_id"]) for r in document["resources"]] == [
        ("eu-west-1", "vol-9"),
        ("us-east-1", "vol-1"),
        ("us-east-1", "vol-2"),
        ("us-east-1", "i-1"),
        ("us-east-1", "db-1"),
    ]
    assert [f["resource_id"] for f in document["findings"]] == ["vol-2", "vol-1"]


KUBERNETES = {
    "cluster": "prod",
    "namespace": "db",
    "persistentvolumeclaim": "data-postgres-0",
    "persistentvolume": "pvc-3f2a",
}


def test_a_claims_volume_row_and_findings_carry_the_claim_and_name_it_first():
    from analyzer.deliver.records import FindingRecord
    from tests.helpers import as_claim

    claim = as_claim(shop_volume())
    assert row_of(claim)["kubernetes"] == KUBERNETES
    assert row_of(shop_volume())["kubernetes"] is None
    assert row_of(shop_instance())["kubernetes"] is None
    analysis = analyze(claim)
    report = json.loads(
        json.dumps(to_dict(T0, analysis.readings.all(), analysis.firing), allow_nan=False)
    )
    [finding] = report["findings"]
    assert finding["kubernetes"] == KUBERNETES
    assert finding["summary"].startswith("PVC db/data-postgres-0 (vol-1, gp2 50 GiB on i-1): ")
    # The state file keeps it, and gives it back.
    restored = FindingRecord.model_validate(FindingRecord.of(analysis.firing[0]).model_dump())
    assert restored.finding().resource.claim == claim.ref.claim
    [plain] = analyze(shop_volume()).firing
    assert FindingRecord.of(plain).model_dump()["kubernetes"] is None
