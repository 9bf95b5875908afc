"""The calls that change a resource, as EC2 and RDS answer them (moto)."""

from __future__ import annotations

import boto3

from analyzer.collect.aws import Clients
from analyzer.collect.changes import Ec2RdsChanges
from tests.helpers import moto_database

REGION = "us-east-1"


def test_a_dry_run_that_would_succeed_is_no_error_and_changes_nothing(aws) -> None:
    ec2 = boto3.client("ec2", REGION)
    vol = ec2.create_volume(Size=50, VolumeType="gp2", AvailabilityZone=f"{REGION}a")["VolumeId"]
    changes = Ec2RdsChanges(Clients.for_region(REGION))
    target = {"volume_type": "gp3", "size_gib": 50, "iops": 3000, "throughput_mibps": 125}
    assert changes.modify_volume(vol, target, dry_run=True).dry_run
    assert ec2.describe_volumes(VolumeIds=[vol])["Volumes"][0]["VolumeType"] == "gp2"
    started = changes.modify_volume(vol, target, dry_run=False).modification
    assert started is not None and started.target == "gp3 50 GiB 3,000 IOPS 125 MiB/s"
    read = changes.volume(vol)
    assert read is not None and read.volume_type == "gp3" and len(read.modifications) == 1


def test_a_resource_that_does_not_exist_is_none(aws) -> None:
    changes = Ec2RdsChanges(Clients.for_region(REGION))
    assert changes.volume("vol-0123456789abcdef0") is None
    assert changes.db_instance("nothing-here") is None


def test_rds_storage_is_modified_at_once(aws) -> None:
    moto_database()
    changes = Ec2RdsChanges(Clients.for_region(REGION))
    changes.modify_db_storage("orders", {"storage_type": "gp3", "allocated_gib": 400})
    db = changes.db_instance("orders")
    assert db is not None and (db.storage_type, db.allocated_gib) == ("gp3", 400)
