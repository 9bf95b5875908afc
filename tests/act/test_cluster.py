"""A claim's fix through the Kubernetes API, against a stand-in API server: the official
client's own requests, the VolumeAttributesClass created once, the claim patched, the volume
left to the driver; and refused where this analyzer may not change the claim."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from kubernetes import client

from analyzer.act.apply import Applier, Outcome
from analyzer.act.cluster import KubernetesCluster
from analyzer.act.guards import Policy
from analyzer.analyze import prices
from analyzer.analyze.catalog import Catalog
from analyzer.collect.aws import Clients
from analyzer.collect.changes import Ec2RdsChanges
from tests.receiver import LocalServer

REGION = "us-east-1"
TAGS = [
    {"Key": "ebs-analyzer/apply", "Value": "allowed"},
    {"Key": "kubernetes.io/created-for/pvc/namespace", "Value": "db"},
    {"Key": "kubernetes.io/created-for/pvc/name", "Value": "data-0"},
    {"Key": "ebs.csi.aws.com/cluster", "Value": "true"},
    {"Key": "eks:cluster-name", "Value": "prod"},
]


class ApiServer(LocalServer):
    """The two calls a claim's fix makes, as the API server answers them: a class created
    (201, or 409 where one of its name exists; 404 for a version not served), a claim
    patched (200), or 403 for every call where `forbidden`."""

    def __init__(self, versions: tuple[str, ...] = ("v1",), forbidden: bool = False) -> None:
        self.calls: list[dict[str, Any]] = []
        self.classes: dict[str, dict[str, Any]] = {}
        self.bound: dict[str, str] = {}
        """By claim name (namespace db), the EBS volume its PersistentVolume holds."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _call(self) -> tuple[str, dict[str, Any]]:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.calls.append(
                    {
                        "method": self.command,
                        "path": parts.path,
                        "query": parse_qs(parts.query),
                        "type": self.headers.get("Content-Type"),
                        "body": body,
                    }
                )
                return parts.path, body

            def do_POST(self) -> None:
                path, body = self._call()
                if forbidden:
                    return self._answer(403, {"kind": "Status", "reason": "Forbidden"})
                version = path.split("/")[3]
                if version not in versions:
                    return self._answer(404, {"kind": "Status", "reason": "NotFound"})
                name = body["metadata"]["name"]
                if name in server.classes:
                    return self._answer(409, {"kind": "Status", "reason": "AlreadyExists"})
                if "dryRun" not in parse_qs(urlsplit(self.path).query):
                    server.classes[name] = body
                return self._answer(201, body)

            def do_GET(self) -> None:
                path, _ = self._call()
                parts = path.split("/")
                if forbidden:
                    return self._answer(403, {"kind": "Status", "reason": "Forbidden"})
                if "volumeattributesclasses" in parts and parts[-1] in server.classes:
                    return self._answer(200, server.classes[parts[-1]])
                if "persistentvolumeclaims" in parts:
                    claim = parts[-1]
                    return self._answer(
                        200,
                        {
                            "apiVersion": "v1",
                            "kind": "PersistentVolumeClaim",
                            "metadata": {"name": claim, "namespace": parts[4]},
                            "spec": {"volumeName": f"pv-{claim}"},
                        },
                    )
                if "persistentvolumes" in parts:
                    claim = parts[-1].removeprefix("pv-")
                    handle = server.bound.get(claim)
                    spec: dict[str, Any] = {"capacity": {"storage": "50Gi"}}
                    if handle:
                        spec["csi"] = {"driver": "ebs.csi.aws.com", "volumeHandle": handle}
                    return self._answer(
                        200,
                        {
                            "apiVersion": "v1",
                            "kind": "PersistentVolume",
                            "metadata": {"name": parts[-1]},
                            "spec": spec,
                        },
                    )
                return self._answer(404, {"kind": "Status", "reason": "NotFound"})

            def do_PATCH(self) -> None:
                path, body = self._call()
                if forbidden:
                    return self._answer(403, {"kind": "Status", "reason": "Forbidden"})
                _, _, _, _, namespace, _, name = path.split("/")
                return self._answer(
                    200,
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "metadata": {"name": name, "namespace": namespace},
                        "spec": body.get("spec", {}),
                    },
                )

            def log_message(self, format: str, *args: Any) -> None:
                pass

        super().__init__(Handler)


@pytest.fixture
def api():
    servers: list[ApiServer] = []

    def start(**kwargs: Any) -> ApiServer:
        servers.append(ApiServer(**kwargs).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def _applier(server: ApiServer, name: str | None = "prod") -> Applier:
    configuration = client.Configuration()
    configuration.host = server.root
    cluster = KubernetesCluster(client.ApiClient(configuration), name)
    return Applier(
        [(REGION, Ec2RdsChanges(Clients.for_region(REGION)))],
        Catalog(prices.load()),
        Policy("ebs-analyzer/apply=allowed"),
        lambda: datetime.now(UTC),
        cluster=cluster,
    )


def _claim_volume(server: ApiServer, size: int = 50) -> str:
    """A gp2 volume tagged as PVC db/data-0's, and the claim bound to it in `server`."""
    ec2 = boto3.client("ec2", REGION)
    made = ec2.create_volume(
        Size=size,
        VolumeType="gp2",
        AvailabilityZone=f"{REGION}a",
        TagSpecifications=[{"ResourceType": "volume", "Tags": TAGS}],
    )
    server.bound["data-0"] = str(made["VolumeId"])
    return str(made["VolumeId"])


def _writes(server: ApiServer) -> list[dict[str, Any]]:
    return [c for c in server.calls if c["method"] != "GET"]


def _modifications(volume: str) -> int:
    ec2 = boto3.client("ec2", REGION)
    found = ec2.describe_volumes_modifications(Filters=[{"Name": "volume-id", "Values": [volume]}])
    return len(found["VolumesModifications"])


def _go(applier: Applier, fix: str, dry_run: bool = False):
    plan = applier.plan(fix)
    assert not hasattr(plan, "outcome"), plan
    ended = applier.check(plan, allow_cost=False)  # type: ignore[arg-type]
    return ended or applier.apply(plan, dry_run, wait_s=0)  # type: ignore[arg-type]


def test_a_claim_s_new_type_is_a_class_created_and_the_claim_patched_never_modify_volume(
    aws, api
) -> None:
    server = api()
    volume = _claim_volume(server)
    result = _go(_applier(server), f"{volume}:type=gp3,iops=3000,throughput=125")
    assert result.outcome is Outcome.APPLIED, result.reason
    create, patch = _writes(server)
    assert create["path"] == "/apis/storage.k8s.io/v1/volumeattributesclasses"
    assert create["body"] == {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttributesClass",
        "metadata": {"name": "gp3-3000-125"},
        "driverName": "ebs.csi.aws.com",
        "parameters": {"type": "gp3", "iops": "3000", "throughput": "125"},
    }
    assert patch["method"] == "PATCH"
    assert patch["path"] == "/api/v1/namespaces/db/persistentvolumeclaims/data-0"
    assert patch["body"] == {"spec": {"volumeAttributesClassName": "gp3-3000-125"}}
    assert "json-patch" not in patch["type"]  # a merge of the spec, not a list of operations
    assert "PVC db/data-0 patched with" in result.reason
    # The driver modifies the volume; the analyzer never does it behind the claim.
    assert _modifications(volume) == 0
    # A second claim needing the same class finds it there.
    again = _go(_applier(server), f"{_claim_volume(server)}:type=gp3,iops=3000,throughput=125")
    assert again.outcome is Outcome.APPLIED and list(server.classes) == ["gp3-3000-125"]


def test_a_claim_grown_is_its_storage_request_patched(aws, api) -> None:
    server = api()
    result = _go(_applier(server), f"{_claim_volume(server)}:type=gp2,size=60")
    assert result.outcome is Outcome.APPLIED
    [patch] = _writes(server)
    assert patch["body"] == {"spec": {"resources": {"requests": {"storage": "60Gi"}}}}


def test_a_cluster_serving_only_the_beta_api_gets_the_beta_class(aws, api) -> None:
    server = api(versions=("v1beta1",))
    result = _go(_applier(server), f"{_claim_volume(server)}:type=gp3,iops=3000,throughput=125")
    assert result.outcome is Outcome.APPLIED
    writes = _writes(server)
    assert [c["path"].split("/")[3] for c in writes[:2]] == ["v1", "v1beta1"]
    assert writes[1]["body"]["apiVersion"] == "storage.k8s.io/v1beta1"


def test_a_dry_run_is_the_api_server_s_own_and_stores_nothing(aws, api) -> None:
    server = api()
    result = _go(
        _applier(server), f"{_claim_volume(server)}:type=gp3,iops=3000,throughput=125", True
    )
    assert result.outcome is Outcome.DRY_RUN and "dryRun=All" in result.reason
    assert all(c["query"] == {"dryRun": ["All"]} for c in _writes(server))
    assert server.classes == {}


def test_a_refusal_of_the_service_account_is_an_aws_like_error_with_the_role_to_grant(
    aws, api
) -> None:
    server = api(forbidden=True)
    result = _go(_applier(server), f"{_claim_volume(server)}:type=gp3,iops=3000,throughput=125")
    assert result.outcome is Outcome.FAILED and result.exit_code == 1
    assert "403 Forbidden: grant the analyzer's service account" in result.reason


@pytest.mark.parametrize(
    ("cluster", "fix", "says"),
    [
        (
            "staging",
            "type=gp3,iops=3000,throughput=125",
            "in cluster prod, and this analyzer changes claims in staging",
        ),
        (None, "type=gp3,iops=3000,throughput=125", "changes claims in a cluster not named"),
        ("prod", "type=gp3,size=60,iops=3000,throughput=125", "in two steps"),
    ],
)
def test_a_claim_of_another_cluster_or_a_two_step_fix_is_refused_with_its_commands(
    aws, api, cluster, fix, says
) -> None:
    server = api()
    result = _go(_applier(server, cluster), f"{_claim_volume(server)}:{fix}")
    assert result.outcome is Outcome.REFUSED and says in result.reason
    assert "kubectl -n db patch pvc data-0" in result.reason
    assert server.calls == []


def test_a_claim_bound_to_another_volume_is_not_touched(aws, api) -> None:
    """The claim is named by the volume's tags, which anyone who may tag it can write: the
    claim's own PersistentVolume must hold this volume."""
    server = api()
    volume = _claim_volume(server)
    server.bound["data-0"] = "vol-0someoneelse"
    result = _go(_applier(server), f"{volume}:type=gp3,iops=3000,throughput=125")
    assert result.outcome is Outcome.REFUSED
    assert "PVC db/data-0 is bound to vol-0someoneelse, not " in result.reason
    assert _writes(server) == []


def test_a_class_of_the_name_holding_other_parameters_is_not_used(aws, api) -> None:
    server = api()
    server.classes["gp3-3000-125"] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttributesClass",
        "metadata": {"name": "gp3-3000-125"},
        "driverName": "ebs.csi.aws.com",
        "parameters": {"type": "gp3", "iops": "16000", "throughput": "125"},
    }
    result = _go(_applier(server), f"{_claim_volume(server)}:type=gp3,iops=3000,throughput=125")
    assert result.outcome is Outcome.FAILED
    assert "exists with driver ebs.csi.aws.com and parameters" in result.reason
    assert [c["method"] for c in _writes(server)] == ["POST"]  # the claim is never patched


def test_a_volume_the_driver_made_without_claim_tags_is_touched_nowhere(aws, api) -> None:
    """Made by the EBS CSI driver run without --extra-create-metadata: its own tags only. It
    is a PersistentVolume's all the same: neither the API server nor EC2 is asked anything."""
    server = api()
    ec2 = boto3.client("ec2", REGION)
    tags = [
        {"Key": "ebs-analyzer/apply", "Value": "allowed"},
        {"Key": "ebs.csi.aws.com/cluster", "Value": "true"},
        {"Key": "CSIVolumeName", "Value": "pvc-3f2a"},
    ]
    volume = str(
        ec2.create_volume(
            Size=50,
            VolumeType="gp2",
            AvailabilityZone=f"{REGION}a",
            TagSpecifications=[{"ResourceType": "volume", "Tags": tags}],
        )["VolumeId"]
    )
    result = _go(_applier(server), f"{volume}:type=gp3,iops=3000,throughput=125")
    assert result.outcome is Outcome.REFUSED and "belongs to PV pvc-3f2a" in result.reason
    assert server.calls == [] and _modifications(volume) == 0
    assert ec2.describe_volumes(VolumeIds=[volume])["Volumes"][0]["VolumeType"] == "gp2"
