"""A built-in simulated account that replays the incidents, for `ebs-analyzer demo`.

moto serves the inventory in-process (EC2 instances, volumes and the instance types' real EBS
limits); the metric data comes from the simulator through a stand-in for CloudWatch's
GetMetricData. No credentials and no network are needed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from analyzer.collect.aws import Clients
from analyzer.collect.describe import parse_db_instance, parse_instance_type
from analyzer.collect.regions import Region, connect
from analyzer.errors import AnalyzerError
from analyzer.model.resources import Volume
from analyzer.model.units import GIB, KIB
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.rds import DatabaseSimulation, SimDatabase
from analyzer.sim.workloads import Demand, constant, steps

REGION = "us-east-1"
HISTORY_MIN = 4 * 60
AMI = "ami-12c6146b"
_MIN = 60


@dataclass(frozen=True)
class DemoVolume:
    name: str
    volume_type: str
    size_gib: int
    demand: Demand
    iops: int | None = None
    throughput_mibps: int | None = None
    balance_percent: float = 100.0
    grown_from_gib: int | None = None
    """Grown online to `size_gib` ten minutes before now: the bucket comes back full."""


@dataclass(frozen=True)
class DemoInstance:
    name: str
    instance_type: str
    story: str
    volumes: tuple[DemoVolume, ...]
    detailed_monitoring: bool = False


def _ago(minutes: float) -> float:
    """Seconds from the simulation start to `minutes` before now."""
    return (HISTORY_MIN - minutes) * _MIN


BATCH_JOB = Demand(constant(60_000), io_size_bytes=112 * KIB, read_fraction=0.6)

BATCH_JOB_ENDING = Demand(
    steps((0, 60_000), (_ago(-15), 200)), io_size_bytes=112 * KIB, read_fraction=0.6
)
"""The same job, finishing a quarter of an hour into the demo."""

SCENARIO: tuple[DemoInstance, ...] = (
    DemoInstance(
        "shop-web",
        "m5.large",
        "Incident 1: heavy reads drain a gp2 50 GiB volume's burst credits",
        (
            DemoVolume(
                "shop-data", "gp2", 50, Demand(steps((0, 100), (_ago(40), 1_500)), 4 * KIB, 0.95)
            ),
        ),
    ),
    DemoInstance(
        "shop-db",
        "m5.large",
        "Incident 1, later: credits gone, the volume runs at its 150 IOPS baseline",
        (
            DemoVolume(
                "shop-db-data",
                "gp2",
                50,
                Demand(steps((0, 100), (_ago(100), 1_500)), 4 * KIB, 0.95),
            ),
        ),
    ),
    DemoInstance(
        "reporting",
        "m5.xlarge",
        "Incident 2: an exhausted gp2 100 GiB volume grown online to 250 GiB",
        (
            DemoVolume(
                "reporting-data",
                "gp2",
                250,
                Demand(constant(3_000), 16 * KIB),
                balance_percent=0.0,
                grown_from_gib=100,
            ),
        ),
    ),
    DemoInstance(
        "batch-gp3",
        "r6i.8xlarge",
        "Incident 4, step 1: a batch job at its gp3 volume's throughput cap, ending 15 min in",
        (DemoVolume("batch-gp3-data", "gp3", 2_000, BATCH_JOB_ENDING, 16_000, 1_000),),
    ),
    DemoInstance(
        "batch-io2",
        "r6in.8xlarge",
        "Incident 4, step 2: moved to io2, now pinned at the instance's EBS limit",
        (DemoVolume("batch-io2-data", "io2", 2_000, BATCH_JOB, 32_000),),
    ),
    DemoInstance(
        "batch-io2-big",
        "m6in.12xlarge",
        "Incident 4, step 3: a larger instance, now at the io2 volume's IOPS",
        (DemoVolume("batch-io2-big-data", "io2", 2_000, BATCH_JOB, 32_000),),
        detailed_monitoring=True,
    ),
    DemoInstance(
        "logs",
        "m5.large",
        "Healthy: an st1 log volume below its baseline",
        (
            DemoVolume("logs-archive", "st1", 2_048, Demand(constant(50), 1024 * KIB, 0.1)),
            DemoVolume("logs-index", "gp3", 100, Demand(constant(400), 16 * KIB)),
        ),
    ),
)

ROOT = Demand(constant(5), 16 * KIB, 0.5)


@dataclass(frozen=True)
class DemoDatabase:
    name: str
    engine: str
    instance_class: str
    storage_type: str
    allocated_gib: int
    story: str
    reads: Callable[[float], float]
    writes: Callable[[float], float]
    io_size_bytes: float
    freeable_memory_bytes: float


DATABASES: tuple[DemoDatabase, ...] = (
    DemoDatabase(
        "orders-replica",
        "mysql",
        "db.r5.xlarge",
        "gp2",
        200,
        "Incident 3: an RDS MySQL replica whose reads drain gp2 credits; its working set "
        "does not fit in its 32 GiB",
        reads=steps((0, 150), (_ago(30), 2_500)),
        writes=constant(50),
        io_size_bytes=16 * KIB,
        freeable_memory_bytes=1.5 * GIB,
    ),
)


@dataclass
class DemoAccount:
    """The simulated account: what moto holds and what CloudWatch would show."""

    now: datetime
    cloudwatch: SimulatedCloudWatch
    stories: dict[str, str] = field(default_factory=dict)
    """Instance name → what it replays."""

    def region(self, name: str) -> Region:
        """The simulated region: moto answers the Describe* calls, the simulator the metrics."""
        return connect(name, Clients.for_region(name, cloudwatch=self.cloudwatch))


def _tags(name: str, resource_type: str) -> list[dict[str, Any]]:
    return [{"ResourceType": resource_type, "Tags": [{"Key": "Name", "Value": name}]}]


def _root_volume(ec2: Any, raw_instance: dict[str, Any], name: str) -> SimVolume | None:
    """The root volume run_instances created, lightly used."""
    mappings = raw_instance.get("BlockDeviceMappings", [])
    if not mappings:
        return None
    root_id = mappings[0]["Ebs"]["VolumeId"]
    root = ec2.describe_volumes(VolumeIds=[root_id])["Volumes"][0]
    ec2.create_tags(Resources=[root_id], Tags=[{"Key": "Name", "Value": f"{name}-root"}])
    model = Volume(
        root_id,
        REGION,
        root["VolumeType"],
        root["Size"],
        "in-use",
        attached_to=raw_instance["InstanceId"],
    )
    return SimVolume(model, ROOT)


def _data_volume(ec2: Any, spec: DemoVolume, instance_id: str, device: str) -> SimVolume:
    extra = {
        key: value
        for key, value in (("Iops", spec.iops), ("Throughput", spec.throughput_mibps))
        if value is not None
    }
    created = ec2.create_volume(
        AvailabilityZone=f"{REGION}a",
        Size=spec.size_gib,
        VolumeType=spec.volume_type,
        TagSpecifications=_tags(spec.name, "volume"),
        **extra,
    )
    volume_id = created["VolumeId"]
    ec2.attach_volume(VolumeId=volume_id, InstanceId=instance_id, Device=device)
    # A grown volume is simulated at its old size until the growth, ten minutes ago.
    model = Volume(
        volume_id,
        REGION,
        spec.volume_type,
        spec.grown_from_gib or spec.size_gib,
        "in-use",
        spec.iops,
        spec.throughput_mibps,
        instance_id,
    )
    resizes = [(_ago(10), spec.size_gib)] if spec.grown_from_gib else []
    return SimVolume(model, spec.demand, spec.balance_percent, resizes)


def _instance(ec2: Any, spec: DemoInstance, start: datetime) -> Simulation:
    run = ec2.run_instances(
        ImageId=AMI,
        MinCount=1,
        MaxCount=1,
        InstanceType=spec.instance_type,
        Placement={"AvailabilityZone": f"{REGION}a"},
        Monitoring={"Enabled": spec.detailed_monitoring},
        TagSpecifications=_tags(spec.name, "instance"),
    )
    raw = run["Instances"][0]
    instance_id = raw["InstanceId"]
    root = _root_volume(ec2, raw, spec.name)
    sims = [root] if root else []
    sims += [
        _data_volume(ec2, vol, instance_id, f"/dev/sd{device}")
        for device, vol in zip("fghijk", spec.volumes, strict=False)
    ]
    type_info = parse_instance_type(
        ec2.describe_instance_types(InstanceTypes=[spec.instance_type])["InstanceTypes"][0]
    )
    return Simulation(SimInstance(instance_id, type_info, sims, spec.detailed_monitoring), start)


def _database(ec2: Any, rds: Any, spec: DemoDatabase, start: datetime) -> DatabaseSimulation:
    raw = rds.create_db_instance(
        DBInstanceIdentifier=spec.name,
        Engine=spec.engine,
        DBInstanceClass=spec.instance_class,
        AllocatedStorage=spec.allocated_gib,
        StorageType=spec.storage_type,
        MasterUsername="admin",
        MasterUserPassword="not-a-real-password",
        Tags=[{"Key": "Name", "Value": spec.name}],
    )["DBInstance"]
    ec2_type = spec.instance_class.removeprefix("db.")
    info = parse_instance_type(
        ec2.describe_instance_types(InstanceTypes=[ec2_type])["InstanceTypes"][0]
    )
    db = parse_db_instance(raw, REGION, {ec2_type: info})
    free = spec.freeable_memory_bytes
    return DatabaseSimulation(
        SimDatabase(db, spec.reads, spec.writes, spec.io_size_bytes, lambda _t: free), start
    )


def _build(
    ec2: Any,
    rds: Any,
    now: datetime,
    scenario: Sequence[DemoInstance],
    databases: Sequence[DemoDatabase],
) -> DemoAccount:
    start = now - timedelta(minutes=HISTORY_MIN)
    simulations: list[Simulation | DatabaseSimulation] = [
        _instance(ec2, spec, start) for spec in scenario
    ]
    simulations += [_database(ec2, rds, spec, start) for spec in databases]
    cloudwatch = SimulatedCloudWatch(simulations=simulations)
    cloudwatch.advance(now)
    ec2.create_volume(
        AvailabilityZone=f"{REGION}a",
        Size=100,
        VolumeType="gp3",
        TagSpecifications=_tags("spare", "volume"),
    )
    stories = {s.name: s.story for s in scenario} | {d.name: d.story for d in databases}
    return DemoAccount(now, cloudwatch, stories)


@contextmanager
def account(
    now: datetime,
    scenario: Sequence[DemoInstance] = SCENARIO,
    databases: Sequence[DemoDatabase] = DATABASES,
) -> Iterator[DemoAccount]:
    """The simulated account, live for the duration of the `with` block."""
    try:
        import boto3
        from moto import mock_aws
    except ImportError:
        raise AnalyzerError(
            "the demo needs moto to simulate an account: "
            "pip install 'ebs-bottleneck-analyzer[demo]'"
        ) from None
    with mock_aws():
        ec2 = boto3.client("ec2", region_name=REGION)
        rds = boto3.client("rds", region_name=REGION)
        yield _build(ec2, rds, now.replace(second=0, microsecond=0), scenario, databases)
