import pytest

from analyzer.aws import Clients
from analyzer.errors import AwsCallError
from analyzer.inventory import InstanceTypeCache, TagFilter, discover, tags_match
from tests.account import Account


def test_volumes_and_instances_with_their_limits(aws):
    account = Account()
    instance = account.instance("r6i.8xlarge", detailed=True)
    gp3 = account.volume("gp3", 500, instance, Iops=16_000, Throughput=1_000)
    io2 = account.volume("io2", 100, None, Iops=5_000)
    inv = discover(account.clients, InstanceTypeCache())
    volumes = {v.volume_id: v for v in inv.volumes}
    assert volumes[gp3].attached_to == instance
    assert (volumes[gp3].iops, volumes[gp3].throughput_mibps) == (16_000, 1_000)
    assert volumes[io2].attached_to is None and volumes[io2].state == "available"
    [found] = inv.instances
    assert found.detailed_monitoring
    assert gp3 in found.volume_ids
    assert found.type_info is not None
    assert found.type_info.maximum_throughput_bps == 1_250_000_000
    assert found.type_info.nitro


def test_instance_types_are_looked_up_once(aws):
    account = Account()
    account.instance("m5.large")
    calls = []
    clients = account.clients
    original = clients.ec2.get_paginator

    def counting(name):
        if name == "describe_instance_types":
            calls.append(name)
        return original(name)

    clients.ec2.get_paginator = counting
    cache = InstanceTypeCache()
    discover(clients, cache)
    discover(clients, cache)
    assert calls == ["describe_instance_types"]


def test_an_unknown_type_does_not_hide_the_others(aws):
    cache = InstanceTypeCache()
    found = cache.get(Clients.for_region("us-east-1"), ["m5.large", "x99.unknown"])
    assert set(found) == {"m5.large"}


def test_other_failures_of_describe_instance_types_are_raised():
    class Failing:
        region = "us-east-1"

        class ec2:
            @staticmethod
            def get_paginator(name):
                from botocore.exceptions import ClientError

                raise ClientError({"Error": {"Code": "Throttling", "Message": "slow"}}, name)

    with pytest.raises(AwsCallError, match="Throttling"):
        InstanceTypeCache().get(Failing(), ["m5.large"])  # type: ignore[arg-type]


def test_tag_scope_takes_what_is_attached(aws):
    account = Account()
    tagged = account.instance("m5.large", team="db")
    other = account.instance("m5.large", team="web")
    data = account.volume("gp2", 100, tagged)
    account.volume("gp2", 100, other)
    inv = discover(account.clients, InstanceTypeCache(), [TagFilter.parse("team=db")])
    assert [i.instance_id for i in inv.instances] == [tagged]
    assert data in {v.volume_id for v in inv.volumes}
    assert all(v.attached_to == tagged for v in inv.volumes)


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
