"""The rules over past data, cycle by cycle: what fired, when, and when it resolved."""

from __future__ import annotations

from datetime import timedelta

from analyzer.analyze import prices
from analyzer.analyze import rules as rule_files
from analyzer.analyze.catalog import Catalog
from analyzer.model.metrics import Measure
from analyzer.offline.replay import replay
from tests.helpers import T0, quiet_past, series, volume_state


def test_a_drain_that_stops_fires_then_resolves_five_minutes_after_it_has_gone() -> None:
    # 1,500 IOPS on gp2 50 GiB for 20 min (1.5 points a minute), then 100 IOPS.
    state = volume_state(
        "gp2",
        50,
        {
            Measure.IOPS: series([1_500] * 21 + [100] * 40),
            Measure.THROUGHPUT: series([1_500 * 4_096] * 21 + [100 * 4_096] * 40),
            Measure.BURST_BALANCE: series([100 - 1.5 * i for i in range(21)] + [70] * 40),
        },
    )
    done = replay(
        [quiet_past(state)],
        rule_files.load(),
        Catalog(prices.load()),
        T0,
        T0 + timedelta(minutes=60),
    )
    [fired] = done.fired
    assert (fired.rule, fired.resource_id) == ("gp2-burst-exhaustion", "vol-1")
    # Within minutes of the start: the 5-minute rate at 1,500 IOPS empties 90 % in 60 min.
    assert T0 + timedelta(minutes=5) <= fired.fired_at <= T0 + timedelta(minutes=10)
    # The drain stops at 21 min; the alert resolves five minutes after its condition went.
    assert fired.resolved_at is not None
    assert T0 + timedelta(minutes=26) <= fired.resolved_at <= T0 + timedelta(minutes=30)
    assert done.firing_at[fired.resolved_at] == frozenset()
    assert done.firing_at[fired.resolved_at - timedelta(minutes=1)] == {
        ("gp2-burst-exhaustion", "vol-1")
    }


def test_a_replay_gives_each_cycle_the_daily_minima_of_the_days_before_it() -> None:
    """Three days of a daily drain sinking lower each day: on the fourth morning the trend
    rule fires, from the minima the daemon's daily request would have read."""
    from analyzer.model.series import Series, Status

    start = T0.replace(hour=0, minute=0)
    points = []
    for day, low in enumerate((34.0, 21.0, 8.0)):
        for step in range(24 * 12):
            at = start + timedelta(days=day, minutes=5 * step)
            points.append((at, low if 12 <= step / 12 < 17 else 100.0))
    morning = start + timedelta(days=3, hours=8)
    points += [(morning - timedelta(minutes=5 * i), 100.0) for i in range(12, 0, -1)]
    state = volume_state(
        "gp2",
        800,
        {
            Measure.BURST_BALANCE: Series.of(points, 300, Status.OK),
            Measure.IOPS: Series.of([(t, 100.0) for t, _ in points], 300, Status.OK),
        },
    )
    done = replay([state], rule_files.load(), Catalog(prices.load()), morning, morning)
    assert [f.rule for f in done.fired] == ["burst-daily-minimum-falling"]


def test_a_replay_s_first_hours_have_no_past_as_the_daemon_s_do() -> None:
    """The first hours of a replay have no whole day before them, as for the daemon over the
    same data (its fetch of the days before finds none): minima read empty (a young bucket),
    and no day profile, even where the balance has drained since the data began. The profile
    comes once the minima of whole days show a drain."""
    from analyzer.model.series import Series, Status
    from analyzer.offline.replay import cut, data_past

    midnight = T0.replace(hour=0, minute=0)
    values = [100.0] * 60 + [70.0] * 30 + [100.0] * (24 * 60)
    stamps = [midnight + timedelta(minutes=m) for m in range(len(values))]
    state = volume_state(
        "gp2",
        100,
        {Measure.BURST_BALANCE: Series.of(zip(stamps, values, strict=True), 60, Status.OK)},
    )
    past = data_past(state)
    after = cut(state, midnight + timedelta(minutes=120), past)
    [read] = after.past.minima.values()
    assert not len(read) and not after.past.days
    next_day = cut(state, midnight + timedelta(days=1, hours=2), past)
    assert next_day.past.days[Measure.BURST_BALANCE] is past.profiles[Measure.BURST_BALANCE]


def test_series_of_one_time_axis_are_cut_to_one_copy_of_it() -> None:
    """A replay holds each time axis once and cuts it once a step for every series on it:
    the same series as each cut on its own, stamps and values, at every step."""
    from analyzer.model.series import Series, Status
    from analyzer.offline.replay import Axes, cut, share_axes

    balance = Series.of([(T0 + timedelta(minutes=m), 90.0) for m in range(0, 30, 2)], 60, Status.OK)
    state = volume_state(
        "gp2",
        100,
        {
            Measure.IOPS: series([100.0 + i for i in range(30)]),
            Measure.THROUGHPUT: series([4_096.0 * i for i in range(30)]),
            Measure.BURST_BALANCE: balance,
        },
    )
    [shared] = share_axes([state])
    assert shared.measures == state.measures
    iops, throughput = shared.measure(Measure.IOPS), shared.measure(Measure.THROUGHPUT)
    assert iops.timestamps is throughput.timestamps
    assert (
        state.measure(Measure.IOPS).timestamps is not state.measure(Measure.THROUGHPUT).timestamps
    )
    for minute in range(-1, 32):
        at = T0 + timedelta(minutes=minute)
        axes: Axes = {}
        done, again = cut(shared, at, None, axes), cut(shared, at, None, axes)
        alone = cut(state, at)
        assert done.measures == again.measures == alone.measures, minute
        for measure, part in alone.measures.items():
            assert list(done.measure(measure).values) == list(part.values)
        assert done.measure(Measure.IOPS).timestamps is again.measure(Measure.THROUGHPUT).timestamps


def test_a_replay_before_a_recorded_modification_judges_the_limits_then() -> None:
    """The recording's inventory is of its end: an io2 raised from 5,000 to 10,000 IOPS at
    minute 90, pinned at 5,000 before. The replay of the minutes before the change judges
    them against the 5,000 then in force, as the daemon did then."""
    from analyzer.analyze import prices
    from analyzer.analyze import rules as rule_files
    from analyzer.analyze.catalog import Catalog
    from analyzer.analyze.states import volume_state
    from analyzer.model.resources import Modification, Volume
    from analyzer.offline.replay import replay
    from tests.helpers import T0, series

    raised = Modification(
        "completed",
        T0 + timedelta(minutes=90),
        target_fields=(("iops", 10_000),),
        original_fields=(("volume_type", "io2"), ("size_gib", 500), ("iops", 5_000)),
        ended=T0 + timedelta(minutes=95),
    )
    volume = Volume(
        "vol-1", "us-east-1", "io2", 500, "in-use", 10_000, None, "i-1", modifications=(raised,)
    )
    pinned = [5_000.0] * 90 + [6_000.0] * 30
    state = volume_state(
        volume,
        {
            "VolumeReadOps": series([x * 60 for x in pinned]),
            "VolumeReadBytes": series([x * 60 * 16_384 for x in pinned]),
            "VolumeIdleTime": series([0.0] * 120),
            "VolumeIOPSExceededCheck": series([1.0] * 90 + [0.0] * 30),
        },
        None,
    )
    out = replay(
        [state],
        rule_files.load(),
        Catalog(prices.load()),
        T0 + timedelta(minutes=16),
        T0 + timedelta(minutes=120),
    )
    fired = [(f.rule, f.fired_at) for f in out.fired]
    assert ("volume-iops-cap", T0 + timedelta(minutes=16)) in fired, fired
