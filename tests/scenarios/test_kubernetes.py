"""A database on EKS, as the EBS CSI driver and EKS tag it in AWS: a StatefulSet's gp2 claim
draining its credits on a managed node group's node, beside an untagged volume and a search
node at its EBS IOPS limit. Every output names the claim, and the fixes are a cluster user's.

moto serves the inventory (with the tags) and the simulator's metric data; `once` runs as a
user runs it, and the daemon posts to a Slack and an Alertmanager stand-in and serves /metrics.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from moto.server import ThreadedMotoServer

from analyzer import settings
from analyzer.analyze import prices, rules
from analyzer.live import daemon
from analyzer.model.units import KIB
from analyzer.sim.workloads import Demand, constant, steps
from tests.account import Account
from tests.conftest import _isolate
from tests.receiver import Receiver
from tests.test_cli import run_cli

NODE_TAGS = {
    # An EKS managed node group's instance (Amazon EKS User Guide, "Managed node groups").
    "eks:cluster-name": "prod",
    "eks:nodegroup-name": "db-nodes",
    "aws:autoscaling:groupName": "eks-db-nodes-5ec8f1a2",
    "aws:ec2launchtemplate:id": "lt-0a1b2c3d4e5f60718",
    "kubernetes.io/cluster/prod": "owned",
}


def csi_tags(claim: str, pv: str) -> dict[str, str]:
    """As the EBS CSI driver tags a volume it provisions for a claim (aws-ebs-csi-driver,
    pkg/driver/constants.go), with --k8s-tag-cluster-id=prod."""
    return {
        "CSIVolumeName": pv,
        "ebs.csi.aws.com/cluster": "true",
        "kubernetes.io/cluster/prod": "owned",
        "kubernetes.io/created-for/pvc/namespace": "db",
        "kubernetes.io/created-for/pvc/name": claim,
        "kubernetes.io/created-for/pv/name": pv,
    }


def _tag(account: Account, resource_id: str, tags: dict[str, str]) -> None:
    account.ec2.create_tags(
        Resources=[resource_id], Tags=[{"Key": k, "Value": v} for k, v in tags.items()]
    )


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, Any]]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        _isolate(monkeypatch)
        yield from _cluster()


def _cluster() -> Iterator[dict[str, Any]]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    account = Account(endpoint_url=url)
    start = (datetime.now(UTC) - timedelta(hours=1)).replace(second=0, microsecond=0)

    node = account.instance("m5.large", **NODE_TAGS)
    claim = account.volume("gp2", 50, node)
    _tag(account, claim, csi_tags("data-postgres-0", "pvc-7c1d2e3f"))
    plain = account.volume("gp2", 50, node, device="/dev/sdg")
    heavy = Demand(steps((0, 100), (20 * 60, 1_500)), io_size_bytes=4 * KIB)
    quiet = Demand(constant(20), io_size_bytes=4 * KIB)
    account.put(account.simulation(node, {claim: heavy, plain: quiet}, start).run(60))

    search = account.instance("m5.4xlarge", **{**NODE_TAGS, "eks:nodegroup-name": "search"})
    index = account.volume("io2", 400, search, Iops=20_000)
    pinned = Demand(constant(18_750), io_size_bytes=16 * KIB)
    account.put(account.simulation(search, {index: pinned}, start).run(60))
    try:
        yield {
            "url": url,
            "node": node,
            "claim": claim,
            "plain": plain,
            "search": search,
        }
    finally:
        server.stop()


def _env(cluster: dict[str, Any]) -> dict[str, str]:
    return {"AWS_ENDPOINT_URL": cluster["url"], "EBS_ANALYZER_PRICES": str(prices.DEMO)}


def test_once_names_the_claim_in_json_and_text(cluster: dict[str, Any]) -> None:
    result = run_cli("once", "--format", "json", "--region", "us-east-1", env=_env(cluster))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    rows = {r["resource_id"]: r for r in report["resources"]}
    expected = {
        "cluster": "prod",
        "namespace": "db",
        "persistentvolumeclaim": "data-postgres-0",
        "persistentvolume": "pvc-7c1d2e3f",
    }
    assert rows[cluster["claim"]]["kubernetes"] == expected
    assert rows[cluster["plain"]]["kubernetes"] is None
    assert rows[cluster["node"]]["kubernetes"] is None
    [drain] = [f for f in report["findings"] if f["resource_id"] == cluster["claim"]]
    assert drain["rule"] == "gp2-burst-exhaustion"
    assert drain["kubernetes"] == expected
    assert drain["summary"].startswith(
        f"PVC db/data-postgres-0 ({cluster['claim']}, gp2 50 GiB on {cluster['node']}): "
    )

    # The fixes are a cluster user's: the claim, not a bare ModifyVolume, first.
    first = drain["remedies"][0]
    assert "kubectl -n db patch pvc data-postgres-0" in first["action"]
    assert "ModifyVolume" not in first["action"]
    assert first["change"]["to"]["kubernetes"]["persistentvolumeclaim"] == "data-postgres-0"
    assert all("kubectl" in r["action"] for r in drain["remedies"])
    # The node at its EBS cap is changed where its node group is, not stopped and started.
    node_fixes = [
        r
        for f in report["findings"]
        if f["resource_id"] == cluster["search"]
        for r in f["remedies"]
        if r["change"] is not None and r["change"]["resource_type"] == "instance"
    ]
    assert node_fixes
    assert all("node group search of cluster prod" in r["action"] for r in node_fixes)
    assert all("stop and start" not in r["action"] for r in node_fixes)

    text = run_cli("once", "--region", "us-east-1", env=_env(cluster))
    assert text.returncode == 0, text.stderr
    assert f"PVC db/data-postgres-0 ({cluster['claim']}, gp2 50 GiB" in text.stdout
    [row] = [line for line in text.stdout.splitlines() if line.startswith("  db/")]
    assert row.split()[:2] == ["db/data-postgres-0", cluster["claim"]]


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def test_the_daemon_names_the_claim_in_slack_alertmanager_and_metrics(
    cluster: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    slack, alertmanager = Receiver().start(), Receiver().start()
    monkeypatch.setenv("AWS_ENDPOINT_URL", cluster["url"])
    config = settings.load(
        {
            "region": ["us-east-1"],
            "listen": "127.0.0.1:0",
            "slack_webhook_url": slack.url,
            "alertmanager_url": [alertmanager.root],
            "state_file": None,
            "prices": str(prices.DEMO),
            "pricing_api": False,
        }
    )
    process, server = daemon.build(
        config, rules.load(), None, Clock(datetime.now(UTC)), process_metrics=False
    )
    server.start()
    try:
        assert process.cycle()
        with urllib.request.urlopen(
            f"http://127.0.0.1:{server.port}/metrics", timeout=30
        ) as answer:
            metrics = answer.read().decode()
    finally:
        server.stop()
        slack.stop()
        alertmanager.stop()

    [message] = slack.requests
    assert "PVC db/data-postgres-0" in message["text"]
    assert any("PVC db/data-postgres-0" in json.dumps(b) for b in message["blocks"])

    posted = [alert for body in alertmanager.requests for alert in body]
    [claimed] = [a for a in posted if a["labels"].get("volume_id") == cluster["claim"]]
    assert claimed["labels"]["namespace"] == "db"
    assert claimed["labels"]["persistentvolumeclaim"] == "data-postgres-0"
    # Two clusters' db/data-postgres-0 stay two: the claim's cluster beside it.
    assert claimed["labels"]["kubernetes_cluster"] == "prod"
    assert claimed["annotations"]["summary"].startswith("PVC db/data-postgres-0 ")
    others = [a for a in posted if a["labels"].get("volume_id") != cluster["claim"]]
    assert all("namespace" not in a["labels"] for a in others)

    finding = [
        line
        for line in metrics.splitlines()
        if line.startswith("ebs_analyzer_finding{") and cluster["claim"] in line
    ]
    assert finding and all('namespace="db"' in line for line in finding)
    assert all('persistentvolumeclaim="data-postgres-0"' in line for line in finding)
    up = [line for line in metrics.splitlines() if line.startswith("ebs_analyzer_volume_up{")]
    [claim_up] = [line for line in up if cluster["claim"] in line]
    [plain_up] = [line for line in up if cluster["plain"] in line]
    assert 'persistentvolumeclaim="data-postgres-0"' in claim_up
    assert 'kubernetes_cluster="prod"' in claim_up
    assert all('kubernetes_cluster="prod"' in line for line in finding)
    assert 'persistentvolumeclaim=""' in plain_up and 'kubernetes_cluster=""' in plain_up
