"""A resource's demand as CloudWatch shows it: no datapoint is no demand, never unknown."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from analyzer.model.demand import Demand


def test_no_datapoint_is_no_demand_and_nothing_is_a_floor_yet() -> None:
    start = datetime(2026, 11, 13, tzinfo=UTC)
    seen = Demand.seen(start, 300, np.array([np.nan, 10.0]), np.array([4096.0, np.nan]))
    assert seen.iops.tolist() == [0.0, 10.0] and seen.bps.tolist() == [4096.0, 0.0]
    assert not seen.floor.any() and len(seen.floor) == 2
    assert seen.days == 600 / 86_400
