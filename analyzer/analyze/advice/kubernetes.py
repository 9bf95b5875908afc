"""Fixes in a cluster's own terms: a claim's volume changed through its PersistentVolumeClaim,
a node's instance type through what launched it.

A volume the EBS CSI driver provisioned and modified behind Kubernetes' back (a bare
ModifyVolume) keeps its old size and attributes on its PersistentVolume: the cluster's view of
the disk no longer matches the disk. Through the claim, the driver makes the same EC2 change
and Kubernetes records it. A node is replaced, not resized, when its type changes: the type is
changed where the node was launched from, and new nodes take the old ones' place.

Sources:
- Kubernetes documentation, "Persistent Volumes", expanding PersistentVolumeClaims: a claim
  grows by raising `spec.resources.requests.storage`, only where its StorageClass sets
  `allowVolumeExpansion: true`.
- Kubernetes documentation, "Volume Attributes Classes": GA (`storage.k8s.io/v1`) in 1.34;
  a class's `driverName` and `parameters` are immutable, and a claim is modified by naming
  another class in `spec.volumeAttributesClassName`.
- kubernetes-sigs/aws-ebs-csi-driver, `docs/modify-volume.md`: the parameters `type`, `iops`
  and `throughput`; `storage.k8s.io/v1beta1` from Kubernetes 1.31 behind the
  `VolumeAttributesClass` feature gate; the older route, the PVC annotations
  `ebs.csi.aws.com/volumeType`, `ebs.csi.aws.com/iops` and `ebs.csi.aws.com/throughput`, read
  by the volume-modifier-for-k8s sidecar (`controller.volumeModificationFeature.enabled` in
  the driver's chart).
- Amazon EKS User Guide, managed node groups and launch templates: a group's instance type is
  changed through a new launch template version (or a new group where the group names its
  types), and the group replaces its nodes. Karpenter documentation, NodePools and Disruption:
  the `node.kubernetes.io/instance-type` requirement; nodes that no longer match their NodePool
  have drifted and are replaced. Amazon EC2 Auto Scaling User Guide: a launch template's new
  version, rolled out by an instance refresh.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from analyzer.analyze.advice.facts import MODIFICATIONS_PER_DAY, MODIFY_NOTE
from analyzer.model.findings import Change, Remedy, RemedyKind
from analyzer.model.kubernetes import Claim, Node, NodeOwner

EBS_CSI_DRIVER = "ebs.csi.aws.com"
VOLUME_ATTRIBUTES_CLASS_API = "storage.k8s.io/v1"
"""GA from Kubernetes 1.34."""
VOLUME_ATTRIBUTES_CLASS_BETA_API = "storage.k8s.io/v1beta1"
"""From Kubernetes 1.31, behind the `VolumeAttributesClass` feature gate."""
PARAMETERS = ("type", "iops", "throughput")
"""The EBS CSI driver's modification parameters, in a VolumeAttributesClass."""
ANNOTATIONS = {
    "type": "ebs.csi.aws.com/volumeType",
    "iops": "ebs.csi.aws.com/iops",
    "throughput": "ebs.csi.aws.com/throughput",
}
"""The same parameters as PVC annotations, for clusters without VolumeAttributesClass."""
EXPANSION = "its StorageClass needs allowVolumeExpansion: true"
UNHEARD = (
    "{claim} will not know: the in-tree plugin created its volume (no ebs.csi.aws.com/cluster "
    "tag), which no VolumeAttributesClass modifies, and its PersistentVolume keeps the old "
    "attributes"
)
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ONLINE = f"online, at most {MODIFICATIONS_PER_DAY} modifications of the volume in 24 h"
VERSIONS = (
    f"{VOLUME_ATTRIBUTES_CLASS_API} from Kubernetes 1.34, "
    f"{VOLUME_ATTRIBUTES_CLASS_BETA_API.rsplit('/', 1)[1]} behind its feature gate from 1.31"
)


def parameters(after: Mapping[str, Any]) -> dict[str, str]:
    """A volume's attributes after a change, as the driver's parameters (strings, as a
    VolumeAttributesClass holds them): its type, and the IOPS and MiB/s its type provisions."""
    kind = str(after.get("volume_type"))
    out = {"type": kind}
    if after.get("iops") is not None and kind in ("gp3", "io1", "io2"):
        out["iops"] = str(after["iops"])
    if after.get("throughput_mibps") is not None and kind == "gp3":
        out["throughput"] = str(after["throughput_mibps"])
    return out


def class_name(params: Mapping[str, str]) -> str:
    """`gp3-3000-125`, `io2-64000`, `st1`: a class named for what it holds, so one class serves
    every claim that needs the same."""
    return "-".join(params[key] for key in PARAMETERS if key in params)


def _patch(claim: Claim, spec: Mapping[str, Any]) -> str:
    body = json.dumps({"spec": spec}, separators=(",", ":"))
    return (
        f"kubectl -n {shlex.quote(claim.namespace)} patch pvc {shlex.quote(claim.name)} "
        f"-p {shlex.quote(body)}"
    )


def resize_command(claim: Claim, size_gib: int) -> str:
    return _patch(claim, {"resources": {"requests": {"storage": f"{size_gib}Gi"}}})


def class_command(claim: Claim, name: str) -> str:
    return _patch(claim, {"volumeAttributesClassName": name})


def class_manifest(params: Mapping[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": VOLUME_ATTRIBUTES_CLASS_API,
        "kind": "VolumeAttributesClass",
        "metadata": {"name": class_name(params)},
        "driverName": EBS_CSI_DRIVER,
        "parameters": dict(params),
    }


def _attributes_change(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """The type changes, or IOPS or throughput are set to other values (a gp2 volume grown
    keeps no IOPS of its own to set)."""
    if after.get("volume_type") != before.get("volume_type"):
        return True
    return any(
        after.get(key) is not None and after.get(key) != before.get(key)
        for key in ("iops", "throughput_mibps")
    )


def attributes_step(claim: Claim, after: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """A claim's volume given the attributes of `after` through a VolumeAttributesClass: the
    step in words, the kubectl command, and for a program the class's manifest and the
    driver's annotations that do the same on a cluster without the class."""
    params = parameters(after)
    name = class_name(params)
    command = class_command(claim, name)
    listed = ", ".join(f"{key} {value}" for key, value in params.items())
    annotated = ", ".join(f"{ANNOTATIONS[key]}={value}" for key, value in params.items())
    step = (
        f"create VolumeAttributesClass {name} (driverName {EBS_CSI_DRIVER}; {listed}), "
        f"then {command} "
        f"({VERSIONS}; before that, the driver's PVC annotations {annotated})"
    )
    program = {
        "volume_attributes_class": class_manifest(params),
        "annotations": {ANNOTATIONS[key]: value for key, value in params.items()},
    }
    return step, command, program


def through_claim(remedy: Remedy, claim: Claim) -> Remedy:
    """A volume's fix as the claim's owner makes it: the claim resized, a VolumeAttributesClass
    named, or both in turn; its sizing and price as they were. A striped set is new claims, not
    a change of this one, and says so; a fix that changes no volume is returned as it is."""
    change = remedy.change
    if remedy.kind is RemedyKind.STRIPE:
        return replace(
            remedy, action=f"{remedy.action}; in the cluster, new claims in place of {claim.text()}"
        )
    if change is None or remedy.kind not in VOLUME_CHANGES or "kubernetes" in change.after:
        return remedy
    before, after = change.before, change.after
    size = after.get("size_gib")
    resize = isinstance(size, int) and size != before.get("size_gib")
    attributes = _attributes_change(before, after)
    if not resize and not attributes:
        return remedy
    if attributes and not claim.csi:
        # No VolumeAttributesClass modifies a volume the in-tree plugin created: the change
        # is EC2's alone, and the claim is told nothing of it.
        return replace(remedy, action=f"{remedy.action}; {UNHEARD.format(claim=claim.text())}")
    steps: list[str] = []
    commands: list[str] = []
    program: dict[str, Any] = {
        "namespace": claim.namespace,
        "persistentvolumeclaim": claim.name,
    }
    if resize and isinstance(size, int):
        command = resize_command(claim, size)
        steps.append(f"{command} ({EXPANSION})")
        commands.append(command)
        program["storage"] = f"{size}Gi"
    if attributes:
        step, command, attributes_program = attributes_step(claim, after)
        steps.append(step)
        commands.append(command)
        program |= attributes_program
    program["commands"] = commands
    how = (
        f"through {claim.text()}: {steps[0]}"
        if len(steps) == 1
        else f"through {claim.text()}: first {steps[0]}, then, once it has completed, {steps[1]}"
    )
    action = (
        remedy.action.replace(MODIFY_NOTE, f"{how}; {ONLINE}")
        if MODIFY_NOTE in remedy.action
        else f"{remedy.action}; {how}"
    )
    moved = Change(
        change.resource_type,
        change.resource_id,
        change.before,
        {**change.after, "kubernetes": program},
    )
    return replace(remedy, action=action, change=moved)


def in_cluster(options: list[Remedy], claim: Claim) -> list[Remedy]:
    """A claim's volume's fixes through the claim, a striped set of new claims after them."""
    found = [through_claim(o, claim) for o in options]
    return sorted(found, key=lambda o: o.kind is RemedyKind.STRIPE)


VOLUME_CHANGES = frozenset({RemedyKind.MODIFY, RemedyKind.PAST_CEILING, RemedyKind.STOPGAP})
"""Fixes that modify the volume itself (a joint fix carries its volume fix as made already)."""


def replaced(node: Node) -> str:
    """Where a node's instance type is changed, in place of a stop and start."""
    match node.owner:
        case NodeOwner.NODEGROUP:
            return (
                "through a new version of its launch template (or a new node group, where the "
                "group names its instance types); new nodes replace the old"
            )
        case NodeOwner.NODEPOOL:
            return (
                f"by adding the type to its {INSTANCE_TYPE_LABEL} requirement (or to a NodePool "
                "of this workload's own, where others share this one); Karpenter replaces the "
                "drifted nodes with new ones"
            )
        case NodeOwner.AUTOSCALING_GROUP:
            template = f" {node.launch_template}" if node.launch_template else ""
            return (
                f"in its launch template{template}, then an instance refresh; new instances "
                "replace the old"
            )


def node_record(node: Node) -> dict[str, str | None]:
    """What launched the node, for a program to change (`Node.as_dict`)."""
    return node.as_dict()


def in_words_for(remedy: Remedy, node: Node) -> Remedy:
    """A fix in words that names no type: where on this node's cluster the type is changed."""
    return replace(remedy, action=f"{remedy.action}; change it in {node.text()} ({replaced(node)})")
