"""`backtest --what-if`: a configuration an operator names, replayed over the past."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest

from analyzer.cli import main
from analyzer.errors import ConfigError
from analyzer.model.demand import Demand
from analyzer.model.resources import Instance, Inventory, Volume
from analyzer.offline.what_if import Asked, find, render, tried
from tests.fakes import M5

START = datetime(2026, 11, 13, tzinfo=UTC)
VOLUME = Volume("vol-batch", "us-east-1", "gp2", 80, "in-use", attached_to="i-1")
INVENTORY = Inventory(
    "us-east-1",
    volumes=[VOLUME],
    instances=[Instance("i-1", "us-east-1", "m5.large", "running", type_info=M5)],
)


def nightly_drain() -> Demand:
    """What CloudWatch shows of a batch at 1,200 IOPS for two hours every night on gp2 80 GiB:
    its bucket (5.4 M credits, 240 IOPS baseline) lasts 93 minutes, then the baseline."""
    shown, credits = [], 5_400_000.0
    for minute in range(14 * 1440):
        want = 1_200.0 if 120 <= minute % 1440 < 240 else 20.0
        got = min(want, 3_000.0 if credits > 54_000 else 240.0)
        shown.append(got)
        credits = min(max(credits - (got - 240.0) * 60, 0.0), 5_400_000.0)
    rates = np.array(shown)
    return Demand.seen(START, 60, rates, rates * 16_384)


def test_a_configuration_is_replayed_beside_the_volume_as_it_is() -> None:
    gp3 = tried(Asked.parse("vol-batch:type=gp3"), VOLUME, INVENTORY, nightly_drain())
    assert gp3.as_is.minutes_limited == 14 * 27 and gp3.as_is.floor
    assert gp3.option.held and gp3.option.days == 14.0
    assert dict(gp3.after) == {"volume_type": "gp3", "size_gib": 80}
    grown = tried(Asked.parse("vol-batch:size=160"), VOLUME, INVENTORY, nightly_drain())
    # 160 GiB: a 480 IOPS baseline, its credits last 125 min at 1,200 IOPS: past the batch.
    assert grown.option.held
    small = tried(Asked.parse("vol-batch:size=100"), VOLUME, INVENTORY, nightly_drain())
    assert 0 < small.option.minutes_limited < small.as_is.minutes_limited
    text = render([gp3, small])
    assert "as it is  gp2 80 GiB" in text and "tried     gp3 80 GiB" in text
    assert "  limited at least 378 min, on 14 of 14 days" in text
    assert "would have limited 0 min of the last 14 days" in text
    assert json.loads(json.dumps(gp3.as_dict()))["option"]["minutes_limited"] == 0


def test_a_resource_not_in_the_inventory_is_named() -> None:
    with pytest.raises(
        ConfigError, match="no volume, RDS instance or EC2 instance vol-gone in the inventory"
    ):
        find(Asked.parse("vol-gone:type=gp3"), {"us-east-1": INVENTORY})


def test_the_shipped_recording_answers_what_if_for_the_replica(capsys) -> None:
    """Incident 3's replica, gp2 800 GiB, ran empty one Friday: gp3 would have held."""
    argv = ["backtest", "--from", "incident-3-fortnight", "--format", "json"]
    assert main([*argv, "--what-if", "orders-replica:type=gp3"]) == 0
    [found] = json.loads(capsys.readouterr().out)["what_if"]
    assert found["resource_type"] == "db_instance"
    assert found["from"] == {"storage_type": "gp2", "allocated_gib": 800}
    assert found["to"] == {"storage_type": "gp3", "allocated_gib": 800}
    assert found["as_is"]["minutes_limited"] > 0 and found["as_is"]["floor"]
    assert found["as_is"]["worst_day"] == "2026-11-13"
    assert found["option"]["minutes_limited"] == 0
    assert main([*argv, "--what-if", "orders-replica:stripes=2"]) == 2
    assert "an RDS instance's storage has no stripes" in capsys.readouterr().err


def test_over_the_account_it_reads_the_volume_s_counts_and_says_what_it_cost(aws, capsys) -> None:
    """Through moto: a volume at 1,200 IOPS until its gp2 80 GiB bucket empties (93 min),
    then at its baseline."""
    from datetime import timedelta

    import boto3

    ec2 = boto3.client("ec2", region_name="us-east-1")
    volume = ec2.create_volume(AvailabilityZone="us-east-1a", Size=80, VolumeType="gp2")
    vid = volume["VolumeId"]
    instance = ec2.run_instances(
        ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="m5.large"
    )["Instances"][0]["InstanceId"]
    ec2.attach_volume(VolumeId=vid, InstanceId=instance, Device="/dev/sdf")
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    for minute in range(160, 5, -1):
        iops = 1_200.0 if minute > 160 - 93 else 240.0
        at = now - timedelta(minutes=minute)
        cloudwatch.put_metric_data(
            Namespace="AWS/EBS",
            MetricData=[
                {
                    "MetricName": name,
                    "Dimensions": [{"Name": "VolumeId", "Value": vid}],
                    "Timestamp": at,
                    "Value": value * 60,
                    "Unit": "Count" if "Ops" in name else "Bytes",
                }
                for name, value in (("VolumeReadOps", iops), ("VolumeReadBytes", iops * 16_384))
            ],
        )
    argv = ["backtest", "--region", "us-east-1", "--since", "1d", "--format", "json"]
    assert main([*argv, "--what-if", f"{vid}:type=gp3"]) == 0
    out, err = capsys.readouterr()
    [found] = json.loads(out)["what_if"]
    assert found["option"]["minutes_limited"] == 0
    assert found["as_is"]["days"] < 1 and found["as_is"]["floor"]
    assert "fetched 4 metrics in 4 call(s)" in err
    # A configuration AWS does not sell is refused before anything is read, or billed: on a
    # volume without a datapoint, the refusal, not the missing past, is what is said.
    quiet = ec2.create_volume(AvailabilityZone="us-east-1a", Size=80, VolumeType="gp2")
    ec2.attach_volume(VolumeId=quiet["VolumeId"], InstanceId=instance, Device="/dev/sdg")
    assert main([*argv, "--what-if", f"{quiet['VolumeId']}:type=gp3,iops=2000"]) == 2
    err = capsys.readouterr().err
    assert "gp3 includes 3,000 IOPS" in err and "no operations" not in err


def test_an_instance_s_type_is_tried_through_its_ebs_limits() -> None:
    from analyzer.model.resources import InstanceType

    # m5.2xlarge: 12,000 IOPS of baseline (DescribeInstanceTypes): a nightly 10,000 IOPS for
    # 90 min, past the 71 min m5.large's EBS bucket lasts, fits in it.
    big = InstanceType("m5.2xlarge", 12_000, 18_750, 287.5e6, 593.75e6, 32 * 1024**3, True, 8)
    [instance] = INVENTORY.instances
    day = np.full(1440, 100.0)
    day[120:210] = 10_000.0
    rates = np.tile(day, 14)
    seen = Demand.seen(START, 60, rates, rates * 16_384)
    moved = tried(Asked.parse("i-1:type=m5.2xlarge"), instance, INVENTORY, seen, {big.name: big})
    assert moved.as_is.minutes_limited == 14 * 19 and moved.option.held
    assert dict(moved.before) == {"instance_type": "m5.large"}
    assert "tried     m5.2xlarge" in render([moved])
    with pytest.raises(ConfigError, match=r"the EBS limits of m5\.9xlarge are not known here"):
        tried(Asked.parse("i-1:type=m5.9xlarge"), instance, INVENTORY, seen, {big.name: big})
    with pytest.raises(ConfigError, match="an EC2 instance has no size"):
        tried(Asked.parse("i-1:size=100"), instance, INVENTORY, seen, {})


def test_over_the_account_an_instance_s_type_is_described_and_tried(aws, capsys) -> None:
    """Through moto: an m5.large's EBS counts (basic monitoring, five-minute sums) at 10,000
    IOPS for 90 minutes, tried on m5.2xlarge, whose limits DescribeInstanceTypes gives."""
    from datetime import timedelta

    import boto3

    ec2 = boto3.client("ec2", region_name="us-east-1")
    instance = ec2.run_instances(
        ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="m5.large"
    )["Instances"][0]["InstanceId"]
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    now -= timedelta(minutes=now.minute % 5)
    for step in range(30, 1, -1):
        iops = 10_000.0 if step > 12 else 100.0
        cloudwatch.put_metric_data(
            Namespace="AWS/EC2",
            MetricData=[
                {
                    "MetricName": name,
                    "Dimensions": [{"Name": "InstanceId", "Value": instance}],
                    "Timestamp": now - timedelta(minutes=5 * step),
                    "Value": value * 300,
                }
                for name, value in (("EBSReadOps", iops), ("EBSReadBytes", iops * 16_384))
            ],
        )
    argv = ["backtest", "--region", "us-east-1", "--since", "1d", "--format", "json"]
    assert main([*argv, "--what-if", f"{instance}:type=m5.2xlarge"]) == 0
    [found] = json.loads(capsys.readouterr().out)["what_if"]
    assert found["from"] == {"instance_type": "m5.large"}
    assert found["as_is"]["minutes_limited"] > 0 and found["option"]["minutes_limited"] == 0


def test_a_recorded_instance_is_read_at_the_period_it_was_recorded_at(tmp_path, capsys) -> None:
    """Basic monitoring: five-minute EBS sums. 4,000 IOPS for three hours drains m5.large's
    EBS bucket by 400 a second, which lasts 19 h: it held. Read as minutes, each sum would
    stand for 20,000 IOPS in one minute, past its 18,750 IOPS maximum."""
    from datetime import timedelta

    from analyzer.collect import recording
    from analyzer.model.series import Series

    start = datetime(2026, 11, 20, tzinfo=UTC)
    stamps = [start + timedelta(minutes=5 * k) for k in range(36)]
    raw = {
        "us-east-1": {
            "i-1": {
                "EBSReadOps": Series.of([(t, 4_000.0 * 300) for t in stamps], 300),
                "EBSReadBytes": Series.of([(t, 4_000.0 * 300 * 16_384) for t in stamps], 300),
            }
        }
    }
    path = tmp_path / "instance.json.gz"
    end = start + timedelta(hours=3)
    recording.write(path, recording.Recording(start, end, {"us-east-1": INVENTORY}, raw))
    argv = ["backtest", "--from", str(path), "--format", "json"]
    assert main([*argv, "--what-if", "i-1:type=m5.large"]) == 0
    [found] = json.loads(capsys.readouterr().out)["what_if"]
    assert found["as_is"]["minutes_limited"] == 0 and found["as_is"]["days"] == 0.1
    # --until cuts the recording: its first hour.
    until = (start + timedelta(hours=1)).isoformat()
    assert main([*argv, "--until", until, "--what-if", "i-1:type=m5.large"]) == 0
    [cut] = json.loads(capsys.readouterr().out)["what_if"]
    assert cut["until"] == until


@pytest.mark.parametrize(
    "fix_id",
    ["vol-batch:type=gp3,iops=3000,throughput=125", "vol-batch:type=gp2,size=480"],
)
def test_a_fix_id_is_a_what_if_that_tries_the_same_target(fix_id: str) -> None:
    from analyzer.analyze.advice.modification import priced
    from analyzer.analyze.prices import load

    asked = Asked.parse(fix_id)
    trial = tried(asked, VOLUME, INVENTORY, nightly_drain())
    remedy = priced(
        "a fix",
        load(None),
        None,
        VOLUME,
        str(trial.after["volume_type"]),
        int(trial.after["size_gib"]),
        trial.after.get("iops"),
        trial.after.get("throughput_mibps"),
    )
    assert remedy.fix_id == fix_id
