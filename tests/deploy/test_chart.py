"""The Helm chart in deploy/helm: it lints, renders, locks the pod down, and what it renders
is what the analyzer reads (helm from the Go module proxy; .ci/run installs it)."""

from __future__ import annotations

import base64
import itertools
import json
import re
import runpy
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from analyzer import settings
from analyzer.analyze import rules
from analyzer.live.daemon import STOP_GRACE_S
from analyzer.model.units import parse_duration
from tests.helpers import external

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "ebs-bottleneck-analyzer"

EVERYTHING = {
    "image": {"repository": "123456789012.dkr.ecr.us-east-1.amazonaws.com/ebs", "tag": "9.9.9"},
    "regions": ["us-east-1", "eu-west-1"],
    "tags": ["team=db", "monitored"],
    "settings": {"interval": "2m", "budget": 40, "log_format": "json"},
    "rules": {
        "custom.yaml": {
            "rules": [
                {"id": "gp2-burst-exhaustion", "horizon": "2h"},
                {"id": "rds-memory-pressure", "enabled": False},
            ]
        }
    },
    "alertmanager": {"urls": ["http://am-0.monitoring:9093", "http://am-1.monitoring:9093"]},
    "slack": {"webhookUrl": "https://hooks.slack.com/services/T0/B0/x"},
    "serviceAccount": {
        "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ebs-analyzer"}
    },
    "persistence": {"enabled": True, "storageClass": "gp3"},
    "serviceMonitor": {"enabled": True, "additionalLabels": {"release": "monitoring"}},
    "prometheusRule": {"enabled": True, "additionalLabels": {"release": "monitoring"}},
}


def helm(*args: str, values: dict | None = None, tmp: Path | None = None):
    binary = external("helm", install="go install helm.sh/helm/v3/cmd/helm@v3.16.4")
    command = [binary, *args]
    if values is not None:
        assert tmp is not None
        path = tmp / "values.yaml"
        path.write_text(yaml.safe_dump(values))
        command += ["--values", str(path)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def render(
    tmp_path: Path, values: dict | None = None, release: str = "ebs", chart: Path = CHART
) -> dict[str, dict]:
    result = helm(
        "template", release, str(chart), "--namespace", "monitoring",
        values=values or {}, tmp=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return {
        f"{doc['kind']}/{doc['metadata']['name']}": doc
        for doc in yaml.safe_load_all(result.stdout)
        if doc
    }


def pod_of(found: dict[str, dict]) -> dict:
    return found["Deployment/ebs-bottleneck-analyzer"]["spec"]["template"]["spec"]


# --- lint and render --------------------------------------------------------------------


@pytest.mark.parametrize("values", [{}, EVERYTHING], ids=["defaults", "everything"])
def test_the_chart_lints_strictly(tmp_path, values):
    result = helm("lint", "--strict", str(CHART), values=values, tmp=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_by_default_it_renders_only_what_any_cluster_accepts(tmp_path):
    found = render(tmp_path)
    assert {name.split("/")[0] for name in found} == {
        "ServiceAccount",
        "ConfigMap",
        "Service",
        "Deployment",
    }


def test_the_pod_is_locked_down_and_probed(tmp_path):
    for values in ({}, EVERYTHING):
        found = render(tmp_path, values)
        deployment = found["Deployment/ebs-bottleneck-analyzer"]
        assert deployment["spec"]["replicas"] == 1
        assert deployment["spec"]["strategy"]["type"] == "Recreate"
        pod = pod_of(found)
        assert pod["automountServiceAccountToken"] is False
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
        assert STOP_GRACE_S + 5 <= pod["terminationGracePeriodSeconds"] <= 30
        [container] = pod["containers"]
        context = container["securityContext"]
        assert context["readOnlyRootFilesystem"] is True
        assert context["allowPrivilegeEscalation"] is False
        assert context["capabilities"]["drop"] == ["ALL"]
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
        assert set(container["resources"]) == {"requests", "limits"}
        mounts = {m["mountPath"] for m in container["volumeMounts"]}
        assert {"/var/lib/ebs-analyzer", "/tmp"} <= mounts


def test_labels_follow_the_recommended_set_and_selectors_hold_no_version(tmp_path):
    found = render(tmp_path, EVERYTHING)
    for name, doc in found.items():
        labels = doc["metadata"]["labels"]
        assert labels["app.kubernetes.io/name"] == "ebs-bottleneck-analyzer", name
        assert labels["app.kubernetes.io/instance"] == "ebs", name
        assert labels["app.kubernetes.io/managed-by"] == "Helm", name
        assert labels["app.kubernetes.io/version"] == package_version(), name
    selector = found["Deployment/ebs-bottleneck-analyzer"]["spec"]["selector"]["matchLabels"]
    assert selector == {
        "app.kubernetes.io/name": "ebs-bottleneck-analyzer",
        "app.kubernetes.io/instance": "ebs",
    }
    assert found["Service/ebs-bottleneck-analyzer"]["spec"]["selector"] == selector
    monitor = found["ServiceMonitor/ebs-bottleneck-analyzer"]
    assert monitor["spec"]["selector"]["matchLabels"] == selector
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics"


# --- names -------------------------------------------------------------------------------

RELEASES = [
    ("ebs", "ebs-bottleneck-analyzer"),
    ("prod", "prod-ebs-bottleneck-analyzer"),
    ("ebs-bottleneck-analyzer-prod", "ebs-bottleneck-analyzer-prod"),
]


@pytest.mark.parametrize(("release", "fullname"), RELEASES)
def test_objects_are_named_after_the_release_with_no_word_said_twice(tmp_path, release, fullname):
    found = render(tmp_path, EVERYTHING, release=release)
    for key in found:
        name = key.partition("/")[2]
        assert name in {fullname, f"{fullname}-rules", f"{fullname}-slack"}, key
        words = name.split("-")
        assert all(a != b for a, b in itertools.pairwise(words)), key


@pytest.mark.parametrize(("release", "fullname"), RELEASES)
def test_every_name_the_objects_refer_to_is_an_object_of_the_release(tmp_path, release, fullname):
    found = render(tmp_path, EVERYTHING, release=release)
    pod = found[f"Deployment/{fullname}"]["spec"]["template"]["spec"]
    assert f"ServiceAccount/{pod['serviceAccountName']}" in found
    for volume in pod["volumes"]:
        if "configMap" in volume:
            assert f"ConfigMap/{volume['configMap']['name']}" in found
        if "persistentVolumeClaim" in volume:
            assert f"PersistentVolumeClaim/{volume['persistentVolumeClaim']['claimName']}" in found
    [container] = pod["containers"]
    for env in container["env"]:
        if "secretKeyRef" in env.get("valueFrom", {}):
            assert f"Secret/{env['valueFrom']['secretKeyRef']['name']}" in found
    service = found[f"Service/{fullname}"]
    monitor = found[f"ServiceMonitor/{fullname}"]["spec"]
    assert monitor["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["endpoints"][0]["port"] in {port["name"] for port in service["spec"]["ports"]}
    assert f"PrometheusRule/{fullname}" in found


def rendered_notes(
    tmp_path: Path, values: dict | None = None, release: str = "ebs"
) -> tuple[str, dict[str, dict]]:
    """NOTES.txt as `helm install` shows it (helm template leaves it out), and the rest of
    the rendering: the notes are rendered through a ConfigMap of a copy of the chart."""
    chart = tmp_path / "chart"
    shutil.copytree(CHART, chart)
    notes = (chart / "templates" / "NOTES.txt").read_text()
    (chart / "templates" / "NOTES.txt").unlink()
    (chart / "templates" / "_notes.tpl").write_text(
        f'{{{{- define "notes" -}}}}{notes}{{{{- end }}}}'
    )
    (chart / "templates" / "notes.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: |\n"
        '    {{- include "notes" . | nindent 4 }}\n'
    )
    found = render(tmp_path, values, release=release, chart=chart)
    return found["ConfigMap/notes"]["data"]["notes"], found


@pytest.mark.parametrize(("release", "fullname"), RELEASES)
def test_the_notes_name_the_service(tmp_path, release, fullname):
    text, found = rendered_notes(tmp_path, release=release)
    assert f"port-forward svc/{fullname} 9877" in text
    assert f"Service/{fullname}" in found


# --- what the values turn into ----------------------------------------------------------


def test_the_rendered_settings_and_rules_are_what_the_analyzer_loads(tmp_path, monkeypatch):
    found = render(tmp_path, EVERYTHING)
    config = tmp_path / "config.yaml"
    config.write_text(found["ConfigMap/ebs-bottleneck-analyzer"]["data"]["config.yaml"])
    loaded = settings.load({}, config)
    assert loaded.region == ("us-east-1", "eu-west-1")
    assert loaded.tag == ("team=db", "monitored")
    assert loaded.interval == 120
    assert loaded.budget == 40
    assert loaded.alertmanager_url == ("http://am-0.monitoring:9093", "http://am-1.monitoring:9093")
    assert loaded.state_file == Path("/var/lib/ebs-analyzer/state.json")
    assert loaded.rules == ("builtin", "/etc/ebs-analyzer/rules")

    directory = tmp_path / "rules"
    directory.mkdir()
    for name, text in found["ConfigMap/ebs-bottleneck-analyzer-rules"]["data"].items():
        (directory / name).write_text(text)
    in_force = {r.id: r for r in rules.load([Path("builtin"), directory]).rules}
    assert in_force["gp2-burst-exhaustion"].horizon == 7200
    assert "rds-memory-pressure" not in in_force
    assert len(in_force) == len(rules.load().rules) - 1

    pod = pod_of(found)
    [container] = pod["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert env["EBS_ANALYZER_CONFIG"]["value"] == "/etc/ebs-analyzer/config.yaml"
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/etc/ebs-analyzer/config.yaml"]["subPath"] == "config.yaml"
    assert "/etc/ebs-analyzer/rules" in mounts


def test_the_slack_webhook_lives_in_a_secret(tmp_path):
    found = render(tmp_path, EVERYTHING)
    secret = found["Secret/ebs-bottleneck-analyzer-slack"]
    url = base64.b64decode(secret["data"]["webhook-url"]).decode()
    assert url == EVERYTHING["slack"]["webhookUrl"]
    [container] = pod_of(found)["containers"]
    slack = next(e for e in container["env"] if e["name"] == "SLACK_WEBHOOK_URL")
    assert slack["valueFrom"]["secretKeyRef"] == {
        "name": "ebs-bottleneck-analyzer-slack",
        "key": "webhook-url",
    }
    # The webhook never reaches the settings ConfigMap.
    assert url not in json.dumps(found["ConfigMap/ebs-bottleneck-analyzer"])


def test_an_existing_secret_is_used_as_it_is(tmp_path):
    found = render(
        tmp_path, {"slack": {"existingSecret": "team-slack", "existingSecretKey": "url"}}
    )
    assert not any(name.startswith("Secret/") for name in found)
    [container] = pod_of(found)["containers"]
    slack = next(e for e in container["env"] if e["name"] == "SLACK_WEBHOOK_URL")
    assert slack["valueFrom"]["secretKeyRef"] == {"name": "team-slack", "key": "url"}


def test_slack_approvals_take_the_signing_secret_from_the_secret_and_name_the_approvers(tmp_path):
    values = {
        "slack": {**EVERYTHING["slack"], "signingSecret": "8f742231b10e8888abcd"},
        "apply": {"approvers": ["U0APPROVER", "U0OTHER"]},
    }
    found = render(tmp_path, values)
    secret = found["Secret/ebs-bottleneck-analyzer-slack"]
    assert base64.b64decode(secret["data"]["signing-secret"]).decode() == "8f742231b10e8888abcd"
    [container] = pod_of(found)["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert env["SLACK_SIGNING_SECRET"]["valueFrom"]["secretKeyRef"] == {
        "name": "ebs-bottleneck-analyzer-slack",
        "key": "signing-secret",
    }
    assert env["EBS_ANALYZER_APPLY_APPROVERS"]["value"] == "U0APPROVER,U0OTHER"
    assert "8f742231b10e8888abcd" not in json.dumps(found["ConfigMap/ebs-bottleneck-analyzer"])
    # Without approvers, no Apply button: the signing secret is not handed to the pod.
    [container] = pod_of(render(tmp_path, {"slack": values["slack"]}))["containers"]
    assert "SLACK_SIGNING_SECRET" not in {e["name"] for e in container["env"]}


def test_claims_through_the_kubernetes_api_get_a_cluster_role_for_exactly_that(tmp_path):
    assert not any(k.startswith("ClusterRole") for k in render(tmp_path))
    found = render(tmp_path, {"apply": {"kubernetes": True, "cluster": "prod"}})
    role = found["ClusterRole/ebs-bottleneck-analyzer-apply"]
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["get", "patch"]},
        {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get"]},
        {
            "apiGroups": ["storage.k8s.io"],
            "resources": ["volumeattributesclasses"],
            "verbs": ["get", "create"],
        },
    ]
    binding = found["ClusterRoleBinding/ebs-bottleneck-analyzer-apply"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "ebs-bottleneck-analyzer", "namespace": "monitoring"}
    ]
    pod = pod_of(found)
    assert pod["automountServiceAccountToken"] is True
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["EBS_ANALYZER_APPLY_THROUGH_KUBERNETES"] == "true"
    assert env["EBS_ANALYZER_KUBERNETES_CLUSTER"] == "prod"


def test_without_slack_no_secret_is_referenced(tmp_path):
    [container] = pod_of(render(tmp_path))["containers"]
    assert "SLACK_WEBHOOK_URL" not in {e["name"] for e in container["env"]}


def test_irsa_image_and_persistence(tmp_path):
    found = render(tmp_path, EVERYTHING)
    account = found["ServiceAccount/ebs-bottleneck-analyzer"]
    assert account["metadata"]["annotations"] == EVERYTHING["serviceAccount"]["annotations"]
    pod = pod_of(found)
    assert pod["serviceAccountName"] == "ebs-bottleneck-analyzer"
    [container] = pod["containers"]
    assert container["image"] == "123456789012.dkr.ecr.us-east-1.amazonaws.com/ebs:9.9.9"
    claim = found["PersistentVolumeClaim/ebs-bottleneck-analyzer"]
    assert claim["spec"]["storageClassName"] == "gp3"
    state = next(v for v in pod["volumes"] if v["name"] == "state")
    assert state["persistentVolumeClaim"]["claimName"] == "ebs-bottleneck-analyzer"

    digest = "sha256:" + "a" * 64
    pinned = render(tmp_path, {"image": {"repository": "r/ebs", "digest": digest}})
    [container] = pod_of(pinned)["containers"]
    assert container["image"] == f"r/ebs@{digest}"
    [container] = pod_of(render(tmp_path))["containers"]
    assert container["image"] == f"ebs-bottleneck-analyzer:{package_version()}"


def test_a_changed_setting_restarts_the_pod(tmp_path):
    def checksum(values):
        found = render(tmp_path, values)
        metadata = found["Deployment/ebs-bottleneck-analyzer"]["spec"]["template"]
        return metadata["metadata"]["annotations"]["checksum/config"]

    assert checksum({}) != checksum({"settings": {"interval": "5m"}})


def test_the_prometheus_rule_is_the_shipped_rules_file(tmp_path):
    plain = ROOT / "deploy" / "prometheus" / "ebs-analyzer.rules.yml"
    assert (CHART / "files" / "ebs-analyzer.rules.yml").read_text() == plain.read_text()
    rule = render(tmp_path, EVERYTHING)["PrometheusRule/ebs-bottleneck-analyzer"]
    assert rule["spec"] == yaml.safe_load(plain.read_text())
    assert rule["metadata"]["labels"]["release"] == "monitoring"


# --- mistakes -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"imag": {"tag": "x"}}, "Additional property imag is not allowed"),
        ({"serviceMonitor": {"enable": True}}, "Additional property enable is not allowed"),
        ({"regions": ["us-east-1a"]}, "regions.0"),
        ({"alertmanager": {"urls": ["am:9093"]}}, "alertmanager.urls.0"),
        ({"settings": {"region": "us-east-1"}}, "settings.region: set it with the chart's regions"),
    ],
)
def test_a_mistake_in_the_values_fails_the_install_and_says_where(tmp_path, values, message):
    result = helm("template", "ebs", str(CHART), values=values, tmp=tmp_path)
    assert result.returncode != 0
    assert message in result.stderr


# --- the settings' schema -------------------------------------------------------------------

SCHEMA_SCRIPT = ROOT / "scripts" / "chart-schema"

# Every kind of setting: durations as text and as seconds, an enum, a bounded number, a nested
# object, a path and a flag.
SETTINGS = {
    "interval": "5m",
    "inventory_interval": 900,
    "lookback": "1.5h",
    "settle_delay": "90s",
    "polling": "full",
    "hot_utilization": 0.8,
    "budget": 50,
    "notify_severity": "critical",
    "repeat_interval": "1d",
    "alertmanager_basic_auth": {"username": "ebs", "password_file": "/etc/am/password"},
    "prices": "/etc/ebs-analyzer/prices.yaml",
    "dry_run": True,
    "runbook_url": "https://wiki.example.com/ebs-analyzer#alerts",
    "log_format": "console",
}


def test_the_settings_schema_is_the_one_the_settings_model_writes():
    """values.schema.json's `settings` is written by scripts/chart-schema from the settings
    model: after a change to the settings, run it and commit the schema."""
    written = runpy.run_path(str(SCHEMA_SCRIPT))["values_schema"]()
    assert (CHART / "values.schema.json").read_text() == written, "run scripts/chart-schema"


def test_the_schema_names_every_setting_and_no_other():
    schema = json.loads((CHART / "values.schema.json").read_text())["properties"]["settings"]
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(settings.Settings.model_fields)


@pytest.mark.parametrize(
    "text",
    ["60", "60s", "5m", "1h", "1.5h", "2d", "500ms", " 15m ", "15 m",
     "1h30m", "soon", "5M", "-5m", "m", "1.m", "", "5 minutes"],
)  # fmt: skip
def test_the_schemas_duration_reads_what_the_analyzer_reads(text):
    schema = json.loads((CHART / "values.schema.json").read_text())
    [_, as_text] = schema["properties"]["settings"]["properties"]["interval"]["anyOf"]
    try:
        parse_duration(text)
    except ValueError:
        accepted = False
    else:
        accepted = True
    assert bool(re.search(as_text["pattern"], text)) is accepted


def test_valid_settings_lint_and_are_what_the_analyzer_loads(tmp_path):
    values = {"settings": SETTINGS}
    result = helm("lint", "--strict", str(CHART), values=values, tmp=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    config = tmp_path / "config.yaml"
    config.write_text(
        render(tmp_path, values)["ConfigMap/ebs-bottleneck-analyzer"]["data"]["config.yaml"]
    )
    loaded = settings.load({}, config)
    assert loaded.interval == 300
    assert loaded.lookback == 5400
    assert loaded.alertmanager_basic_auth is not None


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("settings.intervall=60", "settings: Additional property intervall is not allowed"),
        ("settings.interval=soon", "settings.interval: Does not match pattern"),
        ("settings.interval=1h30m", "settings.interval: Does not match pattern"),
        ("settings.interval=0", "settings.interval: Must be greater than or equal to 1"),
        ("settings.polling=sometimes", "settings.polling must be one of the following"),
        ("settings.hot_utilization=2", "settings.hot_utilization: Must be less than or equal"),
        ("settings.dry_run=maybe", "settings.dry_run: Invalid type"),
        ("settings.alertmanager_basic_auth.user=ebs", "Additional property user is not allowed"),
    ],
)
def test_helm_lint_rejects_a_setting_the_analyzer_would_reject(setting, message):
    result = helm("lint", "--strict", str(CHART), "--set", setting)
    assert result.returncode != 0
    assert message in result.stdout


@pytest.mark.parametrize("setting", ["settings.intervall=60", "settings.interval=soon"])
def test_so_does_helm_template(setting):
    result = helm("template", "ebs", str(CHART), "--set", setting)
    assert result.returncode != 0
    assert setting.partition("=")[0].partition(".")[2] in result.stderr


def test_the_chart_runs_the_packages_version():
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["appVersion"] == package_version()


def package_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


# --- shards and HA pairs ----------------------------------------------------------------------

HA = {"shards": 3, "replicasPerShard": 2, "alertmanager": EVERYTHING["alertmanager"]}
SHARD = "ebs-analyzer/shard"


def of_kind(found: dict[str, dict], kind: str) -> dict[str, dict]:
    return {name.partition("/")[2]: doc for name, doc in found.items() if name.startswith(kind)}


def env_of(pod: dict) -> dict[str, dict]:
    [container] = pod["containers"]
    return {e["name"]: e for e in container["env"]}


@pytest.mark.parametrize(
    "values",
    [HA, {**EVERYTHING, **HA, "slack": {}}, {"shards": 3}],
    ids=["ha", "ha-everything", "shards"],
)
def test_sharded_charts_lint_strictly(tmp_path, values):
    result = helm("lint", "--strict", str(CHART), values=values, tmp=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_each_shard_is_a_statefulset_of_its_replicas(tmp_path):
    found = render(tmp_path, HA)
    assert not of_kind(found, "Deployment")
    sets = of_kind(found, "StatefulSet")
    assert sorted(sets) == [f"ebs-bottleneck-analyzer-shard-{i}" for i in range(3)]
    shards = []
    for name, workload in sets.items():
        spec = workload["spec"]
        assert spec["replicas"] == 2
        assert f"Service/{spec['serviceName']}" in found
        shard = spec["selector"]["matchLabels"][SHARD]
        assert name.endswith(f"-{shard}")
        assert (
            spec["template"]["metadata"]["labels"].items()
            >= spec["selector"]["matchLabels"].items()
        )
        env = env_of(spec["template"]["spec"])
        assert env["EBS_ANALYZER_SHARD"]["value"] == shard
        assert env["EBS_ANALYZER_TOTAL_SHARDS"]["value"] == "3"
        assert env["POD_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
        shards.append(int(shard))
    assert sorted(shards) == [0, 1, 2]


def test_a_shards_pod_is_the_deployments_pod_with_its_shard(tmp_path):
    single = pod_of(render(tmp_path, EVERYTHING))
    values = {**EVERYTHING, **HA, "slack": {}, "persistence": {"enabled": False}}
    workload = render(tmp_path, values)["StatefulSet/ebs-bottleneck-analyzer-shard-1"]
    pod = workload["spec"]["template"]["spec"]
    for key in ("serviceAccountName", "securityContext", "terminationGracePeriodSeconds"):
        assert pod[key] == single[key], key
    [container] = pod["containers"]
    [expected] = single["containers"]
    for key in ("image", "ports", "readinessProbe", "livenessProbe", "resources", "volumeMounts"):
        assert container[key] == expected[key], key
    shared = {k: v for k, v in env_of(pod).items() if k not in {"SLACK_WEBHOOK_URL"}}
    added = {"EBS_ANALYZER_SHARD", "EBS_ANALYZER_TOTAL_SHARDS", "POD_NAME"}
    assert set(shared) - added == set(env_of(single)) - {"SLACK_WEBHOOK_URL"}
    assert {v["name"]: v for v in pod["volumes"]}["state"] == {"name": "state", "emptyDir": {}}


def test_the_headless_service_and_the_monitor_reach_every_pod_once(tmp_path):
    found = render(tmp_path, {**HA, "serviceMonitor": {"enabled": True}})
    headless = found["Service/ebs-bottleneck-analyzer-headless"]
    assert headless["spec"]["clusterIP"] == "None"
    assert [p["name"] for p in headless["spec"]["ports"]] == ["metrics"]
    for workload in of_kind(found, "StatefulSet").values():
        labels = workload["spec"]["template"]["metadata"]["labels"]
        assert headless["spec"]["selector"].items() <= labels.items()
    selector = found["ServiceMonitor/ebs-bottleneck-analyzer"]["spec"]["selector"]["matchLabels"]
    services = of_kind(found, "Service/")
    scraped = [
        n for n, s in services.items() if selector.items() <= s["metadata"]["labels"].items()
    ]
    assert scraped == ["ebs-bottleneck-analyzer-headless"]


def test_each_pair_has_a_disruption_budget_and_keeps_apart(tmp_path):
    found = render(tmp_path, HA)
    budgets = of_kind(found, "PodDisruptionBudget")
    assert len(budgets) == 3
    for name, workload in of_kind(found, "StatefulSet").items():
        selector = workload["spec"]["selector"]["matchLabels"]
        assert budgets[name]["spec"] == {"maxUnavailable": 1, "selector": {"matchLabels": selector}}
        anti = workload["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
        [preferred] = anti["preferredDuringSchedulingIgnoredDuringExecution"]
        term = preferred["podAffinityTerm"]
        assert term["labelSelector"]["matchLabels"] == selector
        assert SHARD in selector
        assert term["topologyKey"] == "kubernetes.io/hostname"
        assert "requiredDuringSchedulingIgnoredDuringExecution" not in anti


def test_anti_affinity_can_be_required_and_joins_the_affinity_value(tmp_path):
    zone = {"key": "zone", "operator": "In", "values": ["a"]}
    user = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [zone]}]
            }
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}
            ]
        },
    }
    values = {**HA, "affinity": user, "replicaAntiAffinity": {"type": "required"}}
    found = render(tmp_path, values)
    for workload in of_kind(found, "StatefulSet").values():
        affinity = workload["spec"]["template"]["spec"]["affinity"]
        assert affinity["nodeAffinity"] == user["nodeAffinity"]
        theirs, ours = affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert (
            theirs == user["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
        )
        assert ours["labelSelector"]["matchLabels"] == workload["spec"]["selector"]["matchLabels"]


def test_shards_of_one_replica_have_no_budget_and_no_anti_affinity(tmp_path):
    found = render(tmp_path, {"shards": 3})
    assert not of_kind(found, "Deployment")
    assert not of_kind(found, "PodDisruptionBudget")
    sets = of_kind(found, "StatefulSet")
    assert len(sets) == 3
    for workload in sets.values():
        assert workload["spec"]["replicas"] == 1
        assert "affinity" not in workload["spec"]["template"]["spec"]
    # One replica may send to Slack itself.
    render(tmp_path, {"shards": 3, "slack": {"webhookUrl": "https://hooks.slack.com/x"}})


def test_each_replica_claims_its_own_state(tmp_path):
    found = render(tmp_path, {**HA, "persistence": {"enabled": True, "storageClass": "gp3"}})
    assert not of_kind(found, "PersistentVolumeClaim")
    for workload in of_kind(found, "StatefulSet").values():
        [claim] = workload["spec"]["volumeClaimTemplates"]
        assert claim["metadata"]["name"] == "state"
        assert claim["spec"]["storageClassName"] == "gp3"
        pod = workload["spec"]["template"]["spec"]
        assert "state" not in {v["name"] for v in pod["volumes"]}
        [container] = pod["containers"]
        assert "state" in {m["name"] for m in container["volumeMounts"]}


def test_one_shard_of_one_replica_renders_what_the_defaults_render(tmp_path):
    assert render(tmp_path, {"shards": 1, "replicasPerShard": 1}) == render(tmp_path)
    assert render(tmp_path, {**EVERYTHING, "shards": 1}) == render(tmp_path, EVERYTHING)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {**HA, "slack": {"webhookUrl": "https://hooks.slack.com/x"}},
            "replicasPerShard is 2: each replica would post every alert to Slack "
            "(slack.webhookUrl)",
        ),
        (
            {**HA, "slack": {"existingSecret": "team-slack"}},
            "Slack (slack.existingSecret); unset it and send Slack from Alertmanager",
        ),
        (
            {**HA, "extraEnv": [{"name": "SLACK_WEBHOOK_URL", "value": "https://x"}]},
            "Slack (extraEnv SLACK_WEBHOOK_URL)",
        ),
        (
            {"shards": 3, "replicasPerShard": 2},
            "replicasPerShard is 2 and alertmanager.urls is empty: point every replica at "
            "every Alertmanager",
        ),
    ],
    ids=["slack", "slack-secret", "slack-env", "no-alertmanager"],
)
def test_a_pair_alerts_through_alertmanager_only(tmp_path, values, message):
    result = helm("template", "ebs", str(CHART), values=values, tmp=tmp_path)
    assert result.returncode != 0
    assert message in result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.startswith("Error:")]
    assert message in line


def test_the_notes_say_how_many_shards_and_replicas(tmp_path):
    assert "Installed 3 shards of 2 replicas each, 6 pods" in rendered_notes(tmp_path, HA)[0]
    (tmp_path / "default").mkdir()
    notes, _ = rendered_notes(tmp_path / "default")
    assert "Installed 1 shard of 1 replica: the Deployment" in notes


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"shards": 0}, "shards: Must be greater than or equal to 1"),
        ({"replicasPerShard": 0}, "replicasPerShard: Must be greater than or equal to 1"),
        ({"settings": {"total_shards": 2}}, "settings.total_shards: set it with the chart's"),
        (
            {"shards": 2, "persistence": {"enabled": True, "existingClaim": "mine"}},
            "persistence.existingClaim",
        ),
    ],
)
def test_a_mistake_in_the_shard_values_fails_the_install_and_says_where(tmp_path, values, message):
    result = helm("template", "ebs", str(CHART), values=values, tmp=tmp_path)
    assert result.returncode != 0
    assert message in result.stderr


# --- the node agent --------------------------------------------------------------------------

NODE = {"node": {"enabled": True}}
NODE_NAME = "ebs-bottleneck-analyzer-node"


def node_pod_of(found: dict[str, dict]) -> dict:
    return found[f"DaemonSet/{NODE_NAME}"]["spec"]["template"]


def selects(selector: dict, labels: dict) -> bool:
    return selector.items() <= labels.items()


def central_selectors(found: dict[str, dict]) -> dict[str, dict]:
    """Every selector of the analyzer's objects, by where it is."""
    selectors = {}
    for name, doc in found.items():
        kind = name.partition("/")[0]
        spec = doc.get("spec", {})
        if name.endswith("-node"):
            continue
        if kind in {"Deployment", "StatefulSet", "PodDisruptionBudget"}:
            selectors[name] = spec["selector"]["matchLabels"]
        elif kind == "Service":
            selectors[name] = spec["selector"]
        affinity = spec.get("template", {}).get("spec", {}).get("affinity", {})
        for term in affinity.get("podAntiAffinity", {}).get(
            "preferredDuringSchedulingIgnoredDuringExecution", []
        ):
            selectors[f"{name} anti-affinity"] = term["podAffinityTerm"]["labelSelector"][
                "matchLabels"
            ]
    return selectors


@pytest.mark.parametrize(
    "values",
    [NODE, {**EVERYTHING, **NODE}, {**HA, **NODE}, {**EVERYTHING, **HA, "slack": {}, **NODE}],
    ids=["node", "node-everything", "node-ha", "node-ha-everything"],
)
def test_the_chart_lints_strictly_with_the_node_agent(tmp_path, values):
    result = helm("lint", "--strict", str(CHART), values=values, tmp=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    render(tmp_path, values)


def test_by_default_there_is_no_node_agent(tmp_path):
    assert not [name for name in render(tmp_path, EVERYTHING) if "node" in name]


def test_the_node_pod_gets_exactly_what_the_nvme_read_needs(tmp_path):
    for values in (NODE, {**EVERYTHING, **NODE}):
        template = node_pod_of(render(tmp_path, values))
        pod = template["spec"]
        assert pod["automountServiceAccountToken"] is False
        assert pod["securityContext"] == {
            "runAsNonRoot": False,
            "runAsUser": 0,
            "runAsGroup": 0,
            "seccompProfile": {"type": "RuntimeDefault"},
        }
        [container] = pod["containers"]
        assert container["securityContext"] == {
            "readOnlyRootFilesystem": True,
            "privileged": True,
            "allowPrivilegeEscalation": True,
            "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]},
        }
        assert set(container["resources"]) == {"requests", "limits"}
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
        writable = {"/var/lib/ebs-analyzer", "/tmp"}
        for mount in container["volumeMounts"]:
            assert mount.get("readOnly") is True or mount["mountPath"] in writable, mount
        volumes = {v["name"]: v for v in pod["volumes"]}
        hosts = {
            m["mountPath"]: volumes[m["name"]]["hostPath"]["path"]
            for m in container["volumeMounts"]
            if "hostPath" in volumes[m["name"]]
        }
        assert hosts == {"/host/dev": "/dev", "/host/sys": "/sys"}
        for name in ("state", "tmp"):
            assert volumes[name] == {"name": name, "emptyDir": {}}


def test_without_privileged_the_node_pod_keeps_only_its_capability(tmp_path):
    found = render(tmp_path, {"node": {"enabled": True, "privileged": False}})
    [container] = node_pod_of(found)["spec"]["containers"]
    assert container["securityContext"] == {
        "readOnlyRootFilesystem": True,
        "privileged": False,
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]},
    }


def test_the_node_pod_runs_the_node_command_on_the_hosts_devices(tmp_path):
    found = render(tmp_path, {"node": {"enabled": True, "every": 2}})
    pod = node_pod_of(found)["spec"]
    [container] = pod["containers"]
    assert container["command"] == ["ebs-analyzer"]
    args = container["args"]
    assert args[0] == "node"
    assert dict(zip(args[1::2], args[2::2], strict=True)) == {
        "--every": "2",
        "--dev-root": "/host/dev",
        "--sys-root": "/host/sys",
    }
    env = env_of(pod)
    assert env["NODE_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}
    assert container["ports"] == [{"name": "metrics", "containerPort": 9877, "protocol": "TCP"}]


def test_the_node_pod_shares_the_analyzers_settings_rules_and_secret(tmp_path):
    values = {**EVERYTHING, **NODE}
    found = render(tmp_path, values)
    central, node = pod_of(found), node_pod_of(found)["spec"]
    [central_container], [node_container] = central["containers"], node["containers"]
    for key in ("image", "imagePullPolicy"):
        assert node_container[key] == central_container[key], key
    configs = {v["name"]: v["configMap"]["name"] for v in central["volumes"] if "configMap" in v}
    assert configs == {
        "config": "ebs-bottleneck-analyzer",
        "rules": "ebs-bottleneck-analyzer-rules",
    }
    for volume in node["volumes"]:
        if "configMap" in volume:
            assert configs[volume["name"]] == volume["configMap"]["name"]
    mounts = {m["name"]: m for m in central_container["volumeMounts"]}
    for mount in node_container["volumeMounts"]:
        if mount["name"] in configs:
            assert mount == mounts[mount["name"]]
    for name in ("EBS_ANALYZER_CONFIG", "SLACK_WEBHOOK_URL"):
        assert env_of(node)[name] == env_of(central)[name], name
    assert (
        f"Secret/{env_of(node)['SLACK_WEBHOOK_URL']['valueFrom']['secretKeyRef']['name']}" in found
    )
    # A changed setting restarts the node pods as it restarts the analyzer's.
    checksum = node_pod_of(found)["metadata"]["annotations"]["checksum/config"]
    assert (
        checksum
        == found["Deployment/ebs-bottleneck-analyzer"]["spec"]["template"]["metadata"][
            "annotations"
        ]["checksum/config"]
    )


def test_the_node_agent_has_its_own_identity_placement_and_updates(tmp_path):
    role = {"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ebs-node"}
    toleration = {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}
    values = {
        **EVERYTHING,
        "node": {
            "enabled": True,
            "serviceAccount": {"annotations": role},
            "tolerations": [toleration],
            "nodeSelector": {"role": "db"},
            "affinity": {"nodeAffinity": {}},
            "priorityClassName": "system-node-critical",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}},
            "env": [{"name": "EBS_ANALYZER_LOG_LEVEL", "value": "debug"}],
        },
    }
    found = render(tmp_path, values)
    account = found[f"ServiceAccount/{NODE_NAME}"]
    assert account["metadata"]["annotations"] == role
    assert account["automountServiceAccountToken"] is False
    daemonset = found[f"DaemonSet/{NODE_NAME}"]["spec"]
    assert daemonset["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 2},
    }
    pod = daemonset["template"]["spec"]
    assert pod["serviceAccountName"] == NODE_NAME
    assert pod["tolerations"] == [toleration]
    # Helm merges maps: the default's key stays unless set to null.
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux", "role": "db"}
    assert pod["affinity"] == {"nodeAffinity": {}}
    assert pod["priorityClassName"] == "system-node-critical"
    assert env_of(pod)["EBS_ANALYZER_LOG_LEVEL"]["value"] == "debug"
    # The analyzer keeps its own identity.
    assert found["ServiceAccount/ebs-bottleneck-analyzer"]["metadata"]["annotations"] != role

    defaults = node_pod_of(render(tmp_path, NODE))["spec"]
    assert defaults["tolerations"] == [{"operator": "Exists"}]
    assert defaults["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert "priorityClassName" not in defaults and "affinity" not in defaults
    strategy = render(tmp_path, NODE)[f"DaemonSet/{NODE_NAME}"]["spec"]["updateStrategy"]
    assert strategy == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}}


@pytest.mark.parametrize(
    "values",
    [{**EVERYTHING, **NODE}, {**EVERYTHING, **HA, "slack": {}, **NODE}, {**HA, **NODE}],
    ids=["single", "ha-everything", "ha"],
)
def test_no_selector_of_the_analyzer_selects_a_node_pod(tmp_path, values):
    found = render(tmp_path, {**values, "serviceMonitor": {"enabled": True}})
    labels = node_pod_of(found)["metadata"]["labels"]
    assert labels["app.kubernetes.io/component"] == "node"
    selectors = central_selectors(found)
    assert any(name.startswith("Service/") for name in selectors)
    assert {name for name, s in selectors.items() if selects(s, labels)} == set()
    # The node agent's selectors select no pod of the analyzer's.
    analyzer_pods = [
        doc["spec"]["template"]["metadata"]["labels"]
        for name, doc in found.items()
        if name.partition("/")[0] in {"Deployment", "StatefulSet"}
    ]
    assert analyzer_pods
    daemonset = found[f"DaemonSet/{NODE_NAME}"]["spec"]["selector"]["matchLabels"]
    service = found[f"Service/{NODE_NAME}"]["spec"]["selector"]
    assert selects(daemonset, labels) and selects(service, labels)
    for pod in analyzer_pods:
        assert not selects(daemonset, pod) and not selects(service, pod)


def test_the_node_monitor_scrapes_the_node_pods_only(tmp_path):
    found = render(tmp_path, {**EVERYTHING, **NODE})
    services = of_kind(found, "Service/")
    monitors = of_kind(found, "ServiceMonitor")
    scraped = {
        monitor: sorted(
            name
            for name, service in services.items()
            if selects(spec["spec"]["selector"]["matchLabels"], service["metadata"]["labels"])
        )
        for monitor, spec in monitors.items()
    }
    assert scraped == {
        "ebs-bottleneck-analyzer": ["ebs-bottleneck-analyzer"],
        NODE_NAME: [NODE_NAME],
    }
    service = services[NODE_NAME]["spec"]
    assert service["clusterIP"] == "None"
    assert service["selector"] == found[f"DaemonSet/{NODE_NAME}"]["spec"]["selector"]["matchLabels"]
    [endpoint] = monitors[NODE_NAME]["spec"]["endpoints"]
    assert endpoint["port"] == "metrics"
    assert endpoint["relabelings"][0]["targetLabel"] == "node"
    assert monitors[NODE_NAME]["metadata"]["labels"]["release"] == "monitoring"
    # Without the Prometheus Operator, the headless Service alone.
    assert not of_kind(render(tmp_path, NODE), "ServiceMonitor")


@pytest.mark.parametrize(
    "values", [{**EVERYTHING, **NODE}, {**EVERYTHING, **NODE, **HA, "slack": {}}]
)
def test_every_monitor_keeps_the_labels_the_analyzer_sets(tmp_path, values):
    """A claim's volume is labelled with the claim's `namespace`, kube-state-metrics' label
    name: Prometheus keeps it only with honorLabels, or renames it `exported_namespace` and
    sets the scraped pod's namespace instead."""
    monitors = of_kind(render(tmp_path, values), "ServiceMonitor")
    assert set(monitors) == {"ebs-bottleneck-analyzer", NODE_NAME}
    for name, monitor in monitors.items():
        assert [e["honorLabels"] for e in monitor["spec"]["endpoints"]] == [True], name
    unset = {**values, "serviceMonitor": {**values["serviceMonitor"], "honorLabels": False}}
    for name, monitor in of_kind(render(tmp_path, unset), "ServiceMonitor").items():
        assert [e["honorLabels"] for e in monitor["spec"]["endpoints"]] == [False], name


@pytest.mark.parametrize(("release", "fullname"), RELEASES)
def test_the_node_agents_objects_are_named_after_the_release(tmp_path, release, fullname):
    found = render(tmp_path, {**EVERYTHING, **NODE}, release=release)
    for key, doc in found.items():
        name = key.partition("/")[2]
        assert name in {fullname, f"{fullname}-rules", f"{fullname}-slack", f"{fullname}-node"}
        labels = doc["metadata"]["labels"]
        assert labels["app.kubernetes.io/instance"] == release, key
        assert labels["app.kubernetes.io/version"] == package_version(), key
        node = name == f"{fullname}-node"
        assert labels["app.kubernetes.io/component"] == ("node" if node else "analyzer"), key
    pod = found[f"DaemonSet/{fullname}-node"]["spec"]["template"]["spec"]
    assert f"ServiceAccount/{pod['serviceAccountName']}" in found


def test_the_notes_say_the_node_agent_is_on_and_what_it_needs(tmp_path):
    notes, _ = rendered_notes(tmp_path, NODE)
    assert "The node agent is on: the DaemonSet ebs-bottleneck-analyzer-node" in notes
    assert "CAP_SYS_ADMIN" in notes and "privileged (node.privileged)" in notes
    assert 'node.serviceAccount.annotations."eks.amazonaws.com/role-arn"' in notes
    (tmp_path / "off").mkdir()
    assert "node agent" not in rendered_notes(tmp_path / "off")[0]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"node": {"enabeld": True}}, "node: Additional property enabeld is not allowed"),
        ({"node": {"enabled": True, "privileged": "yes"}}, "node.privileged: Invalid type"),
        ({"node": {"every": 0}}, "node.every: Must be greater than 0"),
        (
            {"node": {"serviceAccount": {"annotation": {}}}},
            "node.serviceAccount: Additional property annotation is not allowed",
        ),
        (
            {"node": {"updateStrategy": {"type": "Rolling"}}},
            "node.updateStrategy.type must be one of the following",
        ),
        ({"node": {"tolerations": {"operator": "Exists"}}}, "node.tolerations: Invalid type"),
    ],
)
def test_a_mistake_in_the_node_values_fails_the_install_and_says_where(tmp_path, values, message):
    result = helm("template", "ebs", str(CHART), values=values, tmp=tmp_path)
    assert result.returncode != 0
    assert message in result.stderr


def test_claims_can_be_narrowed_to_named_namespaces(tmp_path):
    values = {"apply": {"kubernetes": True, "namespaces": ["db", "queue"]}}
    found = render(tmp_path, values)
    role = found["ClusterRole/ebs-bottleneck-analyzer-apply"]
    # No claim in any namespace from the ClusterRole: only volumes and classes.
    assert [r["resources"] for r in role["rules"]] == [
        ["persistentvolumes"],
        ["volumeattributesclasses"],
    ]
    result = helm(
        "template", "ebs", str(CHART), "--namespace", "monitoring", values=values, tmp=tmp_path
    )
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    roles = {d["metadata"]["namespace"]: d for d in docs if d["kind"] == "Role"}
    bindings = {d["metadata"]["namespace"]: d for d in docs if d["kind"] == "RoleBinding"}
    assert set(roles) == set(bindings) == {"db", "queue"}
    for namespace in ("db", "queue"):
        assert roles[namespace]["rules"] == [
            {
                "apiGroups": [""],
                "resources": ["persistentvolumeclaims"],
                "verbs": ["get", "patch"],
            }
        ]
        assert bindings[namespace]["subjects"] == [
            {"kind": "ServiceAccount", "name": "ebs-bottleneck-analyzer", "namespace": "monitoring"}
        ]
    # A name Kubernetes would refuse fails the install.
    bad = helm(
        "template", "ebs", str(CHART), values={"apply": {"namespaces": ["Db_1"]}}, tmp=tmp_path
    )
    assert bad.returncode != 0 and "namespaces" in bad.stderr
