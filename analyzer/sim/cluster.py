"""The demo's EKS cluster: a StatefulSet's claims on a node of a managed node group, tagged as
EKS and the EBS CSI driver tag them, so the demo's report names a claim as a cluster user does.

Sources for the tags:
- kubernetes-sigs/aws-ebs-csi-driver, `pkg/driver/constants.go` and `pkg/driver/controller.go`
  (CreateVolume): `CSIVolumeName` (the PersistentVolume's name) and `ebs.csi.aws.com/cluster=true`
  on every volume it creates; with `--k8s-tag-cluster-id=<id>` also
  `kubernetes.io/cluster/<id>=owned`, `KubernetesCluster=<id>` and `Name=<id>-dynamic-<pv>`; the
  claim's `kubernetes.io/created-for/pvc/namespace`, `…/pvc/name` and `…/pv/name` where the
  provisioner runs with `--extra-create-metadata`.
- Amazon EKS User Guide, "Managed node groups": `eks:cluster-name`, `eks:nodegroup-name` and
  `kubernetes.io/cluster/<name>=owned` on the group's instances, launched by an Auto Scaling
  group named `eks-<node group>-<uuid>` from a launch template; Amazon EC2 Auto Scaling User
  Guide: `aws:autoscaling:groupName`; Amazon EC2 User Guide, launch templates:
  `aws:ec2launchtemplate:id` and `aws:ec2launchtemplate:version`.
- Kubernetes, StatefulSet: each replica's claim is `<volumeClaimTemplate>-<StatefulSet>-<ordinal>`.
"""

from __future__ import annotations

from analyzer.model.units import KIB
from analyzer.sim.scenario import DemoInstance, DemoVolume, ago
from analyzer.sim.workloads import Demand, constant, periodic

CLUSTER = "prod-eks"
NODEGROUP = "db"
AUTOSCALING_GROUP = f"eks-{NODEGROUP}-6c9a2e41-7d3b-4f8e-a1c5-0b2d9e8f7a63"
LAUNCH_TEMPLATE = "lt-0c8f5e2a7d9b41e36"
NAMESPACE = "db"
STATEFULSET = "postgres"
CLAIM_TEMPLATE = "data"
CLAIM_GIB = 100
PERSISTENT_VOLUMES = (
    "pvc-3f2a9c1e-5b7d-4e08-9a6f-1c2b3d4e5f60",
    "pvc-8b1d4f27-0c6e-4a93-b5d8-7e9f0a1b2c3d",
    "pvc-d5e7a2b9-3f4c-4d61-8e0a-9b8c7d6e5f41",
)
"""The PersistentVolume bound to each replica's claim, in ordinal order."""

DAY_S = 86_400.0
PRIMARY = Demand(
    periodic(1_800, 150, DAY_S, busy_s=2 * 3600.0, busy_from_s=ago(25)),
    io_size_bytes=8 * KIB,
    read_fraction=0.9,
)
"""The primary, postgres-0: a daily two-hour analytics run of 1,800 IOPS of 8 KiB pages, begun
25 minutes before now, on a gp2 100 GiB claim (300 IOPS baseline, 5.4 million credits, full
after a quiet day). It drains 1,500 credits a second and empties the bucket an hour in: the
forecast now, the exhaustion 35 minutes into the live demo, the credits refilling once the run
ends."""
REPLICA = Demand(constant(150), io_size_bytes=8 * KIB, read_fraction=0.2)
"""A streaming replica, postgres-1 or -2: replaying the primary's WAL at 150 IOPS, half its
claim's baseline, so its credits stay full."""


def claim(ordinal: int) -> str:
    """`data-postgres-0`: the claim the StatefulSet makes for its replica `ordinal`."""
    return f"{CLAIM_TEMPLATE}-{STATEFULSET}-{ordinal}"


def node_tags() -> dict[str, str]:
    """What EKS and Auto Scaling tag the node group's instances with."""
    return {
        "eks:cluster-name": CLUSTER,
        "eks:nodegroup-name": NODEGROUP,
        f"kubernetes.io/cluster/{CLUSTER}": "owned",
        "aws:autoscaling:groupName": AUTOSCALING_GROUP,
        "aws:ec2launchtemplate:id": LAUNCH_TEMPLATE,
        "aws:ec2launchtemplate:version": "1",
    }


def claim_tags(ordinal: int) -> dict[str, str]:
    """What the EBS CSI driver tags replica `ordinal`'s volume with, beside its `Name`."""
    pv = PERSISTENT_VOLUMES[ordinal]
    return {
        "CSIVolumeName": pv,
        "ebs.csi.aws.com/cluster": "true",
        f"kubernetes.io/cluster/{CLUSTER}": "owned",
        "KubernetesCluster": CLUSTER,
        "kubernetes.io/created-for/pvc/namespace": NAMESPACE,
        "kubernetes.io/created-for/pvc/name": claim(ordinal),
        "kubernetes.io/created-for/pv/name": pv,
    }


def _claim_volume(ordinal: int, demand: Demand) -> DemoVolume:
    name = f"{CLUSTER}-dynamic-{PERSISTENT_VOLUMES[ordinal]}"
    return DemoVolume(name, "gp2", CLAIM_GIB, demand, tags=claim_tags(ordinal))


NODE = DemoInstance(
    "eks-db-node",
    "r6i.2xlarge",
    f"The StatefulSet {STATEFULSET}'s three gp2 claims in namespace {NAMESPACE}, on a node of "
    f"the EKS managed node group {NODEGROUP}: an analytics run on the primary drains "
    f"{claim(0)}'s burst credits",
    tuple(_claim_volume(i, PRIMARY if i == 0 else REPLICA) for i in range(3)),
    tags=node_tags(),
)
"""An r6i.2xlarge (12,000 IOPS EBS baseline): the three claims' 2,100 IOPS are far below it, so
the claim, not the node, is what runs short."""
