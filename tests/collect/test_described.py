"""An inventory answered as Describe* calls: each call gives what the inventory holds."""

from __future__ import annotations

import pytest

from analyzer.collect.described import RecordedDescriber
from analyzer.model.resources import (
    DbInstance,
    Initialization,
    Instance,
    InstanceType,
    Inventory,
    Modification,
    Volume,
)
from analyzer.model.units import MB
from tests.helpers import T0

REGION = "us-east-1"
M5 = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)
R5 = InstanceType("r5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)
CHANGE = Modification("optimizing", T0, 40, "gp3 100 GiB")
FETCHING = Initialization(30, 600)
INVENTORY = Inventory(
    REGION,
    volumes=(
        Volume("vol-a", REGION, "gp2", 100, "in-use", attached_to="i-a", modifications=(CHANGE,)),
        Volume(
            "vol-m",
            REGION,
            "io2",
            100,
            "in-use",
            iops=3_000,
            attached_to="i-a",
            multi_attach=True,
            also_attached_to=("i-b",),
            initialization=FETCHING,
        ),
    ),
    instances=(Instance("i-a", REGION, "m5.large", "running", True, ("vol-a",), M5),),
    db_instances=(
        DbInstance("db-a", REGION, "mysql", "db.r5.large", "gp2", 200, "available", class_info=R5),
    ),
)


def test_the_describe_calls_answer_the_recorded_inventory() -> None:
    describe = RecordedDescriber(INVENTORY)
    assert describe.region == REGION
    assert describe.volumes() == list(INVENTORY.volumes)
    assert describe.instances() == list(INVENTORY.instances)
    assert describe.db_instances() == list(INVENTORY.db_instances)
    assert describe.volume_modifications() == {"vol-a": [CHANGE], "vol-m": []}
    assert describe.volume_initializations() == {"vol-m": FETCHING}


@pytest.mark.parametrize(
    ("asked", "known"),
    [
        (["m5.large"], ["m5.large"]),
        (["r5.large", "m5.large"], ["m5.large", "r5.large"]),  # a class's type too
        (["c5.large"], []),
        ([], []),
    ],
)
def test_only_recorded_instance_types_are_described(asked: list[str], known: list[str]) -> None:
    found = RecordedDescriber(INVENTORY).instance_types(asked)
    assert sorted(t.name for t in found) == known


def test_no_other_type_or_class_is_offered() -> None:
    describe = RecordedDescriber(INVENTORY)
    assert describe.offered_instance_types() == []
    assert describe.orderable_db_classes("mysql") == set()
