"""The next bottleneck: once a finding's limit is lifted, the limit with least headroom binds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from analyzer.analyze.headroom import BINDS_WITHIN, Ahead, ahead
from analyzer.model.findings import Bottleneck, NextBottleneck
from analyzer.model.metrics import Measure
from analyzer.model.series import Series
from analyzer.model.state import Mismatch, ResourceState, Snapshot
from analyzer.model.units import KIB, MIB, Unit
from tests.fakes import M5
from tests.helpers import T0, instance_state, minutes, series, volume_state

AT = T0 + minutes(30)
WINDOW_S = 600.0
M5_IOPS, M5_BPS = 18_750, 593.75e6
"""m5.large's EBS limits while its credits last (no balance reported: not "empty")."""


def rates(iops: float, io_size: float) -> dict[Measure, Series]:
    return {
        Measure.IOPS: series([iops] * 30),
        Measure.THROUGHPUT: series([iops * io_size] * 30),
    }


def gp3_on_m5(iops: float, io_size: float) -> tuple[ResourceState, Snapshot]:
    """A gp3 volume at 3,000 IOPS and 125 MiB/s, and the m5.large it is attached to, both
    carrying `iops` of `io_size`."""
    volume = volume_state("gp3", 100, rates(iops, io_size), iops=3_000, throughput=125)
    instance = instance_state(M5, rates(iops, io_size), volume_ids=("vol-1",))
    return volume, Snapshot(AT, AT, (volume, instance))


def test_the_other_dimension_of_the_resource_binds_next() -> None:
    volume, snap = gp3_on_m5(2_900, 16 * KIB)
    found = ahead(volume, snap, AT, WINDOW_S, Bottleneck.VOLUME_IOPS)
    assert found == Ahead(
        (),
        NextBottleneck(
            Bottleneck.VOLUME_THROUGHPUT,
            125 * MIB,
            Unit.BYTES_PER_SECOND,
            "vol-1",
            round(125 * MIB / (2_900 * 16 * KIB), 3),
        ),
    )
    assert found.next is not None and found.next.headroom == 2.759


def test_a_limit_binding_already_is_lifted_together_and_the_instance_binds_next() -> None:
    """At 44 KiB, 2,900 IOPS are 124.6 MiB/s: within 5 % of the volume's 125 MiB/s too."""
    volume, snap = gp3_on_m5(2_900, 44 * KIB)
    found = ahead(volume, snap, AT, WINDOW_S, Bottleneck.VOLUME_IOPS)
    observed = 2_900 * 44 * KIB
    assert 125 * MIB / observed <= BINDS_WITHIN
    assert found.together == (
        NextBottleneck(
            Bottleneck.VOLUME_THROUGHPUT,
            125 * MIB,
            Unit.BYTES_PER_SECOND,
            "vol-1",
            round(125 * MIB / observed, 3),
        ),
    )
    assert found.next == NextBottleneck(
        Bottleneck.INSTANCE_THROUGHPUT,
        M5_BPS,
        Unit.BYTES_PER_SECOND,
        "i-1",
        round(M5_BPS / observed, 3),
    )


def test_a_limit_the_data_contradicts_is_not_a_next_bottleneck() -> None:
    volume, snap = gp3_on_m5(2_900, 16 * KIB)
    wrong = Mismatch(Bottleneck.VOLUME_THROUGHPUT, 125 * MIB, 200 * MIB, WINDOW_S)
    volume = replace(volume, mismatches=(wrong,))
    found = ahead(volume, snap, AT, WINDOW_S, Bottleneck.VOLUME_IOPS)
    assert found.next == NextBottleneck(
        Bottleneck.INSTANCE_IOPS, M5_IOPS, Unit.IOPS, "i-1", round(M5_IOPS / 2_900, 3)
    )


def test_lifting_credits_gives_back_the_burst_level_of_the_resource() -> None:
    """An empty gp2 50 GiB bucket holds it at 150 IOPS; solved, it runs at 3,000 again, and
    that is the limit 1,500 IOPS meet next. Nothing binds together with a credit finding."""
    measures = {**rates(1_500, 4 * KIB), Measure.BURST_BALANCE: series([0.0] * 30)}
    volume = volume_state("gp2", 50, measures)
    instance = instance_state(M5, rates(1_500, 4 * KIB), volume_ids=("vol-1",))
    snap = Snapshot(AT, AT, (volume, instance))
    found = ahead(volume, snap, AT, WINDOW_S, Bottleneck.BURST_CREDITS)
    assert found == Ahead(
        (), NextBottleneck(Bottleneck.VOLUME_IOPS, 3_000, Unit.IOPS, "vol-1", 2.0)
    )


@pytest.mark.parametrize(
    ("volume", "why"),
    [
        (volume_state("standard", 100, rates(90, 16 * KIB)), "no exact limits"),
        (volume_state("gp3", 100, {}, iops=3_000, throughput=125), "no rates"),
    ],
)
def test_nothing_ahead_without_exact_limits_or_rates(volume: ResourceState, why: str) -> None:
    found = ahead(volume, Snapshot(AT, AT, (volume,)), AT, WINDOW_S, Bottleneck.VOLUME_IOPS)
    assert found == Ahead((), None), why


def test_the_next_limit_names_a_claim_s_volume_by_its_claim_and_a_node_by_its_group() -> None:
    """`next:` says what the cluster knows them as: a claim first, the node's group."""
    volume, snap = gp3_on_m5(2_900, 44 * KIB)
    claim = {
        "kubernetes.io/created-for/pvc/namespace": "db",
        "kubernetes.io/created-for/pvc/name": "data-0",
        "ebs.csi.aws.com/cluster": "true",
    }
    node = {"eks:nodegroup-name": "db-nodes", "eks:cluster-name": "prod"}
    [_, instance] = snap.resources
    tagged_volume = replace(volume.resource, tags=claim)
    volume = replace(volume, resource=tagged_volume, ref=tagged_volume.ref)
    tagged_node = replace(instance.resource, tags=node)
    instance = replace(instance, resource=tagged_node, ref=tagged_node.ref)
    snap = Snapshot(AT, AT, (volume, instance))
    found = ahead(volume, snap, AT, WINDOW_S, Bottleneck.VOLUME_IOPS)
    [together] = found.together
    assert together.text().startswith("volume throughput 125 MiB/s on PVC db/data-0 (vol-1)")
    assert found.next is not None
    assert found.next.text().startswith(
        "instance throughput 594 MB/s on node group db-nodes of cluster prod (i-1)"
    )
