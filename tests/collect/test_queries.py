from dataclasses import replace
from datetime import UTC, datetime

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
    # Status checks are one-minute whatever the monitoring (Amazon EC2 User Guide, "Status
    # checks for your instances": available at a 1-minute frequency at no charge).
    periods = {q.metric: q.period_s for q in queries.for_instance(basic)}
    assert periods.pop("StatusCheckFailed_AttachedEBS") == 60
    assert set(periods.values()) == {300}
    assert {q.period_s for q in queries.for_instance(detailed)} == {60}


def test_a_finer_source_asks_every_resource_at_its_own_period():
    """A node's NVMe statistics answer at a few seconds: every query of the inventory at that
    period, except the status checks, which AWS publishes at one minute whatever is asked."""
    instance = Instance("i-1", "us-east-1", "m5.large", "running", False, ("vol-1",), NITRO)
    inv = Inventory("us-east-1", volumes=(volume("gp2"),), instances=(instance,))
    periods = {
        q.metric: q.period_s
        for found in queries.for_inventory(inv, period_s=5).values()
        for q in found
    }
    assert periods.pop("StatusCheckFailed_AttachedEBS") == 60
    assert set(periods.values()) == {5}
    assert "BurstBalance" in periods and "EBSReadOps" in periods


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
                "VolumeStalledIOCheck",
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


PUBLISHED = {
    # AWS/EBS: every volume metric with VolumeId alone, except those published per attachment,
    # which come with InstanceId and VolumeId together and with nothing else (Amazon CloudWatch
    # User Guide, "Supported metrics for resource tags for telemetry", AWS/EBS; each entry
    # there is one dimension combination published together).
    **{
        ("AWS/EBS", name): {"VolumeId"}
        for name in (
            "VolumeReadOps",
            "VolumeWriteOps",
            "VolumeReadBytes",
            "VolumeWriteBytes",
            "VolumeTotalReadTime",
            "VolumeTotalWriteTime",
            "VolumeIdleTime",
            "VolumeQueueLength",
            "BurstBalance",
        )
    },
    **{
        ("AWS/EBS", name): {"InstanceId", "VolumeId"}
        for name in (
            "VolumeIOPSExceededCheck",
            "VolumeThroughputExceededCheck",
            "VolumeStalledIOCheck",
        )
    },
    # AWS/EC2 per instance (Amazon EC2 User Guide, "CloudWatch metrics for your instances").
    **{
        ("AWS/EC2", name): {"InstanceId"}
        for name in (
            "EBSReadOps",
            "EBSWriteOps",
            "EBSReadBytes",
            "EBSWriteBytes",
            "EBSIOBalance%",
            "EBSByteBalance%",
            "InstanceEBSIOPSExceededCheck",
            "InstanceEBSThroughputExceededCheck",
            "StatusCheckFailed_AttachedEBS",
        )
    },
    # AWS/RDS per DB instance (Amazon RDS User Guide, "Amazon CloudWatch dimensions for RDS").
    **{
        ("AWS/RDS", name): {"DBInstanceIdentifier"}
        for name in (
            "ReadIOPS",
            "WriteIOPS",
            "ReadThroughput",
            "WriteThroughput",
            "ReadLatency",
            "WriteLatency",
            "DiskQueueDepth",
            "FreeableMemory",
            "BurstBalance",
            "EBSIOBalance%",
            "EBSByteBalance%",
            "ReadIOPSLogVolume",
            "WriteIOPSLogVolume",
            "ReadThroughputLogVolume",
            "WriteThroughputLogVolume",
            "ReadLatencyLogVolume",
            "WriteLatencyLogVolume",
            "DiskQueueDepthLogVolume",
        )
    },
}


def ec2_metrics(asked):
    """The AWS/EC2 metric names asked, by instance."""
    out = {}
    for (namespace, name), dims in asked.items():
        for d in dims:
            if namespace == "AWS/EC2":
                out.setdefault(d["InstanceId"], set()).add(name)
    return out


class Recorder:
    """A CloudWatch client that notes every query before moto answers it."""

    def __init__(self, client):
        self.client = client
        self.asked = []

    def get_metric_data(self, **kwargs):
        self.asked.extend(q["MetricStat"]["Metric"] for q in kwargs["MetricDataQueries"])
        return self.client.get_metric_data(**kwargs)


def test_a_full_cycle_asks_each_metric_with_exactly_the_dimensions_aws_publishes_it_with(aws):
    from analyzer import settings
    from analyzer.analyze import rules
    from analyzer.collect.aws import Clients
    from analyzer.collect.regions import connect
    from analyzer.deliver.rows import resource_row
    from analyzer.live.cycle import Analyzer
    from analyzer.sim.ec2 import SimInstance, Simulation, SimVolume
    from analyzer.sim.workloads import Demand, constant
    from tests.account import Account

    def report_rows(result):
        return [resource_row(r) for r in result.readings]

    account = Account()
    nitro, other = account.instance("m5.large"), account.instance("m5.xlarge")
    xen, metal = account.instance("m4.large"), account.instance("m5.metal")
    account.volume("gp2", 100, nitro)
    account.volume("gp3", 200, nitro, "/dev/sdg")
    account.volume("st1", 500, nitro, "/dev/sdh")
    magnetic = account.volume("standard", 50, nitro, "/dev/sdi")
    account.volume("gp3", 200, xen)
    account.volume("gp2", 100, other)
    on_metal = account.volume("gp3", 100, metal)
    shared = account.volume("io2", 100, nitro, "/dev/sdj", Iops=4_000, MultiAttachEnabled=True)
    account.ec2.attach_volume(VolumeId=shared, InstanceId=other, Device="/dev/sdk")
    account.volume("gp3", 100)  # detached: nothing to ask
    attached = {  # each volume attached to one instance (the root volumes too), and where
        v["VolumeId"]: v["Attachments"][0]["InstanceId"]
        for v in account.ec2.describe_volumes()["Volumes"]
        if len(v["Attachments"]) == 1 and not v.get("MultiAttachEnabled")
    }
    account.daily_replica("db.m5.large")
    busy = SimInstance(
        metal,
        account.instance_type("m5.metal"),
        [SimVolume(account.described_volume(on_metal), Demand(constant(500)))],
    )
    account.put(Simulation(busy, datetime(2026, 11, 21, 7, 20, tzinfo=UTC)).run(40))
    recorder = Recorder(account.cloudwatch)
    config = settings.load({"region": [account.region]})
    result = Analyzer(
        config,
        rules.load(),
        connect=lambda region: connect(region, Clients.for_region(region, cloudwatch=recorder)),
    ).run(datetime(2026, 11, 21, 8, 0, tzinfo=UTC))

    asked = {}
    for metric in recorder.asked:
        dims = {d["Name"]: d["Value"] for d in metric["Dimensions"]}
        key = (metric["Namespace"], metric["MetricName"])
        assert set(dims) == PUBLISHED[key], f"{key} asked with {sorted(dims)}"
        asked.setdefault(key, []).append(dims)
        if "VolumeId" in dims and "InstanceId" in dims:
            assert attached[dims["VolumeId"]] == dims["InstanceId"]  # its one attachment
    # The per-attachment checks are asked, of Nitro volumes only: not of the magnetic one,
    # the one on Xen or the Multi-Attach one.
    checked = {d["VolumeId"] for d in asked[("AWS/EBS", "VolumeIOPSExceededCheck")]}
    expected = {v for v, i in attached.items() if i != xen and v != magnetic}
    assert checked == expected
    assert ("AWS/RDS", "ReadIOPS") in asked and ("AWS/EC2", "EBSReadOps") in asked
    # Stalled I/O: asked of every volume on Nitro (bare metal too), magnetic included.
    stall = {d["VolumeId"] for d in asked[("AWS/EBS", "VolumeStalledIOCheck")]}
    assert stall == {v for v, i in attached.items() if i != xen}
    # Bare metal: the attached-EBS status check, and no instance EBS exceeded checks, which
    # AWS does not publish for it; its row reads as having its data, not as missing some.
    by_instance = ec2_metrics(asked)
    assert "StatusCheckFailed_AttachedEBS" in by_instance[metal]
    assert "InstanceEBSIOPSExceededCheck" in by_instance[nitro]
    assert not {n for n in by_instance[metal] if n.startswith("InstanceEBS")}
    assert not {n for n in by_instance[xen] if n.startswith(("Instance", "Status"))}
    [row] = [r for r in report_rows(result) if r["resource_id"] == metal]
    assert row["status"] == "ok" and row["iops_limit"] == 80_000


def test_the_docs_list_every_metric_read_with_the_dimensions_it_is_asked_with():
    """docs/metrics.md, "The metrics it reads": one row per group of metrics, kept true to the
    catalogue (names and dimension sets), so what a user grants and pays for is what is said."""
    from pathlib import Path

    from analyzer.model.metrics import CATALOGUE

    text = (Path(__file__).resolve().parents[2] / "docs" / "metrics.md").read_text()
    section = text.split("\n## The metrics it reads\n", 1)[1].split("\n## ", 1)[0]
    listed = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith(("AWS/", "CWAgent")):
            continue
        for name in cells[1].split(","):
            listed[(cells[0], name.strip())] = {d.strip() for d in cells[2].split(",")}
    catalogued = {(m.namespace.value, m.name): set(m.published_with) for m in CATALOGUE}
    assert listed == catalogued


def test_a_volume_a_node_covers_is_asked_only_what_cloudwatch_alone_has():
    covered = Volume("vol-1", "us-east-1", "gp2", 100, "in-use", 300, None, "i-1")
    other = Volume("vol-2", "us-east-1", "gp2", 100, "in-use", 300, None, "i-2")
    one = Instance(
        "i-1", "us-east-1", "m5.large", "running", volume_ids=("vol-1",), type_info=NITRO
    )
    two = Instance(
        "i-2", "us-east-1", "m5.large", "running", volume_ids=("vol-2",), type_info=NITRO
    )
    inv = Inventory("us-east-1", (covered, other), (one, two))
    # At every tier: nothing else asks CloudWatch for them.
    for tiers in (None, dict.fromkeys(("vol-1", "vol-2", "i-1", "i-2"), Tier.IDLE)):
        found = queries.for_inventory(inv, tiers, covered={"vol-1"})
        assert names(found["vol-1"]) == {"VolumeStalledIOCheck"}
        # Its every volume covered: the instance's sums and checks are the node's too. Its
        # one volume does at most 3,000 IOPS, below the 3,600 of its baseline: the daemon
        # does not ask the balance of a limit that cannot bind.
        balances = {"EBSIOBalance%", "EBSByteBalance%"} if tiers is None else {"EBSByteBalance%"}
        assert names(found["i-1"]) == {"StatusCheckFailed_AttachedEBS", *balances}
    assert "VolumeReadOps" in names(found["vol-2"])
    assert "EBSReadOps" in names(queries.for_inventory(inv, None, covered={"vol-1"})["i-2"])


def test_an_instance_with_one_volume_uncovered_keeps_its_rates():
    one = Instance("i-1", "us-east-1", "m5.large", "running", volume_ids=("vol-1", "vol-2"))
    assert not queries.fully_covered(one, {"vol-1"})
    assert queries.fully_covered(one, {"vol-1", "vol-2", "vol-3"})
    assert not queries.fully_covered(Instance("i-9", "us-east-1", "m5.large", "running"), {"x"})


def test_coverage_changing_works_the_queries_out_again():
    volume = Volume("vol-1", "us-east-1", "gp3", 100, "in-use", 3_000, None, "i-1")
    inv = Inventory("us-east-1", (volume,))
    known: queries.Known = {}
    tiers = {"vol-1": Tier.HOT}
    before = queries.for_inventory(inv, tiers, known)
    assert queries.for_inventory(inv, tiers, known)["vol-1"] is before["vol-1"]
    covered = queries.for_inventory(inv, tiers, known, covered={"vol-1"})
    assert names(covered["vol-1"]) == {"VolumeStalledIOCheck"}
    assert names(queries.for_inventory(inv, tiers, known)["vol-1"]) == names(before["vol-1"])


def test_an_instance_s_counts_are_summed_from_volumes_read_as_closely_as_it():
    gp3 = [
        Volume(f"vol-{n}", "us-east-1", "gp3", 100, "in-use", 3_000, 125, "i-1") for n in range(2)
    ]
    one = Instance(
        "i-1", "us-east-1", "m5.large", "running", volume_ids=("vol-0", "vol-1"), type_info=NITRO
    )
    inv = Inventory("us-east-1", tuple(gp3), (one,))
    counts = {"EBSReadOps", "EBSWriteOps", "EBSReadBytes", "EBSWriteBytes"}

    def asked(instance: Tier, *volumes: Tier) -> set[str]:
        tiers = {"i-1": instance, "vol-0": volumes[0], "vol-1": volumes[1]}
        return names(queries.for_inventory(inv, tiers)["i-1"])

    # Both volumes read at least as often, and their bytes too: the counts are theirs.
    assert not asked(Tier.ACTIVE, Tier.ACTIVE, Tier.HOT) & counts
    assert not asked(Tier.HOT, Tier.HOT, Tier.HOT) & counts
    assert "EBSIOBalance%" in asked(Tier.ACTIVE, Tier.ACTIVE, Tier.ACTIVE)
    # Hot, with one volume read less often: the instance's own counts, minute by minute.
    assert asked(Tier.HOT, Tier.HOT, Tier.ACTIVE) >= counts
    # Active, it is read for its balances: its sum ends where its volumes' reads do.
    assert not asked(Tier.ACTIVE, Tier.IDLE, Tier.ACTIVE) & counts
    assert "EBSIOBalance%" in asked(Tier.ACTIVE, Tier.IDLE, Tier.ACTIVE)
    # A full read asks every metric.
    assert names(queries.for_inventory(inv)["i-1"]) >= counts
    # A Multi-Attach volume's I/O is not split by instance: never summed.
    shared = replace(gp3[1], volume_type="io2", iops=3_000, multi_attach=True)
    inv2 = Inventory("us-east-1", (gp3[0], shared), (one,))
    tiers = dict.fromkeys(("i-1", "vol-0", "vol-1"), Tier.HOT)
    assert names(queries.for_inventory(inv2, tiers)["i-1"]) >= counts


def test_an_instance_whose_limits_its_volumes_cannot_reach_is_asked_only_its_status():
    # One gp2 volume of 100 GiB: 3,000 IOPS and 128 MiB/s at most. An m5.8xlarge's EBS
    # baseline is 30,000 IOPS and 850 MB/s: neither limit can bind its I/O.
    big = InstanceType("m5.8xlarge", 30_000, 30_000, 850e6, 850e6, nitro=True)
    volume = Volume("vol-1", "us-east-1", "gp2", 100, "in-use", 300, None, "i-1")
    instance = Instance(
        "i-1", "us-east-1", "m5.8xlarge", "running", volume_ids=("vol-1",), type_info=big
    )
    inv = Inventory("us-east-1", (volume,), (instance,))
    hot = {"i-1": Tier.HOT, "vol-1": Tier.IDLE}
    assert names(queries.for_inventory(inv, hot)["i-1"]) == {"StatusCheckFailed_AttachedEBS"}
    # On an m5.large, its throughput can: the byte counts, balance and check are asked.
    small = replace(instance, instance_type="m5.large", type_info=NITRO)
    found = names(queries.for_inventory(Inventory("us-east-1", (volume,), (small,)), hot)["i-1"])
    assert {"EBSReadBytes", "EBSByteBalance%", "InstanceEBSThroughputExceededCheck"} <= found
    assert not {"EBSIOBalance%", "InstanceEBSIOPSExceededCheck"} & found


def test_a_resource_s_queries_published_with_the_same_names_share_their_dimensions():
    volume = Volume("vol-1", "us-east-1", "gp2", 100, "in-use", 300, None, "i-1")
    asked = queries.for_volume(volume, nitro=True)
    alone = [q.dimensions for q in asked if len(q.dimensions) == 1]
    paired = [q.dimensions for q in asked if len(q.dimensions) == 2]
    assert len(alone) > 1 and len(paired) > 1
    assert all(d is alone[0] for d in alone) and all(d is paired[0] for d in paired)


def test_queries_of_one_resource_and_metric_asked_two_ways_are_two_keys():
    dims = (("VolumeId", "vol-1"),)
    minute = queries.MetricQuery("vol-1", "AWS/EBS", "BurstBalance", dims, "Average", 60)
    daily = queries.MetricQuery("vol-1", "AWS/EBS", "BurstBalance", dims, "Minimum", 86_400)
    again = queries.MetricQuery("vol-1", "AWS/EBS", "BurstBalance", dims, "Average", 60)
    kept = {minute: "minute", daily: "daily"}
    assert kept[again] == "minute" and kept[daily] == "daily" and len(kept) == 2
    assert hash(again) == hash(minute)


def _node(*volumes: Volume, info: InstanceType | None = NITRO) -> Inventory:
    one = Instance(
        "i-1",
        "us-east-1",
        "m5.large",
        "running",
        volume_ids=tuple(v.volume_id for v in volumes),
        type_info=info,
    )
    return Inventory("us-east-1", volumes, (one,))


def test_an_idle_nitro_instance_stands_guard_over_its_idle_volumes_with_its_two_counts():
    gp3 = [
        Volume(f"vol-{n}", "us-east-1", "gp3", 100, "in-use", 3_000, 125, "i-1") for n in range(3)
    ]
    inv = _node(*gp3)
    idle = dict.fromkeys(("i-1", "vol-0", "vol-1", "vol-2"), Tier.IDLE)
    assert queries.guards_of(inv, idle, ()) == {"i-1": ("vol-0", "vol-1", "vol-2")}
    asked = queries.for_inventory(inv, idle, guards={"i-1"})["i-1"]
    assert names(asked) >= {"EBSReadOps", "EBSWriteOps"}
    assert not names(asked) & {"EBSReadBytes", "EBSWriteBytes", "EBSIOBalance%"}
    # Without the guard, an idle instance asks nothing of its counts.
    assert not names(queries.for_inventory(inv, idle)["i-1"]) & {"EBSReadOps"}
    # Beside a volume read on its own, it stands guard over the idle ones; not over one alone.
    assert queries.guards_of(inv, {**idle, "vol-1": Tier.ACTIVE}, ()) == {"i-1": ("vol-0", "vol-2")}
    assert not queries.guards_of(inv, {**idle, "vol-1": Tier.ACTIVE, "vol-2": Tier.HOT}, ())
    # No guard where the counts would not bound every volume.
    assert not queries.guards_of(inv, {**idle, "i-1": Tier.ACTIVE}, ())
    assert not queries.guards_of(inv, idle, {"vol-2"})  # a node agent reads one
    assert not queries.guards_of(_node(*gp3, info=XEN), idle, ())
    assert not queries.guards_of(_node(*gp3, info=None), idle, ())
    assert not queries.guards_of(_node(gp3[0]), idle, ())
    shared = replace(gp3[2], volume_type="io2", multi_attach=True)
    assert not queries.guards_of(_node(gp3[0], gp3[1], shared), idle, ())
    outside = Inventory("us-east-1", tuple(gp3[:2]), _node(*gp3).instances)
    assert not queries.guards_of(outside, idle, ())  # a volume outside the scope
