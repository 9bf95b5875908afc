"""A configuration an operator names, checked against what AWS sells before anything reads
its past or changes it."""

from __future__ import annotations

import pytest

from analyzer.analyze.sold import Asked, configured
from analyzer.errors import ConfigError
from analyzer.model.resources import DbInstance, Instance, Inventory, Volume
from tests.fakes import M5

VOLUME = Volume("vol-batch", "us-east-1", "gp2", 80, "in-use", attached_to="i-1")
INVENTORY = Inventory(
    "us-east-1",
    volumes=[VOLUME],
    instances=[Instance("i-1", "us-east-1", "m5.large", "running", type_info=M5)],
)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("vol-batch", "expected ID:KEY=VALUE"),
        ("vol-batch:colour=red", "unknown key 'colour' (known: type, size, iops"),
        ("vol-batch:size=big", "size=big is not a whole number"),
        ("vol-batch:size=0", "size=0 must be above zero"),
        ("vol-batch:iops=", "iops has no value"),
    ],
)
def test_a_wrong_what_if_is_one_line_that_says_where_and_why(text: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Asked.parse(text)
    assert str(caught.value).startswith(f"--what-if {text}: ") and says in str(caught.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("vol-batch:type=gp4", "type gp4 is not an EBS volume type"),
        ("vol-batch:type=gp3,iops=2000", "gp3 includes 3,000 IOPS"),
        # 0.25 MiB/s per provisioned IOPS (Amazon EBS User Guide, "General Purpose SSD").
        ("vol-batch:type=gp3,iops=3000,throughput=1000", "provisions 125 to 750 MiB/s"),
        # 500 IOPS per GiB on gp3, 50 on io1.
        ("vol-batch:type=gp3,iops=50000", "gp3 at 80 GiB provisions at most 40,000 IOPS"),
        ("vol-batch:type=io1", "io1 needs iops="),
        ("vol-batch:type=io1,iops=5000", "io1 at 80 GiB provisions at most 4,000 IOPS"),
        ("vol-batch:iops=5000", "gp2 has no provisioned IOPS"),
        ("vol-batch:type=st1", "st1 starts at 125 GiB"),
        ("vol-batch:size=20000", "gp2 holds at most 16,384 GiB"),
    ],
)
def test_a_configuration_aws_does_not_sell_is_refused(text: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        configured(Asked.parse(text), VOLUME, INVENTORY)
    assert says in str(caught.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("orders:type=gp3,type=io1", "type is given twice"),
        ("orders:size=100", "RDS storage grows, never shrinks: it has 200 GiB"),
        ("orders:size=99999", "RDS storage is 20 to 65,536 GiB for mysql"),
        ("orders:iops=5000", "gp2 has no provisioned IOPS or throughput"),
        ("orders:type=gp3,iops=6000", "mysql gp3 provisions IOPS and throughput from 400 GiB"),
        # From 400 GiB, 12,000 to 64,000 IOPS and 500 to 4,000 MiB/s (RDS User Guide).
        ("orders:type=gp3,size=400,iops=100000", "provisions 12,000 to 64,000 IOPS"),
        ("orders:type=gp3,size=400,throughput=99999", "provisions 500 to 4,000 MiB/s"),
        ("orders:type=io1,iops=20000", "io1 at 200 GiB provisions at most 10,000 IOPS"),
        ("orders:type=io1,iops=5000,throughput=500", "leave throughput= out"),
    ],
)
def test_rds_storage_rds_does_not_sell_is_refused(text: str, says: str) -> None:
    db = DbInstance("orders", "us-east-1", "mysql", "db.m5.2xlarge", "gp2", 200, "available")
    inventory = Inventory("us-east-1", db_instances=[db])
    with pytest.raises(ConfigError) as caught:
        configured(Asked.parse(text), db, inventory)
    assert says in str(caught.value)


def test_a_gp2_volume_s_described_baseline_is_no_setting_kept_when_it_is_grown() -> None:
    # DescribeVolumes gives gp2's baseline (3 IOPS a GiB) as its Iops.
    described = Volume("vol-batch", "us-east-1", "gp2", 80, "in-use", iops=240)
    inventory = Inventory("us-east-1", volumes=(described,))
    change, _, _ = configured(Asked.parse("vol-batch:size=160"), described, inventory)
    assert dict(change.after) == {"volume_type": "gp2", "size_gib": 160}
    gp3 = Volume("vol-batch", "us-east-1", "gp3", 80, "in-use", iops=4000, throughput_mibps=250)
    change, _, _ = configured(Asked.parse("vol-batch:size=160"), gp3, inventory)
    assert change.after["iops"] == 4000 and change.after["throughput_mibps"] == 250
