"""The demo's simulated account: moto holds the inventory, the simulator answers the metrics
up to now, and no AWS setting of the user's reaches it. (The whole demo is replayed in
tests/test_demo.py; here a one-instance scenario, cheaply.)"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime, timedelta

import pytest

from analyzer.errors import AnalyzerError
from analyzer.model.units import KIB
from analyzer.sim import account as demo
from analyzer.sim.scenario import HISTORY_MIN, REGION, DemoDatabase, DemoInstance, DemoVolume
from analyzer.sim.workloads import Demand, constant

NOW = datetime(2026, 11, 21, 12, 0, 42, 123, tzinfo=UTC)
WEB = DemoInstance(
    "web",
    "m5.large",
    "a quiet web server",
    (DemoVolume("web-data", "gp2", 100, Demand(constant(100), 16 * KIB)),),
)
DB = DemoDatabase(
    "quiet-db",
    "mysql",
    "db.m5.large",
    "gp2",
    100,
    "a quiet database",
    constant(10),
    constant(10),
    16 * KIB,
    1e9,
)


def _read_ops(account: demo.DemoAccount, volume_id: str) -> list[float]:
    answer = account.cloudwatch.get_metric_data(
        MetricDataQueries=[
            {
                "Id": "m0",
                "MetricStat": {
                    "Metric": {
                        "Namespace": "AWS/EBS",
                        "MetricName": "VolumeReadOps",
                        "Dimensions": [{"Name": "VolumeId", "Value": volume_id}],
                    },
                    "Period": 60,
                    "Stat": "Sum",
                },
            }
        ],
        StartTime=account.now - timedelta(days=1),
        EndTime=account.now,
    )
    return list(answer["MetricDataResults"][0]["Values"])


def test_the_account_holds_the_scenario_and_its_history_up_to_now() -> None:
    with demo.account(NOW, scenario=(WEB,), databases=(DB,)) as account:
        assert account.now == NOW.replace(second=0, microsecond=0)
        assert account.stories == {"web": "a quiet web server", "quiet-db": "a quiet database"}
        region = account.region(REGION)
        [instance] = region.describe.instances()
        assert instance.instance_type == "m5.large" and instance.tags["Name"] == "web"
        volumes = {v.tags.get("Name"): v for v in region.describe.volumes()}
        assert set(volumes) == {"web-root", "web-data", "spare"}
        assert volumes["web-data"].attached_to == instance.instance_id
        assert (volumes["web-data"].volume_type, volumes["web-data"].size_gib) == ("gp2", 100)
        assert volumes["spare"].attached_to is None
        [db] = region.describe.db_instances()
        assert (db.db_instance_id, db.storage_type, db.allocated_gib) == ("quiet-db", "gp2", 100)
        # The history: every minute from its start to now, the simulated demand's reads.
        reads = _read_ops(account, volumes["web-data"].volume_id)
        assert reads == pytest.approx([100 * 0.7 * 60] * HISTORY_MIN)
        assert _read_ops(account, volumes["spare"].volume_id) == []


def test_the_users_aws_settings_are_set_aside_meanwhile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_PROFILE", "production")
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with demo.account(NOW, scenario=(), databases=()) as account:
        assert "AWS_PROFILE" not in os.environ
        assert "AWS_ENDPOINT_URL_EC2" not in os.environ
        assert os.environ["AWS_DEFAULT_REGION"] == REGION  # not an account's setting
        assert [v.tags["Name"] for v in account.region(REGION).describe.volumes()] == ["spare"]
    assert os.environ["AWS_PROFILE"] == "production"
    assert os.environ["AWS_ENDPOINT_URL_EC2"] == "http://127.0.0.1:9"


def test_without_moto_the_demo_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "moto", None)
    wanted = r"pip install 'ebs-bottleneck-analyzer\[demo\]'"
    with pytest.raises(AnalyzerError, match=wanted), demo.account(NOW):
        pass
