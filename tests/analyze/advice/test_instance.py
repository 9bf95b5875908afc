"""What a new instance type must sustain."""

from __future__ import annotations

import pytest

from analyzer.analyze.advice.instance import MIN_LIFT, beyond, lifted
from analyzer.model.findings import Bottleneck, Finding, NextBottleneck, Severity
from analyzer.model.resources import InstanceType, ResourceRef, ResourceType
from analyzer.model.units import MB, Unit

R6I = InstanceType("r6i.8xlarge", 40_000, 40_000, 1_250 * MB, 1_250 * MB, nitro=True)


def cap(headroom: float | None) -> Finding:
    nxt = (
        NextBottleneck(
            Bottleneck.VOLUME_THROUGHPUT, 1_000, Unit.BYTES_PER_SECOND, "vol-1", headroom
        )
        if headroom is not None
        else None
    )
    return Finding(
        "instance-throughput-cap",
        Severity.WARNING,
        ResourceRef(ResourceType.INSTANCE, "i-1", "us-east-1"),
        Bottleneck.INSTANCE_THROUGHPUT,
        "pinned",
        observed=1_200 * MB,
        limit=1_250 * MB,
        unit=Unit.BYTES_PER_SECOND,
        next_bottleneck=nxt,
    )


def test_a_new_type_lifts_todays_cap_even_where_the_next_limit_is_close():
    # At 96 % of the cap, the next limit 3 % further: a type at today's 1,250 MB/s buys nothing.
    bps, _ = lifted(cap(1.03), R6I, 1_200 * MB, 10_000)
    assert bps == pytest.approx(1_250 * MB * MIN_LIFT)
    # A next limit already below today's rate does not shrink the need below today's.
    bps, _ = lifted(cap(0.9), R6I, 1_200 * MB, 10_000)
    assert bps >= 1_250 * MB * MIN_LIFT
    # Nothing in sight: twice today's rate.
    bps, iops = lifted(cap(None), R6I, 1_200 * MB, 10_000)
    assert (bps, iops) == (2_400 * MB, 20_000)


def test_the_option_says_what_binds_next_when_it_is_near():
    assert "beyond 1.03× today's rate the volume throughput limit of vol-1 binds" in beyond(
        cap(1.03)
    )
    assert beyond(cap(None)) == ""
