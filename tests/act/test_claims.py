"""A claim's volume's fix as its owner makes it, or the commands where this analyzer may not."""

from __future__ import annotations

import pytest

from analyzer.act.claims import claim_refusal, patch_of, program_of
from analyzer.act.plan import plan_of
from analyzer.analyze import prices
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.sold import Asked
from analyzer.model.resources import Volume

CLAIMED = Volume(
    "vol-1",
    "us-east-1",
    "gp2",
    50,
    "in-use",
    tags={
        "kubernetes.io/created-for/pvc/namespace": "db",
        "kubernetes.io/created-for/pvc/name": "data-0",
        "ebs.csi.aws.com/cluster": "true",
    },
)


def _plan(volume: Volume, fix: str):
    return plan_of(Asked.parse(fix, "apply"), "us-east-1", volume, Catalog(prices.load()))


def test_a_volume_no_claim_owns_has_no_program_and_no_refusal() -> None:
    plain = Volume("vol-1", "us-east-1", "gp2", 50, "in-use")
    plan = _plan(plain, "vol-1:type=gp3")
    assert program_of(plan) is None and claim_refusal(plan, None) is None


def test_without_the_kubernetes_api_a_claim_s_fix_is_its_commands() -> None:
    plan = _plan(CLAIMED, "vol-1:type=gp3,iops=3000,throughput=125")
    program = program_of(plan)
    assert program is not None
    assert patch_of(program) == {"spec": {"volumeAttributesClassName": "gp3-3000-125"}}
    said = claim_refusal(plan, None)
    assert said is not None and said.startswith("vol-1 belongs to PVC db/data-0: it is changed")
    assert 'kubectl apply -f - <<< \'{"apiVersion": "storage.k8s.io/v1"' in said
    assert "kubectl -n db patch pvc data-0" in said


@pytest.mark.parametrize(
    ("tags", "owner"),
    [
        ({"ebs.csi.aws.com/cluster": "true"}, "a PersistentVolume"),
        ({"CSIVolumeName": "pvc-3f2a"}, "PV pvc-3f2a"),
        ({"kubernetes.io/created-for/pv/name": "pvc-3f2a"}, "PV pvc-3f2a"),
        (
            {"ebs.csi.aws.com/cluster": "true", "CSIVolumeName": "pvc-3f2a", "Name": "x"},
            "PV pvc-3f2a",
        ),
    ],
)
def test_a_volume_the_csi_driver_made_without_its_claims_tags_is_refused(tags, owner) -> None:
    """The driver run without --extra-create-metadata writes no claim tags, but its own: the
    volume is a PersistentVolume's all the same, and is never changed behind it."""
    volume = Volume("vol-1", "us-east-1", "gp2", 50, "in-use", tags=tags)
    plan = _plan(volume, "vol-1:type=gp3,iops=3000,throughput=125")
    for cluster in (None, _Cluster()):
        said = claim_refusal(plan, cluster)  # type: ignore[arg-type]
        assert said is not None and said.startswith(f"vol-1 belongs to {owner}, made by the EBS")
        assert "kubectl get pv" in said


class _Cluster:
    name = "prod"
