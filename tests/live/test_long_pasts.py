"""Each volume's long past read a stretch a day and kept as a few figures: what is read when,
what a failed read, a volume off Nitro, a modification and a broken state file do, and that
the kept figures weigh the same cut as the past read whole."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from analyzer import settings
from analyzer.analyze import prices, rules
from analyzer.collect import peaks
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window
from analyzer.live import fleet_savings
from analyzer.live.long_pasts import LongPasts
from analyzer.model.resources import Instance, InstanceType, Inventory, Modification, Volume
from analyzer.model.series import Series
from analyzer.model.state import FetchStats
from tests.fakes import M5, FakeMetricData
from tests.helpers import T0

SETTINGS = settings.load({"region": ["us-east-1"]})
PRICES = prices.load(None)
FLOOR = fleet_savings.min_headroom(rules.load())
XEN = replace(M5, name="m4.large", nitro=False)
IO2 = Volume("vol-big", "us-east-1", "io2", 500, "in-use", 20_000, None, "i-1")


def busy(query: MetricQuery, at: datetime) -> float | None:
    """1,000 IOPS of 16 KiB reads every period, and 3,000 in the minute 20 days ago (seen in
    the coarse stretches only)."""
    if query.stat == "SampleCount":
        return query.period_s / 60
    per_second = {"VolumeReadOps": 1_000.0, "VolumeReadBytes": 1_000.0 * 16_384}.get(query.metric)
    if per_second is None:
        return 0.0
    busiest = T0 - timedelta(days=20)
    if query.period_s > 60 and busiest - timedelta(seconds=query.period_s) < at <= busiest:
        per_second *= 3
    return per_second * 60


class Counting(FakeMetricData):
    def __init__(self, value: Any = busy, fail: bool = False) -> None:
        super().__init__(value)
        self.asked: list[tuple[str, int, int]] = []
        self.fail = fail

    def fetch(
        self, queries: Sequence[MetricQuery], window: Window
    ) -> tuple[dict[MetricQuery, Series], FetchStats]:
        self.asked += [(q.resource_id, q.period_s, window.period_s) for q in queries]
        found, stats = super().fetch(queries, window)
        if self.fail:
            found = {q: Series.failed("AccessDenied: not authorized") for q in queries}
            stats.metrics_failed = len(queries)
        return found, stats


def inventory(volume: Volume = IO2, type_info: InstanceType = M5) -> dict[str, Inventory]:
    instance = Instance("i-1", "us-east-1", type_info.name, "running", type_info=type_info)
    return {"us-east-1": Inventory("us-east-1", [volume], [instance])}


def step(kept: LongPasts, metrics: Counting, now: datetime, **kw: Any) -> None:
    kept.step(
        kw.get("inventories") or inventory(), lambda _: metrics, SETTINGS, PRICES, FLOOR, now, 60
    )


def days(kept: LongPasts, metrics: Counting, n: int, **kw: Any) -> datetime:
    now = T0
    for day in range(n):
        now = T0 + timedelta(days=day, minutes=3)
        step(kept, metrics, now, **kw)
        step(kept, metrics, now + timedelta(minutes=1), **kw)  # the same day: nothing read
    return now


def test_a_stretch_a_day_minute_first_then_coarser_then_the_stalest() -> None:
    kept, metrics = LongPasts(), Counting()
    days(kept, metrics, 4)
    periods = [window for _, _, window in metrics.asked]
    assert periods == [60] * 4 + [300] * 5 + [3_600] * 5 + [60] * 4
    assert [s.resource_id for s in kept.savings()] == ["vol-big"]


def test_the_volume_is_weighed_only_once_every_stretch_is_read() -> None:
    kept, metrics = LongPasts(), Counting()
    days(kept, metrics, 2)
    assert kept.savings() == []
    assert kept.counts(inventory()) == {"weighed": 0, "reading": 1, "unread": 0}
    days(kept, metrics, 3)
    assert kept.counts(inventory()) == {"weighed": 1, "reading": 0, "unread": 0}


def test_the_kept_figures_weigh_the_cut_the_past_read_whole_weighs() -> None:
    kept, metrics = LongPasts(), Counting()
    now = days(kept, metrics, 3)
    [daily] = kept.savings()
    past = peaks.read(FakeMetricData(busy), IO2, now, SETTINGS.settle_delay, FetchStats())
    assert past is not None
    whole = fleet_savings.offered(
        IO2, fleet_savings.savings.summarized(IO2, M5, past), SETTINGS, PRICES, FLOOR, now
    )
    assert whole is not None
    assert daily.target == whole.target and daily.monthly_saving == whole.monthly_saving
    assert daily.peaks["iops"].value == whole.peaks["iops"].value == 3_000
    assert daily.peaks["iops"].period_s == 300


def test_off_nitro_only_the_minute_stretch_is_read() -> None:
    kept, metrics = LongPasts(), Counting()
    days(kept, metrics, 3, inventories=inventory(type_info=XEN))
    assert {window for _, _, window in metrics.asked} == {60}
    assert kept.counts(inventory(type_info=XEN))["weighed"] == 1


def test_coarse_maxima_that_are_not_a_minutes_count_end_the_reads() -> None:
    def five_samples_a_minute(query: MetricQuery, at: datetime) -> float | None:
        return query.period_s / 12 if query.stat == "SampleCount" else busy(query, at)

    kept, metrics = LongPasts(), Counting(five_samples_a_minute)
    days(kept, metrics, 4)
    assert {window for _, _, window in metrics.asked} == {60, 300}
    assert kept.counts(inventory())["weighed"] == 1


def test_a_failed_read_is_unread_and_tried_again_a_day_later() -> None:
    kept, metrics = LongPasts(), Counting(fail=True)
    step(kept, metrics, T0 + timedelta(minutes=3))
    step(kept, metrics, T0 + timedelta(hours=12))
    assert len(metrics.asked) == 4
    assert kept.counts(inventory())["unread"] == 1
    metrics.fail = False
    step(kept, metrics, T0 + timedelta(days=1, minutes=3))
    assert len(metrics.asked) == 8
    assert kept.counts(inventory()) == {"weighed": 0, "reading": 1, "unread": 0}


def test_a_modification_sets_the_stretches_read_before_it_aside() -> None:
    kept, metrics = LongPasts(), Counting()
    now = days(kept, metrics, 3)
    changed = replace(IO2, iops=3_600, modifications=(Modification("optimizing", now),))
    step(kept, metrics, now + timedelta(minutes=5), inventories=inventory(changed))
    assert kept.savings() == []
    assert kept.counts(inventory(changed)) == {"weighed": 0, "reading": 1, "unread": 0}


def test_a_volume_gone_from_its_scope_is_forgotten() -> None:
    kept, metrics = LongPasts(), Counting()
    days(kept, metrics, 3)
    step(kept, metrics, T0 + timedelta(days=3), inventories={"us-east-1": Inventory("us-east-1")})
    assert kept.kept == {} and kept.savings() == []


def test_the_state_file_keeps_a_few_figures_a_volume_and_gives_them_back() -> None:
    kept, metrics = LongPasts(), Counting()
    now = days(kept, metrics, 3)
    text = kept.encoded()
    assert len(text) < 1_000
    again = LongPasts.from_records(json.loads(text), now)
    assert again.kept == kept.kept
    step(again, metrics, now + timedelta(minutes=5))
    assert [s.monthly_saving for s in again.savings()] == [s.monthly_saving for s in kept.savings()]


@pytest.mark.parametrize(
    "broken",
    [
        {"scope": "us-east-1"},
        {"scope": "us-east-1", "volume_id": "vol-x", "stretches": [{"period_s": 7}]},
        {"scope": "", "volume_id": "vol-x", "stretches": []},
        "vol-x",
    ],
)
def test_an_entry_that_cannot_be_read_is_left_out_alone(broken: Any) -> None:
    kept, metrics = LongPasts(), Counting()
    now = days(kept, metrics, 3)
    records = [*json.loads(kept.encoded()), broken]
    again = LongPasts.from_records(records, now)
    assert list(again.kept) == [("us-east-1", "vol-big")]


def test_a_section_that_is_not_a_list_gives_nothing() -> None:
    assert LongPasts.from_records({"vol-x": 1}, T0).kept == {}
    assert LongPasts.from_records(None, T0).kept == {}


def test_a_read_time_to_come_is_read_again() -> None:
    kept, metrics = LongPasts(), Counting()
    days(kept, metrics, 3)
    assert LongPasts.from_records(json.loads(kept.encoded()), T0).kept == {}


def test_a_failed_read_again_takes_the_saving_off_until_it_is_read() -> None:
    kept, metrics = LongPasts(), Counting()
    now = days(kept, metrics, 3)
    assert kept.savings()
    metrics.fail = True
    step(kept, metrics, now + timedelta(days=1))
    assert kept.savings() == []
    assert kept.counts(inventory()) == {"weighed": 0, "reading": 0, "unread": 1}


def test_modifications_not_answered_keep_what_was_read() -> None:
    """DescribeVolumesModifications failing for a while says no modification: the stretches
    read since the last one stand, and the saving with them."""
    modified = replace(IO2, modifications=(Modification("completed", T0 - timedelta(days=100)),))
    kept, metrics = LongPasts(), Counting()
    now = days(kept, metrics, 3, inventories=inventory(modified))
    [before] = kept.savings()
    step(kept, metrics, now + timedelta(days=1), inventories=inventory(IO2))
    assert sorted(kept.kept[("us-east-1", "vol-big")]) == [60, 300, 3_600]
    assert [s.monthly_saving for s in kept.savings()] == [before.monthly_saving]


def test_a_volume_moved_off_nitro_is_weighed_on_its_minute_stretch_alone() -> None:
    kept, metrics = LongPasts(), Counting()
    now = days(kept, metrics, 3)
    [on_nitro] = kept.savings()
    assert on_nitro.peaks["iops"].value == 3_000  # the coarse stretches' spike
    step(kept, metrics, now + timedelta(hours=1), inventories=inventory(type_info=XEN))
    [off_nitro] = kept.savings()
    assert off_nitro.peaks["iops"].period_s == 60 and off_nitro.peaks["iops"].value == 1_000


def test_a_failed_read_is_remembered_across_a_restart() -> None:
    kept, metrics = LongPasts(), Counting(fail=True)
    step(kept, metrics, T0 + timedelta(minutes=3))
    again = LongPasts.from_records(json.loads(kept.encoded()), T0 + timedelta(hours=1))
    step(again, metrics, T0 + timedelta(hours=2))
    assert len(metrics.asked) == 4  # not read again within the day
    assert again.counts(inventory())["unread"] == 1


def rds_busy(query: MetricQuery, at: datetime) -> float | None:
    """An RDS instance's rates: 1,000 read IOPS of 16 KiB, and 3,000 in a minute 20 days ago
    (in the coarse stretches only)."""
    if query.stat == "SampleCount":
        return query.period_s / 60
    rate = {"ReadIOPS": 1_000.0, "ReadThroughput": 1_000.0 * 16_384}.get(query.metric, 0.0)
    busiest = T0 - timedelta(days=20)
    if query.period_s > 60 and busiest - timedelta(seconds=query.period_s) < at <= busiest:
        rate *= 3
    return rate


def test_an_rds_instances_provisioned_iops_are_weighed_a_stretch_a_day_where_priced() -> None:
    from analyzer.analyze.prices import VolumePrice
    from analyzer.model.resources import DbInstance

    db = DbInstance("orders", "us-east-1", "mysql", "db.m5.large", "io1", 400, "available", 20_000)
    fleet = {"us-east-1": Inventory("us-east-1", (), (), (db,))}
    priced = PRICES.model_copy(
        update={"rds_storage": {"io1": VolumePrice(per_gib=0.125, per_iops=0.10)}}
    )
    kept, metrics = LongPasts(), Counting(rds_busy)
    for day in range(3):
        now = T0 + timedelta(days=day, minutes=3)
        kept.step(fleet, lambda _: metrics, SETTINGS, priced, FLOOR, now, 60)
    assert [window for _, _, window in metrics.asked] == [60] * 4 + [300] * 5 + [3_600] * 5
    [cut] = kept.savings()
    assert cut.resource_id == "orders" and cut.fix_id == "orders:iops=3600"
    assert cut.monthly_saving == pytest.approx((20_000 - 3_600) * 0.10, abs=0.01)
    assert kept.counts(fleet) == {"weighed": 1, "reading": 0, "unread": 0}
    # Its IOPS unpriced: not read at all, and not counted.
    unpriced, untouched = LongPasts(), Counting(rds_busy)
    unpriced.step(fleet, lambda _: untouched, SETTINGS, PRICES, FLOOR, T0, 60)
    assert untouched.asked == [] and unpriced.counts(fleet)["reading"] == 0
