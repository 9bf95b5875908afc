"""What a finding promises: whose limit it names, how its fixes and next limit read, its key."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from analyzer.model.findings import (
    Bottleneck,
    Change,
    Credit,
    Finding,
    NextBottleneck,
    Remedy,
    RemedyKind,
    Severity,
)
from analyzer.model.metrics import Measure
from analyzer.model.resources import ResourceRef, ResourceType
from analyzer.model.units import MIB, Unit

VOLUME, INSTANCE, DB = ResourceType.VOLUME, ResourceType.INSTANCE, ResourceType.DB_INSTANCE


@pytest.mark.parametrize(
    ("bottleneck", "owner", "credits"),
    [
        (Bottleneck.BURST_CREDITS, VOLUME, True),
        (Bottleneck.VOLUME_IOPS, VOLUME, False),
        (Bottleneck.VOLUME_THROUGHPUT, VOLUME, False),
        (Bottleneck.INSTANCE_IOPS, INSTANCE, False),
        (Bottleneck.INSTANCE_THROUGHPUT, INSTANCE, False),
        (Bottleneck.INSTANCE_BURST_CREDITS, INSTANCE, True),
        (Bottleneck.MEMORY, VOLUME, False),
        (Bottleneck.LOG_VOLUME_IOPS, VOLUME, False),
        (Bottleneck.LOG_VOLUME_THROUGHPUT, VOLUME, False),
        (Bottleneck.IMPAIRED, VOLUME, False),
    ],
)
def test_a_bottleneck_names_whose_limit_it_is_and_whether_it_is_a_bucket(
    bottleneck, owner, credits
):
    assert bottleneck.owner is owner
    assert bottleneck.is_credits is credits


def test_severities_rank_info_below_warning_below_critical():
    assert sorted(Severity, key=lambda s: s.rank) == [
        Severity.INFO,
        Severity.WARNING,
        Severity.CRITICAL,
    ]


@pytest.mark.parametrize(
    ("cost", "delta", "currency", "text"),
    [
        (17.5, 12.5, "USD", "+$12.50/month"),
        (4.0, -1.0, "USD", "−$1.00/month"),
        (5.0, 0.0, "USD", "±$0.00/month"),
        (2_439.31, None, "USD", "$2,439.31/month"),
        (None, None, "USD", "unpriced"),
        (None, 1_234.5, "EUR", "+EUR 1,234.50/month"),
    ],
)
def test_a_remedy_says_its_cost_against_today_or_unpriced(cost, delta, currency, text):
    remedy = Remedy("Move to gp3", cost, delta, currency, kind=RemedyKind.MODIFY)
    assert remedy.cost_text() == text
    assert remedy.text() == f"Move to gp3: {text}"


def test_a_remedy_lists_its_change_first_then_the_others():
    volume = Change(VOLUME, "vol-1", {"volume_type": "gp3"}, {"volume_type": "io2"})
    instance = Change(INSTANCE, "i-1", {"type": "r6i.8xlarge"}, {"type": "r6in.8xlarge"})
    joint = Remedy("both", change=volume, also=(instance,), kind=RemedyKind.BOTH)
    assert joint.changes == (volume, instance)
    assert Remedy("in words only", kind=None).changes == ()


def test_a_change_reads_as_from_and_to_and_keeps_no_reference_to_its_input():
    before = {"size_gib": 100}
    change = Change(VOLUME, "vol-1", before, {"size_gib": 250})
    before["size_gib"] = 1
    assert change.as_dict() == {
        "resource_type": "volume",
        "resource_id": "vol-1",
        "from": {"size_gib": 100},
        "to": {"size_gib": 250},
    }
    with pytest.raises(TypeError):
        change.after["size_gib"] = 500  # type: ignore[index]


@pytest.mark.parametrize(
    ("nxt", "text"),
    [
        (
            NextBottleneck(Bottleneck.VOLUME_IOPS, 3_000, Unit.IOPS, "vol-1", 2.0),
            "volume iops 3,000 IOPS on vol-1 (at 2.00× today's rate)",
        ),
        (
            NextBottleneck(
                Bottleneck.INSTANCE_THROUGHPUT, 2.5e9, Unit.BYTES_PER_SECOND, "i-1", None
            ),
            "instance throughput 2,500 MB/s on i-1",
        ),
        (
            NextBottleneck(
                Bottleneck.VOLUME_THROUGHPUT, 1_000 * MIB, Unit.BYTES_PER_SECOND, "vol-1", 1.25
            ),
            "volume throughput 1,000 MiB/s on vol-1 (at 1.25× today's rate)",
        ),
    ],
)
def test_the_next_bottleneck_reads_in_its_own_unit(nxt, text):
    assert nxt.text() == text


def finding(kind: ResourceType, bottleneck: Bottleneck, **more) -> Finding:
    return Finding(
        rule="a-rule",
        severity=Severity.WARNING,
        resource=ResourceRef(kind, "res-1", "eu-west-1"),
        bottleneck=bottleneck,
        summary="s",
        observed=1.0,
        limit=2.0,
        unit=Unit.IOPS,
        **more,
    )


@pytest.mark.parametrize(
    ("kind", "bottleneck", "owner"),
    [
        (VOLUME, Bottleneck.VOLUME_THROUGHPUT, VOLUME),
        (INSTANCE, Bottleneck.INSTANCE_THROUGHPUT, INSTANCE),
        (INSTANCE, Bottleneck.VOLUME_THROUGHPUT, INSTANCE),
        (DB, Bottleneck.VOLUME_THROUGHPUT, VOLUME),
        (DB, Bottleneck.INSTANCE_THROUGHPUT, INSTANCE),
    ],
)
def test_a_finding_reads_its_rates_in_the_unit_of_its_owner(kind, bottleneck, owner):
    assert finding(kind, bottleneck).owner is owner


def test_a_finding_is_keyed_by_rule_region_and_resource():
    f = finding(VOLUME, Bottleneck.BURST_CREDITS)
    assert f.key == ("a-rule", "eu-west-1", "res-1")
    assert f.is_credits


def test_the_rate_before_empty_comes_from_the_bucket():
    bucket = Credit(Measure.BURST_BALANCE, empty=True, rate_before_empty=1_650.0)
    assert finding(VOLUME, Bottleneck.BURST_CREDITS, credit=bucket).rate_before_empty == 1_650.0
    assert finding(VOLUME, Bottleneck.VOLUME_IOPS).rate_before_empty is None


def test_a_finding_is_frozen_with_its_evidence_and_sizing():
    evidence, sized = {"forecast": "physics"}, {"iops": 1_800.0}
    f = finding(VOLUME, Bottleneck.BURST_CREDITS, evidence=evidence, sized_for=sized)
    evidence["forecast"], sized["iops"] = "trend", 1.0
    assert f.evidence == {"forecast": "physics"}
    assert f.sized_for == {"iops": 1_800.0}
    with pytest.raises(TypeError):
        f.evidence["forecast"] = "profile"  # type: ignore[index]
    with pytest.raises(TypeError):
        f.sized_for["iops"] = 2.0  # type: ignore[index]
    with pytest.raises(FrozenInstanceError):
        f.summary = "changed"  # type: ignore[misc]


def test_a_finding_replaced_keeps_its_frozen_evidence_rather_than_a_copy():
    """Each cycle puts the alerts' findings through `replace` a few times; each copy of their
    mappings stayed alive in the alert book."""
    from dataclasses import replace

    f = finding(VOLUME, Bottleneck.BURST_CREDITS, evidence={"forecast": "physics"})
    again = replace(f, summary="again")
    assert again.evidence is f.evidence
    bare = finding(VOLUME, Bottleneck.VOLUME_IOPS)
    assert bare.evidence == {} and bare.evidence is finding(VOLUME, Bottleneck.VOLUME_IOPS).evidence


def test_a_fix_s_past_says_held_plainly_and_limited_as_a_floor() -> None:
    from datetime import date

    from analyzer.model.findings import PastFit

    held = PastFit(14.0, 0, floor=True)
    assert held.text() == (
        "would have limited 0 min of the last 14 days (held-back demand counted at its rate before)"
    )
    limited = PastFit(14.0, 37, 3, date(2026, 11, 20), floor=True)
    assert limited.text() == (
        "would have limited at least 37 min, on 3 of 14 days (a floor: held-back demand "
        "counted at its rate before)"
    )
    assert PastFit(4 / 24, 12, 1, date(2026, 11, 20)).text() == (
        "would have limited 12 min of the last 4 h"
    )


GP2_50 = {"volume_type": "gp2", "size_gib": 50, "iops": 150, "throughput_mibps": None}


@pytest.mark.parametrize(
    ("change", "kind", "expected"),
    [
        (
            Change(
                VOLUME,
                "vol-1",
                GP2_50,
                {
                    **GP2_50,
                    "volume_type": "gp3",
                    "iops": 3000,
                    "throughput_mibps": 125,
                    "iops_limit": 3000,
                },
            ),
            RemedyKind.MODIFY,
            "vol-1:type=gp3,iops=3000,throughput=125",
        ),
        (
            Change(VOLUME, "vol-1", GP2_50, {**GP2_50, "size_gib": 600, "iops": None}),
            RemedyKind.MODIFY,
            "vol-1:type=gp2,size=600",
        ),
        (
            Change(VOLUME, "vol-1", GP2_50, {**GP2_50, "size_gib": 51, "iops": None}),
            RemedyKind.STOPGAP,
            "vol-1:type=gp2,size=51",
        ),
        (
            Change(
                VOLUME,
                "vol-1",
                GP2_50,
                {"volume_type": "io2", "size_gib": 50, "iops": 32000, "throughput_mibps": None},
            ),
            RemedyKind.PAST_CEILING,
            "vol-1:type=io2,iops=32000",
        ),
        (
            Change(
                DB,
                "orders",
                {"storage_type": "gp2", "allocated_gib": 200},
                {"storage_type": "gp3", "allocated_gib": 200},
            ),
            RemedyKind.MODIFY,
            "orders:type=gp3",
        ),
        (
            Change(
                DB,
                "orders",
                {"storage_type": "gp2", "allocated_gib": 200},
                {"storage_type": "gp2", "allocated_gib": 1020},
            ),
            RemedyKind.MODIFY,
            "orders:type=gp2,size=1020",
        ),
        # Not applied in place: another type or class, a striped set.
        (
            Change(INSTANCE, "i-1", {"instance_type": "m5.large"}, {"instance_type": "m5.xlarge"}),
            RemedyKind.INSTANCE,
            None,
        ),
        (
            Change(
                DB, "orders", {"instance_class": "db.r5.large"}, {"instance_class": "db.r5.2xlarge"}
            ),
            RemedyKind.INSTANCE,
            None,
        ),
        (
            Change(VOLUME, "vol-1", GP2_50, {**GP2_50, "volume_type": "gp3", "volumes": 2}),
            RemedyKind.STRIPE,
            None,
        ),
    ],
)
def test_a_fix_applied_in_place_is_named_as_what_if_takes_it(change, kind, expected):
    remedy = Remedy("a fix", change=change, kind=kind)
    assert remedy.fix_id == expected
    # The same target, sized again in a later cycle, is the same fix.
    again = Remedy(
        "a fix, worded anew",
        9.0,
        1.0,
        change=Change(
            change.resource_type, change.resource_id, dict(change.before), dict(change.after)
        ),
        kind=kind,
    )
    assert again.fix_id == expected


def test_a_joint_fix_or_one_in_words_or_read_back_without_its_kind_has_no_fix_id():
    volume = Change(VOLUME, "vol-1", GP2_50, {**GP2_50, "volume_type": "gp3"})
    instance = Change(
        INSTANCE, "i-1", {"instance_type": "m5.large"}, {"instance_type": "m5.2xlarge"}
    )
    assert Remedy("both", change=volume, also=(instance,), kind=RemedyKind.BOTH).fix_id is None
    assert Remedy("in words", kind=RemedyKind.MODIFY).fix_id is None
    assert Remedy("old file", change=volume, kind=None).fix_id is None
