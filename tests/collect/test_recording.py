"""A recording keeps the inventory and the series exactly."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from analyzer.collect.recording import SHIPPED, Recording, read, resolve, write
from analyzer.errors import ConfigError
from analyzer.model.resources import (
    AgentMetrics,
    DbInstance,
    Instance,
    Inventory,
    Modification,
    Volume,
)
from analyzer.model.series import Series, Status
from tests.fakes import M5, R5
from tests.helpers import T0, series


def test_everything_comes_back_as_it_was(tmp_path) -> None:  # type: ignore[no-untyped-def]
    volume = Volume(
        "vol-1",
        "eu-west-1",
        "io2",
        500,
        "in-use",
        20_000,
        None,
        "i-1",
        "eu-west-1a",
        {"team": "db"},
        multi_attach=True,
        also_attached_to=("i-2",),
        modifications=(Modification("optimizing", T0, 40, "io2 500 GiB, 20,000 IOPS"),),
        agent=AgentMetrics(
            "CWAgent",
            (("InstanceId", "i-1"), ("VolumeId", "vol-1")),
            ("diskio_ebs_total_read_ops", "diskio_ebs_total_write_ops"),
        ),
        created=T0 - timedelta(days=400),
    )
    instance = Instance("i-1", "eu-west-1", "m5.large", "running", True, ("vol-1",), M5)
    db = DbInstance(
        "orders",
        "eu-west-1",
        "mysql",
        "db.r5.xlarge",
        "gp2",
        200,
        "available",
        class_info=R5,
        multi_az=True,
    )
    inventory = Inventory("eu-west-1", (volume,), (instance,), (db,))
    raw = {
        "eu-west-1": {
            "vol-1": {"VolumeReadOps": series([1.0, 2.5, 3.0])},
            "orders": {"BurstBalance": Series.failed("ThrottlingException: slow down")},
        }
    }
    recorded = Recording(T0, T0 + timedelta(hours=1), {"eu-west-1": inventory}, raw)
    path = tmp_path / "r.json.gz"
    write(path, recorded)
    back = read(path)
    assert (back.start, back.end, back.inventories) == (
        recorded.start,
        recorded.end,
        recorded.inventories,
    )
    for rid, by_metric in raw["eu-west-1"].items():
        for metric, kept in by_metric.items():
            again = back.raw["eu-west-1"][rid][metric]
            assert again.points() == kept.points()
            assert (again.period_s, again.status, again.error) == (
                kept.period_s,
                kept.status,
                kept.error,
            )
    assert back.raw["eu-west-1"]["orders"]["BurstBalance"].status is Status.ERROR
    assert back.start.tzinfo is not None and back.start == datetime(2026, 11, 21, 12, tzinfo=UTC)


def test_a_shipped_recording_resolves_by_name_with_or_without_its_suffix(tmp_path) -> None:  # type: ignore[no-untyped-def]
    shipped = resolve("incident-3-fortnight")
    assert shipped.is_file() and shipped.parent == SHIPPED
    assert resolve("incident-3-fortnight.json.gz") == shipped
    mine = tmp_path / "incident-3-fortnight"
    mine.write_bytes(b"")
    assert resolve(mine) == mine  # a file of that name comes first


def test_a_name_that_is_neither_says_what_is_shipped() -> None:
    with pytest.raises(
        ConfigError,
        match=r"nope: no such file, nor a shipped recording \(shipped: incident-3-fortnight",
    ):
        resolve("nope")


def test_the_accounts_come_back_with_their_resources(tmp_path) -> None:  # type: ignore[no-untyped-def]
    owned = {"account_id": "111111111111", "account_name": "prod"}
    volume = Volume("vol-1", "eu-west-1", "gp3", 100, "in-use", **owned)
    db = DbInstance(
        "orders", "eu-west-1", "mysql", "db.r5.xlarge", "gp2", 200, "available", **owned
    )
    inventory = Inventory("eu-west-1", (volume,), (), (db,), **owned)
    scope = inventory.scope
    assert scope == "111111111111/eu-west-1"
    path = tmp_path / "r.json.gz"
    write(path, Recording(T0, T0 + timedelta(hours=1), {scope: inventory}, {}))
    back = read(path).inventories[scope]
    assert back == inventory
    assert back.db_instances[0].ref.account == "prod (111111111111)"


def test_series_over_the_same_minutes_come_back_sharing_one_axis(tmp_path) -> None:  # type: ignore[no-untyped-def]
    volume = Volume("vol-1", "us-east-1", "gp2", 100, "in-use")
    other = Volume("vol-2", "us-east-1", "gp2", 100, "in-use")
    raw = {
        "vol-1": {"VolumeReadOps": series([1.0, 2.0, 3.0]), "BurstBalance": series([99.0] * 3)},
        "vol-2": {"VolumeReadOps": series([4.0, 5.0]), "BurstBalance": series([7.0] * 3)},
    }
    inventory = Inventory("us-east-1", volumes=(volume, other))
    path = tmp_path / "r.json.gz"
    write(
        path, Recording(T0, T0 + timedelta(minutes=3), {"us-east-1": inventory}, {"us-east-1": raw})
    )
    back = read(path).raw["us-east-1"]
    three = [
        back["vol-1"]["VolumeReadOps"],
        back["vol-1"]["BurstBalance"],
        back["vol-2"]["BurstBalance"],
    ]
    assert all(s.timestamps is three[0].timestamps for s in three)
    # A shorter axis is its own tuple, of the same moments.
    shorter = back["vol-2"]["VolumeReadOps"]
    assert shorter.timestamps == three[0].timestamps[:2]
    assert shorter.timestamps[0] is three[0].timestamps[0]
    assert list(back["vol-2"]["VolumeReadOps"].values) == [4.0, 5.0]


def test_a_modification_keeps_what_the_volume_was_and_older_recordings_still_read(
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    """The original configuration (the limits while it is `modifying`) and the end come back;
    a recording made before they were kept reads without them."""
    import gzip
    import json

    made = Modification(
        "completed",
        T0,
        100,
        "gp3 50 GiB 3,000 IOPS 125 MiB/s",
        (("volume_type", "gp3"), ("iops", 3_000), ("throughput_mibps", 125)),
        (("volume_type", "gp2"), ("size_gib", 50), ("iops", 150)),
        T0 + timedelta(minutes=40),
    )
    volume = Volume("vol-1", "eu-west-1", "gp3", 50, "in-use", 3_000, 125, "i-1")
    inventory = Inventory("eu-west-1", (replace(volume, modifications=(made,)),), (), ())
    path = tmp_path / "r.json.gz"
    write(path, Recording(T0, T0 + timedelta(hours=1), {"eu-west-1": inventory}, {}))
    [back] = read(path).inventories["eu-west-1"].volumes
    assert back.modifications == (made,)
    assert back.limits_since == T0

    with gzip.open(path, "rt", encoding="utf-8") as given:
        document = json.load(given)
    [kept] = document["regions"]["eu-west-1"]["inventory"]["volumes"][0]["modifications"]
    del kept["original_fields"], kept["ended"]
    with gzip.open(path, "wt", encoding="utf-8") as out:
        json.dump(document, out)
    [old] = read(path).inventories["eu-west-1"].volumes
    assert old.modifications == (replace(made, original_fields=(), ended=None),)
