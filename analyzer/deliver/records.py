"""A finding as JSON, both ways, spelled once: the JSON report's row, and the state file's
record, which is the same row with what the alert book weighs after a restart (the window its
rates were read over, its bucket typed, the rates its fixes were sized for, the forecast it
held with).

State files written before findings carried those typed fields keep them in the evidence
instead; `_from_evidence` reads them from there, once, when such a file loads.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import date
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from analyzer.model.findings import (
    HOLDS_BALANCE,
    HOLDS_UNTIL,
    RATE_BEFORE_EMPTY,
    TREND_HORIZON,
    Bottleneck,
    Change,
    Credit,
    Finding,
    NextBottleneck,
    PastFit,
    Remedy,
    RemedyKind,
    Severity,
)
from analyzer.model.kubernetes import Claim
from analyzer.model.metrics import Measure
from analyzer.model.resources import ResourceRef, ResourceType
from analyzer.model.units import Unit


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Next(_Record):
    bottleneck: Bottleneck
    limit: float
    unit: Unit
    resource_id: str
    headroom: float | None = None
    named: str | None = None
    """The resource as the report names it: a claim's volume by its claim, a node by its
    node group; null where its id says it."""


class _Change(_Record):
    resource_type: ResourceType
    resource_id: str
    from_: dict[str, Any] = Field(default_factory=dict, alias="from")
    to: dict[str, Any] = Field(default_factory=dict)


class _Past(_Record):
    days: float
    minutes_limited: int
    worst_day: date | None = None
    floor: bool = False
    limited_days: int = 0
    days_spanned: int = 0
    """The UTC days the past touches, `limited_days` among them (15 for fourteen days that
    start after midnight); 0 in state files written before it was kept."""
    bought_seconds: float | None = None

    @classmethod
    def of(cls, past: PastFit | None) -> _Past | None:
        if past is None:
            return None
        bought = round(past.bought_s, 1) if past.bought_s is not None else None
        return cls(
            days=round(past.days, 1),
            minutes_limited=past.minutes_limited,
            worst_day=past.worst_day,
            floor=past.floor,
            limited_days=past.limited_days,
            days_spanned=past.days_spanned,
            bought_seconds=bought,
        )

    def fit(self) -> PastFit:
        return PastFit(
            self.days,
            self.minutes_limited,
            self.limited_days,
            self.worst_day,
            self.floor,
            self.bought_seconds,
            self.days_spanned,
        )


class _Remedy(_Record):
    action: str
    monthly_cost: float | None = None
    monthly_cost_delta: float | None = None
    currency: str = "USD"
    change: _Change | None = None
    changes: list[_Change] = Field(default_factory=list)
    """Every resource it changes, `change` first."""
    kind: RemedyKind | None = None
    """Kept in the state file only; absent from files written before fixes kept it."""
    past: _Past | None = None
    """The fix replayed over the resource's own past; null without history."""
    fix_id: str | None = None
    """The fix as `ebs-analyzer apply` takes it; null where it is not applied in place. Derived
    from the change: not read back."""


class KubernetesRecord(_Record):
    """A claim's volume as its cluster knows it (`Claim`), in kube-state-metrics' words."""

    cluster: str | None = None
    namespace: str
    persistentvolumeclaim: str
    persistentvolume: str | None = None

    @classmethod
    def of(cls, claim: Claim | None) -> KubernetesRecord | None:
        return None if claim is None else cls.model_validate(claim.as_dict())

    def claim(self) -> Claim:
        return Claim(
            self.namespace, self.persistentvolumeclaim, self.persistentvolume, self.cluster
        )


class _Credit(_Record):
    balance: Measure
    balance_percent: float | None = None
    holds_until_percent: float | None = None
    empty: bool = False
    rate_before_empty: float | None = None
    charged_rate: float | None = None
    horizon_seconds: float | None = None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _number_or_none(value: Any) -> bool:
    return value is None or _number(value)


def _text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _rates(value: Any) -> bool:
    return value is None or (
        isinstance(value, dict) and all(_number(rate) for rate in value.values())
    )


EARLIER_EVIDENCE: dict[str, tuple[str, Callable[[Any], bool]]] = {
    HOLDS_UNTIL: ("a number", _number_or_none),
    HOLDS_BALANCE: ("a string", _text_or_none),
    "balance_percent": ("a number", _number_or_none),
    "held_summary": ("a string", _text_or_none),
    "fix_sized_for": ("an object of numbers", _rates),
    "window_seconds": ("a number", _number_or_none),
    RATE_BEFORE_EMPTY: ("a number", _number_or_none),
    "charged_rate": ("a number", _number_or_none),
    TREND_HORIZON: ("a number", _number_or_none),
}
"""The evidence a state file written before findings carried typed fields holds them in, and
the type each is read as: a value of another type would load, then fail every cycle that
weighs the alert (a comparison, a subtraction), and with it every alert."""

STORED_ONLY = frozenset({"window_seconds", "credit", "sized_for", "held", "limits_since"})
"""What the state file's record holds beyond the report's row (and each fix's kind)."""


class FindingRecord(_Record):
    rule: str
    severity: Severity
    resource_type: ResourceType
    resource_id: str
    region: str
    account_id: str | None = None
    """The account that owns the resource; None for the daemon's own account, unnamed."""
    account_name: str | None = None
    kubernetes: KubernetesRecord | None = None
    """The claim a volume was provisioned for; None for other resources."""
    bottleneck: Bottleneck
    summary: str
    observed: float
    limit: float
    unit: Unit
    seconds_to_empty: float | None = None
    next_bottleneck: _Next | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    remedies: list[_Remedy] = Field(default_factory=list)
    window_seconds: float | None = None
    credit: _Credit | None = None
    sized_for: dict[str, float] | None = None
    held: str | None = None
    limits_since: AwareDatetime | None = None
    """With its timezone, as every time the state file keeps: a naive one would load, then
    fail every cycle that compares it."""

    @field_validator("evidence")
    @classmethod
    def _typed_as_read(cls, evidence: dict[str, Any]) -> dict[str, Any]:
        for key, (kind, fits) in EARLIER_EVIDENCE.items():
            if key in evidence and not fits(evidence[key]):
                raise ValueError(f"{key} is not {kind}: {type(evidence[key]).__name__}")
        return evidence

    @classmethod
    def of(cls, f: Finding) -> FindingRecord:
        nxt, credit = f.next_bottleneck, f.credit
        return cls(
            rule=f.rule,
            severity=f.severity,
            resource_type=f.resource.resource_type,
            resource_id=f.resource.resource_id,
            region=f.resource.region,
            account_id=f.resource.account_id or None,
            account_name=f.resource.account_name or None,
            kubernetes=KubernetesRecord.of(f.resource.claim),
            bottleneck=f.bottleneck,
            summary=f.summary,
            observed=f.observed,
            limit=f.limit,
            unit=f.unit,
            seconds_to_empty=(
                round(f.seconds_to_empty, 1) if f.seconds_to_empty is not None else None
            ),
            next_bottleneck=None
            if nxt is None
            else _Next(
                bottleneck=nxt.bottleneck,
                limit=nxt.limit,
                unit=nxt.unit,
                resource_id=nxt.resource_id,
                headroom=nxt.headroom,
                named=nxt.named,
            ),
            evidence=dict(f.evidence),
            remedies=[
                _Remedy(
                    action=r.action,
                    monthly_cost=r.monthly_cost,
                    monthly_cost_delta=r.monthly_delta,
                    currency=r.currency,
                    change=_change_record(r.change),
                    changes=[_Change.model_validate(c.as_dict()) for c in r.changes],
                    kind=r.kind,
                    past=_Past.of(r.past),
                    fix_id=r.fix_id,
                )
                for r in f.remedies
            ],
            window_seconds=f.window_s,
            credit=None
            if credit is None
            else _Credit(
                balance=credit.balance,
                balance_percent=credit.balance_percent,
                holds_until_percent=credit.holds_until_percent,
                empty=credit.empty,
                rate_before_empty=credit.rate_before_empty,
                charged_rate=credit.charged_rate,
                horizon_seconds=credit.horizon_s,
            ),
            sized_for=dict(f.sized_for) if f.sized_for is not None else None,
            held=f.held,
            limits_since=f.limits_since,
        )

    def finding(self) -> Finding:
        nxt = self.next_bottleneck
        earlier = self.credit is None and self.sized_for is None and self.held is None
        credit, sized_for, held = (
            _from_evidence(self.evidence) if earlier else (self.credit, self.sized_for, self.held)
        )
        window = self.window_seconds
        if window is None:  # files written before findings kept their window
            window = float(self.evidence.get("window_seconds") or 0.0)
        return Finding(
            rule=self.rule,
            severity=self.severity,
            resource=ResourceRef(
                self.resource_type,
                self.resource_id,
                self.region,
                self.account_id or "",
                self.account_name or "",
                self.kubernetes.claim() if self.kubernetes is not None else None,
            ),
            bottleneck=self.bottleneck,
            summary=self.summary,
            observed=self.observed,
            limit=self.limit,
            unit=self.unit,
            seconds_to_empty=self.seconds_to_empty,
            next_bottleneck=None
            if nxt is None
            else NextBottleneck(
                nxt.bottleneck, nxt.limit, nxt.unit, nxt.resource_id, nxt.headroom, nxt.named
            ),
            evidence={k: v for k, v in self.evidence.items() if k != "held_summary"},
            remedies=tuple(
                Remedy(
                    r.action,
                    r.monthly_cost,
                    r.monthly_cost_delta,
                    r.currency,
                    _change(r.change),
                    tuple(c for c in map(_change, r.changes[1:]) if c is not None),
                    kind=r.kind,
                    past=r.past.fit() if r.past is not None else None,
                )
                for r in self.remedies
            ),
            window_s=window,
            credit=None
            if credit is None
            else Credit(
                credit.balance,
                balance_percent=credit.balance_percent,
                holds_until_percent=credit.holds_until_percent,
                empty=credit.empty,
                rate_before_empty=credit.rate_before_empty,
                charged_rate=credit.charged_rate,
                horizon_s=credit.horizon_seconds,
            ),
            sized_for=sized_for,
            held=held,
            limits_since=self.limits_since,
        )


def _from_evidence(
    evidence: dict[str, Any],
) -> tuple[_Credit | None, dict[str, float] | None, str | None]:
    """What a finding stored before it carried typed fields kept in its evidence: its bucket,
    the rates its fixes were sized for, the forecast it held with."""
    credit = None
    balance = evidence.get(HOLDS_BALANCE)
    if balance in {m.value for m in Measure}:
        credit = _Credit(
            balance=Measure(balance),
            balance_percent=evidence.get("balance_percent"),
            holds_until_percent=evidence.get(HOLDS_UNTIL),
            empty="pinned_datapoints" in evidence,
            rate_before_empty=evidence.get(RATE_BEFORE_EMPTY),
            charged_rate=evidence.get("charged_rate"),
            horizon_seconds=evidence.get(TREND_HORIZON),
        )
    return credit, evidence.get("fix_sized_for"), evidence.get("held_summary")


def _change_record(change: Change | None) -> _Change | None:
    if change is None:
        return None
    return _Change.model_validate(change.as_dict())


def _change(record: _Change | None) -> Change | None:
    if record is None:
        return None
    return Change(record.resource_type, record.resource_id, record.from_, record.to)


def finding_row(f: Finding) -> dict[str, Any]:
    """A finding as the JSON report gives it."""
    stored_only: dict[str, Any] = dict.fromkeys(STORED_ONLY, True)
    stored_only["remedies"] = {"__all__": {"kind"}}
    return FindingRecord.of(f).model_dump(mode="json", by_alias=True, exclude=stored_only)


def finding_stored(f: Finding) -> dict[str, Any]:
    """A finding as the state file keeps it: its row, and what the alert book weighs."""
    return FindingRecord.of(f).model_dump(mode="json", by_alias=True)


def past_row(past: PastFit) -> dict[str, Any]:
    """A fix's past as the JSON report gives it (`past` on each remedy)."""
    record = _Past.of(past)
    assert record is not None
    return record.model_dump(mode="json")
