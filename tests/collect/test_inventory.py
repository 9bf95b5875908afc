import pytest

from analyzer.collect.aws import Clients
from analyzer.collect.inventory import InstanceTypeCache, TagFilter, discover, tags_match
from analyzer.errors import AwsCallError
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


def make_db(rds, name, klass="db.r5.xlarge", storage="gp2", size=200, **extra):
    rds.create_db_instance(
        DBInstanceIdentifier=name,
        Engine="mysql",
        DBInstanceClass=klass,
        AllocatedStorage=size,
        StorageType=storage,
        MasterUsername="admin",
        MasterUserPassword="password123",
        **extra,
    )


def test_rds_instances_with_their_class(aws):
    import boto3

    rds = boto3.client("rds", region_name="us-east-1")
    make_db(rds, "replica", Tags=[{"Key": "team", "Value": "db"}])
    make_db(rds, "reports", klass="db.m6i.large", storage="io1", size=400, Iops=8_000)
    inv = discover(Account().clients, InstanceTypeCache())
    dbs = {d.db_instance_id: d for d in inv.db_instances}
    assert set(dbs) == {"replica", "reports"}
    replica = dbs["replica"]
    assert (replica.engine, replica.storage_type, replica.allocated_gib) == ("mysql", "gp2", 200)
    assert replica.class_info is not None
    assert replica.class_info.name == "r5.xlarge"
    assert replica.class_info.memory_bytes == 32 * 1024**3
    assert replica.tags == {"team": "db"}
    assert dbs["reports"].iops == 8_000
    tagged = discover(Account().clients, InstanceTypeCache(), [TagFilter.parse("team=db")])
    assert [d.db_instance_id for d in tagged.db_instances] == ["replica"]


def test_without_rds_permission_the_ebs_analysis_goes_on():
    from botocore.exceptions import ClientError
    from structlog.testing import capture_logs

    from analyzer.collect.inventory import discover_db

    class Denied:
        region = "us-east-1"

        class rds:
            @staticmethod
            def get_paginator(name):
                class Pages:
                    def paginate(self):
                        raise ClientError(
                            {"Error": {"Code": "AccessDenied", "Message": "not authorized"}}, name
                        )

                return Pages()

    with capture_logs() as logs:
        assert discover_db(Denied(), InstanceTypeCache()) == ()  # type: ignore[arg-type]
    [event] = logs
    assert event["event"] == "rds.skipped"
    assert "rds:DescribeDBInstances in us-east-1: AccessDenied" in event["error"]
