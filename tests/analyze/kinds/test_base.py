"""What every rule kind shares: the rule-file fields, how far back a rule reads, which
resources it applies to, and the finding it makes. Exercised through a small kind of its own."""

from __future__ import annotations

from typing import ClassVar, Literal

import pytest
from pydantic import ValidationError

from analyzer.analyze.kinds.base import RuleBase
from analyzer.model.findings import Bottleneck, Severity
from analyzer.model.resources import DbInstance, InstanceType, ResourceType
from analyzer.model.units import MB, PositiveDuration, Unit
from tests.helpers import T0, db_state, instance_state, volume_state

M5 = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)


class Windowed(RuleBase):
    """A kind that reads a window and a trend window, for volumes and instances."""

    kind: Literal["windowed"] = "windowed"
    window: PositiveDuration = 300.0
    trend_window: PositiveDuration = 1_800.0

    supported: ClassVar[frozenset[ResourceType]] = frozenset(
        {ResourceType.VOLUME, ResourceType.INSTANCE, ResourceType.DB_INSTANCE}
    )


class VolumesOnly(RuleBase):
    kind: Literal["volumes_only"] = "volumes_only"

    supported: ClassVar[frozenset[ResourceType]] = frozenset({ResourceType.VOLUME})


def rule(**fields):
    return Windowed.model_validate(
        {"id": "w", "resource_types": ["volume"], "severity": "warning", **fields}
    )


@pytest.mark.parametrize("rule_id", ["w", "gp2.burst-forecast", "A_1", "x" * 128])
def test_rule_ids_that_a_file_and_a_metric_label_can_carry(rule_id):
    assert rule(id=rule_id).id == rule_id


@pytest.mark.parametrize("rule_id", ["", "-w", ".w", "a b", "a/b", "x" * 129])
def test_rule_ids_that_are_refused(rule_id):
    with pytest.raises(ValidationError):
        rule(id=rule_id)


@pytest.mark.parametrize(
    "fields",
    [{"resource_types": []}, {"severity": "urgent"}, {"threshold": 0.9}, {"for": "-5m"}],
)
def test_fields_a_rule_file_cannot_have(fields):
    with pytest.raises(ValidationError):
        rule(**fields)


def test_a_kind_refuses_resource_types_it_does_not_apply_to_and_names_those_it_does():
    with pytest.raises(
        ValidationError, match=r"does not apply to instance \(it applies to volume\)"
    ):
        VolumesOnly(id="v", resource_types=["instance"], severity="info")


@pytest.mark.parametrize(
    ("fields", "reach"),
    [
        ({}, 1_800.0),  # the longest window
        ({"for": "10m"}, 2_400.0),  # plus what `for` looks back through
        ({"window": "1h", "for": 60}, 3_660.0),
    ],
)
def test_a_rule_reads_back_its_longest_window_and_its_for(fields, reach):
    assert rule(**fields).reach() == reach


def test_a_rule_without_windows_reads_back_its_for_alone():
    assert (
        VolumesOnly(id="v", resource_types=["volume"], severity="info", **{"for": "5m"}).reach()
        == 300.0
    )


DB = DbInstance("orders", "us-east-1", "mysql", "db.m5.large", "gp2", 100, "available")


@pytest.mark.parametrize(
    ("fields", "state", "applies"),
    [
        ({}, volume_state("gp2"), True),
        ({}, instance_state(M5), False),  # not among its resource types
        ({"volume_types": ["gp2", "st1"]}, volume_state("st1"), True),
        ({"volume_types": ["gp2"]}, volume_state("gp3"), False),
        ({"resource_types": ["db_instance"], "volume_types": ["gp2"]}, db_state(DB, {}), True),
        ({"resource_types": ["db_instance"], "volume_types": ["io1"]}, db_state(DB, {}), False),
        # An instance has no storage type: volume_types does not narrow it.
        ({"resource_types": ["instance"], "volume_types": ["gp2"]}, instance_state(M5), True),
    ],
)
def test_which_resources_a_rule_applies_to(fields, state, applies):
    assert rule(**fields).applies_to(state) is applies


def test_the_finding_is_the_rules_about_the_state_at_its_severity_unless_told():
    state = volume_state("gp2")
    read = {"summary": "s", "observed": 1.0, "limit": 150.0, "unit": Unit.IOPS}
    found = rule().finding(state, Bottleneck.BURST_CREDITS, 300.0, **read)
    assert (found.rule, found.resource, found.window_s) == ("w", state.ref, 300.0)
    assert found.severity is Severity.WARNING
    assert found.bottleneck is Bottleneck.BURST_CREDITS
    assert found.next_bottleneck is None and found.remedies == ()
    told = rule().finding(state, Bottleneck.BURST_CREDITS, 300.0, Severity.INFO, **read)
    assert told.severity is Severity.INFO


def test_a_kind_must_say_how_it_evaluates():
    with pytest.raises(NotImplementedError):
        rule().evaluate(volume_state("gp2"), None, T0)  # type: ignore[arg-type]
