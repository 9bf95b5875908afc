"""A claim's volume is fixed through its claim, a node's type where the node was launched from:
the same sizing and prices as an EC2 fix, in the commands a cluster user runs."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from datetime import timedelta

import pytest

from analyzer.analyze import prices
from analyzer.analyze.advice import kubernetes
from analyzer.analyze.analysis import conclude
from analyzer.analyze.catalog import Catalog, NoOffers
from analyzer.analyze.kinds.caps import IopsCap, ThroughputCap
from analyzer.analyze.kinds.credit_forecast import CreditForecast
from analyzer.model.findings import RemedyKind
from analyzer.model.kubernetes import Claim
from analyzer.model.metrics import Measure
from analyzer.model.resources import InstanceType
from analyzer.model.units import KIB, MB
from tests.helpers import T0, instance_state, series, snapshot_of, volume_state
from tests.helpers import fixes_of as fixes
from tests.helpers import steady_gp2 as gp2

CLAIM_TAGS = {
    "ebs.csi.aws.com/cluster": "true",
    "kubernetes.io/cluster/prod": "owned",
    "kubernetes.io/created-for/pvc/namespace": "db",
    "kubernetes.io/created-for/pvc/name": "data-postgres-0",
    "kubernetes.io/created-for/pv/name": "pvc-3f2a",
}
NODE_TAGS = {
    "eks:cluster-name": "prod",
    "eks:nodegroup-name": "db-nodes",
    "aws:autoscaling:groupName": "eks-db-nodes-12ab",
    "aws:ec2launchtemplate:id": "lt-0abc",
}
R6I = InstanceType(
    "r6i.8xlarge", 40_000, 40_000, 1_250 * MB, 1_250 * MB, 256 * 2**30, True, 32, ("x86_64",)
)
R6IN = InstanceType(
    "r6in.8xlarge", 100_000, 100_000, 3_125 * MB, 3_125 * MB, 256 * 2**30, True, 32, ("x86_64",)
)
R6IN_12 = InstanceType(
    "r6in.12xlarge", 150_000, 150_000, 4_688 * MB, 4_688 * MB, 384 * 2**30, True, 48, ("x86_64",)
)


class Types(NoOffers):
    def instance_types(self, region):  # type: ignore[no-untyped-def]
        return (R6I, R6IN, R6IN_12)


CATALOG = Catalog(prices.load(prices.DEMO), Types())


def claimed(state):  # type: ignore[no-untyped-def]
    volume = replace(state.resource, tags=CLAIM_TAGS)
    return replace(state, resource=volume, ref=volume.ref)


def on_node(state, tags=NODE_TAGS):  # type: ignore[no-untyped-def]
    instance = replace(state.resource, tags=tags)
    return replace(state, resource=instance, ref=instance.ref)


def concluded(rule, state, *others):  # type: ignore[no-untyped-def]
    snap = snapshot_of(state, *others, rules=(rule,))
    found = rule.evaluate(snap.get(state.ref.region, state.ref.resource_id), snap, snap.data_end)
    assert found is not None
    return conclude(found, snap, CATALOG)


def test_the_published_names_the_fixes_use() -> None:
    # aws-ebs-csi-driver docs/modify-volume.md: the driver's name, its parameters, and the
    # PVC annotations of its volume-modifier-for-k8s sidecar.
    assert kubernetes.EBS_CSI_DRIVER == "ebs.csi.aws.com"
    assert kubernetes.PARAMETERS == ("type", "iops", "throughput")
    assert kubernetes.ANNOTATIONS == {
        "type": "ebs.csi.aws.com/volumeType",
        "iops": "ebs.csi.aws.com/iops",
        "throughput": "ebs.csi.aws.com/throughput",
    }
    # Kubernetes documentation, "Volume Attributes Classes": GA in 1.34 as storage.k8s.io/v1;
    # the driver's document: v1beta1 from 1.31 behind the feature gate.
    assert kubernetes.VOLUME_ATTRIBUTES_CLASS_API == "storage.k8s.io/v1"
    assert kubernetes.VOLUME_ATTRIBUTES_CLASS_BETA_API == "storage.k8s.io/v1beta1"
    assert kubernetes.VERSIONS == (
        "storage.k8s.io/v1 from Kubernetes 1.34, v1beta1 behind its feature gate from 1.31"
    )
    # Kubernetes documentation, "Persistent Volumes": a claim grows only where its
    # StorageClass allows it.
    assert kubernetes.EXPANSION == "its StorageClass needs allowVolumeExpansion: true"
    # Karpenter NodePools: the well-known label a requirement restricts the type with.
    assert kubernetes.INSTANCE_TYPE_LABEL == "node.kubernetes.io/instance-type"


def test_a_draining_gp2_claim_is_moved_to_gp3_through_a_volume_attributes_class() -> None:
    rule = CreditForecast(id="f", resource_types=["volume"], severity="warning")
    _, plain = fixes(rule, gp2(1_500, 40.0))
    finding, options = fixes(rule, claimed(gp2(1_500, 40.0)))
    assert finding.resource.claim == Claim("db", "data-postgres-0", "pvc-3f2a", "prod")
    gp3, refill, grow = options
    assert not any("ModifyVolume" in o.action for o in options)
    # The VolumeAttributesClass first, with its manifest and the command that names it.
    command = (
        "kubectl -n db patch pvc data-postgres-0 "
        """-p '{"spec":{"volumeAttributesClassName":"gp3-3000-125"}}'"""
    )
    assert gp3.action.startswith(
        "Move to gp3 with 3,000 IOPS and 125 MiB/s included, through PVC db/data-postgres-0: "
        "create VolumeAttributesClass gp3-3000-125 (driverName ebs.csi.aws.com; type gp3, iops "
        f"3000, throughput 125), then {command} (storage.k8s.io/v1 from Kubernetes 1.34, "
        "v1beta1 behind its feature gate from 1.31; before that, the driver's PVC annotations "
        "ebs.csi.aws.com/volumeType=gp3, ebs.csi.aws.com/iops=3000, "
        "ebs.csi.aws.com/throughput=125); online, at most 4 modifications of the volume in 24 h"
    )
    assert gp3.change is not None
    program = gp3.change.after["kubernetes"]
    assert program == {
        "namespace": "db",
        "persistentvolumeclaim": "data-postgres-0",
        "volume_attributes_class": {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "VolumeAttributesClass",
            "metadata": {"name": "gp3-3000-125"},
            "driverName": "ebs.csi.aws.com",
            "parameters": {"type": "gp3", "iops": "3000", "throughput": "125"},
        },
        "annotations": {
            "ebs.csi.aws.com/volumeType": "gp3",
            "ebs.csi.aws.com/iops": "3000",
            "ebs.csi.aws.com/throughput": "125",
        },
        "commands": [command],
    }
    # The patch is JSON a shell passes as one word.
    patch = shlex.split(command)[-1]
    assert json.loads(patch) == {"spec": {"volumeAttributesClassName": "gp3-3000-125"}}
    # The claim resized, where only the size changes.
    resize = (
        "kubectl -n db patch pvc data-postgres-0 "
        """-p '{"spec":{"resources":{"requests":{"storage":"600Gi"}}}}'"""
    )
    assert grow.action.startswith(
        "Grow to 600 GiB (1,800 IOPS baseline, no credits needed), through PVC "
        f"db/data-postgres-0: {resize} (its StorageClass needs allowVolumeExpansion: true); "
        "online, at most 4 modifications of the volume in 24 h"
    )
    assert grow.change is not None and grow.change.after["kubernetes"]["storage"] == "600Gi"
    assert "volume_attributes_class" not in grow.change.after["kubernetes"]
    assert refill.kind is RemedyKind.STOPGAP
    assert refill.action.endswith(
        "the lasting fix waits until it has completed; through PVC db/data-postgres-0: "
        f"{resize.replace('600Gi', '51Gi')} (its StorageClass needs allowVolumeExpansion: true)"
    )
    # The same sizing, prices, order and changes as the volume's own fixes.
    assert [(o.kind, o.monthly_cost, o.monthly_delta) for o in options] == [
        (o.kind, o.monthly_cost, o.monthly_delta) for o in plain
    ]
    for mine, theirs in zip(options, plain, strict=True):
        assert mine.change is not None and theirs.change is not None
        after = {k: v for k, v in mine.change.after.items() if k != "kubernetes"}
        assert (mine.change.before, after) == (theirs.change.before, dict(theirs.change.after))


def test_a_change_of_both_size_and_attributes_resizes_the_claim_first() -> None:
    # io1 at its 20,000 IOPS on 500 GiB, its 500 MiB/s 1.6x today's rate: 32,000 IOPS, and
    # io1's 50 IOPS a GiB need 640 GiB for them.
    volume = volume_state(
        "io1",
        500,
        {Measure.IOPS: series([20_000] * 30), Measure.THROUGHPUT: series([20_000 * 16 * KIB] * 30)},
        iops=20_000,
    )
    rule = IopsCap(id="i", resource_types=["volume"], severity="warning")
    _, options = fixes(rule, claimed(volume))
    provision = next(o for o in options if o.action.startswith("Provision 32,000 IOPS"))
    assert "and grow to 640 GiB, through PVC db/data-postgres-0: first kubectl -n db" in (
        provision.action
    )
    assert (
        '\'{"spec":{"resources":{"requests":{"storage":"640Gi"}}}}\' (its StorageClass '
        "needs allowVolumeExpansion: true), then, once it has completed, create "
        "VolumeAttributesClass io1-32000 (driverName ebs.csi.aws.com; type io1, iops 32000), "
        "then "
    ) in provision.action
    assert provision.change is not None
    program = provision.change.after["kubernetes"]
    assert program["storage"] == "640Gi"
    assert program["volume_attributes_class"]["parameters"] == {"type": "io1", "iops": "32000"}
    assert [c.split(" -p ")[1] for c in program["commands"]] == [
        """'{"spec":{"resources":{"requests":{"storage":"640Gi"}}}}'""",
        """'{"spec":{"volumeAttributesClassName":"io1-32000"}}'""",
    ]
    assert not any("ModifyVolume" in o.action for o in options)


def test_an_in_tree_claims_attributes_change_through_ec2_and_says_the_claim_will_not_know() -> None:
    """A volume the in-tree plugin created before CSI migration carries the claim's tags but not
    the driver's own: no VolumeAttributesClass modifies it, and its claim still grows."""
    rule = CreditForecast(id="f", resource_types=["volume"], severity="warning")
    in_tree = {k: v for k, v in CLAIM_TAGS.items() if k != "ebs.csi.aws.com/cluster"}
    state = gp2(1_500, 40.0)
    volume = replace(state.resource, tags=in_tree)
    finding, options = fixes(rule, replace(state, resource=volume, ref=volume.ref))
    assert finding.resource.claim is not None and not finding.resource.claim.csi
    gp3, _, grow = options
    assert "create VolumeAttributesClass" not in gp3.action
    assert "ModifyVolume" in gp3.action
    assert gp3.action.endswith(
        "PVC db/data-postgres-0 will not know: the in-tree plugin created its volume (no "
        "ebs.csi.aws.com/cluster tag), which no VolumeAttributesClass modifies, and its "
        "PersistentVolume keeps the old attributes"
    )
    assert "kubectl -n db patch pvc data-postgres-0" in grow.action
    assert "ModifyVolume" not in grow.action


def test_a_volume_without_a_claim_keeps_its_ec2_fixes() -> None:
    rule = CreditForecast(id="f", resource_types=["volume"], severity="warning")
    _, options = fixes(rule, gp2(1_500, 40.0))
    assert all("ModifyVolume" in o.action for o in options if o.kind is RemedyKind.MODIFY)
    assert not any("kubectl" in o.action for o in options)
    assert not any(o.change is not None and "kubernetes" in o.change.after for o in options)


def _capped_instance(tags=NODE_TAGS):  # type: ignore[no-untyped-def]
    load = {Measure.IOPS: series([11_000] * 30), Measure.THROUGHPUT: series([1_250 * MB] * 30)}
    return on_node(instance_state(R6I, load), tags)


def test_a_node_groups_instance_is_changed_in_its_node_group() -> None:
    rule = ThroughputCap(id="t", resource_types=["instance"], severity="warning")
    plain = concluded(rule, _capped_instance({})).remedies
    [fix] = concluded(rule, _capped_instance()).remedies
    assert "stop and start" not in fix.action
    assert fix.action.startswith("Change node group db-nodes of cluster prod to r6in.8xlarge:")
    assert fix.action.endswith(
        "through a new version of its launch template (or a new node group, where the group "
        "names its instance types); new nodes replace the old"
    )
    assert fix.change is not None
    assert fix.change.after["kubernetes"] == {
        "owner": "nodegroup",
        "name": "db-nodes",
        "cluster": "prod",
        "launch_template": "lt-0abc",
    }
    # Priced and sized as the instance's own fix, which still says stop and start.
    [own] = plain
    assert own.action.startswith("Move i-1 to r6in.8xlarge:")
    assert "needs a stop and start" in own.action
    assert (fix.monthly_cost, fix.monthly_delta) == (own.monthly_cost, own.monthly_delta)


@pytest.mark.parametrize(
    ("tags", "start", "how"),
    [
        (
            {"karpenter.sh/nodepool": "default", "eks:eks-cluster-name": "prod"},
            "Change NodePool default of cluster prod to",
            "by adding the type to its node.kubernetes.io/instance-type requirement (or to a "
            "NodePool of this workload's own, where others share this one); Karpenter replaces "
            "the drifted nodes with new ones",
        ),
        (
            {"aws:autoscaling:groupName": "workers-a", "aws:ec2launchtemplate:id": "lt-9"},
            "Change Auto Scaling group workers-a to",
            "in its launch template lt-9, then an instance refresh; new instances replace the old",
        ),
    ],
)
def test_other_nodes_are_changed_where_they_were_launched_from(tags, start, how) -> None:  # type: ignore[no-untyped-def]
    rule = ThroughputCap(id="t", resource_types=["instance"], severity="warning")
    [fix] = concluded(rule, _capped_instance(tags)).remedies
    assert fix.action.startswith(start)
    assert fix.action.endswith(how)


def test_a_node_whose_types_are_unknown_is_told_where_to_change_it() -> None:
    rule = ThroughputCap(id="t", resource_types=["instance"], severity="warning")
    _, [fix] = fixes(rule, _capped_instance())
    assert "more than 1,250 MB/s of EBS throughput" in fix.action
    assert fix.action.endswith(
        "; change it in node group db-nodes of cluster prod (through a new version of its "
        "launch template (or a new node group, where the group names its instance types); new "
        "nodes replace the old)"
    )


def _capped_claim_on_node():  # type: ignore[no-untyped-def]
    """Incident 4's gp3 volume, a claim's, at its 1,000 MiB/s on an r6i.8xlarge node of a
    node group, concluded with its fixes."""
    io = 112 * KIB
    load = {Measure.IOPS: series([9_143] * 30), Measure.THROUGHPUT: series([9_143 * io] * 30)}
    volume = volume_state("gp3", 2_000, load, iops=16_000, throughput=1_000)
    instance = on_node(instance_state(R6I, load, volume_ids=("vol-1",)))
    rule = ThroughputCap(id="t", resource_types=["volume"], severity="warning")
    return concluded(rule, claimed(volume), instance)


def test_a_joint_fix_changes_the_claim_and_the_node_group() -> None:
    options = _capped_claim_on_node().remedies
    first, both = options[:2]
    assert first.action.startswith("Provision 16,000 IOPS, 1,200 MiB/s, through PVC")
    assert both.kind is RemedyKind.BOTH
    assert "VolumeAttributesClass gp3-18500-2000" in both.action
    assert "; and change node group db-nodes of cluster prod to " in both.action
    assert "stop and start" not in both.action and "ModifyVolume" not in both.action
    volume_change, node_change = both.changes
    assert volume_change.after["kubernetes"]["persistentvolumeclaim"] == "data-postgres-0"
    assert node_change.after["kubernetes"]["name"] == "db-nodes"


def test_the_claims_fixes_reach_slack_whole_and_the_state_file_keeps_them() -> None:
    from analyzer.analyze.alerts import AlertBook
    from analyzer.deliver import slack
    from analyzer.deliver.records import FindingRecord

    finding = _capped_claim_on_node()
    book = AlertBook(3600.0, 300.0)
    now = T0 + timedelta(minutes=32)
    book.update(now, [finding], [])
    [(_, message)] = slack.messages(book.owed(), now)
    [section] = [
        b["text"]["text"] for b in message["blocks"] if "Fix:" in b.get("text", {}).get("text", "")
    ]
    # Slack cuts a section at 3,000 characters: the shown fixes, commands and all, fit.
    assert len(section) < 3_000
    for remedy in finding.remedies[: slack.FIXES_SHOWN]:
        assert remedy.text() in section
    record = json.loads(FindingRecord.of(finding).model_dump_json(by_alias=True))
    back = FindingRecord.model_validate(record).finding()
    assert [r.changes for r in back.remedies] == [r.changes for r in finding.remedies]
    assert record["remedies"][1]["changes"][0]["to"]["kubernetes"]["commands"] == [
        "kubectl -n db patch pvc data-postgres-0 "
        """-p '{"spec":{"volumeAttributesClassName":"gp3-18500-2000"}}'"""
    ]
