"""A finding as JSON both ways: the state file's record reads back as the finding it was, the
report's row leaves out what only the state file keeps, and a record written before findings
carried typed fields loads with them typed, or is refused by name."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from analyzer.deliver.records import (
    STORED_ONLY,
    FindingRecord,
    finding_row,
    finding_stored,
)
from analyzer.model.findings import (
    Bottleneck,
    Change,
    Credit,
    Finding,
    NextBottleneck,
    PastFit,
    Remedy,
    RemedyKind,
    Severity,
)
from analyzer.model.metrics import Measure
from analyzer.model.resources import ResourceRef, ResourceType
from analyzer.model.units import Unit

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "state_v1.json"

numbers = st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False)
maybe = st.none() | numbers
words = st.text(min_size=1, max_size=20)
json_values = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | numbers | words
configs = st.dictionaries(st.sampled_from(["volume_type", "size_gib", "iops", "tier"]), json_values)

refs = st.builds(
    ResourceRef,
    st.sampled_from(ResourceType),
    st.from_regex(r"(vol|i|db)-[0-9a-f]{1,8}", fullmatch=True),
    st.sampled_from(["us-east-1", "eu-west-1"]),
)
changes = st.builds(Change, st.sampled_from(ResourceType), words, configs, configs)
tenths = st.integers(0, 10**6).map(lambda n: n / 10)
pasts = st.builds(
    PastFit,
    tenths,
    st.integers(0, 20_160),
    st.integers(0, 14),
    st.none() | st.dates(),
    st.booleans(),
    st.none() | tenths,
)
remedies = st.builds(
    Remedy,
    words,
    maybe,
    st.none() | st.floats(-1e6, 1e6, allow_nan=False),
    st.sampled_from(["USD", "EUR"]),
    st.none() | changes,
    st.lists(changes, max_size=2).map(tuple),
    kind=st.none() | st.sampled_from(RemedyKind),
    past=st.none() | pasts,
).filter(lambda r: r.change is not None or not r.also)
# A record reads `also` back as its changes after the first: `also` without a `change` comes
# back empty. The advice builds `also` beside a volume's change only; here it does the same.
credits_ = st.builds(
    Credit,
    st.sampled_from([Measure.BURST_BALANCE, Measure.IO_BALANCE, Measure.BYTE_BALANCE]),
    balance_percent=maybe,
    holds_until_percent=maybe,
    empty=st.booleans(),
    rate_before_empty=maybe,
    charged_rate=maybe,
    horizon_s=maybe,
)
findings = st.builds(
    Finding,
    rule=words,
    severity=st.sampled_from(Severity),
    resource=refs,
    bottleneck=st.sampled_from(Bottleneck),
    summary=words,
    observed=numbers,
    limit=numbers,
    unit=st.sampled_from(Unit),
    seconds_to_empty=st.none() | numbers.map(lambda s: round(s, 1)),
    next_bottleneck=st.none()
    | st.builds(
        NextBottleneck, st.sampled_from(Bottleneck), numbers, st.sampled_from(Unit), words, maybe
    ),
    evidence=st.dictionaries(st.sampled_from(["datapoints", "forecast", "model"]), json_values),
    remedies=st.lists(remedies, max_size=3).map(tuple),
    window_s=numbers,
    credit=st.none() | credits_,
    sized_for=st.none() | st.dictionaries(st.sampled_from(["iops", "mib_per_second"]), numbers),
    held=st.none() | words,
    limits_since=st.none()
    | st.datetimes(datetime(2020, 1, 1), datetime(2040, 1, 1), timezones=st.just(UTC)),
)


def stored_and_read(f: Finding) -> Finding:
    """Through the state file's JSON text and back."""
    text = json.dumps(finding_stored(f), allow_nan=False)
    return FindingRecord.model_validate(json.loads(text)).finding()


@given(findings)
def test_a_stored_finding_reads_back_as_the_same_finding(f: Finding) -> None:
    assert stored_and_read(f) == f


@given(findings)
def test_the_report_row_leaves_out_what_only_the_state_file_keeps(f: Finding) -> None:
    row, stored = finding_row(f), finding_stored(f)
    assert not STORED_ONLY & set(row)
    assert set(stored) >= STORED_ONLY
    assert {k: v for k, v in stored.items() if k not in STORED_ONLY} | {
        "remedies": [{k: v for k, v in r.items() if k != "kind"} for r in stored["remedies"]]
    } == row
    assert all("kind" not in r for r in row["remedies"])
    assert [r["kind"] for r in stored["remedies"]] == [
        None if r.kind is None else r.kind.value for r in f.remedies
    ]


def test_a_remedy_stores_its_kind_and_every_change_it_makes() -> None:
    volume = Change(ResourceType.VOLUME, "vol-1", {"volume_type": "gp3"}, {"iops": 16_000})
    instance = Change(ResourceType.INSTANCE, "i-1", {"type": "r6i.8xlarge"}, {"type": "r6in"})
    f = Finding(
        "instance-throughput",
        Severity.WARNING,
        ResourceRef(ResourceType.INSTANCE, "i-1", "us-east-1"),
        Bottleneck.INSTANCE_THROUGHPUT,
        "pinned",
        2.5e9,
        2.5e9,
        Unit.BYTES_PER_SECOND,
        remedies=(
            Remedy("both", 900.0, 300.0, change=volume, also=(instance,), kind=RemedyKind.BOTH),
        ),
    )
    [stored] = finding_stored(f)["remedies"]
    assert stored["kind"] == "both"
    assert [c["resource_id"] for c in stored["changes"]] == ["vol-1", "i-1"]
    assert stored["change"] == stored["changes"][0]
    assert stored_and_read(f).remedies[0].changes == (volume, instance)


def test_a_fix_carries_its_past_as_the_report_gives_it() -> None:
    past = PastFit(14.0, 37, 3, date(2026, 11, 20), floor=True, bought_s=840.0)
    f = Finding(
        "gp2-burst-exhaustion",
        Severity.WARNING,
        ResourceRef(ResourceType.VOLUME, "vol-1", "us-east-1"),
        Bottleneck.BURST_CREDITS,
        "draining",
        1_200.0,
        240.0,
        Unit.IOPS,
        remedies=(Remedy("Grow to 120 GiB", 12.0, 4.0, kind=RemedyKind.STOPGAP, past=past),),
    )
    [row] = finding_row(f)["remedies"]
    assert row["past"] == {
        "days": 14.0,
        "minutes_limited": 37,
        "worst_day": "2026-11-20",
        "floor": True,
        "limited_days": 3,
        "days_spanned": 0,  # not given: read as the fourteen whole days
        "bought_seconds": 840.0,
    }
    assert stored_and_read(f).remedies[0].past == past
    assert f.remedies[0].text() == (
        "Grow to 120 GiB: +$4.00/month; would have limited at least 37 min, on 3 of 14 days "
        "(a floor: held-back demand counted at its rate before), buying 14 min on the "
        "worst day"
    )


def golden_finding() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))["alerts"][0]["finding"]


EARLIER = {
    "holds_until_percent": 30.0,
    "holds_balance": "burst_balance",
    "pinned_datapoints": 3,
    "fix_sized_for": {"iops": 1_800.0, "mib_per_second": 7.03},
    "held_summary": "vol-1: BurstBalance 25% → 0 in 9 min",
    "rate_before_empty": 1_650.0,
    "horizon_seconds": 3_600.0,
}
"""What a daemon before typed fields wrote into a credit finding's evidence."""


def test_the_golden_file_written_before_typed_fields_loads() -> None:
    f = FindingRecord.model_validate(golden_finding()).finding()
    assert f.window_s == 300.0
    assert f.credit is None  # it named no balance measure, so there is no bucket to type
    assert f.sized_for is None and f.held is None
    assert [r.kind for r in f.remedies] == [None, None]
    assert f.remedies[0].cost_text() == "−$1.00/month"


def test_an_earlier_record_loads_its_evidence_typed() -> None:
    record = golden_finding()
    record["evidence"] |= EARLIER
    f = FindingRecord.model_validate(record).finding()
    assert f.credit == Credit(
        Measure.BURST_BALANCE,
        balance_percent=40.0,
        holds_until_percent=30.0,
        empty=True,
        rate_before_empty=1_650.0,
        charged_rate=1_500.0,
        horizon_s=3_600.0,
    )
    assert f.sized_for == {"iops": 1_800.0, "mib_per_second": 7.03}
    assert f.held == "vol-1: BurstBalance 25% → 0 in 9 min"
    assert f.window_s == 300.0
    assert "held_summary" not in f.evidence  # now a field of its own


def test_an_earlier_record_without_pinned_datapoints_is_not_empty() -> None:
    record = golden_finding()
    record["evidence"] |= {"holds_balance": "io_balance", "balance_percent": 12.5}
    f = FindingRecord.model_validate(record).finding()
    assert f.credit is not None
    assert (f.credit.balance, f.credit.empty, f.credit.balance_percent) == (
        Measure.IO_BALANCE,
        False,
        12.5,
    )


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("holds_until_percent", "30", "holds_until_percent is not a number: str"),
        ("holds_until_percent", True, "holds_until_percent is not a number: bool"),
        ("holds_balance", 3, "holds_balance is not a string: int"),
        ("balance_percent", [40], "balance_percent is not a number: list"),
        ("held_summary", {"text": "x"}, "held_summary is not a string: dict"),
        ("fix_sized_for", {"iops": "1800"}, "fix_sized_for is not an object of numbers: dict"),
        ("fix_sized_for", [1_800.0], "fix_sized_for is not an object of numbers: list"),
        ("window_seconds", "300", "window_seconds is not a number: str"),
        ("rate_before_empty", False, "rate_before_empty is not a number: bool"),
        ("charged_rate", "1500", "charged_rate is not a number: str"),
        ("horizon_seconds", "1h", "horizon_seconds is not a number: str"),
    ],
)
def test_a_wrong_type_in_earlier_evidence_is_refused_by_its_key(key, value, message) -> None:
    record = golden_finding()
    record["evidence"][key] = value
    with pytest.raises(ValidationError, match=message):
        FindingRecord.model_validate(record)
