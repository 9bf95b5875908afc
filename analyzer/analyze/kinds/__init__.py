"""The rule kinds, one module each, registered here by name: a rule's `kind` picks its class
from `KINDS`, and rule files are read against it and only it."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from analyzer.analyze.kinds.base import RuleBase
from analyzer.analyze.kinds.caps import IopsCap, ThroughputCap
from analyzer.analyze.kinds.credit_forecast import CreditForecast
from analyzer.analyze.kinds.credit_trend import CreditTrend
from analyzer.analyze.kinds.credits_exhausted import CreditsExhausted
from analyzer.analyze.kinds.impaired import IoImpaired
from analyzer.analyze.kinds.memory import MemoryPressure


def name_of(kind: type[RuleBase]) -> str:
    """The name a rule file gives `kind` (`kind: iops_cap`): its `kind` field's one value."""
    name = kind.model_fields["kind"].default
    if not isinstance(name, str):
        raise TypeError(f"{kind.__name__}: its kind field has no name as its default")
    return name


KINDS: Mapping[str, type[RuleBase]] = MappingProxyType(
    {
        name_of(kind): kind
        for kind in (
            CreditForecast,
            CreditTrend,
            CreditsExhausted,
            IopsCap,
            ThroughputCap,
            MemoryPressure,
            IoImpaired,
        )
    }
)
"""Every rule kind, by the name a rule file gives it."""
