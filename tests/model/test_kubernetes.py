"""A claim's volume and a cluster node, read from the tags the EBS CSI driver, EKS, Karpenter and
Auto Scaling write (sources in `analyzer/model/kubernetes.py`)."""

from __future__ import annotations

import pytest

from analyzer.model.kubernetes import Claim, Node, NodeOwner, claim_of, cluster_of, node_of
from analyzer.model.resources import Instance, Volume

CSI_TAGS = {
    # As the driver writes them (aws-ebs-csi-driver pkg/driver/constants.go), with
    # --k8s-tag-cluster-id=prod.
    "CSIVolumeName": "pvc-3f2a",
    "ebs.csi.aws.com/cluster": "true",
    "kubernetes.io/cluster/prod": "owned",
    "KubernetesCluster": "prod",
    "kubernetes.io/created-for/pvc/namespace": "db",
    "kubernetes.io/created-for/pvc/name": "data-postgres-0",
    "kubernetes.io/created-for/pv/name": "pvc-3f2a",
}


def test_a_csi_volume_names_its_claim() -> None:
    claim = claim_of(CSI_TAGS)
    assert claim == Claim("db", "data-postgres-0", "pvc-3f2a", "prod")
    assert claim.text() == "PVC db/data-postgres-0"
    assert claim.as_dict() == {
        "cluster": "prod",
        "namespace": "db",
        "persistentvolumeclaim": "data-postgres-0",
        "persistentvolume": "pvc-3f2a",
    }


def test_a_claim_without_a_cluster_tag_has_no_cluster() -> None:
    tags = {k: v for k, v in CSI_TAGS.items() if "cluster" not in k.lower()}
    claim = claim_of(tags)
    assert claim is not None
    assert claim.cluster is None
    assert claim.as_dict()["cluster"] is None


@pytest.mark.parametrize(
    "tags",
    [
        {},
        {"Name": "shop-data"},
        {"kubernetes.io/created-for/pvc/name": "data-0"},
        {"kubernetes.io/created-for/pvc/namespace": "db"},
        {"kubernetes.io/created-for/pvc/namespace": "", "kubernetes.io/created-for/pvc/name": "x"},
    ],
)
def test_no_claim_without_both_its_namespace_and_name(tags: dict[str, str]) -> None:
    assert claim_of(tags) is None


@pytest.mark.parametrize(
    ("tags", "cluster"),
    [
        ({"eks:cluster-name": "a", "kubernetes.io/cluster/b": "owned"}, "a"),
        ({"kubernetes.io/cluster/b": "owned", "KubernetesCluster": "c"}, "b"),
        ({"KubernetesCluster": "c"}, "c"),
        ({"kubernetes.io/cluster/": "owned"}, None),
        ({}, None),
    ],
)
def test_the_cluster_from_the_first_tag_that_names_one(
    tags: dict[str, str], cluster: str | None
) -> None:
    assert cluster_of(tags) == cluster


@pytest.mark.parametrize(
    ("tags", "node"),
    [
        (
            # An EKS managed node group's instance carries its Auto Scaling group's tag too.
            {
                "eks:nodegroup-name": "db-nodes",
                "eks:cluster-name": "prod",
                "aws:autoscaling:groupName": "eks-db-nodes-1ac5",
                "aws:ec2launchtemplate:id": "lt-0abc",
            },
            Node(NodeOwner.NODEGROUP, "db-nodes", "prod", "lt-0abc"),
        ),
        (
            {"karpenter.sh/nodepool": "default", "eks:eks-cluster-name": "prod"},
            Node(NodeOwner.NODEPOOL, "default", "prod"),
        ),
        (
            {"aws:autoscaling:groupName": "workers-a"},
            Node(NodeOwner.AUTOSCALING_GROUP, "workers-a"),
        ),
        ({"Name": "shop"}, None),
    ],
)
def test_a_node_names_what_launched_it(tags: dict[str, str], node: Node | None) -> None:
    assert node_of(tags) == node


def test_node_text() -> None:
    assert Node(NodeOwner.NODEGROUP, "db", "prod").text() == "node group db of cluster prod"
    assert Node(NodeOwner.NODEPOOL, "default").text() == "NodePool default"


def test_a_volume_carries_its_claim_in_its_ref_without_changing_what_it_is() -> None:
    volume = Volume("vol-1", "us-east-1", "gp2", 50, "in-use", attached_to="i-1", tags=CSI_TAGS)
    bare = Volume("vol-1", "us-east-1", "gp2", 50, "in-use", attached_to="i-1")
    assert volume.ref.claim == claim_of(CSI_TAGS)
    assert volume.ref.named == "PVC db/data-postgres-0 (vol-1)"
    assert bare.ref.claim is None
    assert bare.ref.named == "vol-1"
    assert volume.ref == bare.ref


def test_an_instance_knows_its_node_group() -> None:
    node = Instance("i-1", "us-east-1", "m5.large", "running", tags={"eks:nodegroup-name": "a"})
    assert node.node == Node(NodeOwner.NODEGROUP, "a")
    assert Instance("i-2", "us-east-1", "m5.large", "running").node is None


def test_a_name_that_only_repeats_the_persistent_volume_says_nothing_new() -> None:
    claim = claim_of(CSI_TAGS)
    assert claim is not None
    # The driver names a volume `<cluster>-dynamic-<pv>` where it knows its cluster.
    assert claim.repeats("prod-dynamic-pvc-3f2a")
    assert not claim.repeats("orders-primary")
    assert not claim.repeats(None)
    assert not Claim("db", "data-0").repeats("prod-dynamic-pvc-3f2a")
    # A Name of the user's own that mentions the volume is theirs, and is kept.
    assert claim.repeats("pvc-3f2a")
    assert not claim.repeats("backup of pvc-3f2a")


def test_a_claim_knows_whether_the_csi_driver_created_its_volume() -> None:
    claim = claim_of(CSI_TAGS)
    assert claim is not None and claim.csi
    in_tree = claim_of({k: v for k, v in CSI_TAGS.items() if k != "ebs.csi.aws.com/cluster"})
    assert in_tree is not None and not in_tree.csi


def test_the_csi_drivers_own_tags_name_an_owner_only_where_the_claims_are_missing() -> None:
    from analyzer.model.kubernetes import unclaimed_owner

    assert unclaimed_owner({}) is None
    assert unclaimed_owner({"Name": "db"}) is None
    assert unclaimed_owner({"CSIVolumeName": "pvc-1"}) == "PV pvc-1"
    assert unclaimed_owner({"ebs.csi.aws.com/cluster": "true"}) == "a PersistentVolume"
    claimed = {
        "kubernetes.io/created-for/pvc/namespace": "db",
        "kubernetes.io/created-for/pvc/name": "data-0",
        "CSIVolumeName": "pvc-1",
    }
    assert unclaimed_owner(claimed) is None  # the claim names it
