from dataclasses import replace
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from analyzer.collect.history import History
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window
from analyzer.model.series import Series, Status
from tests.helpers import T0

VOLUME = MetricQuery("vol-1", "AWS/EBS", "VolumeReadOps", (("VolumeId", "vol-1"),), "Sum", 60)
INSTANCE = MetricQuery("i-1", "AWS/EC2", "EBSReadOps", (("InstanceId", "i-1"),), "Sum", 300)
ASKED = {VOLUME.resource_id: [VOLUME]}


def held(h: History) -> Series:
    """The volume's series as the history holds it, asked for the volume alone."""
    return h.current(ASKED)[VOLUME.resource_id][VOLUME.metric]


def at(minutes: float, seconds: float = 30):
    return T0 + timedelta(minutes=minutes, seconds=seconds)


def fill(window: Window, value: float = 1.0) -> Series:
    points = [
        (window.start + timedelta(seconds=i * window.period_s), value)
        for i in range(window.periods)
    ]
    return Series.of(points, window.period_s)


def history():
    return History(lookback_s=3 * 3600, overlap_s=300, settle_s=120)


def test_first_cycle_backfills_then_fetches_what_is_new_plus_the_overlap():
    h = history()
    [(window, group)] = h.plan([VOLUME], at(0))
    assert group == [VOLUME]
    assert window.end == T0  # up to the minute under way: CloudWatch answers what it has
    assert window.seconds == 3 * 3600
    h.merge(window, {VOLUME: fill(window)})

    [(window, _)] = h.plan([VOLUME], at(1))
    assert window.end == T0 + timedelta(minutes=1)
    # Five minutes of overlap, which ask again for the sum's newest minute, held back as it may
    # still be filling.
    assert window.start == T0 - timedelta(minutes=5)


def test_nothing_is_asked_while_no_new_period_is_complete():
    h = history()
    for window, group in h.plan([VOLUME, INSTANCE], at(0)):
        h.merge(window, {q: fill(window) for q in group})
    # One minute later: a new 1-minute period, but no new 5-minute one.
    planned = h.plan([VOLUME, INSTANCE], at(1))
    assert [group for _, group in planned] == [[VOLUME]]
    # Five minutes later both are due again.
    assert {q for _, g in h.plan([VOLUME, INSTANCE], at(5)) for q in g} == {VOLUME, INSTANCE}


def test_new_points_replace_those_in_their_window_and_late_ones_are_taken():
    h = history()
    [(first, _)] = h.plan([VOLUME], at(0))
    h.merge(first, {VOLUME: fill(first, 1.0)})
    [(second, _)] = h.plan([VOLUME], at(1))
    h.merge(second, {VOLUME: fill(second, 2.0)})
    series = held(h)
    assert series.status is Status.OK
    # The overlap was asked again; its newest minute is held back, as it may still be filling.
    assert tuple(series.values[-5:]) == (2.0,) * 5
    assert series.values[0] == 1.0
    assert len(series) == 179  # the lookback moved on by a minute; the newest held back


def test_a_failed_fetch_keeps_what_was_known_and_is_retried_from_the_same_point():
    h = history()
    [(first, _)] = h.plan([VOLUME], at(0))
    h.merge(first, {VOLUME: fill(first)})
    h.take_touched()
    [(failed, _)] = h.plan([VOLUME], at(1))
    h.merge(failed, {VOLUME: Series.failed("Throttling")})
    assert h.take_touched() == {VOLUME.resource_id}  # an error is news too
    series = held(h)
    assert series.status is Status.ERROR and series.error == "Throttling"
    assert len(series) == 179  # as the last good fetch left it (its newest minute held back)
    [(retry, _)] = h.plan([VOLUME], at(2))
    assert retry.start == failed.start


def test_queries_of_resources_that_are_gone_are_forgotten():
    h = history()
    for window, group in h.plan([VOLUME, INSTANCE], at(0)):
        h.merge(window, {q: fill(window) for q in group})
    h.take_touched()
    assert set(h.current(ASKED)) == {VOLUME.resource_id}
    assert len(h) == 1
    assert h.take_touched() == {INSTANCE.resource_id}  # its states are built again
    assert h.take_touched() == set()
    # A query seen again later is backfilled like a new one.
    [(window, _)] = [p for p in h.plan([INSTANCE], at(1)) if INSTANCE in p[1]]
    assert window.seconds >= 3 * 3600


def test_history_is_trimmed_to_the_lookback():
    h = History(lookback_s=600, overlap_s=60, settle_s=0)
    for minute in range(0, 30):
        for window, group in h.plan([VOLUME], at(minute, 0)):
            h.merge(window, {q: fill(window) for q in group})
    series = held(h)
    assert len(series) <= 11


def test_a_balance_s_last_reading_outlives_the_lookback_and_a_rate_s_does_not() -> None:
    """AWS publishes no BurstBalance while a volume is idle: its last reading, however old, is
    what the bucket's refill since is worked out from, so it is kept where nothing newer is.
    A rate's old points go with the lookback."""
    balance = replace(VOLUME, metric="BurstBalance", stat="Average")
    h = History(lookback_s=600, overlap_s=60, settle_s=0)
    idle = T0 + timedelta(minutes=5)  # no datapoints at all from then on
    for minute in range(0, 40):
        for window, group in h.plan([VOLUME, balance], at(minute, 0)):
            points = [(t, v) for t, v in fill(window, 7.0).points() if t < idle]
            h.merge(window, {q: Series.of(points, 60) for q in group})
    kept = h.current({"vol-1": [VOLUME, balance]})["vol-1"]
    assert kept["BurstBalance"].points() == [(T0 + timedelta(minutes=4), 7.0)]
    assert not kept["VolumeReadOps"].timestamps


@given(
    st.lists(st.integers(min_value=0, max_value=60), unique=True, max_size=40),
    st.integers(min_value=0, max_value=60),
    st.integers(min_value=1, max_value=20),
    st.lists(st.integers(min_value=-5, max_value=25), unique=True, max_size=20),
)
def test_a_merge_replaces_the_window_and_drops_what_left_the_lookback(minutes, start, size, got):
    """Cut and joined by position, a merge equals its definition point by point: the old
    points outside the window and within the lookback, and every new point."""
    lookback_min = 30
    h = History(lookback_s=lookback_min * 60, overlap_s=300, settle_s=0)
    old = Series.of([(T0 + timedelta(minutes=m), float(m)) for m in minutes], 60)
    h._series[VOLUME] = old  # as earlier merges left it
    window = Window(T0 + timedelta(minutes=start), T0 + timedelta(minutes=start + size), 60)
    new = Series.of([(window.start + timedelta(minutes=m), -1.0 - m) for m in got], 60)
    h.merge(window, {VOLUME: new})
    oldest = window.end - timedelta(minutes=lookback_min)
    expected = sorted(
        [(t, v) for t, v in old.points() if not window.start <= t < window.end and t >= oldest]
        + new.points()
    )
    assert held(h).points() == expected


def test_a_query_asked_at_another_period_replaces_the_old_one_under_its_name():
    h = history()
    for window, group in h.plan([VOLUME], at(0)):
        h.merge(window, {q: fill(window, 1.0) for q in group})
    coarse = MetricQuery("vol-1", "AWS/EBS", "VolumeReadOps", (("VolumeId", "vol-1"),), "Sum", 300)
    asked = {VOLUME.resource_id: [coarse]}
    for window, group in h.plan([coarse], at(0)):
        h.merge(window, {q: fill(window, 5.0) for q in group})
    series = h.current(asked)[VOLUME.resource_id][VOLUME.metric]
    assert series.period_s == 300 and set(series.values) == {5.0}
    assert len(h) == 1  # the one-minute query is forgotten


WRITES = MetricQuery("vol-1", "AWS/EBS", "VolumeWriteOps", (("VolumeId", "vol-1"),), "Sum", 60)
OTHER = MetricQuery("vol-2", "AWS/EBS", "VolumeReadOps", (("VolumeId", "vol-2"),), "Sum", 60)


def test_series_over_the_same_minutes_keep_one_time_axis():
    h = history()
    for minute in range(3):
        for window, group in h.plan([VOLUME, WRITES, OTHER], at(minute)):
            # Each answer with timestamps of its own, as each query's part of a reply is.
            h.merge(window, {q: fill(window, value=k) for k, q in enumerate(group)})
    held = h.current({"vol-1": [VOLUME, WRITES], "vol-2": [OTHER]})
    axes = {id(s.timestamps) for mine in held.values() for s in mine.values()}
    assert len(axes) == 1
    assert [s.values[-1] for s in held["vol-1"].values()] == [0.0, 1.0]  # values their own


def test_an_axis_no_series_is_on_is_forgotten():
    h = history()
    for minute in range(400):
        for window, group in h.plan([VOLUME], at(minute)):
            h.merge(window, {q: fill(window) for q in group})
        h.take_touched()
    assert len(h._axes) <= 2 * 1 + 64  # one in use; the others swept
    assert held(h).timestamps in h._axes


def test_what_is_kept_is_keyed_by_the_queries_asked_for_now():
    h = history()
    for window, group in h.plan([VOLUME, OTHER], at(0)):
        h.merge(window, {q: fill(window) for q in group})
    # The volume's query worked out again (its tier moved): equal, but another object.
    again = replace(VOLUME)
    assert again == VOLUME and again is not VOLUME
    h.current({"vol-1": [again], "vol-2": [OTHER]})
    assert next(q for q in h._series if q == VOLUME) is again
    assert next(q for q in h._until if q == VOLUME) is again
    assert held(h).values  # still found by an equal query
    assert h.plan([again], at(0)) == []  # and known to be up to date


BALANCE = MetricQuery("vol-1", "AWS/EBS", "BurstBalance", (("VolumeId", "vol-1"),), "Average", 60)


def test_a_sum_s_newest_minute_waits_for_the_next_and_a_balance_s_is_read_at_once():
    """A balance is whole once CloudWatch has its datapoint; a sum's newest minute may still
    be filling: it is read once the next minute is there, or the settle delay has passed."""
    h = history()
    asked = {"vol-1": [VOLUME, BALANCE]}
    for window, group in h.plan([VOLUME, BALANCE], at(0)):
        h.merge(window, {q: fill(window) for q in group})
    series = h.current(asked)["vol-1"]
    assert series["BurstBalance"].timestamps[-1] == T0 - timedelta(minutes=1)
    assert series["VolumeReadOps"].timestamps[-1] == T0 - timedelta(minutes=2)
    assert h.newest == T0 and h.data_end(at(0)) == T0
    # The next cycle brings the next minute: the one held is complete, the new one held.
    for window, group in h.plan([VOLUME, BALANCE], at(1)):
        h.merge(window, {q: fill(window) for q in group})
    series = h.current(asked)["vol-1"]
    assert series["VolumeReadOps"].timestamps[-1] == T0 - timedelta(minutes=1)
    # A sum that stops (its volume idles) gives its last minute once the settle delay passed.
    for window, _ in h.plan([VOLUME], at(3)):
        stopped = fill(Window(window.start, T0 + timedelta(minutes=1), 60))
        h.merge(window, {VOLUME: stopped})
    assert h.current(asked)["vol-1"]["VolumeReadOps"].timestamps[-1] == T0
    # The data end: the newest minute published, never before the settle delay.
    assert h.data_end(at(3)) == T0 + timedelta(minutes=1)
    assert h.data_end(at(30)) == T0 + timedelta(minutes=28)
