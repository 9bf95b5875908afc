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


def test_a_second_account_holds_its_resources_and_is_read_through_its_role() -> None:
    """The second account's resources are created with its role's credentials, so moto holds
    them there and not in the demo's own account; the analyzer's way in, `Watched.session`,
    assumes the role through moto's STS, and its metrics come from its own simulator."""
    import boto3

    from analyzer import settings
    from analyzer.live.watched import Watched
    from analyzer.sim.account import OWN_ID, STAGING, DemoAccountSpec

    own = DemoAccountSpec(OWN_ID, "prod", (), spare=True)
    staging = DemoAccountSpec(STAGING.id, STAGING.name, (WEB,), role_arn=STAGING.role_arn)
    with demo.accounts(NOW, specs=(own, staging)) as simulated:
        assert [a.label for a in simulated.accounts] == [
            "prod (123456789012)",
            "staging (210987654321)",
        ]
        assert simulated.own.role_arn is None and simulated[STAGING.id].role_arn == STAGING.role_arn
        mine = simulated.region(REGION).describe
        assert mine.instances() == [] and [v.tags["Name"] for v in mine.volumes()] == ["spare"]

        config = settings.load({"region": [REGION], "accounts": [own.entry(), staging.entry()]})
        watched = Watched(config)
        [prod, theirs] = watched.resolve(REGION)
        assert watched.session(prod, REGION) is None  # the demo's own credentials
        member = watched.session(theirs, REGION)
        assert member is not None
        caller = boto3.Session(botocore_session=member).client("sts", region_name=REGION)
        identity = caller.get_caller_identity()
        assert identity["Account"] == STAGING.id
        assert ":assumed-role/ebs-analyzer/" in identity["Arn"]

        region = simulated[STAGING.id].region_as(theirs, REGION, member)
        assert region.scope == f"{STAGING.id}/{REGION}"
        [instance] = region.describe.instances()
        assert instance.tags["Name"] == "web"
        assert {v.tags["Name"] for v in region.describe.volumes()} == {"web-root", "web-data"}
        web_data = next(v for v in region.describe.volumes() if v.tags["Name"] == "web-data")
        reads = _read_ops(simulated[STAGING.id], web_data.volume_id)
        assert reads == pytest.approx([100 * 0.7 * 60] * HISTORY_MIN)
        assert _read_ops(simulated.own, web_data.volume_id) == []


def test_the_staging_load_test_is_quiet_until_a_quarter_of_an_hour_ago() -> None:
    from analyzer.sim.account import LOAD_TEST
    from analyzer.sim.scenario import ago

    assert LOAD_TEST(ago(16)) == 100 and LOAD_TEST(ago(15)) == LOAD_TEST(ago(0)) == 2_400
    assert LOAD_TEST(0) == 100  # the history starts after a quiet day: a full bucket


def test_a_cluster_nodes_tags_and_its_claims_reach_the_inventory() -> None:
    """What a spec tags its instance and volumes with, moto holds and DescribeInstances and
    DescribeVolumes return: the analyzer reads the node group and each claim from them."""
    from analyzer.model.kubernetes import NodeOwner
    from analyzer.sim import cluster

    with demo.account(NOW, scenario=(cluster.NODE,), databases=()) as account:
        region = account.region(REGION)
        [node] = region.describe.instances()
        assert node.node is not None
        assert (node.node.owner, node.node.name, node.node.cluster) == (
            NodeOwner.NODEGROUP,
            "db",
            "prod-eks",
        )
        claims = {
            v.claim.text(): v.attached_to for v in region.describe.volumes() if v.claim is not None
        }
        assert claims == {f"PVC db/data-postgres-{i}": node.instance_id for i in range(3)}
