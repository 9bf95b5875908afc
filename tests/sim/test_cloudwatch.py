"""GetMetricData answered from simulations: under the dimensions AWS publishes each metric
with and no other (`metrics.VOLUME_ON_INSTANCE`: CloudWatch matches a query's dimensions
exactly), within the window asked, folded to the period and statistic asked."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzer.model.resources import InstanceType, Volume
from analyzer.model.units import KIB, MB
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.datapoints import Datapoints
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.workloads import Demand, constant
from tests.helpers import T0

NITRO = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)
VOL = [("VolumeId", "vol-a")]
PAIR = [("InstanceId", "i-a"), ("VolumeId", "vol-a")]


def minutes(values: list[float], start: datetime = T0) -> list[tuple[datetime, float]]:
    return [(start + timedelta(minutes=i), v) for i, v in enumerate(values)]


def ask(
    cloud: SimulatedCloudWatch,
    namespace: str,
    name: str,
    dims: list[tuple[str, str]],
    end: datetime,
    start: datetime = T0,
    period: int = 60,
    stat: str = "Sum",
) -> list[tuple[datetime, float]]:
    query = {
        "Id": "m0",
        "MetricStat": {
            "Metric": {
                "Namespace": namespace,
                "MetricName": name,
                "Dimensions": [{"Name": n, "Value": v} for n, v in dims],
            },
            "Period": period,
            "Stat": stat,
        },
    }
    answer: dict[str, Any] = cloud.get_metric_data(
        MetricDataQueries=[query], StartTime=start, EndTime=end
    )
    [result] = answer["MetricDataResults"]
    assert result["Id"] == "m0" and result["StatusCode"] == "Complete"
    return list(zip(result["Timestamps"], result["Values"], strict=True))


@pytest.mark.parametrize(
    ("metric", "attached", "dims", "answered"),
    [
        # Per-volume metrics: VolumeId alone, attached or not; nothing more, nothing else.
        ("VolumeReadOps", None, VOL, True),
        ("VolumeReadOps", "i-a", VOL, True),
        ("VolumeReadOps", "i-a", PAIR, False),
        ("VolumeReadOps", None, [("VolumeId", "vol-b")], False),
        ("VolumeReadOps", None, [], False),
        # Per-attachment metrics: the pair, only for the instance the volume is attached to.
        ("VolumeIOPSExceededCheck", "i-a", PAIR, True),
        ("VolumeIOPSExceededCheck", "i-a", list(reversed(PAIR)), True),
        ("VolumeIOPSExceededCheck", "i-a", VOL, False),
        ("VolumeIOPSExceededCheck", "i-a", [("InstanceId", "i-b"), ("VolumeId", "vol-a")], False),
        ("VolumeStalledIOCheck", "i-a", PAIR, True),
        ("VolumeStalledIOCheck", "i-a", VOL, False),
        # Not attached to one instance: AWS publishes no such metric at all.
        ("VolumeIOPSExceededCheck", None, VOL, False),
        ("VolumeIOPSExceededCheck", None, PAIR, False),
    ],
)
def test_a_query_is_answered_only_on_an_exact_match_of_its_dimensions(
    metric: str, attached: str | None, dims: list[tuple[str, str]], answered: bool
) -> None:
    data: Datapoints = {("vol-a", metric): minutes([1.0, 2.0, 3.0])}
    attachments = {"vol-a": attached} if attached else None
    cloud = SimulatedCloudWatch(data, attachments=attachments)
    points = ask(cloud, "AWS/EBS", metric, dims, T0 + timedelta(minutes=3))
    assert [v for _, v in points] == ([1.0, 2.0, 3.0] if answered else [])


@pytest.mark.parametrize(
    ("namespace", "name"),
    [("AWS/EC2", "VolumeReadOps"), ("AWS/EBS", "VolumeWriteOps")],
)
def test_another_namespace_or_metric_name_is_not_answered(namespace: str, name: str) -> None:
    cloud = SimulatedCloudWatch({("vol-a", "VolumeReadOps"): minutes([5.0])})
    assert ask(cloud, namespace, name, VOL, T0 + timedelta(minutes=1)) == []


def test_the_window_holds_its_start_and_not_its_end() -> None:
    cloud = SimulatedCloudWatch({("vol-a", "VolumeReadOps"): minutes([0, 1, 2, 3, 4, 5])})
    points = ask(
        cloud, "AWS/EBS", "VolumeReadOps", VOL, T0 + timedelta(minutes=4), T0 + timedelta(minutes=1)
    )
    assert points == minutes([1, 2, 3], T0 + timedelta(minutes=1))


@pytest.mark.parametrize(
    ("stat", "expected"),
    [("Sum", [10.0, 35.0]), ("Average", [2.0, 7.0]), ("Maximum", [4.0, 9.0])],
)
def test_points_are_folded_to_the_period_and_statistic_asked(
    stat: str, expected: list[float]
) -> None:
    cloud = SimulatedCloudWatch({("vol-a", "VolumeReadOps"): minutes(list(range(10)))})
    points = ask(
        cloud, "AWS/EBS", "VolumeReadOps", VOL, T0 + timedelta(minutes=10), period=300, stat=stat
    )
    assert points == [(T0, expected[0]), (T0 + timedelta(minutes=5), expected[1])]


@given(st.lists(st.floats(0, 1e9, allow_nan=False), min_size=1, max_size=120))
def test_a_sum_over_coarser_periods_keeps_the_total(values: list[float]) -> None:
    cloud = SimulatedCloudWatch({("vol-a", "VolumeReadOps"): minutes(values)})
    end = T0 + timedelta(minutes=len(values))
    folded = ask(cloud, "AWS/EBS", "VolumeReadOps", VOL, end, period=300)
    assert len(folded) == -(-len(values) // 5)
    assert sum(v for _, v in folded) == pytest.approx(sum(values), rel=1e-9, abs=1e-6)


def _instance(detailed: bool) -> Simulation:
    volume = Volume("vol-a", "us-east-1", "gp3", 100, "in-use", attached_to="i-a")
    host = SimInstance("i-a", NITRO, [SimVolume(volume, Demand(constant(100), 16 * KIB))], detailed)
    return Simulation(host, T0)


def test_data_appears_as_simulated_time_passes() -> None:
    sim = _instance(detailed=True)
    cloud = SimulatedCloudWatch(simulations=[sim])
    assert ask(cloud, "AWS/EBS", "VolumeReadOps", VOL, T0 + timedelta(minutes=3, seconds=30))
    assert sim.now == T0 + timedelta(minutes=3)  # whole minutes only
    points = ask(cloud, "AWS/EBS", "VolumeReadOps", VOL, T0 + timedelta(minutes=5))
    assert [t for t, _ in points] == [T0 + timedelta(minutes=m) for m in range(5)]
    # The volume's instance is known from the simulation: its pair metrics are answered.
    assert len(ask(cloud, "AWS/EBS", "VolumeIOPSExceededCheck", PAIR, T0 + timedelta(minutes=5)))
    assert ask(cloud, "AWS/EBS", "VolumeIOPSExceededCheck", VOL, T0 + timedelta(minutes=5)) == []


@pytest.mark.parametrize(
    ("detailed", "metric", "period_s"),
    [
        (True, "EBSReadOps", 60),
        (False, "EBSReadOps", 300),
        # A status check comes every minute whatever the monitoring.
        (False, "StatusCheckFailed_AttachedEBS", 60),
    ],
)
def test_basic_monitoring_gives_five_minute_ec2_points_whatever_the_period(
    detailed: bool, metric: str, period_s: int
) -> None:
    cloud = SimulatedCloudWatch(simulations=[_instance(detailed)])
    points = ask(cloud, "AWS/EC2", metric, [("InstanceId", "i-a")], T0 + timedelta(minutes=10))
    stamps = [t for t, _ in points]
    assert stamps == [T0 + timedelta(seconds=s) for s in range(0, 600, period_s)]


def test_a_metric_the_simulation_does_not_publish_comes_back_empty() -> None:
    # CloudWatch answers a metric nothing publishes with no datapoints, not an error
    # (GetMetricData, "MetricDataResults": an empty Values list with StatusCode Complete).
    cloud = SimulatedCloudWatch(simulations=[_instance(False)])
    dims = [("InstanceId", "i-a")]
    assert ask(cloud, "AWS/EC2", "CPUUtilization", dims, T0 + timedelta(minutes=10)) == []


def test_basic_monitoring_keeps_the_sum_of_the_minutes() -> None:
    detailed = ask(
        SimulatedCloudWatch(simulations=[_instance(True)]),
        "AWS/EC2",
        "EBSReadOps",
        [("InstanceId", "i-a")],
        T0 + timedelta(minutes=10),
    )
    basic = ask(
        SimulatedCloudWatch(simulations=[_instance(False)]),
        "AWS/EC2",
        "EBSReadOps",
        [("InstanceId", "i-a")],
        T0 + timedelta(minutes=10),
    )
    assert [v for _, v in basic] == pytest.approx(
        [sum(v for _, v in detailed[:5]), sum(v for _, v in detailed[5:])]
    )


def test_points_older_than_kept_are_dropped() -> None:
    cloud = SimulatedCloudWatch(
        {("vol-a", "VolumeReadOps"): minutes(list(range(10)))}, keep_s=5 * 60
    )
    cloud.advance(T0 + timedelta(minutes=10))
    points = ask(cloud, "AWS/EBS", "VolumeReadOps", VOL, T0 + timedelta(minutes=10))
    assert points == minutes([5, 6, 7, 8, 9], T0 + timedelta(minutes=5))


def _draining_gp2(quiet_days: float) -> SimulatedCloudWatch:
    volume = Volume("vol-a", "us-east-1", "gp2", 100, "in-use", attached_to="i-a")
    load = SimVolume(volume, Demand(constant(1_000), 16 * KIB), balance_percent=50.0)
    sim = Simulation(SimInstance("i-a", NITRO, [load], True), T0)
    return SimulatedCloudWatch(simulations=[sim], quiet_days=quiet_days)


def test_a_quiet_past_is_a_full_balance_read_hourly_before_the_first_point() -> None:
    cloud = _draining_gp2(quiet_days=14)
    midnight = T0.replace(hour=0)
    end = T0 + timedelta(minutes=10)
    since = midnight - timedelta(days=14)
    days = ask(cloud, "AWS/EBS", "BurstBalance", VOL, end, since, 86_400, "Minimum")
    # From noon fourteen days back (T0 is noon), full every day, then today's drain.
    assert [t for t, _ in days] == [since + timedelta(days=k) for k in range(15)]
    assert [v for _, v in days[:-1]] == [100.0] * 14 and days[-1][1] < 50.0
    # Read once an hour: a minute query over a quiet morning finds one point an hour.
    morning = ask(cloud, "AWS/EBS", "BurstBalance", VOL, T0, T0 - timedelta(hours=3))
    assert morning == [(T0 - timedelta(hours=h), 100.0) for h in (3, 2, 1)]
    # Only the balance has a past: the rates are as new as the simulation.
    ops = ask(cloud, "AWS/EBS", "VolumeReadOps", VOL, end, since, 86_400)
    assert [t for t, _ in ops] == [midnight]


def test_without_a_quiet_past_a_resource_is_as_new_as_its_first_point() -> None:
    cloud = _draining_gp2(quiet_days=0)
    midnight = T0.replace(hour=0)
    since = midnight - timedelta(days=14)
    end = T0 + timedelta(minutes=10)
    days = ask(cloud, "AWS/EBS", "BurstBalance", VOL, end, since, 86_400, "Minimum")
    assert [t for t, _ in days] == [midnight]


def test_a_steady_volume_has_its_sums_past_at_its_first_minute_hourly() -> None:
    volume = Volume("vol-a", "us-east-1", "io2", 100, "in-use", 5_000, attached_to="i-a")
    load = SimVolume(volume, Demand(constant(400), 16 * KIB), steady_days=30)
    cloud = SimulatedCloudWatch(
        simulations=[Simulation(SimInstance("i-a", NITRO, [load], True), T0)]
    )
    end = T0 + timedelta(minutes=10)
    since = T0 - timedelta(days=40)
    hours = ask(cloud, "AWS/EBS", "VolumeReadOps", VOL, end, since, 3_600, "Maximum")
    # Thirty days of one minute an hour at the first minute's count, then the simulation.
    assert hours[0][0] == T0 - timedelta(days=30)
    assert len(hours) == 30 * 24 + 1
    assert {v for _, v in hours} == {hours[-1][1]}
    minutes_ = ask(cloud, "AWS/EBS", "VolumeReadOps", VOL, T0, T0 - timedelta(hours=3))
    assert [t for t, _ in minutes_] == [T0 - timedelta(hours=h) for h in (3, 2, 1)]
