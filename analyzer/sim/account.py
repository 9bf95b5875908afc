"""The built-in simulated accounts that replay the incidents, for `ebs-analyzer demo`.

moto serves the inventory in-process (EC2 instances, volumes and the instance types' real EBS
limits); the metric data comes from the simulator through a stand-in for CloudWatch's
GetMetricData, one per account. The account the demo runs in is moto's default one; another is
reached through a role that moto's STS lets be assumed, its resources created with that role's
credentials so that moto holds them in that account. No credentials and no network are needed.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import botocore.session

from analyzer.collect.accounts import Account
from analyzer.collect.aws import Clients
from analyzer.collect.describe import parse_db_instance, parse_instance_type
from analyzer.collect.regions import Region, connect, connect_as
from analyzer.errors import ConfigError
from analyzer.model.resources import Volume
from analyzer.model.units import KIB
from analyzer.sim import cluster, instance_types, metric_data, modifications, volume_status
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.rds import DatabaseSimulation, SimDatabase
from analyzer.sim.scenario import (
    AMI,
    DATABASES,
    HISTORY_MIN,
    QUIET_DAYS,
    REGION,
    ROOT,
    SCENARIO,
    DemoDatabase,
    DemoInstance,
    DemoVolume,
    ago,
)
from analyzer.sim.workloads import Demand, periodic

OWN_ID = "123456789012"
"""moto's default account: the one the demo's own credentials are in."""
ROLE_NAME = "ebs-analyzer"


@dataclass(frozen=True)
class DemoAccountSpec:
    """One simulated account: who it is, how it is reached, and what it holds."""

    id: str
    name: str
    instances: tuple[DemoInstance, ...]
    databases: tuple[DemoDatabase, ...] = ()
    role_arn: str | None = None
    """None: the account the demo runs in, read with its own credentials."""
    spare: bool = False
    """A detached gp3 volume beside the instances: a resource without data."""

    def entry(self) -> dict[str, str]:
        """Its `accounts:` entry in the settings."""
        given = {"id": self.id, "name": self.name}
        return given | ({"role_arn": self.role_arn} if self.role_arn else {})


DAY_S = 86_400.0
LOAD_TEST = periodic(2_400, 100, DAY_S, busy_s=3600.0, busy_from_s=ago(15))
"""A nightly load test of 2,400 IOPS (below gp2's 3,000 IOPS burst) for an hour, started a
quarter of an hour before now: a gp2 100 GiB volume (300 IOPS baseline, 5.4 million credits,
full after a quiet day) drains in about 43 minutes of it, so the test outlasts the credits:
the forecast now, the exhaustion half an hour into the live demo, credits that refill once
the test ends."""

STAGING_SCENARIO: tuple[DemoInstance, ...] = (
    DemoInstance(
        "staging-api",
        "m5.large",
        "A nightly load test drains a gp2 100 GiB volume's burst credits, as in incident 1",
        (DemoVolume("staging-api-data", "gp2", 100, Demand(LOAD_TEST, 4 * KIB, 0.9)),),
    ),
)

PROD = DemoAccountSpec(OWN_ID, "prod", (*SCENARIO, cluster.NODE), DATABASES, spare=True)
"""The incidents, and beside them a cluster's claims, one of them draining."""
STAGING_ID = "210987654321"
STAGING = DemoAccountSpec(
    STAGING_ID,
    "staging",
    STAGING_SCENARIO,
    role_arn=f"arn:aws:iam::{STAGING_ID}:role/{ROLE_NAME}",
)
ACCOUNTS: tuple[DemoAccountSpec, ...] = (PROD, STAGING)


@dataclass
class DemoAccount:
    """The simulated account: what moto holds and what CloudWatch would show."""

    now: datetime
    cloudwatch: SimulatedCloudWatch
    stories: dict[str, str] = field(default_factory=dict)
    """Instance name → what it replays."""
    id: str = OWN_ID
    name: str = ""
    role_arn: str | None = None
    """None: the account the demo runs in."""

    def region(self, name: str) -> Region:
        """The simulated region: moto answers the Describe* calls, the simulator the metrics."""
        return connect(name, Clients.for_region(name, cloudwatch=self.cloudwatch))

    def region_as(
        self, account: Account, name: str, member: botocore.session.Session | None
    ) -> Region:
        """The region as the daemon reads a watched account: the Describe calls through
        `member`, the session that assumes the account's role (None: the demo's own
        credentials), the metrics from this account's simulator."""
        return connect_as(account, name, member, cloudwatch=self.cloudwatch)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.id})" if self.name else self.id


@dataclass
class DemoAccounts:
    """The simulated accounts, the demo's own first, all at the same present."""

    now: datetime
    accounts: tuple[DemoAccount, ...]

    @property
    def own(self) -> DemoAccount:
        return self.accounts[0]

    def __getitem__(self, account_id: str) -> DemoAccount:
        return next(a for a in self.accounts if a.id == account_id)

    def region(self, name: str) -> Region:
        """The demo's own account's region: what AWS offers there, read through moto."""
        return self.own.region(name)


SEED = 54
"""moto's ids from this seed: the same volume ids every run, so that a fix_id the demo printed
names the same volume the next time (`demo --once --apply`)."""


def _seeded() -> None:
    """Seed moto's ids through its own API (moto docs, "Seeding Random Values")."""
    import requests

    requests.post(f"http://motoapi.amazonaws.com/moto-api/seed?a={SEED}", timeout=5)


def _tags(
    name: str, resource_type: str, others: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    given = {"Name": name, **(others or {})}
    tags = [{"Key": key, "Value": value} for key, value in given.items()]
    return [{"ResourceType": resource_type, "Tags": tags}]


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
        TagSpecifications=_tags(spec.name, "volume", spec.tags),
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
    resizes = [(ago(10), spec.size_gib)] if spec.grown_from_gib else []
    return SimVolume(
        model, spec.demand, spec.balance_percent, resizes, steady_days=spec.steady_days
    )


def _instance(ec2: Any, spec: DemoInstance, start: datetime) -> Simulation:
    run = ec2.run_instances(
        ImageId=AMI,
        MinCount=1,
        MaxCount=1,
        InstanceType=spec.instance_type,
        Placement={"AvailabilityZone": f"{REGION}a"},
        Monitoring={"Enabled": spec.detailed_monitoring},
        TagSpecifications=_tags(spec.name, "instance", spec.tags),
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
    spare: bool = True,
) -> DemoAccount:
    start = now - timedelta(minutes=HISTORY_MIN)
    simulations: list[Simulation | DatabaseSimulation] = [
        _instance(ec2, spec, start) for spec in scenario
    ]
    simulations += [_database(ec2, rds, spec, start) for spec in databases]
    cloudwatch = SimulatedCloudWatch(simulations=simulations, quiet_days=QUIET_DAYS)
    cloudwatch.advance(now)
    if spare:
        ec2.create_volume(
            AvailabilityZone=f"{REGION}a",
            Size=100,
            VolumeType="gp3",
            TagSpecifications=_tags("spare", "volume"),
        )
    stories = {s.name: s.story for s in scenario} | {d.name: d.story for d in databases}
    return DemoAccount(now, cloudwatch, stories)


def require_moto() -> None:
    """moto, which simulates the account, is an extra: without it, say how to install it."""
    if importlib.util.find_spec("moto") is None:
        raise ConfigError(
            "the demo needs moto to simulate an account: "
            "pip install 'ebs-bottleneck-analyzer[demo]'"
        )


def teach_moto() -> None:
    """What moto does not answer (DescribeVolumeStatus) or answers slowly (DescribeInstanceTypes,
    GetMetricData), taught to it; idempotent."""
    volume_status.install()
    instance_types.install()
    metric_data.install()
    modifications.install()


@contextmanager
def account(
    now: datetime,
    scenario: Sequence[DemoInstance] = SCENARIO,
    databases: Sequence[DemoDatabase] = DATABASES,
) -> Iterator[DemoAccount]:
    """The simulated account, live for the duration of the `with` block."""
    require_moto()
    import boto3
    from moto import mock_aws

    teach_moto()
    with no_real_account(), mock_aws():
        ec2 = boto3.client("ec2", region_name=REGION)
        rds = boto3.client("rds", region_name=REGION)
        built = _build(ec2, rds, now.replace(second=0, microsecond=0), scenario, databases)
        modifications.follow(OWN_ID, REGION, built.cloudwatch)
        yield built


@contextmanager
def accounts(now: datetime, specs: Sequence[DemoAccountSpec] = ACCOUNTS) -> Iterator[DemoAccounts]:
    """The simulated accounts, live for the duration of the `with` block: each one's resources
    created in moto with its own credentials (the role's, assumed through moto's STS, for an
    account other than the demo's own)."""
    require_moto()
    import boto3
    from moto import mock_aws

    teach_moto()
    present = now.replace(second=0, microsecond=0)
    with no_real_account(), mock_aws():
        _seeded()
        built = []
        for spec in specs:
            keys = _assumed(boto3.client("sts", region_name=REGION), spec.role_arn)
            ec2 = boto3.client("ec2", region_name=REGION, **keys)
            rds = boto3.client("rds", region_name=REGION, **keys)
            found = _build(ec2, rds, present, spec.instances, spec.databases, spare=spec.spare)
            modifications.follow(spec.id, REGION, found.cloudwatch)
            built.append(replace(found, id=spec.id, name=spec.name, role_arn=spec.role_arn))
        yield DemoAccounts(present, tuple(built))


SETUP_SESSION = "ebs-analyzer-demo-setup"


def _assumed(sts: Any, role_arn: str | None) -> dict[str, str]:
    """The credentials an account's resources are created with: the role's, assumed in moto's
    STS (moto keeps what they create in the role's account); none for the demo's own."""
    if role_arn is None:
        return {}
    given = sts.assume_role(RoleArn=role_arn, RoleSessionName=SETUP_SESSION)["Credentials"]
    return {
        "aws_access_key_id": given["AccessKeyId"],
        "aws_secret_access_key": given["SecretAccessKey"],
        "aws_session_token": given["SessionToken"],
    }


AWS_SETTINGS = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
)


@contextmanager
def no_real_account() -> Iterator[None]:
    """The simulated account needs no AWS settings, and the user's must not reach it: an
    endpoint, a profile or a config file meant for a real account are set aside meanwhile."""
    aside = {
        name: os.environ.pop(name)
        for name in list(os.environ)
        if name in AWS_SETTINGS or name.startswith("AWS_ENDPOINT_URL")
    }
    try:
        yield
    finally:
        os.environ.update(aside)
