"""The registry of rule kinds: each kind once, by the name a rule file gives it."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.analyze import rules
from analyzer.analyze.kinds import KINDS, name_of
from analyzer.analyze.kinds.base import RuleBase
from analyzer.analyze.kinds.caps import IopsCap


def test_a_kind_is_named_by_its_kind_field() -> None:
    assert name_of(IopsCap) == "iops_cap"


def test_a_kind_without_a_name_is_refused() -> None:
    with pytest.raises(TypeError, match="RuleBase: its kind field has no name"):
        name_of(RuleBase)


def test_every_kind_is_registered_under_its_own_name() -> None:
    assert {name_of(kind) for kind in KINDS.values()} == set(KINDS)
    assert sorted(KINDS) == [
        "credit_forecast",
        "credit_trend",
        "credits_exhausted",
        "io_impaired",
        "iops_cap",
        "memory_pressure",
        "throughput_cap",
    ]


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_rule_file_reads_each_registered_kind_as_its_class(name: str, tmp_path: Path) -> None:
    applies_to = min(t.value for t in KINDS[name].supported)
    path = tmp_path / "a.yaml"
    path.write_text(
        f"rules:\n  - id: r\n    kind: {name}\n    resource_types: [{applies_to}]\n"
        "    severity: warning\n"
    )
    [rule] = rules.parse_file(path)
    assert type(rule) is KINDS[name]
