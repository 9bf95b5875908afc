"""The demo's EKS cluster: its node and its claims carry the tags EKS and the EBS CSI driver write
(sources in `analyzer/sim/cluster.py`), and its primary's claim drains as its docstring says."""

from __future__ import annotations

import re

import pytest

from analyzer.model import limits
from analyzer.model.kubernetes import Claim, Node, NodeOwner, claim_of, node_of
from analyzer.sim import cluster
from analyzer.sim.scenario import ago

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def test_the_node_is_read_as_a_managed_node_groups() -> None:
    tags = cluster.node_tags()
    assert node_of(tags) == Node(NodeOwner.NODEGROUP, "db", "prod-eks", cluster.LAUNCH_TEMPLATE)
    assert tags["kubernetes.io/cluster/prod-eks"] == "owned"
    # EKS names the group's Auto Scaling group `eks-<node group>-<uuid>`; a launch template's
    # id is `lt-` and 17 hexadecimal digits.
    assert re.fullmatch(rf"eks-db-{UUID}", tags["aws:autoscaling:groupName"])
    assert re.fullmatch(r"lt-[0-9a-f]{17}", tags["aws:ec2launchtemplate:id"])


@pytest.mark.parametrize("ordinal", [0, 1, 2])
def test_each_replicas_volume_is_read_as_its_claim(ordinal: int) -> None:
    tags = cluster.claim_tags(ordinal)
    pv = cluster.PERSISTENT_VOLUMES[ordinal]
    assert claim_of(tags) == Claim("db", f"data-postgres-{ordinal}", pv, "prod-eks")
    assert re.fullmatch(rf"pvc-{UUID}", pv)
    # The driver's own tags: the PV's name as the volume's, and the ones it filters on.
    assert tags["CSIVolumeName"] == pv
    assert tags["ebs.csi.aws.com/cluster"] == "true"
    assert tags["kubernetes.io/cluster/prod-eks"] == "owned"
    assert tags["KubernetesCluster"] == "prod-eks"


def test_the_node_holds_the_three_claims_named_as_the_driver_names_them() -> None:
    names = [v.name for v in cluster.NODE.volumes]
    assert names == [f"prod-eks-dynamic-{pv}" for pv in cluster.PERSISTENT_VOLUMES]
    assert [claim_of(v.tags) for v in cluster.NODE.volumes] == [
        Claim("db", cluster.claim(i), cluster.PERSISTENT_VOLUMES[i], "prod-eks") for i in range(3)
    ]
    assert {(v.volume_type, v.size_gib) for v in cluster.NODE.volumes} == {("gp2", 100)}
    assert node_of(cluster.NODE.tags) is not None
    assert "data-postgres-0" in cluster.NODE.story


def test_the_primarys_claim_empties_an_hour_into_its_run_and_the_replicas_stay_full() -> None:
    bucket = limits.gp2(cluster.CLAIM_GIB).bucket
    assert bucket is not None
    assert (bucket.baseline, bucket.capacity) == (300, 5.4e6)
    primary, *replicas = cluster.NODE.volumes
    asked = primary.demand.iops
    assert asked(ago(26)) == 150 and asked(ago(25)) == asked(ago(0)) == 1_800
    assert asked(0) == 150  # the history starts after a quiet day: a full bucket
    assert asked(ago(25) + 2 * 3600) == 150  # the run lasts two hours
    empty_after = bucket.seconds_to_empty(100.0, asked(ago(0)))
    assert empty_after == pytest.approx(3600)
    assert empty_after - 25 * 60 == pytest.approx(35 * 60)  # 35 minutes after now
    for replica in replicas:
        assert replica.demand.iops(ago(0)) == bucket.baseline / 2


def test_the_node_is_far_from_its_instance_limits() -> None:
    """The claim runs short, not the node: 2,100 IOPS of 8 KiB on an r6i.2xlarge, whose EBS
    baseline is 12,000 IOPS and 312.5 MB/s (Amazon EC2 User Guide, EBS-optimized instances)."""
    asked = sum(v.demand.iops(ago(0)) for v in cluster.NODE.volumes)
    assert cluster.NODE.instance_type == "r6i.2xlarge"
    assert asked == 2_100
    assert asked < 12_000 / 4 and asked * 8 * 1024 < 312.5e6 / 10
