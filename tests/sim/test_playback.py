"""A recording played back as an account: each Describe* call answers the recorded inventory,
GetMetricData the recorded datapoints, under the dimensions AWS publishes them with."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from analyzer.collect.queries import MetricQuery
from analyzer.collect.recording import Recording
from analyzer.collect.window import Window
from analyzer.model.resources import (
    AgentMetrics,
    DbInstance,
    Initialization,
    Instance,
    InstanceType,
    Inventory,
    Modification,
    Volume,
)
from analyzer.model.series import Series
from analyzer.model.units import MB
from analyzer.sim.playback import KEEP_S, RecordedAccount
from tests.helpers import T0

REGION = "us-east-1"
M5 = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)
R5 = InstanceType("r5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)
CHANGE = Modification("optimizing", T0, 40, "gp3 100 GiB")
FETCHING = Initialization(30, 600)
INVENTORY = Inventory(
    REGION,
    volumes=(
        Volume("vol-a", REGION, "gp2", 100, "in-use", attached_to="i-a", modifications=(CHANGE,)),
        Volume(
            "vol-m",
            REGION,
            "io2",
            100,
            "in-use",
            iops=3_000,
            attached_to="i-a",
            multi_attach=True,
            also_attached_to=("i-b",),
            initialization=FETCHING,
        ),
    ),
    instances=(Instance("i-a", REGION, "m5.large", "running", True, ("vol-a",), M5),),
    db_instances=(
        DbInstance("db-a", REGION, "mysql", "db.r5.large", "gp2", 200, "available", class_info=R5),
    ),
)


def _series(values: list[float]) -> Series:
    return Series.of([(T0 + timedelta(minutes=i), v) for i, v in enumerate(values)], 60)


RECORDING = Recording(
    T0,
    T0 + timedelta(minutes=10),
    {REGION: INVENTORY},
    {
        REGION: {
            "vol-a": {
                "VolumeReadOps": _series([1, 2, 3, 4, 5, 6]),
                "VolumeIOPSExceededCheck": _series([0, 1, 0]),
            },
            "vol-m": {"VolumeIOPSExceededCheck": _series([1, 1])},
            "db-a": {"BurstBalance": _series([90, 80, 70])},
        }
    },
)


def _fetch(account: RecordedAccount, query: MetricQuery, end_after_s: float = 600) -> list[float]:
    window = Window(T0, T0 + timedelta(seconds=end_after_s), query.period_s)
    found, _ = account.region(REGION).metrics.fetch([query], window)
    return list(found[query].values)


VOL_A = (("VolumeId", "vol-a"),)


@pytest.mark.parametrize(
    ("query", "values"),
    [
        (MetricQuery("vol-a", "AWS/EBS", "VolumeReadOps", VOL_A, "Sum", 60), [1, 2, 3, 4, 5, 6]),
        (MetricQuery("vol-a", "AWS/EBS", "VolumeReadOps", VOL_A, "Sum", 300), [15, 6]),
        (MetricQuery("vol-a", "AWS/EBS", "VolumeReadOps", VOL_A, "Maximum", 300), [5, 6]),
        (
            MetricQuery(
                "db-a",
                "AWS/RDS",
                "BurstBalance",
                (("DBInstanceIdentifier", "db-a"),),
                "Minimum",
                300,
            ),
            [70],
        ),
        # Per attachment: under the instance and the volume together, not the volume alone.
        (
            MetricQuery(
                "vol-a",
                "AWS/EBS",
                "VolumeIOPSExceededCheck",
                (("InstanceId", "i-a"), ("VolumeId", "vol-a")),
                "Maximum",
                60,
            ),
            [0, 1, 0],
        ),
        (MetricQuery("vol-a", "AWS/EBS", "VolumeIOPSExceededCheck", VOL_A, "Maximum", 60), []),
        # A Multi-Attach volume's per-attachment series is no one instance's.
        (
            MetricQuery(
                "vol-m",
                "AWS/EBS",
                "VolumeIOPSExceededCheck",
                (("InstanceId", "i-a"), ("VolumeId", "vol-m")),
                "Maximum",
                60,
            ),
            [],
        ),
    ],
)
def test_metrics_are_answered_from_the_recorded_points(
    query: MetricQuery, values: list[float]
) -> None:
    assert _fetch(RecordedAccount(RECORDING), query) == values


def test_the_points_stay_answerable_however_far_the_clock_runs() -> None:
    account = RecordedAccount(RECORDING)
    query = MetricQuery("vol-a", "AWS/EBS", "VolumeReadOps", VOL_A, "Sum", 86_400)
    assert _fetch(account, query, KEEP_S - 86_400) == [21]


def test_each_region_is_built_once_and_an_unrecorded_one_is_empty() -> None:
    account = RecordedAccount(RECORDING)
    assert account.region(REGION) is account.region(REGION)
    other = account.region("eu-west-1")
    assert other.name == "eu-west-1"
    assert other.describe.volumes() == [] and other.describe.db_instances() == []


def _recorded_with(agent: AgentMetrics, name: str, values: list[float]) -> RecordedAccount:
    """The recording with vol-a's agent metrics and one of their series, recorded as read."""
    volumes = (replace(INVENTORY.volumes[0], agent=agent), *INVENTORY.volumes[1:])
    recording = replace(
        RECORDING,
        inventories={REGION: replace(INVENTORY, volumes=volumes)},
        raw={REGION: {"vol-a": {name: _series(values)}}},
    )
    return RecordedAccount(recording)


def test_the_cloudwatch_agents_metrics_are_answered_with_the_dimensions_they_were_recorded_with():
    """An agent appending more than InstanceId: its volume's metrics are answered and listed
    under that very set, so that a recording made with `cloudwatch_agent_namespace` replays."""
    from analyzer.model import metrics

    agent_metric = metrics.agent_instead("VolumeReadOps")
    assert agent_metric is not None
    dims = (("ImageId", "ami-1"), ("InstanceId", "i-a"), ("VolumeId", "vol-a"))
    agent = AgentMetrics("CWAgent", dims, (agent_metric.name,))
    account = _recorded_with(agent, agent_metric.name, [600, 600])
    query = MetricQuery("vol-a", "CWAgent", agent_metric.name, dims, "Sum", 60)
    assert _fetch(account, query) == [600, 600]
    pair = MetricQuery("vol-a", "CWAgent", agent_metric.name, dims[1:], "Sum", 60)
    assert _fetch(account, pair) == []
    listing = account.region(REGION).listing
    assert listing is not None
    assert listing.list_metrics("CWAgent", "VolumeId") == [(agent_metric.name, dims)]
    assert listing.list_metrics("AWS/EBS", "VolumeId") == []


def test_a_recorded_agent_metric_plays_back_in_its_own_units_and_namespace():
    """Recorded as the analyzer read it (microseconds as seconds, in the agent's configured
    namespace): played back, the query that recorded it reads the very values again."""
    from analyzer.model import metrics

    held = metrics.agent_instead("VolumeIOPSExceededCheck")
    assert held is not None and held.scale == 1e-6
    dims = (("InstanceId", "i-a"), ("VolumeId", "vol-a"))
    agent = AgentMetrics("MyAgent", dims, (held.name,))
    account = _recorded_with(agent, held.name, [12.5, 20.0])
    query = MetricQuery("vol-a", "MyAgent", held.name, dims, "Sum", 60, held.scale)
    assert _fetch(account, query) == pytest.approx([12.5, 20.0])
    elsewhere = MetricQuery("vol-a", "CWAgent", held.name, dims, "Sum", 60, held.scale)
    assert _fetch(account, elsewhere) == []


def test_a_recording_made_across_accounts_is_read_as_each_account_s_region() -> None:
    """Each account's region is the recording's region of that scope, named as asked and
    carrying the account: what `Analyzer(connect_account=…)` reads one through."""
    from analyzer.collect.accounts import Account
    from analyzer.model.resources import Inventory, scope_of

    own, other = Account("111111111111", "prod"), Account("222222222222", "staging")
    inventories = {
        scope_of(a.id, REGION): Inventory(REGION, account_id=a.id, account_name=a.name)
        for a in (own, other)
    }
    played = RecordedAccount(Recording(T0, T0 + timedelta(hours=1), inventories, {}))
    region = played.account_region(other, REGION)
    assert (region.name, region.account) == (REGION, other)
    assert region.metrics is played.region(scope_of(other.id, REGION)).metrics
    assert region.metrics is not played.account_region(own, REGION).metrics
