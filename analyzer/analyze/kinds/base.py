"""What every rule kind shares: the rule-file fields, and how a rule decides it applies."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.model.findings import Bottleneck, Finding, Severity
from analyzer.model.resources import DbInstance, ResourceType, Volume
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import Duration


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
    daily: ClassVar[bool] = False
    """Its condition moves with the days, not the minutes: its alert firing says nothing of
    what the next minutes bring (`AlertBook.steady`)."""

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

    def reach(self) -> float:
        """How far back this rule reads, `for` included: the history it needs at one-minute
        resolution."""
        windows = [
            float(value)
            for name in (
                "window",
                "rate_window",
                "trend_window",
                "profile_window",
                "drain_window",
                "anticipate_window",
            )
            if isinstance(value := getattr(self, name, None), int | float)
        ]
        return self.for_ + max(windows, default=0.0)

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
        bottleneck: Bottleneck,
        window_s: float,
        severity: Severity | None = None,
        **fields: Any,
    ) -> Finding:
        """A finding of this rule about `state`, read over the last `window_s` seconds, at the
        rule's severity unless told. The next bottleneck and the fixes are attached after
        evaluation, in one place."""
        return Finding(
            rule=self.id,
            severity=severity or self.severity,
            resource=state.ref,
            bottleneck=bottleneck,
            window_s=window_s,
            limits_since=state.limits_since,
            **fields,
        )
