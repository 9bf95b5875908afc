from datetime import timedelta

import pytest

from analyzer.analyze.states import StateCache
from analyzer.analyze.states import states_for as analyzed_states_for
from analyzer.collect.queries import MetricQuery
from analyzer.model.metrics import Measure
from analyzer.model.resources import Instance, InstanceType, Inventory, Volume
from analyzer.model.series import Series, Status
from tests.helpers import T0, series

TYPE = InstanceType("m5.large", 3_600, 18_750, 81.25e6, 593.75e6, nitro=True)


def q(rid, metric, namespace="AWS/EBS"):
    return MetricQuery(rid, namespace, metric, (("VolumeId", rid),), "Sum", 60)


def states_for(inv, fetched, cache=None, since=None, touched=None):
    """The states from series keyed by query, grouped as the history gives them."""
    raw = {}
    for query, found in fetched.items():
        raw.setdefault(query.resource_id, {})[query.metric] = found
    return analyzed_states_for(inv, raw, cache, since, touched)


def inventory():
    return Inventory(
        "us-east-1",
        volumes=(
            Volume("vol-a", "us-east-1", "gp3", 100, "in-use", 3_000, 125, "i-1"),
            Volume("vol-b", "us-east-1", "gp3", 100, "in-use", 3_000, 125, "i-1"),
            Volume("vol-c", "us-east-1", "gp3", 100, "available"),
        ),
        instances=(
            Instance("i-1", "us-east-1", "m5.large", "running", False, ("vol-a", "vol-b"), TYPE),
        ),
    )


def test_instance_rates_fall_back_to_the_sum_of_its_volumes():
    fetched = {
        q("vol-a", "VolumeReadOps"): series([6_000] * 5),
        q("vol-b", "VolumeReadOps"): series([3_000] * 5),
        q("vol-a", "VolumeReadBytes"): series([6_000 * 4096] * 5),
        q("i-1", "EBSReadOps", "AWS/EC2"): Series.failed("InternalError"),
    }
    states = {s.ref.resource_id: s for s in states_for(inventory(), fetched)}
    instance = states["i-1"]
    assert instance.status is Status.OK
    assert list(instance.measure(Measure.IOPS).values) == [150] * 5
    assert "rates summed from 2 attached volume(s)" in instance.notes[0]
    assert "InternalError" in instance.notes[0]


def test_ec2_metrics_win_when_present():
    stamps = [(T0 + timedelta(minutes=5 * i), 300_000.0) for i in range(3)]
    fetched = {
        q("vol-a", "VolumeReadOps"): series([6_000] * 15),
        q("i-1", "EBSReadOps", "AWS/EC2"): Series.of(stamps, 300),
    }
    instance = {s.ref.resource_id: s for s in states_for(inventory(), fetched)}["i-1"]
    assert list(instance.measure(Measure.IOPS).values) == [1_000] * 3
    assert instance.notes == ()


def test_detached_volume_is_no_data_and_a_failed_one_is_an_error():
    fetched = {
        q("vol-a", "VolumeReadOps"): Series.failed("cloudwatch: Throttling"),
        q("vol-a", "VolumeWriteOps"): series([1]),
    }
    states = {s.ref.resource_id: s for s in states_for(inventory(), fetched)}
    assert states["vol-c"].status is Status.NO_DATA
    assert states["vol-a"].status is Status.ERROR
    assert states["vol-a"].error == "cloudwatch: Throttling"
    assert states["vol-b"].status is Status.NO_DATA


def test_a_resource_whose_data_did_not_change_keeps_its_state():
    inv = inventory()
    a_ops, b_ops = series([6_000] * 5), series([3_000] * 5)
    fetched = {q("vol-a", "VolumeReadOps"): a_ops, q("vol-b", "VolumeReadOps"): b_ops}
    cache = StateCache()
    first = {s.ref.resource_id: s for s in states_for(inv, fetched, cache)}
    again = {s.ref.resource_id: s for s in states_for(inv, dict(fetched), cache)}
    assert all(again[rid] is first[rid] for rid in first)
    # New data for vol-b: vol-b and its instance (which sums it) are built again.
    fetched[q("vol-b", "VolumeReadOps")] = series([4_000] * 5)
    later = {s.ref.resource_id: s for s in states_for(inv, fetched, cache)}
    assert later["vol-a"] is first["vol-a"] and later["vol-c"] is first["vol-c"]
    assert later["vol-b"] is not first["vol-b"] and later["i-1"] is not first["i-1"]
    assert later["i-1"].measure(Measure.IOPS).values == pytest.approx([10_000 / 60] * 5)


def test_an_instance_with_its_own_rates_is_not_rebuilt_for_its_volumes():
    inv = inventory()
    ec2 = Series.of([(T0 + timedelta(minutes=5 * i), 300_000.0) for i in range(3)], 300)
    fetched = {
        q("vol-a", "VolumeReadOps"): series([6_000] * 5),
        q("i-1", "EBSReadOps", "AWS/EC2"): ec2,
    }
    cache = StateCache()
    first = {s.ref.resource_id: s for s in states_for(inv, fetched, cache)}
    fetched[q("vol-a", "VolumeReadOps")] = series([9_000] * 5)
    later = {s.ref.resource_id: s for s in states_for(inv, fetched, cache)}
    assert later["vol-a"] is not first["vol-a"]
    assert later["i-1"] is first["i-1"]


def test_measures_are_worked_out_only_over_what_the_analysis_reads():
    fetched = {q("vol-a", "VolumeReadOps"): series([6_000] * 60)}
    since = T0 + timedelta(minutes=40)
    states = {s.ref.resource_id: s for s in states_for(inventory(), fetched, since=since)}
    for rid in ("vol-a", "i-1"):  # the instance sums its volumes' measures, cut as well
        iops = states[rid].measure(Measure.IOPS)
        assert iops.timestamps[0] == since and len(iops) == 20


def test_only_the_touched_resources_have_their_series_compared():
    inv = inventory()
    fetched = {q("vol-a", "VolumeReadOps"): series([6_000] * 5)}
    cache = StateCache()
    first = {s.ref.resource_id: s for s in states_for(inv, fetched, cache)}
    fetched[q("vol-a", "VolumeReadOps")] = series([9_000] * 5)
    untouched = {s.ref.resource_id: s for s in states_for(inv, fetched, cache, touched=set())}
    assert untouched["vol-a"] is first["vol-a"]  # taken on trust: nothing was merged
    touched = {s.ref.resource_id: s for s in states_for(inv, fetched, cache, touched={"vol-a"})}
    assert touched["vol-a"] is not first["vol-a"]
    assert touched["i-1"] is not first["i-1"]  # it sums vol-a


def test_a_sum_of_volumes_asked_at_different_moments_stops_where_all_were_asked():
    # vol-a was asked two minutes later than vol-b: its last two minutes have no vol-b yet,
    # which would count as none.
    fetched = {
        q("vol-a", "VolumeReadOps"): series([6_000] * 7),
        q("vol-b", "VolumeReadOps"): series([3_000] * 5),
    }
    raw = {}
    for query, found in fetched.items():
        raw.setdefault(query.resource_id, {})[query.metric] = found
    until = {"i-1": T0 + timedelta(minutes=5)}
    found = analyzed_states_for(inventory(), raw, complete_until=until)
    instance = next(s for s in found if s.ref.resource_id == "i-1")
    assert list(instance.measure(Measure.IOPS).values) == [150] * 5
    assert "not asked" in instance.notes[0]
    ragged = analyzed_states_for(inventory(), raw)
    instance = next(s for s in ragged if s.ref.resource_id == "i-1")
    assert list(instance.measure(Measure.IOPS).values) == [150] * 5 + [100] * 2


def test_an_instance_summed_from_its_volumes_does_not_know_its_rates_without_one_of_them():
    fetched = {
        q("vol-a", "VolumeReadOps"): series([6_000] * 5),
        q("vol-b", "VolumeReadOps"): Series.failed("Throttling: Rate exceeded"),
    }
    states = {s.ref.resource_id: s for s in states_for(inventory(), fetched)}
    instance = states["i-1"]
    assert instance.status is Status.ERROR
    assert instance.measure(Measure.IOPS).error == "vol-b: Throttling: Rate exceeded"
    # Where its own counts were asked and failed too, what its volumes have is the best known.
    fetched[q("i-1", "EBSReadOps", "AWS/EC2")] = Series.failed("InternalError")
    states = {s.ref.resource_id: s for s in states_for(inventory(), fetched)}
    assert list(states["i-1"].measure(Measure.IOPS).values) == [100] * 5


def test_only_what_the_rules_read_is_worked_out_but_a_balance_s_last_reading_is_kept() -> None:
    """With `since`, measures start there; a balance with no reading that recent keeps its
    last (AWS publishes none while a volume is idle), so an idle bucket's refill is still
    worked out from it."""
    inv = Inventory(
        "us-east-1", volumes=(Volume("vol-g", "us-east-1", "gp2", 100, "in-use", None, None),)
    )
    fetched = {
        q("vol-g", "VolumeReadOps"): series([60.0] * 10),
        q("vol-g", "BurstBalance"): series([12.0] * 10),
    }
    since = T0 + timedelta(minutes=40)
    [state] = states_for(inv, fetched, since=since)
    assert not state.measure(Measure.IOPS).timestamps
    assert state.measure(Measure.BURST_BALANCE).points() == [(T0 + timedelta(minutes=9), 12.0)]
    # 100 GiB of gp2 earns 300 credits a second of 5.4 million: a third of a point a minute.
    at = T0 + timedelta(minutes=70)
    assert state.balance_at_most(Measure.BURST_BALANCE, at) == pytest.approx(12.0 + 60.5 / 3)
