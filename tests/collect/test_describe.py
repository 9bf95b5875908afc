"""The boto3 adapter for the Describe* calls, against moto, and botocore's Stubber for errors."""

from datetime import UTC, datetime, timedelta

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
    # CreateTime: how long an unattached volume can have sat idle.
    created = volumes[io2].created
    assert created is not None and abs(datetime.now(UTC) - created) < timedelta(minutes=5)
    [found] = inv.instances
    assert found.detailed_monitoring
    assert gp3 in found.volume_ids
    assert found.type_info is not None
    assert found.type_info.maximum_throughput_bps == 1_250_000_000
    assert found.type_info.nitro


def test_a_node_describes_only_its_own_volumes_and_instance(aws):
    account = Account()
    mine = account.instance("m5.large")
    other = account.instance("m5.large")
    ours = account.volume("gp2", 50, mine)
    account.volume("gp2", 50, other)
    describe = Ec2Rds(account.clients)
    assert [v.volume_id for v in describe.volumes_of([ours, "vol-0gone000000000000"])] == [ours]
    assert [i.instance_id for i in describe.instances_of([mine])] == [mine]
    assert len(describe.volumes()) == 4  # and the two root volumes


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


class Paging:
    """A client whose every paginator answers the same pages: botocore's Stubber checks
    answers against the service model, so it cannot give one off the contract."""

    def __init__(self, *pages):
        self.pages = pages

    def get_paginator(self, _operation):
        return self

    def paginate(self, **_kwargs):
        return iter(self.pages)


def answering(service, *pages):
    return Ec2Rds(Clients.for_region("us-east-1", **{service: Paging(*pages)}))


VOLUME = {"VolumeId": "vol-1", "Size": 8, "State": "in-use", "VolumeType": "gp3"}
INSTANCE = {"InstanceId": "i-1", "InstanceType": "m5.large", "State": {"Name": "running"}}
TYPE = {
    "InstanceType": "m5.large",
    "EbsInfo": {"EbsOptimizedInfo": {"BaselineIops": 3600, "MaximumThroughputInMBps": 593.75}},
    "MemoryInfo": {"SizeInMiB": 8192},
}
DB = {"DBInstanceIdentifier": "db-1", "DBInstanceClass": "db.m5.large", "AllocatedStorage": 100}


def test_answers_on_the_contract_are_read():
    [volume] = answering("ec2", {"Volumes": [VOLUME]}).volumes()
    assert (volume.volume_id, volume.size_gib) == ("vol-1", 8)
    [instance] = answering("ec2", {"Reservations": [{"Instances": [INSTANCE]}]}).instances()
    assert instance.instance_type == "m5.large"
    [found] = answering("ec2", {"InstanceTypes": [TYPE]}).instance_types(["m5.large"])
    assert found.baseline_iops == 3600 and found.memory_bytes == 8 * 1024**3
    [db] = answering("rds", {"DBInstances": [DB]}).db_instances()
    assert db.allocated_gib == 100


@pytest.mark.parametrize(
    ("service", "call", "page", "why"),
    [
        ("ec2", "volumes", {"Volumes": ["vol-1"]}, "Volumes[]: expected a structure, got str"),
        ("ec2", "volumes", {"Volumes": "vol-1"}, "Volumes: expected a list, got str"),
        ("ec2", "volumes", {"Volumes": [{**VOLUME, "Size": "8"}]}, "Volumes[].Size: expected an"),
        ("ec2", "volumes", {"Volumes": [{**VOLUME, "Iops": "3000"}]}, "Volumes[].Iops: expected"),
        ("ec2", "volumes", {"Volumes": [{**VOLUME, "Attachments": {}}]}, "Attachments: expected a"),
        ("ec2", "volumes", {"Volumes": [{**VOLUME, "Tags": [{"Key": 1}]}]}, "Tags[].Key: expected"),
        ("ec2", "volumes", {"Volumes": [{**VOLUME, "VolumeId": None}]}, "VolumeId: missing"),
        ("ec2", "volumes", "a page", "the answer: expected a structure"),
        (
            "ec2",
            "instances",
            {"Reservations": [{"Instances": [{**INSTANCE, "State": "on"}]}]},
            "Instances[].State: expected a structure",
        ),
        ("ec2", "instances", {"Reservations": [None]}, "Reservations[]: expected a structure"),
        (
            "ec2",
            "instances",
            {"Reservations": [{"Instances": [{"InstanceId": "i-1"}]}]},
            "InstanceType: missing",
        ),
        (
            "ec2",
            "offered_instance_types",
            {"InstanceTypes": [{"InstanceType": "m5.large"}]},
            "EbsInfo: missing",
        ),
        (
            "ec2",
            "offered_instance_types",
            {
                "InstanceTypes": [
                    {**TYPE, "EbsInfo": {"EbsOptimizedInfo": {"BaselineIops": "many"}}}
                ]
            },
            "EbsOptimizedInfo.BaselineIops: expected a finite number",
        ),
        (
            "ec2",
            "offered_instance_types",
            {"InstanceTypes": [{**TYPE, "MemoryInfo": {"SizeInMiB": "8 GiB"}}]},
            "MemoryInfo.SizeInMiB: expected an integer",
        ),
        (
            "ec2",
            "offered_instance_types",
            {"InstanceTypes": [{**TYPE, "SupportedUsageClasses": "spot"}]},
            "SupportedUsageClasses: expected a list",
        ),
        (
            "rds",
            "db_instances",
            {"DBInstances": [{**DB, "AllocatedStorage": "100"}]},
            "DBInstances[].AllocatedStorage: expected an integer",
        ),
        (
            "rds",
            "db_instances",
            {"DBInstances": [{**DB, "MultiAZ": "yes"}]},
            "MultiAZ: expected a boolean",
        ),
        (
            "rds",
            "db_instances",
            {"DBInstances": [{**DB, "Engine": 5}]},
            "Engine: expected a string",
        ),
        (
            "rds",
            "db_instances",
            {"DBInstances": [{**DB, "TagList": "none"}]},
            "TagList: expected a list",
        ),
        (
            "ec2",
            "volume_modifications",
            {"VolumesModifications": [{"VolumeId": "vol-1", "StartTime": "today"}]},
            "StartTime: expected a timestamp",
        ),
        (
            "ec2",
            "volume_modifications",
            {"VolumesModifications": [{"VolumeId": "vol-1"}]},
            "StartTime: missing",
        ),
    ],
)
def test_a_describe_answer_off_the_contract_fails_its_call_in_one_line(service, call, page, why):
    describer = answering(service, page)
    with pytest.raises(AwsCallError) as info:
        if call == "instance_types":
            describer.instance_types(["m5.large"])
        else:
            getattr(describer, call)()
    message = str(info.value)
    assert (
        message.startswith(f"{service}:Describe") and " in us-east-1: malformed answer: " in message
    )
    assert why in message and "\n" not in message
    assert info.value.exit_code == 3


def test_orderable_classes_off_the_contract_fail_their_call():
    describer = answering("rds", {"OrderableDBInstanceOptions": [{"DBInstanceClass": 7}]})
    with pytest.raises(AwsCallError, match="rds:DescribeOrderableDBInstanceOptions in us-east-1"):
        describer.orderable_db_classes("mysql")


def status(volume_id, state=None, progress=None, seconds_left=None):
    """One VolumeStatuses item as DescribeVolumeStatus answers it (Amazon EC2 API Reference,
    VolumeStatusItem: `initialization-state` among the status details, and
    `InitializationStatusDetails` with the progress and the estimated time left)."""
    details = [{"Name": "io-enabled", "Status": "passed"}]
    if state is not None:
        details.append({"Name": "initialization-state", "Status": state})
    item = {"VolumeId": volume_id, "VolumeStatus": {"Status": "ok", "Details": details}}
    if progress is not None:
        item["InitializationStatusDetails"] = {
            "InitializationType": "default",
            "Progress": progress,
            "EstimatedTimeToCompleteInSeconds": seconds_left,
        }
    return item


def test_volumes_still_initializing_with_their_progress_and_time_left():
    clients = Clients.for_region("us-east-1")
    stubber = Stubber(clients.client("ec2"))
    stubber.add_response(
        "describe_volume_status",
        {
            "VolumeStatuses": [
                status("vol-restoring", "initializing", 42, 1_800),
                status("vol-done", "completed", 100, 0),
                status("vol-plain"),
                status("vol-no-detail", None, 7, 5_400),
            ]
        },
    )
    stubber.activate()
    found = Ec2Rds(clients).volume_initializations()
    assert set(found) == {"vol-restoring", "vol-no-detail"}
    restoring = found["vol-restoring"]
    assert (restoring.progress, restoring.seconds_left, restoring.kind) == (42, 1_800, "default")


def test_without_describe_volume_status_the_inventory_goes_on(aws):
    """Denied, the call is skipped with one log line, as DescribeVolumesModifications is:
    nothing reads as initializing, and nothing else is lost."""
    from structlog.testing import capture_logs

    class Denied(Ec2Rds):
        def volume_initializations(self):
            raise AwsAccessError("ec2:DescribeVolumeStatus in us-east-1: UnauthorizedOperation")

    account = Account()
    volume = account.volume("gp3", 100, account.instance("m5.large"))
    with capture_logs() as logs:
        inventory = discover(
            Denied(Clients.for_region("us-east-1")), InstanceTypeCache(), with_rds=False
        )
    assert volume in {v.volume_id for v in inventory.volumes}
    assert all(v.initialization is None for v in inventory.volumes)
    assert [e["event"] for e in logs if e["event"].endswith("skipped")] == [
        "initialization.skipped"
    ]


def test_an_rds_instance_with_additional_volumes_and_a_dedicated_log_volume():
    from analyzer.collect.describe import parse_db_instance

    raw = {
        "DBInstanceIdentifier": "erp",
        "DBInstanceClass": "db.r5.2xlarge",
        "Engine": "sqlserver-ee",
        "StorageType": "gp3",
        "AllocatedStorage": 200,
        "DBInstanceStatus": "available",
        "DedicatedLogVolume": False,
        "AdditionalStorageVolumes": [
            {"VolumeName": "RDSDBDATA2", "StorageType": "IO2", "AllocatedStorage": 1000,
             "IOPS": 20000, "StorageVolumeStatus": "ACTIVE"},
            {"VolumeName": "RDSDBDATA3", "StorageType": "GP3", "AllocatedStorage": 20,
             "StorageVolumeStatus": "NOT-IN-USE"},
        ],
    }  # fmt: skip
    found = parse_db_instance(raw, "us-east-1")
    [data2] = found.additional_volumes  # a volume not in use holds nothing read or written
    assert (data2.name, data2.storage_type, data2.allocated_gib, data2.iops) == (
        "RDSDBDATA2", "io2", 1_000, 20_000,
    )  # fmt: skip
    assert not found.dedicated_log_volume
    assert parse_db_instance({**raw, "DedicatedLogVolume": True}, "us-east-1").dedicated_log_volume


def test_a_modification_says_what_the_volume_was_and_when_it_ended():
    """AWS's `Original*` values are the volume's limits while it is `modifying`; `EndTime`
    comes once it has completed (Amazon EC2 API Reference, VolumeModification)."""
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
                    "StartTime": datetime(2026, 11, 23, 9, 12, tzinfo=UTC),
                    "EndTime": datetime(2026, 11, 23, 9, 40, tzinfo=UTC),
                    "Progress": 100,
                    "TargetVolumeType": "gp3",
                    "TargetSize": 50,
                    "TargetIops": 3000,
                    "TargetThroughput": 125,
                    "OriginalVolumeType": "gp2",
                    "OriginalSize": 50,
                    "OriginalIops": 150,
                },
            ]
        },
    )
    stubber.activate()
    [made] = Ec2Rds(clients).volume_modifications()["vol-1"]
    assert made.original_fields == (("volume_type", "gp2"), ("size_gib", 50), ("iops", 150))
    assert made.ended == datetime(2026, 11, 23, 9, 40, tzinfo=UTC)
    assert made.text() == (
        "gp2 50 GiB 150 IOPS → gp3 50 GiB 3,000 IOPS 125 MiB/s at 09:12 UTC (completed)"
    )
