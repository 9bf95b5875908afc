"""Rule kind `io_impaired`: AWS's own check says I/O has stopped, and the finding says what AWS
advises. Data ends at 12:30 (T0 + 30 min), one check a minute."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from analyzer.analyze.kinds.impaired import ADVICE, IoImpaired
from analyzer.model.findings import Bottleneck, Severity
from analyzer.model.metrics import Measure
from analyzer.model.resources import InstanceType, ResourceType
from analyzer.model.units import MB, Unit
from tests.helpers import evaluate, instance_state, series, volume_state

RULE = IoImpaired(id="impaired", resource_types=["volume", "instance"], severity="critical")
M5 = InstanceType("m5.large", 3_600, 18_750, 81.25 * MB, 593.75 * MB, nitro=True)


def volume(checks):
    return volume_state(
        "gp3",
        100,
        {
            Measure.IOPS: series([0] * len(checks)),
            Measure.THROUGHPUT: series([0] * len(checks)),
            Measure.STALLED_IO: series(checks),
        },
    )


def test_a_volume_whose_stalled_io_check_fails_says_since_when_and_what_to_do():
    finding = evaluate(RULE, volume([0] * 27 + [1] * 3))
    assert finding is not None
    assert finding.bottleneck is Bottleneck.IMPAIRED
    assert finding.severity is Severity.CRITICAL
    assert finding.unit is Unit.PERCENT
    # Three of the window's five checks failed, from 12:27.
    assert finding.observed == 60.0
    assert finding.evidence["failed_checks"] == 3
    assert finding.evidence["impaired_since"] == "2026-11-21T12:27:00+00:00"
    assert "I/O stalled since 12:27 UTC (VolumeStalledIOCheck failing for" in finding.summary
    assert finding.summary.endswith(ADVICE[ResourceType.VOLUME])


def test_an_instance_whose_attached_ebs_check_fails_is_impaired():
    checks = [0] * 25 + [1] * 5
    state = instance_state(M5, {Measure.ATTACHED_EBS_FAILED: series(checks)})
    finding = evaluate(RULE, state)
    assert finding is not None
    assert finding.observed == 100.0
    assert "attached EBS impaired since 12:25 UTC (StatusCheckFailed_AttachedEBS" in (
        finding.summary
    )
    assert finding.summary.endswith(ADVICE[ResourceType.INSTANCE])


@pytest.mark.parametrize(
    "checks",
    [
        [0] * 30,  # every check passed
        [0] * 29 + [1],  # one failed check is not yet a finding (min_failed: 2)
        [0] * 25 + [1] * 4 + [0],  # failed, but the latest check passed
        [],  # no check at all
    ],
)
def test_no_finding_unless_the_latest_checks_fail(checks):
    assert evaluate(RULE, volume(checks)) is None


def test_min_failed_sets_how_many_failed_checks_it_takes():
    rule = IoImpaired(id="impaired", resource_types=["volume"], severity="critical", min_failed=1)
    assert evaluate(rule, volume([0] * 29 + [1])) is not None


def test_it_applies_to_volumes_and_instances_only():
    with pytest.raises(ValidationError, match="does not apply to db_instance"):
        IoImpaired(id="impaired", resource_types=["db_instance"], severity="critical")
