"""Shards: every resource in exactly one, an instance with its volumes, an RDS instance alone,
the same assignment in every process."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer.collect.shards import WHOLE, Shard, groups, kept, ordinal, shard_of
from analyzer.model.resources import DbInstance, Instance, Inventory, Volume


def fleet(instances: int, volumes_each: int = 3, detached: int = 5, dbs: int = 4) -> Inventory:
    found_instances = []
    found_volumes = []
    for n in range(instances):
        ids = tuple(f"vol-{n:04d}{k}" for k in range(volumes_each))
        found_instances.append(
            Instance(f"i-{n:04d}", "us-east-1", "m5.large", "running", False, ids)
        )
        found_volumes += [
            Volume(v, "us-east-1", "gp3", 100, "in-use", attached_to=f"i-{n:04d}") for v in ids
        ]
    found_volumes += [
        Volume(f"vol-spare{n}", "us-east-1", "gp3", 100, "available") for n in range(detached)
    ]
    found_dbs = [
        DbInstance(f"db-{n}", "us-east-1", "mysql", "db.r5.large", "gp3", 100, "available")
        for n in range(dbs)
    ]
    return Inventory("us-east-1", tuple(found_volumes), tuple(found_instances), tuple(found_dbs))


def ids(inventory: Inventory) -> set[str]:
    return (
        {v.volume_id for v in inventory.volumes}
        | {i.instance_id for i in inventory.instances}
        | {d.db_instance_id for d in inventory.db_instances}
    )


@given(st.integers(min_value=1, max_value=7))
def test_every_resource_is_in_exactly_one_shard(total):
    whole = fleet(40)
    parts = [kept(whole, Shard(i, total)) for i in range(total)]
    assert sum(len(ids(p)) for p in parts) == len(ids(whole))
    assert set().union(*(ids(p) for p in parts)) == ids(whole)


def test_an_instance_and_its_volumes_are_in_one_shard():
    whole = fleet(60)
    for index in range(3):
        part = kept(whole, Shard(index, 3))
        held = {v.volume_id for v in part.volumes}
        for instance in part.instances:
            assert set(instance.volume_ids) <= held
        attached = {v.attached_to for v in part.volumes if v.attached_to}
        assert attached <= {i.instance_id for i in part.instances}


def test_a_multi_attach_volume_keeps_its_instances_together():
    shared = Volume(
        "vol-shared",
        "us-east-1",
        "io2",
        100,
        "in-use",
        attached_to="i-b",
        multi_attach=True,
        also_attached_to=("i-c",),
    )
    inventory = Inventory(
        "us-east-1",
        (shared, Volume("vol-c", "us-east-1", "gp3", 10, "in-use", attached_to="i-c")),
        (
            Instance("i-b", "us-east-1", "m5.large", "running"),
            Instance("i-c", "us-east-1", "m5.large", "running"),
        ),
    )
    assert set(groups(inventory).values()) == {"i-b"}


def test_a_volume_attached_to_an_instance_moves_alone():
    """A group is named by its least id, and an instance's (`i-…`) sorts before any volume's
    (`vol-…`): attaching a volume moves that volume to the instance's shard, never the
    instance and its other volumes."""
    before = fleet(50, detached=0, dbs=0)
    newcomer = Volume("vol-0000", "us-east-1", "gp3", 100, "in-use", attached_to="i-0007")
    after = replace(before, volumes=(*before.volumes, newcomer))
    assert groups(after)["vol-0000"] == groups(after)["vol-00070"] == "i-0007"
    for index in range(3):
        was, now = kept(before, Shard(index, 3)), kept(after, Shard(index, 3))
        assert ids(now) - ids(was) <= {"vol-0000"} and ids(was) <= ids(now)


def test_the_shards_are_about_even():
    whole = fleet(600, detached=0, dbs=0)
    sizes = [len(kept(whole, Shard(i, 3)).instances) for i in range(3)]
    assert min(sizes) > 0.8 * 200 and max(sizes) < 1.2 * 200


def test_the_assignment_is_the_same_in_another_process():
    """A stable hash: not Python's `hash()`, which is seeded per process."""
    code = "from analyzer.collect.shards import shard_of; print(shard_of('us-east-1/i-1', 7))"
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert int(other) == shard_of("us-east-1/i-1", 7)


def test_one_shard_is_the_whole_inventory():
    whole = fleet(5)
    assert kept(whole, WHOLE) is whole


@pytest.mark.parametrize(("index", "total"), [(3, 3), (-1, 2), (0, 0)])
def test_a_shard_outside_its_total_is_refused(index, total):
    with pytest.raises(ValueError, match="expected 0 ≤ shard < total"):
        Shard(index, total)


@pytest.mark.parametrize(
    ("name", "found"),
    [("ebs-analyzer-0", 0), ("ebs-analyzer-12", 12), ("ebs-analyzer", None), ("host", None)],
)
def test_a_statefulset_pods_ordinal(name, found):
    assert ordinal(name) == found
