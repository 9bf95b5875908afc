"""Rule kind `credit_forecast`: a draining bucket that will be empty within the horizon.

The rule reads the resource's outlook, worked out once per cycle with this rule's windows
(see `analyze/outlook.py`): the finding, the report row and the gauge give one time to empty.
Volume buckets (gp2, st1, sc1) follow the bucket model; instance EBS buckets (EBSIOBalance%,
EBSByteBalance%) the trend of their balance. A missing balance never fires it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import ClassVar, Literal

from analyzer.analyze.kinds.base import RuleBase
from analyzer.analyze.outlook import outlook_at
from analyzer.model import units
from analyzer.model.findings import Finding
from analyzer.model.outlook import DEFAULT_RATE_WINDOW_S, DEFAULT_TREND_WINDOW_S, Outlook
from analyzer.model.resources import ResourceType
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import PositiveDuration, format_rate


class CreditForecast(RuleBase):
    """Fires when a draining bucket will be empty within `horizon`."""

    kind: Literal["credit_forecast"] = "credit_forecast"
    horizon: PositiveDuration = 3600.0
    rate_window: PositiveDuration = DEFAULT_RATE_WINDOW_S
    """The drain is the mean rate over this window, so one noisy minute does not decide."""
    trend_window: PositiveDuration = DEFAULT_TREND_WINDOW_S
    """Instance balances: the slope is fitted over this window."""

    supported: ClassVar[frozenset[ResourceType]] = frozenset(ResourceType)

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        found = outlook_at(state, snapshot, at)
        if found is None or found.seconds_to_empty > self.horizon:
            return None
        bucket = found.bucket
        kind = bucket.owner
        summary = (
            f"{state.label}: {bucket.name} {found.balance_percent:.0f}% → 0 in "
            f"{units.duration(found.seconds_to_empty)} at "
            f"{format_rate(found.rate, bucket.unit, kind)}{_charged_more(found)}; "
            f"then throttled to {format_rate(bucket.baseline, bucket.unit, kind)}"
            f"{_if_unmerged(found.evidence)}."
        )
        return self.finding(
            state,
            bucket.bottleneck,
            state.windows.rate_s,
            summary=summary,
            observed=found.rate,
            limit=bucket.baseline,
            unit=bucket.unit,
            seconds_to_empty=found.seconds_to_empty,
            evidence=found.evidence,
        )


def _if_unmerged(evidence: Mapping[str, object]) -> str:
    """st1/sc1 where the data cannot tell merged from random I/O: the other end of the range."""
    seconds = evidence.get("seconds_to_empty_if_unmerged")
    if not isinstance(seconds, int | float):
        return ""
    return f" (in {units.duration(seconds)} if the I/O is random and unmerged)"


CHARGED_ABOVE = 1.1
"""A charge this far above the rate moved is named: st1/sc1 count each unmerged I/O as 1 MiB."""


def _charged_more(found: Outlook) -> str:
    charged = found.evidence.get("charged_rate")
    if not isinstance(charged, int | float) or charged <= CHARGED_ABOVE * found.rate:
        return ""
    unit = found.bucket.unit
    return (
        f", charged as {format_rate(charged, unit, found.bucket.owner)} "
        "(each small random I/O counts as 1 MiB)"
    )
