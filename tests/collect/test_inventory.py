"""Discovery over the Describer protocol: scope, attachments, types, RDS, with a small fake."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from analyzer.collect.inventory import InstanceTypeCache, TagFilter, discover, tags_match
from analyzer.model.resources import DbInstance, Instance, Volume
from tests.fakes import M5, R5, FakeDescriber


def instance(iid: str, **tags: str) -> Instance:
    return Instance(iid, "us-east-1", "m5.large", "running", tags=tags)


def volume(vid: str, attached_to: str | None, **tags: str) -> Volume:
    state = "in-use" if attached_to else "available"
    return Volume(vid, "us-east-1", "gp2", 100, state, attached_to=attached_to, tags=tags)


def db(name: str, **tags: str) -> DbInstance:
    return DbInstance(
        name, "us-east-1", "mysql", "db.r5.xlarge", "gp2", 200, "available", tags=tags
    )


def test_instances_get_their_volumes_and_their_type() -> None:
    fake = FakeDescriber(
        found_volumes=[volume("vol-2", "i-1"), volume("vol-1", "i-1"), volume("vol-3", None)],
        found_instances=[instance("i-1")],
    )
    inv = discover(fake, InstanceTypeCache())
    [found] = inv.instances
    assert found.volume_ids == ("vol-1", "vol-2")
    assert found.type_info == M5
    assert [v.volume_id for v in inv.volumes] == ["vol-1", "vol-2", "vol-3"]


def test_instance_types_are_looked_up_once() -> None:
    fake = FakeDescriber(found_instances=[instance("i-1")])
    cache = InstanceTypeCache()
    discover(fake, cache)
    discover(fake, cache)
    assert fake.type_calls == [["m5.large"]]


def test_tag_scope_takes_what_is_attached() -> None:
    fake = FakeDescriber(
        found_volumes=[
            volume("vol-1", "i-db"),
            volume("vol-2", "i-web"),
            volume("vol-3", "i-x", team="db"),
        ],
        found_instances=[
            instance("i-db", team="db"),
            instance("i-web", team="web"),
            instance("i-x"),
        ],
        found_dbs=[db("replica", team="db"), db("reports")],
    )
    inv = discover(fake, InstanceTypeCache(), [TagFilter.parse("team=db")])
    assert [i.instance_id for i in inv.instances] == ["i-db", "i-x"]
    assert [v.volume_id for v in inv.volumes] == ["vol-1", "vol-3"]
    assert [d.db_instance_id for d in inv.db_instances] == ["replica"]


def test_rds_instances_get_their_class() -> None:
    inv = discover(FakeDescriber(found_dbs=[db("replica")]), InstanceTypeCache())
    [replica] = inv.db_instances
    assert replica.class_info == R5


def test_without_rds_permission_the_ebs_analysis_goes_on() -> None:
    fake = FakeDescriber(found_volumes=[volume("vol-1", None)], found_dbs=None)
    with capture_logs() as logs:
        inv = discover(fake, InstanceTypeCache())
    assert inv.db_instances == () and len(inv.volumes) == 1
    [event] = logs
    assert event["event"] == "rds.skipped"
    assert "rds:DescribeDBInstances in us-east-1: AccessDenied" in event["error"]


@pytest.mark.parametrize(
    ("tags", "filters", "match"),
    [
        ({"team": "db"}, ["team=db"], True),
        ({"team": "db"}, ["team=web"], False),
        ({"team": "db"}, ["team=web", "team=db"], True),  # one key: alternatives
        ({"team": "db"}, ["team=db", "env=prod"], False),  # two keys: both needed
        ({"team": "db", "env": "prod"}, ["team", "env=prod"], True),
        ({}, ["team"], False),
    ],
)
def test_tags_match(tags, filters, match):
    assert tags_match(tags, [TagFilter.parse(f) for f in filters]) is match
