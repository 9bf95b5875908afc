"""What Kubernetes calls a volume and an instance, read from the tags AWS already returns.

The EBS CSI driver tags each volume it provisions with the claim it was created for, and EKS,
Karpenter and Auto Scaling tag each node with what launched it. DescribeVolumes and
DescribeInstances return those tags, so the analyzer can speak of `PVC db/data-postgres-0` and
of a node group without any access to the Kubernetes API.

Sources:
- kubernetes-sigs/aws-ebs-csi-driver, `pkg/driver/constants.go`: `PVCNameTag`,
  `PVCNamespaceTag`, `PVNameTag` (`kubernetes.io/created-for/…`, written when the provisioner
  runs with `--extra-create-metadata`, the default of the driver's chart and EKS add-on), and
  `ebs.csi.aws.com/cluster=true` on every volume it creates; `kubernetes.io/cluster/<id>`
  (`owned`) and `KubernetesCluster` where the controller has `--k8s-tag-cluster-id`.
- Amazon EKS User Guide, "Managed node groups": `eks:cluster-name`, `eks:nodegroup-name` on
  the group's instances; Karpenter's `karpenter.sh/nodepool` and `eks:eks-cluster-name`;
  Amazon EC2 Auto Scaling User Guide: `aws:autoscaling:groupName`;
  Amazon EC2 User Guide, launch templates: `aws:ec2launchtemplate:id`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

PVC_NAMESPACE_TAG = "kubernetes.io/created-for/pvc/namespace"
PVC_NAME_TAG = "kubernetes.io/created-for/pvc/name"
PV_NAME_TAG = "kubernetes.io/created-for/pv/name"
CSI_CLUSTER_TAG = "ebs.csi.aws.com/cluster"
CSI_VOLUME_NAME_TAG = "CSIVolumeName"
"""The driver's `VolumeNameTagKey`: the name of the PersistentVolume it created the volume
for, on every volume it creates (aws-ebs-csi-driver `pkg/cloud/cloud.go`)."""
CLUSTER_TAG_PREFIX = "kubernetes.io/cluster/"
LEGACY_CLUSTER_TAG = "KubernetesCluster"

NODEGROUP_TAG = "eks:nodegroup-name"
NODEPOOL_TAG = "karpenter.sh/nodepool"
AUTOSCALING_GROUP_TAG = "aws:autoscaling:groupName"
LAUNCH_TEMPLATE_TAG = "aws:ec2launchtemplate:id"
EKS_CLUSTER_TAGS = ("eks:cluster-name", "eks:eks-cluster-name", "aws:eks:cluster-name")


def cluster_of(tags: Mapping[str, str]) -> str | None:
    """The cluster a resource's tags name: EKS's own tags first, then the cloud provider's
    `kubernetes.io/cluster/<name>`, then the legacy `KubernetesCluster`; None where none does."""
    for key in EKS_CLUSTER_TAGS:
        if tags.get(key):
            return tags[key]
    for key in sorted(tags):
        if key.startswith(CLUSTER_TAG_PREFIX) and len(key) > len(CLUSTER_TAG_PREFIX):
            return key.removeprefix(CLUSTER_TAG_PREFIX)
    return tags.get(LEGACY_CLUSTER_TAG) or None


@dataclass(frozen=True, slots=True)
class Claim:
    """The PersistentVolumeClaim a volume was provisioned for."""

    namespace: str
    name: str
    """The claim's name: `data-postgres-0`."""
    persistent_volume: str | None = None
    """The PersistentVolume bound to it: `pvc-3f2…`."""
    cluster: str | None = None
    csi: bool = True
    """Created by the EBS CSI driver (`ebs.csi.aws.com/cluster=true`), which a
    VolumeAttributesClass modifies; False for a volume the in-tree plugin created before CSI
    migration, which carries the same claim tags."""

    @property
    def ref(self) -> str:
        """`db/data-postgres-0`, as kubectl takes it with `-n`."""
        return f"{self.namespace}/{self.name}"

    def text(self) -> str:
        """`PVC db/data-postgres-0`: how a report names the volume first."""
        return f"PVC {self.ref}"

    def repeats(self, name: str | None) -> bool:
        """Whether a volume's Name tag only repeats its PersistentVolume's name, as the
        driver's `<cluster>-dynamic-<pv>` does: nothing the claim does not say better."""
        pv = self.persistent_volume
        return bool(name and pv and (name == pv or name.endswith(f"-dynamic-{pv}")))

    def as_dict(self) -> dict[str, str | None]:
        """The JSON report's `kubernetes` object, in kube-state-metrics' words."""
        return {
            "cluster": self.cluster,
            "namespace": self.namespace,
            "persistentvolumeclaim": self.name,
            "persistentvolume": self.persistent_volume,
        }


def own_name(name: str | None, claim: Claim | None) -> str | None:
    """A volume's Name tag where it says something its claim does not: None where the volume
    has no Name, or where it only repeats the claim's PersistentVolume."""
    return None if claim is not None and claim.repeats(name) else name


def claim_of(tags: Mapping[str, str]) -> Claim | None:
    """The claim a volume's tags name; None unless both the claim's namespace and name are
    there (a volume someone tagged by hand with half of it is not a claim)."""
    namespace = tags.get(PVC_NAMESPACE_TAG, "")
    name = tags.get(PVC_NAME_TAG, "")
    if not namespace or not name:
        return None
    csi = tags.get(CSI_CLUSTER_TAG) == "true"
    return Claim(namespace, name, tags.get(PV_NAME_TAG) or None, cluster_of(tags), csi)


def unclaimed_owner(tags: Mapping[str, str]) -> str | None:
    """Who owns a volume that the EBS CSI driver made, where its claim's tags are missing
    (a driver run without `--extra-create-metadata`, or tags removed): `PV pvc-3f2…` where a
    tag names its PersistentVolume, `a PersistentVolume` otherwise; None where no tag of the
    driver's is there (or where the claim's tags are: `claim_of` names it)."""
    if claim_of(tags) is not None:
        return None
    pv = tags.get(PV_NAME_TAG) or tags.get(CSI_VOLUME_NAME_TAG)
    if pv:
        return f"PV {pv}"
    if tags.get(CSI_CLUSTER_TAG):
        return "a PersistentVolume"
    return None


class NodeOwner(StrEnum):
    """What launched a cluster node, and so where its instance type is changed."""

    NODEGROUP = "nodegroup"
    """An EKS managed node group: a new launch template version or instance types, rolled."""
    NODEPOOL = "nodepool"
    """A Karpenter NodePool: its `node.kubernetes.io/instance-type` requirement."""
    AUTOSCALING_GROUP = "autoscaling_group"
    """A self-managed group: its launch template, then an instance refresh."""


@dataclass(frozen=True, slots=True)
class Node:
    """A cluster node: an instance that is replaced, not resized, when its type changes."""

    owner: NodeOwner
    name: str
    """The node group's, NodePool's or Auto Scaling group's name."""
    cluster: str | None = None
    launch_template: str | None = None
    """The launch template's id, where the instance was launched from one."""

    def as_dict(self) -> dict[str, str | None]:
        """What launched the node, for a program: `owner` is nodegroup, nodepool or
        autoscaling_group."""
        return {
            "owner": self.owner.value,
            "name": self.name,
            "cluster": self.cluster,
            "launch_template": self.launch_template,
        }

    def text(self) -> str:
        """`node group db-nodes`, `NodePool default`, `Auto Scaling group workers-a`."""
        kind = {
            NodeOwner.NODEGROUP: "node group",
            NodeOwner.NODEPOOL: "NodePool",
            NodeOwner.AUTOSCALING_GROUP: "Auto Scaling group",
        }[self.owner]
        where = f" of cluster {self.cluster}" if self.cluster else ""
        return f"{kind} {self.name}{where}"


def node_of(tags: Mapping[str, str]) -> Node | None:
    """What launched an instance, where its tags say: a managed node group first (its
    instances carry the group's Auto Scaling tag too), then a NodePool, then an Auto Scaling
    group; None for an instance launched on its own."""
    template = tags.get(LAUNCH_TEMPLATE_TAG) or None
    for owner, key in (
        (NodeOwner.NODEGROUP, NODEGROUP_TAG),
        (NodeOwner.NODEPOOL, NODEPOOL_TAG),
        (NodeOwner.AUTOSCALING_GROUP, AUTOSCALING_GROUP_TAG),
    ):
        if tags.get(key):
            return Node(owner, tags[key], cluster_of(tags), template)
    return None
