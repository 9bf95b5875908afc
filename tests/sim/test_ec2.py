"""The simulator must behave as the model in DOMAIN.md says AWS does."""

import pytest

from analyzer.model.resources import InstanceType, Volume
from analyzer.model.units import KIB, MB, MIB
from analyzer.sim.datapoints import fold
from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
from analyzer.sim.workloads import Demand, constant, steps
from tests.helpers import T0

BIG = InstanceType("r6i.8xlarge", 40_000, 40_000, 1_250 * MB, 1_250 * MB, nitro=True)


def gp2(size, demand, io=16 * KIB, balance=100.0, resizes=()):
    volume = Volume("vol-a", "us-east-1", "gp2", size, "in-use", attached_to="i-a")
    return SimVolume(volume, Demand(demand, io), balance, resizes)


def run(volumes, minutes, instance_type=BIG, detailed=True):
    sim = Simulation(SimInstance("i-a", instance_type, volumes, detailed), T0)
    return sim.run(minutes)


def values(data, metric, rid="vol-a"):
    return [v for _, v in data[(rid, metric)]]


@pytest.mark.parametrize(("size", "seconds"), [(100, 2_000), (250, 2_400), (500, 3_600)])
def test_gp2_full_bucket_lasts_as_aws_says(size, seconds):
    data = run([gp2(size, constant(5_000))], seconds // 60 + 3)
    ops = values(data, "VolumeReadOps")
    total = [o + w for o, w in zip(ops, values(data, "VolumeWriteOps"), strict=True)]
    # Bursting at 3,000 IOPS until the bucket is empty, then the baseline.
    assert total[0] == pytest.approx(3_000 * 60)
    assert total[-1] == pytest.approx(3 * size * 60)
    # All I/O served = 3,000 x burst + baseline x the rest: that pins the burst duration.
    baseline = 3 * size
    burst = (sum(total) - baseline * 60 * len(total)) / (3_000 - baseline)
    assert burst == pytest.approx(seconds, abs=1)
    assert values(data, "BurstBalance")[-1] == 0


def test_shop_volume_is_at_forty_percent_after_forty_minutes():
    data = run([gp2(50, constant(1_500), io=4 * KIB)], 40)
    # 1,350 credits a second of 5.4 million: 1.5 % a minute. The last reading averages
    # minute 39 to 40, so it stands at 39.5 minutes.
    assert values(data, "BurstBalance")[-1] == pytest.approx(100 - 1.5 * 39.5, abs=0.05)


def test_bucket_refills_below_baseline():
    data = run([gp2(100, constant(10), balance=0.0)], 10)
    # 290 credits a second: 17,400 credits a minute of 5.4 million.
    assert values(data, "BurstBalance")[-1] == pytest.approx(100 * 290 * 60 * 9.5 / 5.4e6, rel=0.02)


def test_an_idle_minute_has_no_burst_balance():
    """ "Data is reported only when the volume is active" (Amazon EBS User Guide, Amazon
    CloudWatch metrics for Amazon EBS, BurstBalance); its rates and idle time are."""
    data = run([gp2(100, steps((0, 100), (120, 0), (300, 100)), balance=50.0)], 7)
    stamps = [t.minute for t, _ in data[("vol-a", "BurstBalance")]]
    assert stamps == [0, 1, 5, 6]
    assert values(data, "VolumeIdleTime")[2:5] == [60, 60, 60]
    assert len(values(data, "VolumeReadOps")) == 7


def test_a_steady_minute_is_simulated_at_once_to_the_same_datapoints():
    """A minute in which only the credits change, by as much each second, is added at once;
    it gives what 60 seconds give (drain, refill, full, empty and pinned, and the turns)."""
    load = steps((0, 3_000), (1_900, 100), (2_600, 0), (2_900, 3_000), (9_000, 280))
    fast = run([gp2(100, load, balance=60.0)], 180)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Simulation, "_steady", lambda *_: False)
        slow = run([gp2(100, load, balance=60.0)], 180)
    assert fast.keys() == slow.keys()
    for key, points in fast.items():
        assert [t for t, _ in points] == [t for t, _ in slow[key]], key
        assert [v for _, v in points] == pytest.approx(
            [v for _, v in slow[key]], rel=1e-9, abs=1e-9
        )


def test_a_demand_held_over_periods_is_simulated_as_one_asked_each_second():
    """A demand that says it holds each rate for whole periods is not asked 60 times a
    minute; a minute within a period is steady, one across a change is not: the same data
    as the demand asked each second (its changes fall within minutes, and on a boundary)."""
    load = steps((0, 3_000), (1_900, 100), (2_600, 0), (2_900, 3_000), (9_000, 280))
    asked = []

    def counted(t):
        asked.append(t)
        return load(t)

    def volume(held_s):
        volume = Volume("vol-a", "us-east-1", "gp2", 100, "in-use", attached_to="i-a")
        return SimVolume(volume, Demand(counted, 16 * KIB, held_s=held_s, held_from_s=-200), 60.0)

    held = run([volume(100)], 180)
    asked_held, asked[:] = len(asked), []
    each = run([volume(None)], 180)
    assert held == each
    assert asked_held < len(asked) / 2


def test_growing_a_volume_online_refills_the_bucket():
    data = run([gp2(100, constant(3_000), balance=0.0, resizes=[(600, 250)])], 15)
    ops = values(data, "VolumeReadOps")
    writes = values(data, "VolumeWriteOps")
    assert ops[5] + writes[5] == pytest.approx(300 * 60)
    assert ops[11] + writes[11] == pytest.approx(3_000 * 60)
    assert values(data, "BurstBalance")[11] > 90


def test_instance_limit_scales_its_volumes_down():
    small = InstanceType("m5.large", 3_600, 3_600, 81.25 * MB, 81.25 * MB, nitro=True)
    volume = Volume(
        "vol-a",
        "us-east-1",
        "gp3",
        500,
        "in-use",
        iops=16_000,
        throughput_mibps=1_000,
        attached_to="i-a",
    )
    data = run([SimVolume(volume, Demand(constant(10_000), 64 * KIB))], 3, small)
    read = values(data, "EBSReadBytes", "i-a")[-1] + values(data, "EBSWriteBytes", "i-a")[-1]
    assert read / 60 == pytest.approx(81.25 * MB)
    assert values(data, "InstanceEBSThroughputExceededCheck", "i-a")[-1] == 1
    assert values(data, "VolumeThroughputExceededCheck")[-1] == 0


def test_gp3_caps_at_its_provisioned_throughput():
    volume = Volume(
        "vol-a",
        "us-east-1",
        "gp3",
        500,
        "in-use",
        iops=16_000,
        throughput_mibps=1_000,
        attached_to="i-a",
    )
    data = run([SimVolume(volume, Demand(constant(20_000), 128 * KIB))], 2)
    total = values(data, "VolumeReadBytes")[-1] + values(data, "VolumeWriteBytes")[-1]
    assert total / 60 == pytest.approx(1_000 * MIB)
    assert values(data, "VolumeThroughputExceededCheck")[-1] == 1
    assert "BurstBalance" not in {m for _, m in data}


def test_basic_monitoring_folds_instance_sums_into_five_minutes():
    data = run([gp2(100, constant(100))], 10, detailed=False)
    stamps = [t for t, _ in data[("i-a", "EBSReadOps")]]
    assert len(stamps) == 2
    assert (stamps[1] - stamps[0]).total_seconds() == 300
    assert values(data, "EBSReadOps", "i-a")[0] == pytest.approx(100 * 0.7 * 300)


def test_fold_uses_the_right_statistic():
    points = [(T0.replace(minute=m), float(m)) for m in range(5)]
    assert fold(points, 300, "Sum") == [(T0, 10.0)]
    assert fold(points, 300, "Average") == [(T0, 2.0)]
    assert fold(points, 300, "Maximum") == [(T0, 4.0)]
    assert fold(points, 60, "Minimum") == points


def test_steps_demand():
    demand = steps((0, 100), (60, 500))
    assert demand(59) == 100
    assert demand(60) == 500
