"""Resources: what the inventory finds, and how each reads and counts as active."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from analyzer.model.resources import (
    RDS_STOPPED,
    DbInstance,
    Instance,
    InstanceType,
    Modification,
    ResourceRef,
    ResourceType,
    Volume,
)

STARTED = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def test_refs_name_type_id_and_region() -> None:
    volume = Volume("vol-1", "eu-west-1", "gp2", 50, "in-use")
    instance = Instance("i-1", "eu-west-1", "m5.large", "running")
    db = DbInstance("orders", "eu-west-1", "mysql", "db.m5.large", "gp2", 200, "available")
    assert volume.ref == ResourceRef(ResourceType.VOLUME, "vol-1", "eu-west-1")
    assert instance.ref == ResourceRef(ResourceType.INSTANCE, "i-1", "eu-west-1")
    assert db.ref == ResourceRef(ResourceType.DB_INSTANCE, "orders", "eu-west-1")


@pytest.mark.parametrize(
    ("state", "attached_to", "active"),
    [
        ("in-use", "i-1", True),
        ("in-use", None, False),
        ("available", None, False),
        ("available", "i-1", False),
    ],
)
def test_a_volume_is_active_only_attached_and_in_use(
    state: str, attached_to: str | None, active: bool
) -> None:
    assert Volume("vol-1", "r", "gp3", 100, state, attached_to=attached_to).active is active


def test_a_multi_attach_volume_lists_every_instance() -> None:
    volume = Volume(
        "vol-1",
        "r",
        "io2",
        1_000,
        "in-use",
        iops=20_000,
        attached_to="i-1",
        multi_attach=True,
        also_attached_to=("i-2", "i-3"),
    )
    assert volume.instance_ids == ("i-1", "i-2", "i-3")
    assert volume.describe() == "io2 1,000 GiB on i-1, i-2, i-3"


def test_a_detached_volume_reads_as_detached() -> None:
    volume = Volume("vol-1", "r", "gp2", 50, "available")
    assert volume.instance_ids == ()
    assert volume.describe() == "gp2 50 GiB detached"


@pytest.mark.parametrize(
    ("state", "under_way"),
    [("modifying", True), ("optimizing", True), ("completed", False), ("failed", False)],
)
def test_a_modification_is_under_way_until_it_completes(state: str, under_way: bool) -> None:
    assert Modification(state, STARTED).under_way is under_way


GP2_TO_GP3 = {
    "original_fields": (("volume_type", "gp2"), ("size_gib", 50), ("iops", 150)),
    "target_fields": (
        ("volume_type", "gp3"),
        ("size_gib", 50),
        ("iops", 3_000),
        ("throughput_mibps", 125),
    ),
}


@pytest.mark.parametrize(
    ("state", "in_force", "since"),
    [
        # AWS describes the volume with the target values from the start; until the
        # modification is optimizing, the original ones are its limits.
        ("modifying", ("gp2", 50, 150, None), None),
        ("optimizing", ("gp3", 50, 3_000, 125), STARTED),
        ("completed", ("gp3", 50, 3_000, 125), STARTED),
        ("failed", ("gp3", 50, 3_000, 125), None),
    ],
)
def test_a_modified_volume_is_held_to_its_new_limits_once_optimizing(
    state: str, in_force: tuple[object, ...], since: datetime | None
) -> None:
    made = Modification(state, STARTED, **GP2_TO_GP3)  # type: ignore[arg-type]
    volume = Volume("vol-1", "r", "gp3", 50, "in-use", 3_000, 125, "i-1", modifications=(made,))
    now = volume.in_force()
    assert (now.volume_type, now.size_gib, now.iops, now.throughput_mibps) == in_force
    assert volume.limits_since == since


def test_the_latest_modification_in_effect_marks_when_the_limits_began() -> None:
    """A new one still `modifying` leaves the limits (and their start) of the one before."""
    before = Modification("completed", STARTED)
    now = Modification("modifying", STARTED.replace(hour=14), **GP2_TO_GP3)  # type: ignore[arg-type]
    volume = Volume("vol-1", "r", "gp3", 50, "in-use", modifications=(now, before))
    assert volume.limits_since == STARTED
    assert volume.in_force().volume_type == "gp2"


def test_a_recent_modification_says_which_limits_hold() -> None:
    made = Modification("optimizing", STARTED, **GP2_TO_GP3)  # type: ignore[arg-type]
    volume = Volume("vol-1", "r", "gp3", 50, "in-use", modifications=(made,))
    note = volume.modification_note(STARTED.replace(hour=13), 86_400)
    assert note is not None
    assert note.startswith(
        "modified gp2 50 GiB 150 IOPS → gp3 50 GiB 3,000 IOPS 125 MiB/s at 12:00 UTC "
        "(optimizing), in effect"
    )
    assert volume.modification_note(STARTED.replace(day=23), 86_400) is None
    waiting = Volume(
        "vol-1",
        "r",
        "gp3",
        50,
        "in-use",
        modifications=(Modification("modifying", STARTED, **GP2_TO_GP3),),
    )  # type: ignore[arg-type]
    said = waiting.modification_note(STARTED, 86_400)
    assert said is not None and "the limits before hold until it is optimizing" in said


@pytest.mark.parametrize(
    ("limits", "bursts"),
    [
        ((3_600, 18_750, 81.25e6, 593.75e6), True),
        ((18_750, 18_750, 81.25e6, 593.75e6), True),
        ((18_750, 18_750, 593.75e6, 593.75e6), False),
        ((None, None, None, None), False),
    ],
)
def test_an_instance_type_bursts_where_a_baseline_is_below_its_maximum(
    limits: tuple[float | None, ...], bursts: bool
) -> None:
    assert InstanceType("t", *limits).ebs_bursts is bursts


@pytest.mark.parametrize(("state", "active"), [("running", True), ("stopped", False)])
def test_an_instance_is_active_while_running(state: str, active: bool) -> None:
    instance = Instance("i-1", "r", "m5.large", state)
    assert instance.active is active
    assert instance.describe() == "m5.large"


def test_a_db_instance_reads_as_its_engine_class_and_storage() -> None:
    db = DbInstance("orders", "r", "postgres", "db.r5.xlarge", "io1", 1_000, "available")
    assert db.ec2_type == "r5.xlarge"
    assert db.attached_to is None
    assert db.describe() == "postgres db.r5.xlarge, io1 1,000 GiB"


@pytest.mark.parametrize(
    ("state", "active"),
    [
        ("available", True),
        ("backing-up", True),
        ("modifying", True),
        ("storage-optimization", True),
        ("stopped", False),
        ("creating", False),
        ("incompatible-parameters", False),
    ],
)
def test_a_db_instance_is_active_unless_rds_publishes_no_storage_metrics(
    state: str, active: bool
) -> None:
    db = DbInstance("orders", "r", "mysql", "db.m5.large", "gp2", 200, state)
    assert db.active is active
    assert (state in RDS_STOPPED) is not active
