import pytest

from analyzer.collect import queries
from analyzer.model.metrics import Tier
from analyzer.model.resources import Instance, InstanceType, Inventory, Volume

NITRO = InstanceType("m5.large", 3_600, 18_750, 81.25e6, 593.75e6, nitro=True)
FLAT = InstanceType("r6i.8xlarge", 40_000, 40_000, 1.25e9, 1.25e9, nitro=True)
XEN = InstanceType("m4.large", 3_600, 3_600, 56.25e6, 56.25e6, nitro=False)


def names(qs):
    return {q.metric for q in qs}


def volume(kind, size=100, state="in-use", attached="i-1"):
    return Volume("vol-1", "us-east-1", kind, size, state, 3_000, None, attached)


def test_burst_balance_only_for_bucket_volumes():
    assert "BurstBalance" in names(queries.for_volume(volume("gp2")))
    assert "BurstBalance" in names(queries.for_volume(volume("st1", 1_024)))
    for kind in ("gp3", "io1", "io2", "standard"):
        assert "BurstBalance" not in names(queries.for_volume(volume(kind)))
    assert "BurstBalance" not in names(queries.for_volume(volume("gp2", 1_000)))


def test_nothing_for_a_detached_volume_or_a_stopped_instance():
    assert queries.for_volume(volume("gp2", state="available", attached=None)) == []
    stopped = Instance("i-1", "us-east-1", "m5.large", "stopped", type_info=NITRO)
    assert queries.for_instance(stopped) == []


def test_volume_queries_are_sums_at_one_minute():
    qs = queries.for_volume(volume("gp3"), nitro=True)
    sums = {q.metric for q in qs if q.stat == "Sum"}
    assert sums == {
        "VolumeReadOps",
        "VolumeWriteOps",
        "VolumeReadBytes",
        "VolumeWriteBytes",
        "VolumeTotalReadTime",
        "VolumeTotalWriteTime",
    }
    assert {q.period_s for q in qs} == {60}
    assert {q.namespace for q in qs} == {"AWS/EBS"}
    assert "VolumeIOPSExceededCheck" in names(qs)
    assert "VolumeIOPSExceededCheck" not in names(queries.for_volume(volume("gp3"), nitro=False))


def test_instance_period_follows_its_monitoring():
    basic = Instance("i-1", "us-east-1", "m5.large", "running", False, type_info=NITRO)
    detailed = Instance("i-1", "us-east-1", "m5.large", "running", True, type_info=NITRO)
    assert {q.period_s for q in queries.for_instance(basic)} == {300}
    assert {q.period_s for q in queries.for_instance(detailed)} == {60}


def test_instance_balances_only_where_the_type_bursts():
    bursting = Instance("i-1", "us-east-1", "m5.large", "running", type_info=NITRO)
    flat = Instance("i-1", "us-east-1", "r6i.8xlarge", "running", type_info=FLAT)
    xen = Instance("i-1", "us-east-1", "m4.large", "running", type_info=XEN)
    assert {"EBSIOBalance%", "EBSByteBalance%"} <= names(queries.for_instance(bursting))
    assert "EBSIOBalance%" not in names(queries.for_instance(flat))
    assert "InstanceEBSIOPSExceededCheck" not in names(queries.for_instance(xen))


@pytest.mark.parametrize(
    ("tier", "expected"),
    [
        (Tier.IDLE, {"VolumeReadOps", "VolumeWriteOps"}),
        (
            Tier.ACTIVE,
            {
                "VolumeReadOps",
                "VolumeWriteOps",
                "VolumeReadBytes",
                "VolumeWriteBytes",
                "BurstBalance",
            },
        ),
        (
            Tier.HOT,
            {
                "VolumeReadOps",
                "VolumeWriteOps",
                "VolumeReadBytes",
                "VolumeWriteBytes",
                "BurstBalance",
                "VolumeIOPSExceededCheck",
                "VolumeThroughputExceededCheck",
            },
        ),
    ],
)
def test_each_tier_asks_only_for_what_its_rules_read(tier, expected):
    assert names(queries.for_volume(volume("gp2"), nitro=True, tier=tier)) == expected


def test_an_idle_instance_costs_nothing_its_volumes_do_not_already_tell():
    running = Instance("i-1", "us-east-1", "m5.large", "running", type_info=NITRO)
    assert queries.for_instance(running, Tier.IDLE) == []
    assert "EBSReadOps" in names(queries.for_instance(running, Tier.ACTIVE))


def test_idle_time_only_where_no_exceeded_check_exists():
    """On Xen the busy time shows a cap reached for part of a minute; on Nitro the exceeded
    checks say it, and idle time would be a metric billed for nothing."""
    nitro = names(queries.for_volume(volume("gp3"), nitro=True, tier=Tier.ACTIVE))
    xen = names(queries.for_volume(volume("gp3"), nitro=False, tier=Tier.ACTIVE))
    assert "VolumeIdleTime" not in nitro and "VolumeIdleTime" in xen
    assert "VolumeIOPSExceededCheck" not in xen


def test_without_tiers_every_metric_is_read():
    full = names(queries.for_volume(volume("gp2"), nitro=True))
    assert {"VolumeTotalReadTime", "VolumeQueueLength"} <= full
    by_id = queries.for_inventory(Inventory("us-east-1", (volume("gp2"),)), {})
    assert names(by_id["vol-1"]) == {"VolumeReadOps", "VolumeWriteOps"}
