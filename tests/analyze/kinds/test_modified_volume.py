"""A volume modified within the rules' windows is judged, minute by minute, against the limits
in force then: before the modification took effect, the limits before; from then on, the new
ones. A window whose saturation lies before the change says nothing of the new limits, and
an alert raised on the old ones resolves once the change is in effect."""

from __future__ import annotations

from datetime import timedelta

import pytest

from analyzer.analyze.alerts import AlertBook, AlertState
from analyzer.analyze.states import volume_state
from analyzer.model.resources import Modification, Volume
from tests.helpers import T0, analyze, series

CHANGED = T0 + timedelta(minutes=28)
"""Two minutes before the data ends (30 minutes after T0)."""
GP2_TO_GP3 = {
    "original_fields": (("volume_type", "gp2"), ("size_gib", 50), ("iops", 150)),
    "target_fields": (
        ("volume_type", "gp3"),
        ("size_gib", 50),
        ("iops", 3_000),
        ("throughput_mibps", 125),
    ),
}


def shop(state: str, after_iops: float, flagged_after: float = 0.0):
    """Incident 1's volume, gp2 50 GiB, its bucket empty and its 1,500 IOPS of 4 KiB held at
    its 150 IOPS baseline (CloudWatch's exceeded check flagging every minute), then moved to
    gp3 3,000 IOPS at `CHANGED`: DescribeVolumes describes it as gp3 from the start of the
    modification, in `state`. From then on it runs at `after_iops`."""
    made = Modification(state, CHANGED, progress=0, **GP2_TO_GP3)  # type: ignore[arg-type]
    volume = Volume(
        "vol-1", "us-east-1", "gp3", 50, "in-use", 3_000, 125, "i-1", modifications=(made,)
    )
    iops = [150.0] * 28 + [after_iops] * 2
    raw = {
        "VolumeReadOps": series([v * 60 for v in iops]),
        "VolumeReadBytes": series([v * 60 * 4096 for v in iops]),
        "VolumeIdleTime": series([0.0] * 30),
        "VolumeIOPSExceededCheck": series([1.0] * 28 + [flagged_after] * 2),
        "BurstBalance": series([0.0] * 28),
    }
    return volume_state(volume, raw, None)


def fired(state) -> dict[str, object]:
    return {f.rule: f for f in analyze(state).firing if f.resource.resource_id == "vol-1"}


@pytest.mark.parametrize("state", ["optimizing", "completed"])
def test_minutes_held_at_the_old_baseline_say_nothing_of_the_new_cap(state: str) -> None:
    """The gp2's flagged minutes are not saturation of the gp3's 3,000 IOPS, and its empty
    bucket is not the gp3's (which has none): with two minutes since the change, no rule has
    the datapoints it needs yet."""
    found = fired(shop(state, after_iops=1_500))
    assert found == {}


def test_a_modification_still_modifying_is_judged_on_the_limits_before() -> None:
    """Until it is optimizing, the gp2's limits hold, whatever DescribeVolumes says: its bucket
    is empty and it is held at its baseline (credits), not at a gp3 cap."""
    found = fired(shop("modifying", after_iops=150, flagged_after=1.0))
    assert set(found) == {"volume-burst-credits-exhausted"}
    exhausted = found["volume-burst-credits-exhausted"]
    assert exhausted.limit == 150  # type: ignore[attr-defined]
    assert "throttled at baseline 150 IOPS" in exhausted.summary  # type: ignore[attr-defined]


def test_the_report_says_the_modification_is_in_effect() -> None:
    [reading] = analyze(shop("optimizing", 1_500)).readings.all()
    [note] = reading.notes
    assert note.startswith(
        "modified gp2 50 GiB 150 IOPS → gp3 50 GiB 3,000 IOPS 125 MiB/s at 12:28 UTC "
        "(optimizing), in effect"
    )


def pinned_gp3(modification: Modification | None, after: float = 3_000.0):
    """A gp3 volume held at its 3,000 IOPS (demand above it, flagged), raised to 6,000 IOPS
    by `modification` at `CHANGED`; from then on at `after`."""
    mods = (modification,) if modification is not None else ()
    iops_now = 6_000 if modification is not None else 3_000
    volume = Volume(
        "vol-1", "us-east-1", "gp3", 500, "in-use", iops_now, 125, "i-1", modifications=mods
    )
    iops = [3_000.0] * 28 + [after] * 2
    raw = {
        "VolumeReadOps": series([v * 60 for v in iops]),
        "VolumeReadBytes": series([v * 60 * 16_384 for v in iops]),
        "VolumeIdleTime": series([0.0] * 30),
        "VolumeIOPSExceededCheck": series([1.0] * 28 + [0.0] * 2),
    }
    return volume_state(volume, raw, None)


def test_an_alert_on_the_old_cap_resolves_once_the_new_one_is_in_effect() -> None:
    book = AlertBook(repeat_s=3_600, resolve_after_s=300)
    before = analyze(pinned_gp3(None))
    now = T0 + timedelta(minutes=32)
    book.update(now, before.firing, before.pending, unknown=before.unknown)
    [alert] = book.firing()
    assert alert.rule == "volume-iops-cap" and alert.finding.limit == 3_000
    book.delivered([alert], now)

    raised = Modification(
        "optimizing",
        CHANGED,
        target_fields=(("iops", 6_000),),
        original_fields=(("volume_type", "gp3"), ("size_gib", 500), ("iops", 3_000)),
    )
    after = analyze(pinned_gp3(raised, after=3_500))
    later = now + timedelta(minutes=1)
    book.update(later, after.firing, after.pending, unknown=after.unknown)
    [owed] = book.owed()
    assert owed.state is AlertState.RESOLVED
    said = owed.cleared(later)
    assert said.startswith(
        "vol-1 was modified gp3 500 GiB 3,000 IOPS → gp3 500 GiB 6,000 IOPS at 12:28 UTC "
        "(optimizing), in effect: the configuration this alert was about is gone"
    )
    assert "no longer pinned" not in said
    assert book.firing() == []


def test_a_finding_on_the_new_limits_is_not_ended_by_the_modification_it_was_judged_after() -> None:
    """Judged since the change (its evidence says from when), an alert on the new limits is
    about them: the same modification does not end it again."""
    raised = Modification(
        "completed",
        T0,
        target_fields=(("iops", 6_000),),
        original_fields=(("iops", 3_000),),
    )
    volume = Volume(
        "vol-1", "us-east-1", "gp3", 500, "in-use", 6_000, 250, "i-1", modifications=(raised,)
    )
    iops = [6_000.0] * 30
    raw = {
        "VolumeReadOps": series([v * 60 for v in iops]),
        "VolumeReadBytes": series([v * 60 * 16_384 for v in iops]),
        "VolumeIdleTime": series([0.0] * 30),
        "VolumeIOPSExceededCheck": series([1.0] * 30),
    }
    book = AlertBook(repeat_s=3_600, resolve_after_s=300)
    for minute in (32, 33):
        result = analyze(volume_state(volume, raw, None))
        now = T0 + timedelta(minutes=minute)
        book.update(now, result.firing, result.pending, unknown=result.unknown)
    [alert] = book.firing()
    assert alert.finding.limit == 6_000
    assert alert.finding.limits_since == T0


def test_a_condition_on_the_new_limits_waits_out_its_for_and_fires() -> None:
    """A pending alert judged since the change is about the new limits too: the change does
    not end it while it waits out its rule's `for` (ten minutes, counted from the change)."""
    from analyzer.analyze.kinds.caps import IopsCap

    rule = IopsCap(id="iops", resource_types=["volume"], severity="warning", **{"for": 600})
    changed = T0 + timedelta(minutes=20)
    raised = Modification("completed", changed, target_fields=(("iops", 6_000),))
    volume = Volume(
        "vol-1", "us-east-1", "gp3", 500, "in-use", 6_000, 250, "i-1", modifications=(raised,)
    )
    iops = [3_000.0] * 20 + [6_000.0] * 20
    raw = {
        "VolumeReadOps": series([v * 60 for v in iops]),
        "VolumeReadBytes": series([v * 60 * 16_384 for v in iops]),
        "VolumeIOPSExceededCheck": series([1.0] * 40),
    }
    book = AlertBook(repeat_s=3_600, resolve_after_s=300)
    states = []
    for minutes in (26, 34):
        result = analyze(volume_state(volume, raw, None), rules=[rule], minutes_of_data=minutes)
        now = T0 + timedelta(minutes=minutes, seconds=120)
        book.update(now, result.firing, result.pending, unknown=result.unknown)
        states.append([a.state for a in book])
    assert states == [[AlertState.PENDING], [AlertState.FIRING]]
    [alert] = book.firing()
    assert alert.finding.limit == 6_000 and alert.finding.limits_since == changed
    said = alert.finding.evidence["modification"]
    assert said.startswith("modified to 6,000 IOPS at 12:20 UTC (completed), in effect")


def test_the_next_limit_is_weighed_at_the_rate_since_the_change() -> None:
    """The next bottleneck behind a cap found on the new limits is weighed at the rate those
    limits let through, as the finding's own rate is: not at a mean with the minutes before."""
    from analyzer.analyze.kinds.caps import IopsCap

    rule = IopsCap(id="iops", resource_types=["volume"], severity="warning")
    changed = T0 + timedelta(minutes=20)
    raised = Modification("completed", changed, target_fields=(("iops", 6_000),))
    volume = Volume(
        "vol-1", "us-east-1", "gp3", 500, "in-use", 6_000, 250, "i-1", modifications=(raised,)
    )
    iops = [3_000.0] * 20 + [6_000.0] * 10
    raw = {
        "VolumeReadOps": series([v * 60 for v in iops]),
        "VolumeReadBytes": series([v * 60 * 16_384 for v in iops]),
        "VolumeIOPSExceededCheck": series([1.0] * 30),
    }
    [finding] = analyze(volume_state(volume, raw, None), rules=[rule]).firing
    assert finding.observed == 6_000
    # Its 250 MiB/s binds at 6,000 IOPS of 16 KiB grown 2.67 times (not 3.2 times a mean of
    # 5,000 with the minutes held at 3,000).
    assert finding.next_bottleneck is not None
    assert finding.next_bottleneck.limit == 250 * 1024 * 1024
    assert finding.next_bottleneck.headroom == pytest.approx(250 * 1024 / (6_000 * 16), abs=0.01)


def test_an_alert_ended_by_a_modification_names_the_one_in_effect() -> None:
    """A newer modification still `modifying` has changed nothing yet: the one in effect is
    what ended the alert."""
    from dataclasses import replace

    from analyzer.analyze.analysis import Unjudged
    from analyzer.model.state import Snapshot

    done = Modification("completed", CHANGED, **GP2_TO_GP3)  # type: ignore[arg-type]
    waiting = Modification(
        "modifying", CHANGED + timedelta(minutes=1), target_fields=(("iops", 4_000),)
    )
    state = shop("completed", 1_500)
    volume = replace(state.resource, modifications=(waiting, done))
    state = replace(state, resource=volume, limits_since=volume.limits_since)
    said = Unjudged(Snapshot(T0, T0, (state,))).reconfigured(
        "us-east-1", "vol-1", None, T0 + timedelta(minutes=5)
    )
    assert said is not None and said.startswith(
        "vol-1 was modified gp2 50 GiB 150 IOPS → gp3 50 GiB 3,000 IOPS 125 MiB/s at 12:28 UTC "
        "(completed), in effect"
    )
    # Judged under the limits it brought, an alert is not ended by it.
    assert (
        Unjudged(Snapshot(T0, T0, (state,))).reconfigured("us-east-1", "vol-1", CHANGED, T0) is None
    )


def _io2(iops: float, modification: Modification | None, minutes: int, size: int = 500):
    """An io2 at `iops` (its described, target values) pinned at 5,000 IOPS and flagged by
    CloudWatch's exceeded check every minute of `minutes`."""
    volume = Volume(
        "vol-1",
        "us-east-1",
        "io2",
        size,
        "in-use",
        iops,
        None,
        "i-1",
        modifications=(modification,) if modification else (),
    )
    raw = {
        "VolumeReadOps": series([5_000.0 * 60] * minutes),
        "VolumeReadBytes": series([5_000.0 * 60 * 16_384] * minutes),
        "VolumeIdleTime": series([0.0] * minutes),
        "VolumeIOPSExceededCheck": series([1.0] * minutes),
    }
    return volume_state(volume, raw, None)


def test_a_modification_that_leaves_the_limits_as_they_were_ends_nothing() -> None:
    """io2 grown from 500 to 1,000 GiB at the same 5,000 IOPS, pinned throughout: the cap
    alert goes on firing, never "resolved" by a change of nothing it was judged on."""
    book = AlertBook(repeat_s=3_600, resolve_after_s=300)
    first = analyze(_io2(5_000, None, 30))
    book.update(T0 + timedelta(minutes=32), first.firing, first.pending, unknown=first.unknown)
    book.delivered(book.owed(), T0 + timedelta(minutes=32))
    grown = Modification(
        "optimizing",
        T0 + timedelta(minutes=29),
        target_fields=(("size_gib", 1000),),
        original_fields=(("volume_type", "io2"), ("size_gib", 500), ("iops", 5_000)),
    )
    for minute in range(30, 45):
        state = _io2(5_000, grown, minute, size=1000)
        assert state.limits_since is None
        found = analyze(state, minutes_of_data=minute)
        now = T0 + timedelta(minutes=minute, seconds=120)
        book.update(now, found.firing, found.pending, unknown=found.unknown)
        assert [(a.rule, a.state) for a in book] == [("volume-iops-cap", AlertState.FIRING)]
        assert not [a for a in book.owed() if a.state is AlertState.RESOLVED]
