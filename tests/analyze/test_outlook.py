"""Each resource's credit outlook: worked out once at the data end with its rule's windows,
and afresh, with the same windows, only for the earlier moments a rule's `for` looks back to."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from analyzer.analyze.outlook import outlook, outlook_at, with_outlook
from analyzer.analyze.states import build
from analyzer.model.metrics import Measure
from analyzer.model.outlook import ForecastWindows
from analyzer.model.units import KIB
from tests.helpers import T0, series, shop_volume, volume_state

END = T0 + timedelta(minutes=30)


def gp2(balances: list[float], iops: float = 1_500):
    return volume_state(
        "gp2",
        50,
        {
            Measure.IOPS: series([iops] * len(balances)),
            Measure.THROUGHPUT: series([iops * 4 * KIB] * len(balances)),
            Measure.BURST_BALANCE: series(balances),
        },
    )


def test_the_shop_volume_empties_in_about_the_time_its_credits_last() -> None:
    """50 GiB gp2: 150 IOPS baseline, 5.4 M credits; at 40 % and 1,500 IOPS, 2.16 M credits
    drain at 1,350 a second: about 27 minutes from the last datapoint."""
    found = outlook(shop_volume(), END, END)
    assert found is not None
    assert found.balance_percent == 40.0
    assert found.rate == pytest.approx(1_500)
    assert found.seconds_to_empty == pytest.approx(2.16e6 / 1_350, rel=0.05)
    assert found.evidence["balance_percent"] == 40.0


@pytest.mark.parametrize(
    ("state", "why"),
    [
        (gp2([100.0] * 30, iops=100), "below its baseline: refilling, not draining"),
        (gp2([0.0] * 30), "already empty: the exhausted rule speaks"),
        (replace(gp2([40.0] * 30), measures={}), "no balance and no rate"),
    ],
)
def test_no_outlook(state, why) -> None:
    assert outlook(state, END, END) is None, why


def test_with_outlook_keeps_the_windows_and_the_outlook_at_the_data_end() -> None:
    windows = ForecastWindows(rate_s=900.0)
    state = with_outlook(shop_volume(), windows, END, END + timedelta(minutes=2))
    assert state.windows == windows
    assert state.outlook is not None
    later = outlook(replace(shop_volume(), windows=windows), END, END + timedelta(minutes=2))
    assert later is not None and state.outlook.seconds_to_empty == later.seconds_to_empty


def test_an_earlier_moment_is_worked_out_with_the_same_windows() -> None:
    """A rule's `for` looks back: the outlook then, counted from as far after it as the
    report time is after the data end."""
    snap = build(END + timedelta(seconds=120), END, [shop_volume()])
    state = with_outlook(snap.resources[0], ForecastWindows(rate_s=600.0), END, snap.generated_at)
    assert outlook_at(state, snap, END) is state.outlook
    earlier = outlook_at(state, snap, END - timedelta(minutes=5))
    assert earlier is not None and state.outlook is not None
    # Five minutes earlier the bucket held as much (the balance is flat in this data), so it
    # was as far from empty, counted from its own moment.
    assert earlier.seconds_to_empty == pytest.approx(state.outlook.seconds_to_empty, rel=0.02)


def test_nothing_recent_leaves_no_outlook() -> None:
    stale = with_outlook(shop_volume(), ForecastWindows(), END + timedelta(hours=2), END)
    assert stale.outlook is None
