"""RDS storage as RDS documents it, replayed through moto.

A PostgreSQL instance on 1,000 GiB of io1 with 20,000 IOPS is striped over four volumes of
5,000 IOPS and 500 MiB/s each; RDS gives such storage up to 256,000 IOPS and 4,000 MiB/s.
Read as one EBS io1 volume it was "pinned at its 500 MiB/s volume cap (188 % of it on
average)" at 937 MiB/s.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect.describe import parse_db_instance
from analyzer.deliver.rows import resource_row
from analyzer.live.cycle import Analyzer
from analyzer.model.units import KIB, MIB
from analyzer.sim.rds import DatabaseSimulation, SimDatabase
from tests.account import Account

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def test_postgres_io1_at_937_mib_per_second_is_within_its_striped_storage(aws: None) -> None:
    account = Account()
    rds = boto3.client("rds", region_name=account.region)
    raw = rds.create_db_instance(
        DBInstanceIdentifier="ledger",
        Engine="postgres",
        DBInstanceClass="db.r6i.8xlarge",  # 10 Gbps of EBS bandwidth: the class is no limit
        AllocatedStorage=1_000,
        StorageType="io1",
        Iops=20_000,
        MasterUsername="admin",
        MasterUserPassword="password123",
    )["DBInstance"]
    db = parse_db_instance(
        raw, account.region, {"r6i.8xlarge": account.instance_type("r6i.8xlarge")}
    )
    size = 64 * KIB  # 15,000 IOPS of 64 KiB: 937.5 MiB/s
    sim = DatabaseSimulation(
        SimDatabase(db, lambda _t: 10_000, lambda _t: 5_000, size, lambda _t: 100e9), START
    )
    account.put(sim.run(40))
    now = START + timedelta(minutes=40, seconds=130)
    config = settings.load({"region": [account.region]})
    result = Analyzer(config, rules.load()).run(now)
    assert [f for f in result.findings if f.resource.resource_id == "ledger"] == []
    row = resource_row(result.reading(account.region, "ledger"))
    assert row["status"] == "ok"
    assert row["storage_throughput_limit_bytes_per_second"] == 2_000 * MIB
    assert row["throughput_bytes_per_second"] == 937.5 * MIB
