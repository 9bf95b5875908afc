"""What every rule kind shares: the rule-file fields, and how a rule decides it applies."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from analyzer.models import Bottleneck, DbInstance, Finding, ResourceType, Severity, Volume
from analyzer.series import Series
from analyzer.snapshot import ResourceState, Snapshot

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


def parse_duration(value: Any) -> Any:
    """`90s`, `15m`, `1h`, `1d`, or a number of seconds."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 15m")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match:
            return float(match.group(1)) * _SECONDS[match.group(2)]
        raise ValueError(f"{value!r} is not a duration such as 90s, 15m, 1h")
    return value


Duration = Annotated[float, BeforeValidator(parse_duration), Field(ge=0)]
PositiveDuration = Annotated[float, BeforeValidator(parse_duration), Field(gt=0)]


class RuleBase(BaseModel):
    """The fields every rule has. Subclasses add their parameters and `evaluate`."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=128)
    kind: str
    resource_types: tuple[ResourceType, ...] = Field(min_length=1)
    severity: Severity
    for_: Duration = Field(default=0.0, alias="for")
    volume_types: tuple[str, ...] | None = None
    """Only volumes of these types (and RDS storage of these types)."""
    description: str = ""
    enabled: bool = True

    supported: ClassVar[frozenset[ResourceType]] = frozenset(ResourceType)

    @model_validator(mode="after")
    def _supported_resource_types(self) -> RuleBase:
        unsupported = [t.value for t in self.resource_types if t not in self.supported]
        if unsupported:
            allowed = ", ".join(sorted(t.value for t in self.supported))
            raise ValueError(
                f"kind {self.kind!r} does not apply to {', '.join(unsupported)} "
                f"(it applies to {allowed})"
            )
        return self

    def applies_to(self, state: ResourceState) -> bool:
        if state.ref.resource_type not in self.resource_types:
            return False
        if self.volume_types is None:
            return True
        if isinstance(state.resource, Volume):
            return state.resource.volume_type in self.volume_types
        if isinstance(state.resource, DbInstance):
            return state.resource.storage_type in self.volume_types
        return True

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        """The finding this rule makes of `state` with the data complete by `at`, if any."""
        raise NotImplementedError

    def finding(
        self,
        state: ResourceState,
        snapshot: Snapshot,
        at: datetime,
        bottleneck: Bottleneck,
        window_s: float,
        **fields: Any,
    ) -> Finding:
        """A finding of this rule, with the next bottleneck worked out over `window_s`."""
        from analyzer.detectors.headroom import next_bottleneck

        return Finding(
            rule=self.id,
            severity=self.severity,
            resource=state.ref,
            bottleneck=bottleneck,
            next_bottleneck=next_bottleneck(state, snapshot, at, window_s, bottleneck),
            **fields,
        )


STALE_PERIODS = 2
"""Data whose newest period ended longer ago than this many periods is not recent."""


def recent(series: Series, at: datetime, window_s: float) -> Series:
    """The last `window_s` seconds of data complete by `at`.

    The window ends with the newest complete period rather than at `at`: 5-minute EC2 points
    are complete minutes after 1-minute volume points, and a window ending at `at` would hold
    one point fewer. Data older than two periods is not recent at all.
    """
    complete = series.until(at)
    newest = complete.last()
    if newest is None:
        return complete
    end = newest[0] + timedelta(seconds=series.period_s)
    if (at - end).total_seconds() > STALE_PERIODS * series.period_s:
        return complete.between(at, at)
    return complete.between(end - timedelta(seconds=window_s), end)


def window_evidence(series: Series, window_s: float) -> dict[str, Any]:
    """Which data a finding rests on: the window, the resolution and the datapoints used."""
    return {
        "window_start": series.timestamps[0].isoformat() if series.timestamps else None,
        "window_end": (series.timestamps[-1] + timedelta(seconds=series.period_s)).isoformat()
        if series.timestamps
        else None,
        "window_seconds": window_s,
        "period_seconds": series.period_s,
        "datapoints": len(series),
    }
