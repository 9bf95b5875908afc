"""A resource's credit outlook: the bucket that empties first, and when.

Worked out once per resource per cycle, in the analysis stage, and kept on the resource's
state: the forecast rule, the report row, the `/metrics` gauge, Slack and the advice all read
this one value, so no two of them can disagree about the same bucket.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from analyzer.model.layers import Bucket

DEFAULT_RATE_WINDOW_S = 300.0
DEFAULT_TREND_WINDOW_S = 1800.0


@dataclass(frozen=True, slots=True)
class ForecastWindows:
    """The windows a resource's outlook is computed over: those of the `credit_forecast` rule
    that applies to it, or the kind's defaults where none does."""

    rate_s: float = DEFAULT_RATE_WINDOW_S
    """The drain is the mean rate over this window, so one noisy minute does not decide."""
    trend_s: float = DEFAULT_TREND_WINDOW_S
    """Instance EBS balances: the slope is fitted over this window."""


@dataclass(frozen=True, slots=True)
class Outlook:
    """The bucket of a resource that empties first, and when."""

    seconds_to_empty: float
    """From the snapshot's report time (`generated_at`)."""
    bucket: Bucket
    rate: float
    """The mean of the bucket's rate (IOPS or bytes/s) over the rate window."""
    balance_percent: float
    evidence: Mapping[str, Any] = field(default_factory=dict)
    """The same, and how it was worked out, for the report."""
    charged_rate: float | None = None
    """The rate the bucket is charged at, where AWS's counting makes it more than the rate."""
    read_from: datetime | None = None
    """Where the load changed within the window: the drain is read from here on."""
    rate_since_change: float | None = None
    """The mean rate since `read_from`."""
    seconds_if_unmerged: float | None = None
    """st1/sc1 where the data cannot tell merged from random I/O: the time to empty if the I/O
    is random and unmerged."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "evidence", MappingProxyType(dict(self.evidence)))
