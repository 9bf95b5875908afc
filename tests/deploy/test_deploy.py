"""The deployment files must agree with the code: what it calls, serves, reads and needs."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect.aws import UNPERMISSIONED, apply_policy, iam_policy
from tests.helpers import GOLDEN, external, promtool

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "kubernetes"


VARIANTS = ("base", "overlays/prometheus-operator")
CORE_KINDS = {"Namespace", "ServiceAccount", "ConfigMap", "Deployment", "Service"}
RECOMMENDED = {
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "app.kubernetes.io/component",
    "app.kubernetes.io/part-of",
    "app.kubernetes.io/managed-by",
}


def kustomize(directory: Path) -> dict[str, dict]:
    """What `kubectl kustomize` (or kustomize itself, the same engine) renders, by kind/name."""
    binary = external(
        "kubectl", "kustomize", install="go install sigs.k8s.io/kustomize/kustomize/v5@v5.5.0"
    )
    command = [binary, "build"] if Path(binary).name == "kustomize" else [binary, "kustomize"]
    result = subprocess.run([*command, str(directory)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return {
        f"{doc['kind']}/{doc['metadata']['name']}": doc
        for doc in yaml.safe_load_all(result.stdout)
        if doc
    }


@functools.cache
def rendered(variant: str) -> dict[str, dict]:
    return kustomize(K8S / variant)


def manifests() -> dict[str, dict]:
    """Every object, as the Prometheus Operator variant renders it."""
    return rendered("overlays/prometheus-operator")


# --- the image ----------------------------------------------------------------------------


def test_dockerfile_passes_hadolint():
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    result = subprocess.run(
        [hadolint, "--failure-threshold", "warning", str(ROOT / "Dockerfile")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_runs_the_daemon_as_a_non_root_user_with_a_health_check():
    text = (ROOT / "Dockerfile").read_text()
    final = text[text.rindex("\nFROM ") :]
    assert 'ENTRYPOINT ["ebs-analyzer", "run"]' in final
    assert re.search(r"^USER 10001", final, re.M)
    assert "HEALTHCHECK" in final and "/healthz" in final
    assert "COPY --from=build /opt/venv /opt/venv" in final
    assert "pip" not in final.replace("PYTHONDONTWRITEBYTECODE", "")  # no build steps there
    base = re.search(r"ARG PYTHON_IMAGE=(\S+)", text)
    assert base and re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+", base.group(1)), "pin the base"


def test_what_the_dockerfile_copies_builds_a_complete_package(tmp_path):
    text = (ROOT / "Dockerfile").read_text()
    context = tmp_path / "context"
    context.mkdir()
    for line in re.findall(r"^COPY (?!--from)(.+)$", text, re.M):
        *sources, _ = line.split()
        for source in sources:
            src = ROOT / source
            if src.is_dir():
                shutil.copytree(src, context / source, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(src, context / source)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "-w",
            str(tmp_path / "dist"),
            str(context),
        ],
        check=True,
    )
    [wheel] = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "analyzer/default_rules/credits.yaml" in names
    assert "analyzer/default_rules/caps.yaml" in names
    assert "analyzer/data/prices.yaml" in names
    assert "analyzer/data/recordings/incident-3-fortnight.json.gz" in names
    sources = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "analyzer").rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert sources - names == set(), "modules missing from the wheel: list their package"


# --- AWS ----------------------------------------------------------------------------------


def test_the_iam_policies_name_exactly_the_calls_the_code_makes():
    """deploy/iam-policy.json: the calls in a watched account; deploy/accounts/: those that
    list an Organization, beside assuming the member roles. A call no policy needs
    (sts:GetCallerIdentity) is in neither."""
    called = set()
    for path in (ROOT / "analyzer").rglob("*.py"):
        called |= set(re.findall(r'calling\(\s*"([a-z0-9]+:[A-Za-z]+)"', path.read_text()))
    policy = json.loads((DEPLOY / "iam-policy.json").read_text())
    [statement] = policy["Statement"]
    assert statement["Effect"] == "Allow"
    organization = json.loads((DEPLOY / "accounts" / "analyzer-role-policy.json").read_text())
    _, listing = organization["Statement"]
    apply = json.loads((DEPLOY / "iam-policy-apply.json").read_text())
    [changes] = apply["Statement"]
    read = set(statement["Action"]) | set(listing["Action"]) | set(UNPERMISSIONED)
    assert read | set(changes["Action"]) == called
    assert all(a.split(":")[1].startswith(("Describe", "Get", "List")) for a in read)
    assert policy == iam_policy()  # what `ebs-analyzer iam-policy` prints
    assert apply == apply_policy()  # what `ebs-analyzer iam-policy --apply` prints


def test_the_apply_policy_changes_only_what_carries_the_apply_tag():
    [statement] = apply_policy()["Statement"]
    assert set(statement["Action"]) == {"ec2:ModifyVolume", "rds:ModifyDBInstance"}
    assert statement["Condition"] == {
        "StringEquals": {"aws:ResourceTag/ebs-analyzer/apply": "allowed"}
    }
    assert not set(statement["Action"]) & set(iam_policy()["Statement"][0]["Action"])


# --- Kubernetes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "directory",
    [
        "base",
        "components/prometheus-operator",
        "overlays/prometheus-operator",
        "components/node-agent",
        "components/node-agent-monitor",
        "overlays/node-agent",
    ],
)
def test_each_kustomization_lists_every_manifest_beside_it(directory):
    kustomization = yaml.safe_load((K8S / directory / "kustomization.yaml").read_text())
    listed = {r for r in kustomization.get("resources", []) if r.endswith(".yaml")}
    present = {p.name for p in (K8S / directory).glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == present


def test_the_base_applies_on_a_cluster_without_the_prometheus_operator():
    found = rendered("base")
    assert {name.split("/")[0] for name in found} == CORE_KINDS
    assert {doc["apiVersion"] for doc in found.values()} <= {"v1", "apps/v1"}


def test_the_operator_variant_adds_exactly_its_two_objects_with_the_release_label():
    base, operator = rendered("base"), rendered("overlays/prometheus-operator")
    added = set(operator) - set(base)
    assert added == {
        "ServiceMonitor/ebs-bottleneck-analyzer",
        "PrometheusRule/ebs-bottleneck-analyzer",
    }
    for name in added:
        # kube-prometheus-stack's default serviceMonitorSelector and ruleSelector
        assert operator[name]["metadata"]["labels"]["release"] == "kube-prometheus-stack"
        assert operator[name]["metadata"]["namespace"] == "ebs-analyzer"


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_object_carries_the_recommended_labels_and_selectors_match(variant):
    found = rendered(variant)
    for name, doc in found.items():
        if name.split("/")[0] in CORE_KINDS:
            assert set(doc["metadata"]["labels"]) >= RECOMMENDED, name
    deployment = found["Deployment/ebs-bottleneck-analyzer"]
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert RECOMMENDED - {"app.kubernetes.io/managed-by"} <= set(pod_labels)
    selector = deployment["spec"]["selector"]["matchLabels"]
    # A selector cannot change once applied: it must not hold the version.
    assert set(selector) == {"app.kubernetes.io/name", "app.kubernetes.io/instance"}
    assert selector.items() <= pod_labels.items()
    service = found["Service/ebs-bottleneck-analyzer"]
    assert service["spec"]["selector"] == selector


def test_an_overlay_points_the_deployment_at_a_pushed_image(tmp_path):
    overlay = tmp_path / "mine"
    overlay.mkdir()
    base = os.path.relpath(K8S / "base", overlay)
    (overlay / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [base],
                "images": [
                    {
                        "name": "ebs-bottleneck-analyzer",
                        "newName": "registry.example.com/team/ebs-bottleneck-analyzer",
                        "newTag": "9.9.9",
                    }
                ],
            }
        )
    )
    pod = kustomize(overlay)["Deployment/ebs-bottleneck-analyzer"]["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["image"] == "registry.example.com/team/ebs-bottleneck-analyzer:9.9.9"


def test_the_base_names_the_image_a_local_build_tags():
    """`docker build -t ebs-bottleneck-analyzer:VERSION .`, loaded into kind or minikube, runs
    as the base is; the version is the package's."""
    pod = rendered("base")["Deployment/ebs-bottleneck-analyzer"]["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["image"] == f"ebs-bottleneck-analyzer:{package_version()}"
    labels = rendered("base")["Deployment/ebs-bottleneck-analyzer"]["metadata"]["labels"]
    assert labels["app.kubernetes.io/version"] == package_version()


def test_one_version_names_the_image_everywhere():
    """The package's version (pyproject.toml) is the image's: the tag the Dockerfile says to
    build and its version label, the chart's appVersion (its default tag), the Kubernetes
    base's tag and version label, and every tag a comment or the README gives."""
    found: dict[str, str] = {}
    dockerfile = (ROOT / "Dockerfile").read_text()
    label = re.search(r'org\.opencontainers\.image\.version="([^"]+)"', dockerfile)
    assert label, "Dockerfile: label the image with org.opencontainers.image.version"
    found["Dockerfile: org.opencontainers.image.version"] = label.group(1)
    chart = DEPLOY / "helm" / "ebs-bottleneck-analyzer"
    found["Chart.yaml: appVersion"] = yaml.safe_load((chart / "Chart.yaml").read_text())[
        "appVersion"
    ]
    tag = yaml.safe_load((chart / "values.yaml").read_text())["image"]["tag"]
    if tag:
        found["values.yaml: image.tag"] = tag
    base = yaml.safe_load((K8S / "base" / "kustomization.yaml").read_text())
    [image] = base["images"]
    found["kustomization.yaml: newTag"] = image["newTag"]
    for pairs in base["labels"]:
        if "app.kubernetes.io/version" in pairs["pairs"]:
            found["kustomization.yaml: version label"] = pairs["pairs"]["app.kubernetes.io/version"]
    texts = [ROOT / "Dockerfile", ROOT / "README.md"]
    texts += [p for p in DEPLOY.rglob("*") if p.suffix in {".yaml", ".yml", ".tpl", ".txt", ".md"}]
    tagged = 0
    for path in texts:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for version in re.findall(r"ebs-bottleneck-analyzer:(\d[\w.+-]*)", line):
                found[f"{path.relative_to(ROOT)}:{number}"] = version
                tagged += path.name == "Dockerfile"
    assert tagged, "Dockerfile: `docker build -t ebs-bottleneck-analyzer:VERSION .`"
    version = package_version()
    assert {where: v for where, v in found.items() if v != version} == {}, version


def package_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_the_deployment_is_locked_down_and_probed():
    deployment = manifests()["Deployment/ebs-bottleneck-analyzer"]
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 1
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["serviceAccountName"] == "ebs-bottleneck-analyzer"
    [container] = pod["containers"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert pod["automountServiceAccountToken"] is False
    assert set(container["resources"]) == {"requests", "limits"}
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert "/var/lib/ebs-analyzer" in mounts  # the state file on a writable volume
    slack = next(e for e in container["env"] if e["name"] == "SLACK_WEBHOOK_URL")
    assert slack["valueFrom"]["secretKeyRef"]["optional"] is True


def test_service_account_carries_an_iam_role():
    account = manifests()["ServiceAccount/ebs-bottleneck-analyzer"]
    assert account["metadata"]["annotations"]["eks.amazonaws.com/role-arn"].startswith(
        "arn:aws:iam::"
    )


def test_service_and_service_monitor_agree_on_the_port():
    found = manifests()
    service = found["Service/ebs-bottleneck-analyzer"]
    monitor = found["ServiceMonitor/ebs-bottleneck-analyzer"]
    [port] = service["spec"]["ports"]
    assert port["port"] == 9877
    assert monitor["spec"]["endpoints"][0]["port"] == port["name"]
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )


def test_every_service_monitor_keeps_the_labels_the_analyzer_sets():
    """honorLabels, as kube-state-metrics' own chart sets it: a claim's volume keeps the
    claim's `namespace` instead of the scraped pod's (with the claim's renamed
    `exported_namespace`)."""
    monitors = {n: d for n, d in rendered("overlays/node-agent").items() if "ServiceMonitor/" in n}
    assert len(monitors) == 2
    for name, monitor in monitors.items():
        assert [e["honorLabels"] for e in monitor["spec"]["endpoints"]] == [True], name


def test_the_configmap_settings_and_rules_load(tmp_path, monkeypatch):
    found = manifests()
    for name, value in found["ConfigMap/ebs-bottleneck-analyzer"]["data"].items():
        monkeypatch.setenv(name, value)
    loaded = settings.load()
    assert loaded.rules[0] == "builtin"
    for name, text in found["ConfigMap/ebs-bottleneck-analyzer-rules"]["data"].items():
        (tmp_path / name).write_text(text)
    layered = rules.load([Path("builtin"), tmp_path])
    assert len(layered) > len(rules.load())


# --- Prometheus ---------------------------------------------------------------------------


def test_prometheus_rule_matches_the_plain_rules_file():
    plain = yaml.safe_load((DEPLOY / "prometheus" / "ebs-analyzer.rules.yml").read_text())
    operator = manifests()["PrometheusRule/ebs-bottleneck-analyzer"]
    assert operator["spec"] == plain


def test_promtool_checks_the_rules():
    result = promtool("check", "rules", str(DEPLOY / "prometheus" / "ebs-analyzer.rules.yml"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_unit_tests_of_the_rules():
    result = promtool("test", "rules", str(DEPLOY / "prometheus" / "ebs-analyzer.rules.test.yml"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_shipped_prometheus_rule_has_a_case_where_it_fires():
    rules = yaml.safe_load((DEPLOY / "prometheus" / "ebs-analyzer.rules.yml").read_text())
    names = {r["alert"] for group in rules["groups"] for r in group["rules"] if "alert" in r}
    cases = yaml.safe_load((DEPLOY / "prometheus" / "ebs-analyzer.rules.test.yml").read_text())
    fired = {
        case["alertname"]
        for test in cases["tests"]
        for case in test["alert_rule_test"]
        if case["exp_alerts"]
    }
    assert names - fired == set()


VOLUME_SERIES = re.compile(r'ebs_analyzer_volume_|bottleneck=~?"(volume_|burst_credits)')
CLAIM_PODS = (
    "namespace_persistentvolumeclaim:kube_pod_spec_volumes_persistentvolumeclaims_info:topk1"
)


def test_every_alert_on_a_volume_names_the_pod_of_its_claim_and_fires_without_it():
    """kube-state-metrics' kube_pod_spec_volumes_persistentvolumeclaims_info (labels
    `namespace`, `pod`, `persistentvolumeclaim`, `volume`: its docs/metrics/storage/
    persistentvolumeclaim-metrics.md and pod-metrics.md) gives the pod, joined on the claim;
    the volumes it does not list keep their alert (the promtool cases above prove both)."""
    plain = yaml.safe_load((DEPLOY / "prometheus" / "ebs-analyzer.rules.yml").read_text())
    [group] = plain["groups"]
    [record] = [r for r in group["rules"] if "record" in r]
    assert group["rules"][0] is record, "recorded before the alerts that read it"
    assert record["record"] == CLAIM_PODS
    assert "kube_pod_spec_volumes_persistentvolumeclaims_info" in record["expr"]
    on_volumes = [r for r in group["rules"] if "alert" in r and VOLUME_SERIES.search(r["expr"])]
    assert {r["alert"] for r in on_volumes} == {
        "EbsBurstCreditsRunningOut",
        "EbsBurstCreditsExhausted",
        "EbsVolumeAtCap",
    }
    for rule in on_volumes:
        expr = " ".join(rule["expr"].split())
        assert f"on(namespace, persistentvolumeclaim) group_left(pod) {CLAIM_PODS}" in expr
        assert f"unless on(namespace, persistentvolumeclaim) {CLAIM_PODS}" in expr
        assert "$labels.persistentvolumeclaim" in rule["annotations"]["summary"], rule["alert"]
        assert "$labels.pod" in rule["annotations"]["summary"], rule["alert"]


def test_promtool_checks_the_compose_prometheus_config():
    result = promtool("check", "config", str(DEPLOY / "prometheus" / "prometheus.yml"))
    assert result.returncode == 0, result.stdout + result.stderr


def served_metric_names() -> set[str]:
    names = set()
    for line in (GOLDEN / "metrics.prom").read_text().splitlines():
        if line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            names.add(name)
            if kind == "histogram":
                names |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
    return (
        names
        | served_with_a_budget()
        | served_with_accounts()
        | served_by_a_shard()
        | served_by_a_node()
    )


def served_by_a_node() -> set[str]:
    """What a node agent serves beside the daemon's own series: its reads of its volumes."""
    import prometheus_client

    from analyzer.node.agent import Reader
    from analyzer.node.source import NodeMetrics
    from analyzer.node.telemetry import NodeCollector

    registry = prometheus_client.CollectorRegistry()
    registry.register(NodeCollector(Reader(NodeMetrics("us-east-1"), 5), "node-a"))
    text = prometheus_client.generate_latest(registry).decode()
    assert 'ebs_analyzer_node_volumes{readable="false"} 0.0' in text
    return {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")}


def served_by_a_shard() -> set[str]:
    """What a shard of several serves beside the golden exposition (made whole)."""
    import prometheus_client

    from analyzer.deliver.exporter import exposition_for

    _, telemetry = exposition_for(lambda: None, process_metrics=False)
    telemetry.sharded(2, 3)
    text = prometheus_client.generate_latest(telemetry.registry).decode()
    assert 'ebs_analyzer_shards{shard="2"} 3.0' in text
    return {"ebs_analyzer_shards"}


def served_with_a_budget() -> set[str]:
    """What a daemon with a `budget` serves beside the golden exposition (made without one)."""
    import prometheus_client

    from analyzer.deliver.exporter import exposition_for

    _, telemetry = exposition_for(lambda: None, process_metrics=False)
    telemetry.budget_set(25.0)
    text = prometheus_client.generate_latest(telemetry.registry).decode()
    assert "ebs_analyzer_cloudwatch_budget_dollars_per_month 25.0" in text
    return {"ebs_analyzer_cloudwatch_budget_dollars_per_month"}


def served_with_accounts() -> set[str]:
    """What a daemon with `accounts:` or `organization:` serves beside the golden exposition
    (made without any): the series by account."""
    import prometheus_client

    from analyzer.deliver.exporter import exposition_for

    _, telemetry = exposition_for(lambda: None, process_metrics=False)
    telemetry.account_checked("111111111111", "prod", "denied")
    telemetry.account_bills({("111111111111", "prod", "us-east-1"): 12.5})
    text = prometheus_client.generate_latest(telemetry.registry).decode()
    assert 'ebs_analyzer_account_up{account_id="111111111111",account_name="prod"} 0.0' in text
    names = set()
    for line in text.splitlines():
        if line.startswith("# TYPE ") and "_account_" in line:
            names.add(line.split()[2])
    return names


def test_alert_rules_and_the_dashboard_use_only_metrics_the_exporter_serves():
    served = served_metric_names()
    rules_text = (DEPLOY / "prometheus" / "ebs-analyzer.rules.yml").read_text()
    dashboard = json.loads((DEPLOY / "grafana" / "dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if "definition" in v]
    used = set(re.findall(r"ebs_analyzer_[a-z_]+", rules_text + "\n".join(exprs)))
    assert used, "no metric found"
    assert used <= served, f"not served: {sorted(used - served)}"


def test_the_dashboard_covers_what_the_issue_asks_for():
    dashboard = json.loads((DEPLOY / "grafana" / "dashboard.json").read_text())
    text = json.dumps(dashboard)
    for metric in (
        "ebs_analyzer_volume_iops_limit",
        "ebs_analyzer_volume_throughput_limit",
        "ebs_analyzer_volume_burst_balance_ratio",
        "ebs_analyzer_volume_burst_seconds_to_empty",
        "ebs_analyzer_instance_ebs_throughput_limit",
        "ebs_analyzer_finding",
    ):
        assert metric in text
    assert dashboard["uid"] and dashboard["templating"]["list"][0]["type"] == "datasource"


def test_compose_passes_the_aws_chain_through_and_sets_nothing_empty():
    """`run` in compose takes keys, a session token or a profile from the shell; a variable
    the shell does not set is left out, never set to "" (an empty AWS_PROFILE names a
    profile called "")."""
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    environment = compose["services"]["analyzer"]["environment"]
    passed = {item for item in environment if "=" not in item}
    assert {
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
    } <= passed
    assert not [item for item in environment if item.endswith(":-}")]


def test_compose_mounts_files_that_exist_and_scrapes_the_analyzer():
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    assert {"analyzer", "prometheus"} <= set(compose["services"])
    for service in compose["services"].values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (DEPLOY / source).exists(), source
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    targets = config["scrape_configs"][0]["static_configs"][0]["targets"]
    assert targets == ["analyzer:9877"]


@pytest.mark.parametrize("path", sorted(str(p.relative_to(K8S)) for p in K8S.rglob("*.yaml")))
def test_manifests_are_valid_yaml(path):
    assert list(yaml.safe_load_all((K8S / path).read_text()))


def test_the_grace_period_covers_an_abandoned_cycle():
    """SIGTERM waits STOP_GRACE_S for a running cycle, then saves the state and exits: the
    orchestrator must not kill the process before that."""
    from analyzer.live.daemon import STOP_GRACE_S

    pod = manifests()["Deployment/ebs-bottleneck-analyzer"]["spec"]["template"]["spec"]
    assert STOP_GRACE_S + 5 <= pod["terminationGracePeriodSeconds"] <= 30
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    assert compose["services"]["analyzer"]["stop_grace_period"] == "20s"


def test_the_demo_names_the_for_of_the_shipped_forecast_rules():
    """The demo explains why Prometheus's forecast alerts wait: with the rules' own `for`."""
    from analyzer.demo import PROMETHEUS_FOR_S
    from analyzer.model.units import parse_duration

    plain = yaml.safe_load((DEPLOY / "prometheus" / "ebs-analyzer.rules.yml").read_text())
    forecasts = [
        rule
        for group in plain["groups"]
        for rule in group["rules"]
        if "seconds_to_empty" in rule["expr"]
    ]
    assert forecasts
    assert {parse_duration(rule["for"]) for rule in forecasts} == {PROMETHEUS_FOR_S}


# --- the node agent -------------------------------------------------------------------------

NODE_AGENT = "DaemonSet/ebs-bottleneck-analyzer-node"


def test_the_node_agent_overlay_adds_its_objects_only():
    operator, node = rendered("overlays/prometheus-operator"), rendered("overlays/node-agent")
    assert set(node) - set(operator) == {
        "ServiceAccount/ebs-bottleneck-analyzer-node",
        "Service/ebs-bottleneck-analyzer-node",
        NODE_AGENT,
        "ServiceMonitor/ebs-bottleneck-analyzer-node",
    }
    for name in operator:
        assert node[name] == operator[name], name
    for name in set(node) - set(operator):
        labels = node[name]["metadata"]["labels"]
        assert labels["app.kubernetes.io/component"] == "node", name
        assert node[name]["metadata"]["namespace"] == "ebs-analyzer", name
    assert (
        node["ServiceMonitor/ebs-bottleneck-analyzer-node"]["metadata"]["labels"]["release"]
        == "kube-prometheus-stack"
    )
    # The analyzer's own overlay starts no privileged pod.
    assert not [name for name in operator if name.startswith("DaemonSet/")]


def test_the_node_agent_gets_exactly_what_the_nvme_read_needs():
    daemonset = rendered("overlays/node-agent")[NODE_AGENT]
    assert daemonset["spec"]["updateStrategy"]["type"] == "RollingUpdate"
    pod = daemonset["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["serviceAccountName"] == "ebs-bottleneck-analyzer-node"
    assert pod["securityContext"] == {
        "runAsNonRoot": False,
        "runAsUser": 0,
        "runAsGroup": 0,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert pod["tolerations"] == [{"operator": "Exists"}]
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
    [container] = pod["containers"]
    assert container["securityContext"] == {
        "readOnlyRootFilesystem": True,
        "privileged": True,
        "allowPrivilegeEscalation": True,
        "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]},
    }
    assert container["command"] == ["ebs-analyzer"]
    args = container["args"]
    assert args[0] == "node"
    assert dict(zip(args[1::2], args[2::2], strict=True)) == {
        "--every": "5",
        "--dev-root": "/host/dev",
        "--sys-root": "/host/sys",
    }
    assert set(container["resources"]) == {"requests", "limits"}
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    volumes = {v["name"]: v for v in pod["volumes"]}
    hosts = {}
    for mount in container["volumeMounts"]:
        volume = volumes[mount["name"]]
        if "emptyDir" not in volume:
            assert mount["readOnly"] is True, mount
        if "hostPath" in volume:
            hosts[mount["mountPath"]] = volume["hostPath"]["path"]
    assert hosts == {"/host/dev": "/dev", "/host/sys": "/sys"}
    env = {e["name"]: e for e in container["env"]}
    assert env["NODE_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}


def test_the_node_agent_shares_the_analyzers_settings_rules_secret_and_image():
    found = rendered("overlays/node-agent")
    central = found["Deployment/ebs-bottleneck-analyzer"]["spec"]["template"]["spec"]
    node = found[NODE_AGENT]["spec"]["template"]["spec"]
    [central_container], [node_container] = central["containers"], node["containers"]
    assert node_container["envFrom"] == central_container["envFrom"]
    assert "ConfigMap/ebs-bottleneck-analyzer" in found
    central_env = {e["name"]: e for e in central_container["env"]}
    node_env = {e["name"]: e for e in node_container["env"]}
    assert node_env["SLACK_WEBHOOK_URL"] == central_env["SLACK_WEBHOOK_URL"]
    rules = {v["name"]: v for v in central["volumes"]}["rules"]
    assert {v["name"]: v for v in node["volumes"]}["rules"] == rules
    assert f"ConfigMap/{rules['configMap']['name']}" in found
    assert node_container["image"] == central_container["image"]
    labels = found[NODE_AGENT]["metadata"]["labels"]
    assert labels["app.kubernetes.io/version"] == package_version()
    assert set(labels) >= RECOMMENDED


def test_no_selector_of_the_analyzer_selects_a_node_pod():
    found = rendered("overlays/node-agent")
    node_pod = found[NODE_AGENT]["spec"]["template"]["metadata"]["labels"]
    central_pod = found["Deployment/ebs-bottleneck-analyzer"]["spec"]["template"]["metadata"][
        "labels"
    ]
    assert node_pod["app.kubernetes.io/component"] == "node"
    central = {
        "Deployment": found["Deployment/ebs-bottleneck-analyzer"]["spec"]["selector"][
            "matchLabels"
        ],
        "Service": found["Service/ebs-bottleneck-analyzer"]["spec"]["selector"],
    }
    for name, selector in central.items():
        assert selector.items() <= central_pod.items(), name
        assert not selector.items() <= node_pod.items(), name
    node = {
        "DaemonSet": found[NODE_AGENT]["spec"]["selector"]["matchLabels"],
        "Service": found["Service/ebs-bottleneck-analyzer-node"]["spec"]["selector"],
    }
    for name, selector in node.items():
        assert selector.items() <= node_pod.items(), name
        assert not selector.items() <= central_pod.items(), name
    # Each ServiceMonitor scrapes its own Service alone.
    services = {n: d for n, d in found.items() if n.startswith("Service/")}
    for monitor in ("ebs-bottleneck-analyzer", "ebs-bottleneck-analyzer-node"):
        selector = found[f"ServiceMonitor/{monitor}"]["spec"]["selector"]["matchLabels"]
        scraped = [
            n for n, s in services.items() if selector.items() <= s["metadata"]["labels"].items()
        ]
        assert scraped == [f"Service/{monitor}"]
    service = found["Service/ebs-bottleneck-analyzer-node"]["spec"]
    assert service["clusterIP"] == "None"
    [port] = service["ports"]
    endpoint = found["ServiceMonitor/ebs-bottleneck-analyzer-node"]["spec"]["endpoints"][0]
    assert endpoint["port"] == port["name"] == "metrics"
    assert port["port"] == 9877


def test_an_overlay_of_the_node_agent_points_both_at_a_pushed_image(tmp_path):
    overlay = tmp_path / "mine"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [os.path.relpath(K8S / "overlays" / "node-agent", overlay)],
                "images": [
                    {
                        "name": "ebs-bottleneck-analyzer",
                        "newName": "registry.example.com/team/ebs-bottleneck-analyzer",
                        "newTag": "9.9.9",
                    }
                ],
            }
        )
    )
    found = kustomize(overlay)
    for name in ("Deployment/ebs-bottleneck-analyzer", NODE_AGENT):
        [container] = found[name]["spec"]["template"]["spec"]["containers"]
        assert container["image"] == "registry.example.com/team/ebs-bottleneck-analyzer:9.9.9"
