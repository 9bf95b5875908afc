"""The boto3 adapter for the Describe* calls, against moto, and botocore's Stubber for errors."""

import pytest
from botocore.stub import Stubber

from analyzer.collect.aws import Clients
from analyzer.collect.describe import Ec2Rds
from analyzer.collect.inventory import InstanceTypeCache, TagFilter, discover
from analyzer.errors import AwsAccessError, AwsCallError
from tests.account import Account


def test_volumes_and_instances_with_their_limits(aws):
    account = Account()
    instance = account.instance("r6i.8xlarge", detailed=True)
    gp3 = account.volume("gp3", 500, instance, Iops=16_000, Throughput=1_000)
    io2 = account.volume("io2", 100, None, Iops=5_000)
    inv = discover(Ec2Rds(account.clients), InstanceTypeCache())
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


def test_an_unknown_type_does_not_hide_the_others(aws):
    found = Ec2Rds(Clients.for_region("us-east-1")).instance_types(["m5.large", "x99.unknown"])
    assert [t.name for t in found] == ["m5.large"]


def stubbed(service, method, code):
    """An adapter whose one `service` call answers with the error `code`."""
    clients = Clients.for_region("us-east-1")
    stubber = Stubber(clients.client(service))
    stubber.add_client_error(method, service_error_code=code, service_message="no")
    stubber.activate()
    return Ec2Rds(clients)


def test_other_failures_of_describe_instance_types_are_raised():
    describer = stubbed("ec2", "describe_instance_types", "Throttling")
    with pytest.raises(AwsCallError, match="ec2:DescribeInstanceTypes in us-east-1: Throttling"):
        describer.instance_types(["m5.large"])


def test_tag_scope_takes_what_is_attached(aws):
    account = Account()
    tagged = account.instance("m5.large", team="db")
    other = account.instance("m5.large", team="web")
    data = account.volume("gp2", 100, tagged)
    account.volume("gp2", 100, other)
    inv = discover(Ec2Rds(account.clients), InstanceTypeCache(), [TagFilter.parse("team=db")])
    assert [i.instance_id for i in inv.instances] == [tagged]
    assert data in {v.volume_id for v in inv.volumes}
    assert all(v.attached_to == tagged for v in inv.volumes)


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
    inv = discover(Ec2Rds(Account().clients), InstanceTypeCache())
    dbs = {d.db_instance_id: d for d in inv.db_instances}
    assert set(dbs) == {"replica", "reports"}
    replica = dbs["replica"]
    assert (replica.engine, replica.storage_type, replica.allocated_gib) == ("mysql", "gp2", 200)
    assert replica.class_info is not None
    assert replica.class_info.name == "r5.xlarge"
    assert replica.class_info.memory_bytes == 32 * 1024**3
    assert replica.tags == {"team": "db"}
    assert dbs["reports"].iops == 8_000
    tagged = discover(Ec2Rds(Account().clients), InstanceTypeCache(), [TagFilter.parse("team=db")])
    assert [d.db_instance_id for d in tagged.db_instances] == ["replica"]


def test_without_rds_permission_the_call_says_so():
    describer = stubbed("rds", "describe_db_instances", "AccessDenied")
    with pytest.raises(AwsAccessError, match="rds:DescribeDBInstances in us-east-1: AccessDenied"):
        describer.db_instances()


def test_a_describe_answer_of_the_wrong_shape_fails_the_call_in_one_line():
    """A volume without its id: the call fails, named, never a traceback."""
    clients = Clients.for_region("us-east-1")
    stubber = Stubber(clients.client("ec2"))
    stubber.add_response("describe_volumes", {"Volumes": [{"Size": 8, "State": "in-use"}]})
    stubber.activate()
    with pytest.raises(AwsCallError, match="ec2:DescribeVolumes in us-east-1: malformed answer"):
        Ec2Rds(clients).volumes()


def test_volume_modifications_newest_first_with_their_state_and_target():
    from datetime import UTC, datetime

    clients = Clients.for_region("us-east-1")
    stubber = Stubber(clients.client("ec2"))
    stubber.add_response(
        "describe_volumes_modifications",
        {
            "VolumesModifications": [
                {
                    "VolumeId": "vol-1",
                    "ModificationState": "completed",
                    "StartTime": datetime(2026, 11, 23, 8, 0, tzinfo=UTC),
                    "Progress": 100,
                },
                {
                    "VolumeId": "vol-1",
                    "ModificationState": "optimizing",
                    "StartTime": datetime(2026, 11, 23, 10, 2, tzinfo=UTC),
                    "Progress": 40,
                    "TargetVolumeType": "io2",
                    "TargetSize": 1000,
                    "TargetIops": 20000,
                },
            ]
        },
    )
    stubber.activate()
    [newest, older] = Ec2Rds(clients).volume_modifications()["vol-1"]
    assert (newest.state, newest.progress, newest.under_way) == ("optimizing", 40, True)
    assert newest.target == "io2 1,000 GiB 20,000 IOPS"
    assert older.state == "completed" and not older.under_way
