"""The savings table and its JSON (SPEC.md, Savings): sorted by the caller, the total, each
cut's peaks against the target's limits, an unattached volume's commands."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from analyzer.analyze.savings import Peak, Saving
from analyzer.deliver import savings as shown
from analyzer.model.resources import ResourceType
from analyzer.model.units import MIB
from tests.helpers import T0


def _cut(alternative: Saving | None = None) -> Saving:
    return Saving(
        ResourceType.VOLUME,
        "vol-1",
        "iops_above_need",
        {"volume_type": "io2", "size_gib": 500, "iops": 20_000},
        {"volume_type": "io2", "size_gib": 500, "iops": 3_600},
        "vol-1:iops=3600",
        1_362.5,
        1_066.0,
        455.0,
        3_600,
        {
            "iops": Peak(3_000.0, T0 - timedelta(days=200), 3_600),
            "throughput": Peak(47 * MIB, T0, 60),
        },
        {"iops": 3_600.0, "throughput": 921.6 * MIB},
        1.2,
        alternative=alternative,
        labels={"region": "us-east-1", "claim": "db/data-0"},
    )


SPARE = Saving(
    ResourceType.VOLUME,
    "vol-9",
    "unattached",
    {"volume_type": "gp3", "size_gib": 500, "throughput_mibps": 125},
    None,
    None,
    40.0,
    40.0,
    41.0,
    None,
    {},
    {},
    0.0,
    commands=(
        "aws ec2 create-snapshot --volume-id vol-9",
        "aws ec2 delete-volume --volume-id vol-9",
    ),
)


def test_the_document_has_the_fields_spec_names_and_the_total() -> None:
    doc = shown.document([_cut(), SPARE], 28, [], 2)
    first, spare = doc["savings"]
    for key in ("resource_id", "kind", "today", "target", "fix_id", "monthly_saving"):
        assert key in first
    assert (first["window_days"], first["period_s"], first["headroom"]) == (455.0, 3_600, 1.2)
    assert first["peak"]["iops"] == {
        "value": 3_000.0,
        "at": (T0 - timedelta(days=200)).isoformat(),
        "period_s": 3_600,
        "floor": False,
        "target_limit": 3_600.0,
    }
    assert first["claim"] == "db/data-0"
    assert spare["fix_id"] is None and spare["commands"][-1].startswith("aws ec2 delete-volume")
    assert doc["total_monthly_saving"] == 1_106.0
    assert doc["volumes_read"] == 2 and doc["watch_cost"]["this_run_metrics_requested"] == 28


def test_the_table_says_the_change_the_peak_against_the_limit_and_the_total() -> None:
    text = shown.table([_cut(), SPARE])
    assert "vol-1 (claim db/data-0)  saves $1,066.00 a month" in text
    assert "io2 500 GiB, 20,000 IOPS → io2 500 GiB, 3,600 IOPS" in text
    assert "iops: its busiest minute in 455 days (from hourly data)" in text
    assert "3,000 IOPS (the target's limit 3,600 IOPS)" in text
    assert "throughput: its busiest minute in 455 days" in text
    assert "attached to nothing, no I/O for 41 days" in text
    assert "Total: $1,106.00 a month over 2 volumes." in text


def test_no_saving_is_said_in_a_line() -> None:
    assert shown.table([]) == "No saving found: every volume read uses what it pays for.\n"


def test_a_claims_cut_says_how_it_is_made_in_the_cluster() -> None:
    from dataclasses import replace

    program = {
        "namespace": "db",
        "persistentvolumeclaim": "data-0",
        "commands": ["kubectl -n db patch pvc data-0 -p '{}'"],
        "step": "create VolumeAttributesClass io2-3600 (…), then kubectl …",
    }
    claimed = replace(_cut(), kubernetes=program)
    assert "  in the cluster: create VolumeAttributesClass io2-3600" in shown.table([claimed])
    [row] = shown.document([claimed], 14, [], 1)["savings"]
    assert row["kubernetes"]["commands"] == program["commands"] and "step" not in row["kubernetes"]


def test_across_accounts_and_regions_each_cut_says_where_it_is() -> None:
    from dataclasses import replace

    prod = replace(
        _cut(), labels={"region": "us-east-1", "account_name": "prod", "account_id": "1"}
    )
    staging = replace(
        _cut(), resource_id="vol-2", labels={"region": "eu-west-1", "account_id": "2"}
    )
    text = shown.table([prod, staging])
    assert "vol-1 (account prod, us-east-1)  saves" in text
    assert "vol-2 (account 2, eu-west-1)  saves" in text
    # One account, one region: nothing to tell apart.
    assert "vol-1  saves" in shown.table([replace(_cut(), labels={"region": "us-east-1"})])


def test_the_digest_names_the_total_the_largest_and_what_to_run() -> None:
    message = shown.digest([_cut(), SPARE], {"weighed": 40, "reading": 2, "unread": 1})
    text = message["text"]
    assert text.startswith("*Savings this week: $1,106.00 a month* over 2 volumes")
    assert "40 volumes weighed, 2 still being read, 1 unread" in text
    assert "`ebs-analyzer apply vol-1:iops=3600`" in text and "(claim db/data-0)" in text
    assert "`vol-9`: attached to nothing for 41 days" in text
    assert message["blocks"][0]["text"]["text"] == text


def test_a_digest_names_ten_and_counts_the_rest() -> None:
    many = [replace(_cut(), resource_id=f"vol-{i}") for i in range(13)]
    text = shown.digest(many, {"weighed": 13})["text"]
    assert text.count("ebs-analyzer apply") == 10
    assert "…and 3 more: `ebs-analyzer savings`." in text


def test_a_digest_without_a_saving_says_the_fleet_uses_what_it_pays_for() -> None:
    text = shown.digest([], {"weighed": 12})["text"]
    assert text == "*No saving found this week*: the 12 volumes weighed use what they pay for."


def test_another_currency_is_written_as_a_fixs_cost_is() -> None:
    assert "saves EUR 1,066.00 a month" in shown.table([_cut()], "EUR")
    assert shown.digest([_cut()], {"weighed": 1}, "EUR")["text"].startswith(
        "*Savings this week: EUR 1,066.00 a month*"
    )
