"""A claim's volume's fix, as its claim's owner makes it: through the Kubernetes API where this
analyzer may (`apply_through_kubernetes`, the claim in its own cluster, one step), refused with
the kubectl commands that make it otherwise."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from analyzer.act.cluster import Cluster
from analyzer.act.plan import Plan
from analyzer.analyze.advice.kubernetes import through_claim
from analyzer.model.findings import Remedy, RemedyKind
from analyzer.model.kubernetes import unclaimed_owner
from analyzer.model.resources import Volume


def program_of(plan: Plan) -> dict[str, Any] | None:
    """What a claim's volume's fix does through its claim (`advice/kubernetes.py`); None for a
    volume no claim owns."""
    resource = plan.resource
    if not isinstance(resource, Volume) or resource.claim is None:
        return None
    remedy = through_claim(Remedy("", change=plan.change, kind=RemedyKind.MODIFY), resource.claim)
    program = remedy.change.after.get("kubernetes") if remedy.change else None
    return dict(program) if program else {}


def claim_refusal(plan: Plan, cluster: Cluster | None) -> str | None:
    """A CSI claim's volume is changed through its claim, by this analyzer only where it may
    (`apply_through_kubernetes`, the claim in its own cluster, one step); else the commands."""
    program = program_of(plan)
    resource = plan.resource
    if isinstance(resource, Volume) and resource.claim is None:
        return unclaimed_refusal(resource)
    if program is None or not isinstance(resource, Volume) or resource.claim is None:
        return None
    claim = resource.claim
    owned = f"{resource.volume_id} belongs to {claim.text()}"
    if not program:
        return f"{owned}: change it through the claim, not behind its back"
    steps = list(program.get("commands", []))
    manifest = program.get("volume_attributes_class")
    if manifest:
        steps.insert(0, f"kubectl apply -f - <<< '{json.dumps(manifest)}'")
    run = f"run: {'; '.join(steps)}"
    if cluster is None:
        return f"{owned}: it is changed through the claim, never behind its back; {run}"
    if manifest and program.get("storage"):
        return (
            f"{owned}: the size and the type change in two steps, the second once the first "
            f"has completed; {run}"
        )
    if claim.cluster and claim.cluster != cluster.name:
        here = cluster.name or "a cluster not named (kubernetes_cluster)"
        return (
            f"{owned} in cluster {claim.cluster}, and this analyzer changes claims in {here}; {run}"
        )
    return None


def unclaimed_refusal(volume: Volume) -> str | None:
    """A volume the EBS CSI driver made whose claim's tags are missing is a PersistentVolume's
    all the same: refused, with the command that finds its claim."""
    owner = unclaimed_owner(volume.tags)
    if owner is None:
        return None
    pv = owner.removeprefix("PV ") if owner.startswith("PV ") else "<its PersistentVolume>"
    return (
        f"{volume.volume_id} belongs to {owner}, made by the EBS CSI driver (the claim's tags "
        "are missing): it is changed through its claim, never behind its back; find the "
        f"claim with: kubectl get pv {pv} -o jsonpath='{{.spec.claimRef.namespace}}/"
        "{.spec.claimRef.name}'"
    )


def patch_of(program: Mapping[str, Any]) -> dict[str, Any]:
    if program.get("storage"):
        return {"spec": {"resources": {"requests": {"storage": program["storage"]}}}}
    name = program["volume_attributes_class"]["metadata"]["name"]
    return {"spec": {"volumeAttributesClassName": name}}
