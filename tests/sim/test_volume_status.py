"""DescribeVolumeStatus for the simulated account: every volume `ok` with its I/O enabled, and
a volume marked initializing reports AWS's `initialization-state` and its progress."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from analyzer.sim import volume_status
from tests.conftest import REGION


def _volume(ec2: Any) -> str:
    created = ec2.create_volume(AvailabilityZone=f"{REGION}a", Size=100, VolumeType="gp3")
    return str(created["VolumeId"])


@pytest.fixture
def ec2(aws: None) -> Any:
    volume_status.install()  # again: installing is idempotent
    return boto3.client("ec2", region_name=REGION)


def test_every_volume_is_ok_and_done_initializing(ec2: Any) -> None:
    volume = _volume(ec2)
    [status] = ec2.describe_volume_status(VolumeIds=[volume])["VolumeStatuses"]
    assert status["VolumeId"] == volume
    assert status["AvailabilityZone"] == f"{REGION}a"
    assert status["VolumeStatus"]["Status"] == "ok"
    details = {d["Name"]: d["Status"] for d in status["VolumeStatus"]["Details"]}
    assert details == {
        "io-enabled": "passed",
        "io-performance": "not-applicable",
        "initialization-state": "completed",
    }
    assert "InitializationStatusDetails" not in status


def test_a_marked_volume_reports_its_initialization(ec2: Any) -> None:
    fetching, done = _volume(ec2), _volume(ec2)
    volume_status.initializing(REGION, fetching, 40, 1_800)
    statuses = {s["VolumeId"]: s for s in ec2.describe_volume_status()["VolumeStatuses"]}
    assert set(statuses) == {fetching, done}
    state = {d["Name"]: d["Status"] for d in statuses[fetching]["VolumeStatus"]["Details"]}
    assert state["initialization-state"] == "initializing"
    assert statuses[fetching]["VolumeStatus"]["Status"] == "ok"
    assert statuses[fetching]["InitializationStatusDetails"] == {
        "InitializationType": "default",
        "Progress": 40,
        "EstimatedTimeToCompleteInSeconds": 1_800,
    }
    assert "InitializationStatusDetails" not in statuses[done]


def test_only_the_volumes_asked_for_are_described(ec2: Any) -> None:
    asked, _other = _volume(ec2), _volume(ec2)
    statuses = ec2.describe_volume_status(VolumeIds=[asked])["VolumeStatuses"]
    assert [s["VolumeId"] for s in statuses] == [asked]


def test_a_mark_holds_in_its_own_region_only(ec2: Any) -> None:
    volume = _volume(ec2)
    volume_status.initializing("eu-west-1", volume, 10, 60)
    [status] = ec2.describe_volume_status(VolumeIds=[volume])["VolumeStatuses"]
    assert "InitializationStatusDetails" not in status
