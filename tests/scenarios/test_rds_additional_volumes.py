"""An RDS for SQL Server instance with an io2 volume beside its gp3 primary, replayed from a
recording: at 10,000 IOPS it runs far from its storage's limits, which add the volumes'
(3,000 + 20,000 IOPS). Without the additional volume the same demand is held at the
primary's 3,000 IOPS, and that is a cap."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect.recording import Recording
from analyzer.deliver.rows import resource_row
from analyzer.live.cycle import Analyzer
from analyzer.model.resources import DbInstance, InstanceType, Inventory, StorageVolume
from analyzer.model.series import Series
from analyzer.model.units import GIB, KIB, MB
from analyzer.sim.playback import RecordedAccount
from analyzer.sim.rds import DatabaseSimulation, SimDatabase

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
MINUTES = 40
CLASS = InstanceType(
    "r6i.8xlarge", 40_000, 40_000, 1_250 * MB, 1_250 * MB, 256 * GIB, nitro=True
)  # fmt: skip
PRIMARY = DbInstance(
    "erp", "us-east-1", "sqlserver-ee", "db.r6i.8xlarge", "gp3", 200, "available",
    class_info=CLASS,
)  # fmt: skip
DATA2 = StorageVolume("RDSDBDATA2", "io2", 1_000, 20_000)


def replay(db: DbInstance):
    sim = DatabaseSimulation(
        SimDatabase(db, lambda _t: 7_000, lambda _t: 3_000, 16 * KIB, lambda _t: 100 * GIB),
        START,
    )
    data = sim.run(MINUTES)
    raw = {db.db_instance_id: {m: Series.of(p, 60) for (_, m), p in data.items()}}
    end = START + timedelta(minutes=MINUTES)
    recorded = Recording(
        START, end, {"us-east-1": Inventory("us-east-1", db_instances=(db,))}, {"us-east-1": raw}
    )
    config = settings.load({"region": ["us-east-1"], "pricing_api": False})
    analyzer = Analyzer(config, rules.load(), connect=RecordedAccount(recorded).region)
    return analyzer.run(end + timedelta(seconds=130))


@pytest.mark.parametrize("beside", [False, True])
def test_additional_volumes_add_to_what_the_storage_carries(beside: bool) -> None:
    db = replace(PRIMARY, additional_volumes=(DATA2,)) if beside else PRIMARY
    result = replay(db)
    rules_fired = [f.rule for f in result.findings]
    row = resource_row(result.reading("us-east-1", "erp"))
    if beside:
        assert rules_fired == []
        assert row["iops"] == pytest.approx(10_000, rel=0.01)
        assert row["iops_limit"] == 23_000
        assert [v["name"] for v in row["additional_volumes"]] == ["RDSDBDATA2"]
    else:
        assert rules_fired == ["rds-iops-cap"]
        assert row["iops"] == pytest.approx(3_000, rel=0.01)
