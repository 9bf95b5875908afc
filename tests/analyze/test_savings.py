"""Savings: the cheapest configuration AWS sells that would have carried every period of a
volume's past with headroom, offered only where the past replayed through it limits nothing
and it costs less. Prices are the shipped us-east-1 list (DOMAIN.md, Prices)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.analyze import prices, savings
from analyzer.analyze.savings import Saving
from analyzer.model.demand import Demand, LongPast
from analyzer.model.resources import Volume
from analyzer.model.units import KIB, MIB
from tests.fakes import M5
from tests.helpers import T0

PRICES = prices.load()
DAY = 86_400


def stretch(
    days: float, period_s: int, iops: float, io_bytes: float = 16 * KIB, before: float = 0
) -> Demand:
    """`days` of periods ending `before` days before T0, each peaking at `iops` of
    `io_bytes`."""
    n = int(days * DAY // period_s)
    start = T0 - timedelta(days=before) - timedelta(seconds=n * period_s)
    rates = np.full(n, float(iops))
    return Demand.seen(start, period_s, rates, rates * io_bytes)


def past(*stretches: Demand) -> LongPast:
    first = min(s.start for s in stretches)
    return LongPast(T0, stretches, first, T0)


def with_minute(base: Demand, at_index: int, iops: float, io_bytes: float = 16 * KIB) -> Demand:
    iops_ = base.iops.copy()
    bps = base.bps.copy()
    iops_[at_index], bps[at_index] = iops, iops * io_bytes
    return Demand.seen(base.start, base.period_s, iops_, bps)


def volume(kind: str, size: int, iops: int | None = None, mibps: int | None = None) -> Volume:
    return Volume("vol-1", "us-east-1", kind, size, "in-use", iops, mibps, "i-1")


def cut(v: Volume, p: LongPast, **options: float) -> Saving | None:
    return savings.cut(v, M5, p, PRICES, **options)


IO2 = volume("io2", 500, iops=20_000)
SIXTY_THREE = past(stretch(15, 60, 3_000), stretch(48, 300, 2_500, before=15))
"""63 days: the last fifteen at one minute (busiest 3,000 IOPS), the 48 before at five."""


def test_an_io2_at_20000_iops_whose_busiest_minute_in_63_days_was_3000_is_cut_to_the_need() -> None:
    found = cut(IO2, SIXTY_THREE)
    assert found is not None and found.kind == "iops_above_need"
    assert found.target == {"volume_type": "io2", "size_gib": 500, "iops": 3_600}
    assert found.fix_id == "vol-1:iops=3600"
    # io2: $0.125/GB and $0.065 an IOPS up to 32,000 (DOMAIN.md): 16,400 IOPS less.
    assert found.monthly_saving == pytest.approx(16_400 * 0.065, abs=0.01)
    assert found.window_days == pytest.approx(63)
    peak = found.peaks["iops"]
    assert (peak.value, peak.period_s, peak.floor) == (3_000, 60, False)
    # Beside it, gp3 at the need: cheaper still, and what it gives up said plainly.
    other = found.alternative
    assert other is not None and other.kind == "io2_to_gp3"
    assert other.target == {
        "volume_type": "gp3",
        "size_gib": 500,
        "iops": 3_600,
        "throughput_mibps": 125,
    }
    assert other.monthly_saving > found.monthly_saving
    assert other.gives_up is not None and "99.999 %" in other.gives_up


def test_one_minute_at_18000_in_the_window_bounds_the_cut_to_what_carries_it_with_headroom() -> (
    None
):
    minutes = with_minute(stretch(15, 60, 3_000), 5_000, 18_000)
    found = cut(IO2, past(minutes, stretch(48, 300, 2_500, before=15)))
    assert found is not None and found.target is not None
    assert found.target["iops"] == 18_000 * 1.2
    assert found.peaks["iops"].value == 18_000
    assert found.peaks["iops"].at == minutes.start + timedelta(minutes=5_000)


def test_an_older_peak_at_five_minutes_counts_as_a_peak() -> None:
    older = with_minute(stretch(48, 300, 2_500, before=15), 100, 9_000)
    found = cut(IO2, past(stretch(15, 60, 3_000), older))
    assert found is not None and found.target is not None
    assert found.target["iops"] == 9_000 * 1.2
    assert found.peaks["iops"].period_s == 300


def test_a_window_shorter_than_a_fortnight_offers_nothing() -> None:
    assert cut(IO2, past(stretch(13, 60, 3_000))) is None
    assert cut(IO2, past(stretch(15, 60, 3_000))) is not None


def test_a_volume_that_needs_what_it_has_is_offered_nothing() -> None:
    assert cut(volume("gp3", 500, 3_000, 125), past(stretch(15, 60, 2_900))) is None


def test_an_io2_that_needs_its_iops_may_still_be_carried_by_a_cheaper_gp3() -> None:
    # 17,000 × 1.2 is above its 20,000: no io2 cut; gp3 at 20,400 IOPS carries it for less.
    found = cut(IO2, past(stretch(15, 60, 17_000)))
    assert found is not None and found.kind == "io2_to_gp3" and found.alternative is None
    assert found.target is not None and found.target["iops"] == 20_400


GP2 = volume("gp2", 500, iops=1_500)
"""gp2 500 GiB: a 1,500 IOPS baseline, bursts to 3,000 on 5.4 million credits; $50 a month."""


def gp2_day(drain_iops: float, drain_minutes: int) -> Demand:
    """Fifteen days at 100 IOPS; on the last, a drain at `drain_iops` for `drain_minutes`,
    then half an hour at the 1,500 IOPS baseline (the bucket empty)."""
    base = stretch(15, 60, 100)
    iops = base.iops.copy()
    start = len(iops) - 600
    iops[start : start + drain_minutes] = drain_iops
    iops[start + drain_minutes : start + drain_minutes + 30] = 1_500.0
    return Demand.seen(base.start, 60, iops, iops * 16 * KIB)


def test_a_gp2_drained_at_its_burst_cap_is_not_offered_gp3_at_3000() -> None:
    # 3,000 IOPS is gp2's burst: at the cap, what was asked is unknown above it.
    found = cut(GP2, past(gp2_day(3_000, 61)))
    assert found is not None and found.kind == "gp2_to_gp3" and found.target is not None
    assert found.target["iops"] == 3_600
    assert found.peaks["iops"].floor


def test_a_gp2_drained_below_its_cap_is_offered_gp3_at_3000_where_that_carries_every_minute() -> (
    None
):
    # 2,400 IOPS for 100 minutes empties the bucket; the baseline after it held the rest
    # back: those minutes count at 2,400, the rate before the hold, and 2,880 fits in 3,000.
    found = cut(GP2, past(gp2_day(2_400, 101)))
    assert found is not None and found.target is not None
    assert found.target == {
        "volume_type": "gp3",
        "size_gib": 500,
        "iops": 3_000,
        "throughput_mibps": 125,
    }
    # gp2 $0.10/GB against gp3 $0.08/GB.
    assert found.monthly_saving == pytest.approx(10.0)
    assert found.peaks["iops"].value == 2_400


def test_the_burst_is_replayed_not_averaged() -> None:
    # The hour's mean is 600 IOPS; its busiest minute 2,900: the target carries the minute.
    base = stretch(15, 60, 100)
    iops = base.iops.copy()
    iops[-60:] = 500.0
    iops[-30] = 2_900.0
    found = cut(GP2, past(Demand.seen(base.start, 60, iops, iops * 16 * KIB)))
    assert found is not None and found.target is not None
    assert found.target["iops"] == 2_900 * 1.2


def test_gp3_bought_1000_mibps_for_a_migration_long_over_keeps_what_its_peak_needs() -> None:
    gp3 = volume("gp3", 500, iops=6_000, mibps=1_000)
    found = cut(gp3, past(stretch(15, 60, 2_000, io_bytes=64 * KIB), stretch(48, 300, 1_000)))
    assert found is not None and found.target is not None
    # 2,000 IOPS of 64 KiB: 125 MiB/s, times 1.2 is 150 MiB/s; IOPS to the included 3,000.
    assert found.target["throughput_mibps"] == 150
    assert found.target["iops"] == 3_000
    assert found.kind == "throughput_above_need"
    # $0.005 an IOPS above 3,000 and $0.04 a MiB/s above 125.
    assert found.monthly_saving == pytest.approx(3_000 * 0.005 + 850 * 0.04)


def test_large_ios_count_as_several_against_gp3s_unit() -> None:
    # 1,000 IOPS of 1 MiB each: gp3 counts an I/O above 256 KiB as several.
    found = cut(volume("gp3", 2_000, iops=16_000, mibps=1_000), past(stretch(15, 60, 1_000, MIB)))
    assert found is not None and found.target is not None
    assert found.target["iops"] >= 4 * 1_000 * 1.2
    assert found.target["throughput_mibps"] == 1_200


def test_a_headroom_below_what_the_cap_rules_allow_is_raised_to_it() -> None:
    # With 1 % headroom the target would run at 99 % at the peak: the cap rule warns at 95 %.
    found = cut(IO2, SIXTY_THREE, headroom=1.01, min_headroom=1 / 0.95)
    assert found is not None and found.target is not None
    assert found.target["iops"] >= 3_000 / 0.95


def test_an_unattached_volume_idle_longer_than_the_setting_is_reported_with_its_cost() -> None:
    spare = Volume("vol-9", "us-east-1", "gp3", 500, "available")
    idle = LongPast(T0, (stretch(60, 3600, 0),), T0 - timedelta(days=90), T0 - timedelta(days=40))
    found = savings.unattached(spare, idle, PRICES, 30 * DAY, T0)
    assert found is not None and found.kind == "unattached" and found.fix_id is None
    assert found.monthly_saving == pytest.approx(500 * 0.08)
    assert found.window_days == pytest.approx(40)
    assert any("create-snapshot" in c for c in found.commands)
    assert found.commands[-1].startswith("aws ec2 delete-volume --volume-id vol-9")
    # Idle for less than the setting: nothing yet.
    assert savings.unattached(spare, idle, PRICES, 60 * DAY, T0) is None
    # In use: never.
    assert savings.unattached(volume("gp3", 500), idle, PRICES, 30 * DAY, T0) is None


def test_an_unattached_volume_without_any_io_is_idle_since_it_was_created() -> None:
    old = Volume("vol-8", "us-east-1", "gp2", 100, "available", created=T0 - timedelta(days=30))
    nothing = LongPast(T0, (), None, None)
    found = savings.unattached(old, nothing, PRICES, 7 * DAY, T0)
    assert found is not None and found.window_days == pytest.approx(30)
    new = Volume("vol-7", "us-east-1", "gp2", 100, "available", created=T0 - timedelta(hours=1))
    assert savings.unattached(new, nothing, PRICES, 7 * DAY, T0) is None
    # Neither I/O nor a creation time: how long it sat is not known, and nothing is said.
    unknown = Volume("vol-6", "us-east-1", "gp2", 100, "available")
    assert savings.unattached(unknown, nothing, PRICES, 7 * DAY, T0) is None


def test_an_io1_moved_to_gp3_gives_up_latency_not_durability() -> None:
    io1 = volume("io1", 500, iops=10_000)
    found = cut(io1, past(stretch(15, 60, 3_000)))
    assert found is not None and found.alternative is not None
    other = found.alternative
    assert other.kind == "io2_to_gp3" and other.gives_up is not None
    assert "durability" not in other.gives_up and "io1's steadier latency" in other.gives_up


def test_a_claims_cut_is_made_through_its_claim() -> None:
    from analyzer.model.kubernetes import Claim

    found = cut(IO2, SIXTY_THREE)
    assert found is not None
    made = savings.through_claim(found, Claim("db", "data-0"))
    program = made.kubernetes
    assert program is not None
    assert program["commands"] == [
        'kubectl -n db patch pvc data-0 -p \'{"spec":{"volumeAttributesClassName":"io2-3600"}}\''
    ]
    assert program["volume_attributes_class"]["parameters"] == {"type": "io2", "iops": "3600"}
    assert program["annotations"] == {
        "ebs.csi.aws.com/volumeType": "io2",
        "ebs.csi.aws.com/iops": "3600",
    }
    assert made.alternative is not None and made.alternative.kubernetes is not None
    # A volume the in-tree plugin made: no class modifies it, and the cut says so.
    old = savings.through_claim(found, Claim("db", "data-0", csi=False))
    assert old.kubernetes is not None and "will not know" in old.kubernetes["unheard"]


def test_only_the_past_since_the_last_modification_sizes_a_cut() -> None:
    from analyzer.model.resources import Modification

    # gp3 raised from 3,000 to 10,000 IOPS twenty days ago: before it, a load pinned at the
    # old cap says nothing of what it asks now; since, its busiest minute is 8,000.
    raised = Modification("completed", T0 - timedelta(days=20))
    gp3 = Volume(
        "vol-1", "us-east-1", "gp3", 500, "in-use", 10_000, 125, "i-1", modifications=(raised,)
    )
    pinned = stretch(48, 300, 3_000, before=15)
    found = cut(gp3, past(stretch(15, 60, 8_000), pinned))
    assert found is not None and found.target is not None
    assert found.target["iops"] == 9_600
    assert found.window_days == pytest.approx(20, abs=0.1)
    # Modified ten days ago: ten days are too few to offer anything.
    lately = Modification("completed", T0 - timedelta(days=10))
    recent = Volume(
        "vol-1", "us-east-1", "gp3", 500, "in-use", 10_000, 125, "i-1", modifications=(lately,)
    )
    assert cut(recent, past(stretch(15, 60, 100), pinned)) is None


def test_off_nitro_only_the_minute_stretch_is_read_as_peaks() -> None:
    from dataclasses import replace

    xen = replace(M5, nitro=False)
    older = with_minute(stretch(48, 300, 2_500, before=15), 100, 9_000)
    found = savings.cut(IO2, xen, past(stretch(15, 60, 3_000), older), PRICES)
    assert found is not None and found.target is not None
    assert found.target["iops"] == 3_600 and found.window_days == pytest.approx(15)


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(["gp2", "gp3", "io1", "io2"]),
    size=st.sampled_from([50, 200, 500, 2_000]),
    seed=st.integers(0, 2**32 - 1),
    large_io=st.booleans(),
)
def test_a_summarized_past_weighs_the_cut_the_whole_past_weighs(
    kind: str, size: int, seed: int, large_io: bool
) -> None:
    """The busiest periods by IOPS and by throughput decide every target a cut offers: the
    whole past, in force and lifted, and its summary give the same cut, to the cent."""
    rng = np.random.default_rng(seed)
    stretches = []
    for days, period, before in ((15, 60, 0), (48, 300, 15)):
        n = int(days * DAY // period)
        iops = rng.gamma(2.0, 600.0, n)
        sizes = rng.choice([16 * KIB, 256 * KIB, 1024 * KIB] if large_io else [16 * KIB], n)
        start = T0 - timedelta(days=before) - timedelta(seconds=n * period)
        stretches.append(Demand.seen(start, period, iops, iops * sizes))
    provisioned = {"gp3": 16_000, "io1": 20_000, "io2": 20_000}.get(kind)
    v = volume(kind, size, iops=provisioned, mibps=1_000 if kind == "gp3" else None)
    if provisioned is not None and provisioned > size * (500 if kind != "io1" else 50):
        v = volume(kind, size, iops=min(provisioned, size * 50))
    p = past(*stretches)
    whole = savings.lifted(savings._in_force(p, v, M5), savings.volume_envelope(v, M5))
    full = savings.weigh(v, whole, PRICES, 1.2, 1.054)
    summary = savings.summarized(v, M5, p)
    assert len(summary.stretches) <= 4
    short = savings.weigh(v, summary, PRICES, 1.2, 1.054)
    assert (full is None) == (short is None)
    if full is not None and short is not None:
        assert (short.kind, short.target, short.monthly_saving) == (
            full.kind,
            full.target,
            full.monthly_saving,
        )
        assert {k: (p.value, p.at, p.floor) for k, p in short.peaks.items()} == {
            k: (p.value, p.at, p.floor) for k, p in full.peaks.items()
        }


def rds(engine: str = "mysql", size: int = 400, iops: int = 20_000, kind: str = "io1"):
    from analyzer.model.resources import DbInstance

    return DbInstance("orders", "us-east-1", engine, "db.m5.large", kind, size, "available", iops)


def rds_price(config) -> float:
    """io1 on RDS, Single-AZ, us-east-1 as a price file gives it: $0.125 a GB-month, $0.10 an
    IOPS-month."""
    return round(0.125 * config["allocated_gib"] + 0.10 * config["iops"], 2)


def test_rds_io1_above_its_need_is_cut_to_the_need_within_what_rds_provisions() -> None:
    db = rds()
    found = savings.cut_db(db, SIXTY_THREE, rds_price, 1.2, 1.054)
    assert found is not None and found.resource_type.value == "db_instance"
    assert found.kind == "iops_above_need" and found.fix_id == "orders:iops=3600"
    assert found.target == {"storage_type": "io1", "allocated_gib": 400, "iops": 3_600}
    assert found.monthly_saving == pytest.approx((20_000 - 3_600) * 0.10, abs=0.01)
    assert found.peaks["iops"].value == 3_000 and found.window_days == pytest.approx(63, abs=0.1)
    assert found.today_text.startswith("io1 400 GiB")


def test_rds_provisions_no_fewer_than_1000_iops_nor_below_its_ratio_to_the_storage() -> None:
    """Amazon RDS User Guide ("Provisioned IOPS SSD storage": 1,000 to 256,000) and the API
    Reference (CreateDBInstance, Iops: 0.5 to 50 × the storage, 1 to 50 on SQL Server)."""
    from analyzer.model import rds_storage

    assert rds_storage.PROVISIONED_LEAST_IOPS == 1_000
    assert rds_storage.IOPS_PER_GIB_OTHERS == (0.5, 50.0)
    assert rds_storage.IOPS_PER_GIB["sqlserver"] == (1.0, 50.0)
    quiet = past(stretch(15, 60, 100), stretch(48, 300, 80, before=15))
    small = savings.cut_db(rds(), quiet, rds_price)
    assert small is not None and small.target is not None and small.target["iops"] == 1_000
    sql = savings.cut_db(rds("sqlserver-se", 2_000, 20_000), quiet, rds_price)
    assert sql is not None and sql.target is not None and sql.target["iops"] == 2_000
    assert rds_storage.provisioned_range(rds("postgres", 399)) == (1_000, 19_950)


def test_rds_storage_unpriced_or_under_a_fortnight_or_not_provisioned_offers_nothing() -> None:
    assert savings.cut_db(rds(), SIXTY_THREE, lambda _: None) is None
    short = past(stretch(10, 60, 3_000))
    assert savings.cut_db(rds(), short, rds_price) is None
    assert savings.cut_db(rds(kind="gp2", iops=0), SIXTY_THREE, rds_price) is None
    # Its need is what it has: no cut.
    assert savings.cut_db(rds(iops=3_600), SIXTY_THREE, rds_price) is None


def rds_gp3_price(config) -> float:
    """RDS gp3 as a price file gives it (striped sizes of MySQL: 12,000 IOPS and 500 MiB/s
    included): $0.115 a GB-month, $0.02 an IOPS-month and $0.08 a MiB/s-month above them."""
    return round(
        0.115 * config["allocated_gib"]
        + 0.02 * max(config["iops"] - 12_000, 0)
        + 0.08 * max(config["throughput_mibps"] - 500, 0),
        2,
    )


def test_rds_gp3_provisioned_above_its_need_is_cut_to_what_it_includes() -> None:
    from dataclasses import replace as with_

    db = with_(rds(size=1_000, iops=40_000, kind="gp3"), throughput_mibps=2_000)
    found = savings.cut_db(db, SIXTY_THREE, rds_gp3_price, 1.2, 1.054)
    assert found is not None and found.target is not None
    assert (found.target["iops"], found.target["throughput_mibps"]) == (12_000, 500)
    assert found.kind == "iops_above_need"
    assert found.monthly_saving == pytest.approx(28_000 * 0.02 + 1_500 * 0.08, abs=0.01)
    assert found.fix_id == "orders:iops=12000,throughput=500"


def test_rds_gp3_below_its_striping_offers_nothing_to_cut() -> None:
    """Below 400 GiB (MySQL) RDS gp3 is 3,000 IOPS and 125 MiB/s, nothing provisioned."""
    from dataclasses import replace as with_

    small = with_(rds(size=200, iops=0, kind="gp3"), iops=None)
    assert savings.cut_db(small, SIXTY_THREE, rds_gp3_price) is None


def test_rds_with_other_volumes_in_a_cluster_or_stopped_offers_nothing() -> None:
    """AWS/RDS counts additional storage volumes' I/O with the primary's: no cut of one is
    proven. A Multi-AZ DB cluster's storage is the cluster's. A stopped instance publishes
    nothing. A backup window is none of these: the cut stands through it."""
    from dataclasses import replace as with_

    from analyzer.model.resources import StorageVolume

    db = rds()
    extra = StorageVolume("rdsdbdata2", "io2", 2_000, 40_000, None)
    assert savings.cut_db(with_(db, additional_volumes=(extra,)), SIXTY_THREE, rds_price) is None
    assert savings.cut_db(with_(db, cluster="orders-cluster"), SIXTY_THREE, rds_price) is None
    assert savings.cut_db(with_(db, state="stopped"), SIXTY_THREE, rds_price) is None
    assert savings.cut_db(with_(db, state="backing-up"), SIXTY_THREE, rds_price) is not None
