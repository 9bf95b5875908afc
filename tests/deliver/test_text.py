"""The report as a terminal shows it: the findings, then a table of the resources."""

from dataclasses import replace
from datetime import timedelta

import pytest

from analyzer.analyze.states import build
from analyzer.deliver import report
from analyzer.deliver.text import to_text
from analyzer.model.findings import Bottleneck
from analyzer.model.metrics import Measure
from analyzer.model.resources import DbInstance, Initialization, InstanceType
from analyzer.model.series import Status
from analyzer.model.state import Mismatch
from analyzer.model.units import MB
from tests.fakes import R5
from tests.helpers import (
    T0,
    analyze,
    db_state,
    instance_state,
    readings_of,
    series,
    shop_volume,
    snapshot_of,
    volume_state,
)
from tests.helpers import (
    shop_analysis as shop,
)


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


def shop_instance():
    return instance_state(
        InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB),
        {Measure.IOPS: series([1_500] * 30)},
        volume_ids=("vol-1",),
    )


def replica_db():
    db = DbInstance(
        "db-1", "us-east-1", "mysql", "db.r5.xlarge", "gp2", 100, "available", class_info=R5
    )
    return db_state(db, {Measure.IOPS: series([250] * 30)})


def text_of(*states) -> str:
    snap = snapshot_of(*states)
    return to_text(snap.generated_at, readings_of(snap), [])


def resource_line(text: str, resource_id: str) -> str:
    [line] = [x for x in text.splitlines() if x.startswith(f"  {resource_id} ")]
    return line


@pytest.mark.parametrize(
    ("states", "title"),
    [
        (
            (),
            "EBS bottleneck report · 2026-11-21 12:32 UTC · 0 volume(s), 0 instance(s) in "
            "no region",
        ),
        (
            (shop_volume(), shop_instance()),
            "EBS bottleneck report · 2026-11-21 12:32 UTC · 1 volume(s), 1 instance(s) in "
            "us-east-1",
        ),
        (
            (shop_volume(), shop_volume("vol-2"), replica_db()),
            "EBS bottleneck report · 2026-11-21 12:32 UTC · 2 volume(s), 0 instance(s), "
            "1 RDS instance(s) in us-east-1",
        ),
    ],
)
def test_the_title_counts_what_was_watched_and_where(states, title):
    assert text_of(*states).splitlines()[0] == title


def test_no_resources_is_said_as_such():
    assert "No findings: no resources to watch (check the region and the tag filters)." in (
        text_of()
    )


def test_the_table_aligns_its_columns_in_the_fixed_order():
    text = text_of(shop_volume(), shop_instance())
    header, volume, instance = text.split("RESOURCES\n")[1].splitlines()
    assert header.split() == [
        "RESOURCE",
        "KIND",
        "ATTACHED",
        "IOPS",
        "/",
        "LIMIT",
        "THROUGHPUT",
        "/",
        "LIMIT",
        "I/O",
        "SIZE",
        "BURST",
        "EMPTY",
        "/",
        "FULL",
        "IN",
        "STATUS",
    ]
    assert header.index("KIND") == volume.index("gp2") == instance.index("m5.large")
    assert volume.split()[-1] == "ok"
    # A volume's throughput reads in MiB/s, an instance's in MB/s, as AWS quotes each.
    assert "5.9 / 128 MiB/s" in volume
    assert "40%" in volume and "24 min" in volume and "4 KiB" in volume
    assert "1 volume(s)" in instance and "1,500 / 18,750 IOPS" in instance
    assert "- / 594 MB/s" in instance


def test_a_stale_row_shows_its_limits_but_no_values():
    state = shop_volume()
    data_end = T0 + timedelta(minutes=40)
    snap = build(
        data_end + timedelta(seconds=120),
        data_end,
        [state],
        asked_until={"us-east-1": {"vol-1": data_end}},
    )
    text = to_text(snap.generated_at, readings_of(snap), [])
    line = resource_line(text, "vol-1")
    assert "- / 3,000 IOPS" in line
    assert line.endswith("stale")
    assert "40%" not in line
    assert "No verdict: none of the 1 resource(s) could be judged: 1 had only stale data" in text


def test_a_resource_not_in_use_shows_its_own_state_beside_its_status():
    silent = volume_state("gp3", 100, {}, iops=3_000, status=Status.NO_DATA)
    assert resource_line(text_of(silent), "vol-1").endswith("no_data (in-use)")


def test_names_get_a_column_only_when_a_resource_has_one():
    assert "NAME" not in text_of(shop_volume())
    named = shop_volume()
    named = replace(named, resource=replace(named.resource, tags={"Name": "shop-data"}))
    text = text_of(named, shop_volume("vol-2"))
    assert "RESOURCE  NAME" in text
    assert resource_line(text, "vol-1").split()[1] == "shop-data"
    assert resource_line(text, "vol-2").split()[1] == "-"


def test_an_error_is_said_below_the_table():
    failed = replace(
        volume_state("gp3", 100, {}, status=Status.ERROR),
        error="cloudwatch:GetMetricData: AccessDenied",
    )
    assert text_of(failed).endswith("  ! vol-1: cloudwatch:GetMetricData: AccessDenied\n")


@pytest.mark.parametrize(
    ("progress", "seconds_left", "said"),
    [
        (40, 600, "(40% done, about 10 min left)"),
        (None, None, "(progress unknown)"),
    ],
)
def test_an_initializing_volume_is_said_below_the_table(progress, seconds_left, said):
    state = shop_volume()
    volume = replace(
        state.resource, initialization=Initialization(progress, seconds_left, "default")
    )
    text = text_of(replace(state, resource=volume))
    assert f"  ~ vol-1: still initializing from its snapshot {said}: its first reads" in text
    assert resource_line(text, "vol-1").endswith("initializing")


def test_a_finding_lists_its_fixes_with_what_they_cost():
    snap, findings = shop()
    text = to_text(snap.generated_at, readings_of(snap), findings)
    fixes = [x.strip() for x in text.splitlines() if x.strip().startswith("fix: ")]
    assert fixes[0] == (
        "fix: Move to gp3 with 3,000 IOPS and 125 MiB/s included, online (ModifyVolume, at "
        "most 4 per volume in 24 h): −$1.00/month"
    )
    assert len(fixes) == len(findings[0].remedies)


def test_a_model_mismatch_is_no_verdict():
    contradicted = replace(
        volume_state("gp3", 100, {Measure.IOPS: series([3_600] * 30)}, iops=3_000),
        mismatches=(Mismatch(Bottleneck.VOLUME_IOPS, 3_000.0, 3_600.0, 300.0),),
    )
    assert (
        "No verdict: none of the 1 resource(s) could be judged: 1 showed more than their "
        "modelled limits (model_mismatch)." in text_of(contradicted)
    )


def test_a_table_is_plain_text_one_line_a_row_whatever_its_cells():
    """Cells are never markup, and off a terminal no cell is cut or folded onto a second line."""
    from analyzer.deliver.text import table

    long_id = "vol-" + "0" * 300
    lines = table(
        [["RESOURCE", "KIND [gp3]", "IOPS"], [long_id, "[bold]gp3[/]", "3,000"], ["x", "-", "5"]],
        right={2},
    )
    width = len(long_id)
    assert lines == [
        f"{'RESOURCE':<{width}}  {'KIND [gp3]':<12}  {'IOPS':>5}",
        f"{long_id}  [bold]gp3[/]  3,000",
        f"{'x':<{width}}  {'-':<12}  {'5':>5}",
    ]


def test_on_a_terminal_a_table_fits_its_width_and_cuts_nothing(monkeypatch):
    import io
    import re

    from analyzer.deliver.text import print_table

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.delenv("NO_COLOR", raising=False)
    screen = Terminal()
    long_id = "volume-iops-cap-for-the-checkout-database"
    print_table([["RULE", "KIND"], [long_id, "iops_cap"]], screen)
    lines = re.sub(r"\x1b\[[0-9;]*m", "", screen.getvalue()).splitlines()
    assert all(len(line) <= 40 for line in lines)
    # The id folds within its column, onto the next line; the kind stays in its own.
    assert [line.split() for line in lines] == [
        ["RULE", "KIND"],
        ["volume-iops-cap-for-the-checko", "iops_cap"],
        ["ut-database"],
    ]


def test_with_accounts_the_resources_are_grouped_by_account_and_findings_name_theirs():
    from tests.helpers import in_account

    prod = in_account(shop_volume("vol-prod", "i-1"), "111111111111", "prod")
    staging = in_account(shop_volume("vol-staging", "i-2"), "222222222222")
    analysis = analyze(staging, prod)
    text = to_text(analysis.snapshot.generated_at, analysis.readings.all(), analysis.firing)
    lines = text.splitlines()
    assert lines[0].endswith("in us-east-1 across 2 account(s)")
    assert "  WARNING   gp2-burst-exhaustion  · account prod (111111111111)" in lines
    first = lines.index("  ACCOUNT prod (111111111111)")
    second = lines.index("  ACCOUNT 222222222222")
    assert first < second
    assert lines[first + 1].split() == lines[second + 1].split()  # each under its header
    assert lines[first + 1].lstrip().startswith("RESOURCE")
    assert lines[first + 2].lstrip().startswith("vol-prod")
    assert lines[second + 2].lstrip().startswith("vol-staging")


def test_a_claims_volume_is_named_by_its_claim_first():
    from tests.helpers import as_claim

    assert "CLAIM" not in text_of(shop_volume())
    text = text_of(as_claim(shop_volume()), shop_volume("vol-2"))
    assert "  CLAIM               RESOURCE" in text
    [claimed] = [x for x in text.splitlines() if x.startswith("  db/data-postgres-0 ")]
    assert claimed.split()[1] == "vol-1"
    [plain] = [x for x in text.splitlines() if x.startswith("  -  ")]
    assert plain.split()[1] == "vol-2"


def test_a_claims_name_tag_that_repeats_its_volume_is_left_out():
    from tests.helpers import as_claim

    claim = as_claim(shop_volume())
    tags = {**claim.resource.tags, "Name": "prod-dynamic-pvc-3f2a"}
    claim = replace(claim, resource=replace(claim.resource, tags=tags))
    snap = snapshot_of(claim)
    [state] = snap.resources
    assert state.label == "PVC db/data-postgres-0 (vol-1, gp2 50 GiB on i-1)"
    text = text_of(claim)
    assert "NAME" not in text and "dynamic" not in text


def test_a_volume_modified_lately_says_so_under_the_table() -> None:
    """The report's first sight after a fix: the modification, and that it is in effect."""
    from tests.fakes import reading as a_reading
    from tests.helpers import T0

    said = "modified gp2 50 GiB → gp3 50 GiB at 09:12 UTC (optimizing), in effect"
    row = a_reading()
    row = replace(row, details=replace(row.details, modified=said))
    text = to_text(T0, [row], [])
    assert f"  * {row.ref.resource_id}: {said}" in text.splitlines()
    assert "  * " not in to_text(T0, [a_reading()], [])
