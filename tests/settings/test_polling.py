"""Polling: the tiers' cadences and shares of a limit in order."""

import re

import pytest

from analyzer import settings
from analyzer.errors import ConfigError


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ({"active_cadence": "20m"}, "active_cadence (1200 s) must not be longer than idle_cadence"),
        ({"quiet_utilization": 0.9}, "quiet_utilization (0.9) must be below hot_utilization"),
    ],
)
def test_the_tiers_must_stay_in_order(values, problem):
    with pytest.raises(ConfigError, match=re.escape(problem)):
        settings.load(values)
