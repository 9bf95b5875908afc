"""Every query of the shipped Grafana dashboard returns data, asked of a real Prometheus
(Debian's prometheus package; CI installs it) that scrapes the demo. The demo watches one
account with no `accounts:`, so its series have no account labels: the account filter must
keep them."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import external, promtool
from tests.test_cli import free_port, wait_for

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "dashboard.json"
VARIABLE = re.compile(r"\$\{?(\w+)\}?")
LABEL_VALUES = re.compile(r"label_values\((.*),\s*(\w+)\)$")
READY = (
    "increase(ebs_analyzer_cycles_total{outcome='success'}[1m]) > 0",
    "ebs_analyzer_volume_iops_limit",
    "ebs_analyzer_instance_ebs_iops_limit",
    "ebs_analyzer_db_instance_iops_limit",
    "ebs_analyzer_cloudwatch_estimated_cost_dollars_per_month > 0",
)
"""Scraped before any query is asked: cycles moving, every kind of resource exported, and the
cost estimated (from the second steady cycle on)."""
RESOURCE_SERIES = re.compile(r"(ebs_analyzer_(?:volume|instance|db_instance|finding|account)\w*)")
"""The series of a resource or an account, which the account variable filters."""
SELECTOR = re.compile(r"(ebs_analyzer_\w+)(\{[^}]*\})?")
ACCOUNT_FILTER = 'account_id=~"$account"'
CLAIM_VARIABLES = ("namespace", "persistentvolumeclaim")
"""A PersistentVolumeClaim's namespace and name, kube-state-metrics' label names, which the
analyzer sets on the series of a claim's volume only."""
CLAIM_FILTER = 'namespace=~"$namespace", persistentvolumeclaim=~"$persistentvolumeclaim"'
CLAIM_PODS = re.compile(
    r"\* on\(namespace, persistentvolumeclaim\) group_left\(pod\) (topk by .*"
    r"kube_pod_spec_volumes_persistentvolumeclaims_info\)\)) or \((.*)\) unless on\(namespace, "
    r"persistentvolumeclaim\) \1$"
)
"""A panel naming the pod of a claim: the joined rows, and the others as they are."""
EMPTY_MULTI = "()"
"""How Grafana writes a multi-value variable with no values in a Prometheus regex: `account`
where no account is configured. `account_id=~"()"`, like `=~".*"`, matches a series without
the label."""


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def panel_queries() -> list[tuple[str, str]]:
    return [
        (panel["title"], target["expr"])
        for panel in dashboard()["panels"]
        for target in panel.get("targets", [])
    ]


class Prometheus:
    def __init__(self, url: str) -> None:
        self.url = url
        self.at: float | None = None
        """Once set, the moment every query is asked at: the demo's clock runs on, and a drain
        that ends after it must not empty a panel asked later."""

    def get(self, path: str, **params: str) -> dict:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict]:
        moment = {} if self.at is None else {"time": str(self.at)}
        return self.get("/api/v1/query", query=expr, **moment)["result"]

    def label_values(self, selector: str, label: str) -> list[str]:
        span = {} if self.at is None else {"start": str(self.at - 300), "end": str(self.at)}
        return self.get(f"/api/v1/label/{label}/values", **{"match[]": selector}, **span)

    def now(self) -> float:
        [moment] = self.get("/api/v1/query", query="time()")["result"][1:]
        return float(moment)


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory) -> Iterator[Prometheus]:
    """The demo at 120× and a Prometheus scraping it every second, until every counter the
    dashboard takes a rate of has moved between scrapes."""
    binary = external("prometheus", install="apt-get install prometheus")
    tmp = tmp_path_factory.mktemp("prometheus")
    demo_port, port = free_port(), free_port()
    (tmp / "prometheus.yml").write_text(
        json.dumps(
            {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "scrape_configs": [
                    {
                        "job_name": "ebs-analyzer",
                        "static_configs": [{"targets": [f"127.0.0.1:{demo_port}"]}],
                    }
                ],
            }
        )
    )
    log = (tmp / "demo.log").open("w")
    demo = subprocess.Popen(
        [sys.executable, "-m", "analyzer", "demo", "--speed", "120", "--listen",
         f"127.0.0.1:{demo_port}"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    server = subprocess.Popen(
        [binary, f"--config.file={tmp / 'prometheus.yml'}",
         f"--storage.tsdb.path={tmp / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert wait_for(f"http://127.0.0.1:{demo_port}/readyz")[0] == 200
        assert wait_for(f"http://127.0.0.1:{port}/-/ready")[0] == 200
        prometheus = Prometheus(f"http://127.0.0.1:{port}")
        every = {v["name"]: ".*" for v in dashboard()["templating"]["list"]}
        panels = [substitute(expr, every) for _, expr in panel_queries()]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            at = prometheus.now()
            prometheus.at = at
            if all(map(prometheus.query, [*READY, *panels])):
                break
            prometheus.at = None
            time.sleep(1)
        missing = [expr for expr in [*READY, *panels] if not prometheus.query(expr)]
        if prometheus.at is None or missing:
            pytest.fail(
                f"after 120 s, Prometheus has nothing at one moment for {missing}; its scrapes: "
                f"{prometheus.get('/api/v1/targets')['activeTargets']}; the demo "
                f"(exit {demo.poll()}) printed: {(tmp / 'demo.log').read_text()[-2000:]}"
            )
        yield prometheus
    finally:
        log.close()
        for process in (server, demo):
            process.send_signal(signal.SIGTERM)
        for process in (server, demo):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()  # fail, but leave no process behind to slow what follows
                process.wait()
                said = (tmp / "demo.log").read_text()[-3000:] if process is demo else ""
                pytest.fail(f"{process.args[0]} did not stop within 30 s of SIGTERM. {said}")


def variables(prometheus: Prometheus) -> dict[str, str]:
    """Each template variable as Grafana fills it with every value chosen: `a|b|c`."""
    values: dict[str, str] = {}
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] != "query":
            continue
        selector, label = LABEL_VALUES.match(variable["definition"]).groups()
        found = prometheus.label_values(substitute(selector, values), label)
        if not found and variable["name"] in CLAIM_VARIABLES:
            values[variable["name"]] = variable["allValue"]  # no claim: Grafana's All alone
            continue
        assert found, f"variable {variable['name']}: {variable['definition']} has no values"
        values[variable["name"]] = "|".join(found)  # ids and regions: no regex characters
    return values


def substitute(expr: str, values: dict[str, str]) -> str:
    return VARIABLE.sub(lambda m: values.get(m.group(1), m.group(0)), expr)


@pytest.mark.slow
def test_every_template_variable_has_values(prometheus):
    chosen = variables(prometheus)
    assert set(chosen) == {
        "account", "region", "namespace", "persistentvolumeclaim", "volume", "instance", "db"
    }  # fmt: skip
    if prometheus.query('ebs_analyzer_volume_up{persistentvolumeclaim!=""}'):
        for name in CLAIM_VARIABLES:  # a volume of a claim: its namespace and name
            assert chosen[name] != ".*", name
    # The demo's two accounts: its own, and the one it reads through a role.
    assert set(chosen["account"].split("|")) == {"123456789012", "210987654321"}


def test_the_account_variable_comes_first_and_filters_the_others():
    """Each variable's values are read with the ones before it: the account's first."""
    listed = [v for v in dashboard()["templating"]["list"] if v["type"] == "query"]
    account = listed[0]
    assert account["name"] == "account"
    assert LABEL_VALUES.match(account["definition"]).group(2) == "account_id"
    assert account["multi"] and account["includeAll"] and account["allValue"] == ".*"
    for variable in listed[1:]:
        assert ACCOUNT_FILTER in variable["definition"], variable["name"]


@pytest.mark.parametrize(("title", "expr"), panel_queries())
def test_every_resource_query_is_filtered_by_account(title, expr):
    """Every selector of a resource's or an account's series carries the account filter; the
    analyzer's own series (one daemon, whatever it watches) carry none."""
    for name, selector in SELECTOR.findall(expr):
        if RESOURCE_SERIES.fullmatch(name):
            assert ACCOUNT_FILTER in selector, f"{title}: {name}{selector}"
        else:
            assert "account" not in selector, f"{title}: {name}{selector}"


@pytest.mark.parametrize(("title", "expr"), panel_queries())
def test_every_panel_query_returns_data_from_the_demo(prometheus, title, expr):
    chosen = variables(prometheus)
    for values in (chosen, dict.fromkeys(chosen, ".*")):  # each value chosen, and "All"
        result = prometheus.query(substitute(expr, values))
        assert result, f"{title}: {expr} returned nothing"


def test_the_analyzers_own_panels_read_true_under_the_simulated_clock(prometheus):
    """The demo's clock runs 120× faster than real time: the age of the last good cycle
    still reads in real seconds, and the cost prices a simulated month, not a real one."""
    [age] = prometheus.query("time() - ebs_analyzer_last_successful_poll_timestamp_seconds")
    assert 0 <= float(age["value"][1]) < 30
    # Estimated from the second steady cycle on; the demo's account, watched adaptively,
    # costs tens of dollars a simulated month, not the thousands a real month at 120× reads.
    [estimate] = prometheus.query("ebs_analyzer_cloudwatch_estimated_cost_dollars_per_month > 0")
    assert float(estimate["value"][1]) < 200


def test_an_empty_account_selection_keeps_series_without_the_label(prometheus):
    """Without accounts no series has `account_id`, and Grafana fills the variable with `()`
    (no values) or `.*` (All): both match a series without the label."""
    for chosen in (EMPTY_MULTI, ".*"):
        assert prometheus.query(f'ebs_analyzer_cycles_total{{account_id=~"{chosen}"}}')


def test_the_claim_variables_follow_the_region_and_keep_volumes_without_a_claim():
    """`=~".*"` (All) matches a series without the label: the volumes no claim owns stay."""
    listed = [v["name"] for v in dashboard()["templating"]["list"]]
    assert listed.index("region") + 1 == listed.index("namespace")
    assert listed.index("namespace") + 1 == listed.index("persistentvolumeclaim")
    for variable in dashboard()["templating"]["list"]:
        if variable["name"] in CLAIM_VARIABLES:
            selector, label = LABEL_VALUES.match(variable["definition"]).groups()
            assert label == variable["name"]
            assert selector.startswith("ebs_analyzer_volume_up{")
            assert 'persistentvolumeclaim!=""' in selector  # a claim's namespace, no other
            assert variable["includeAll"] and variable["multi"] and variable["allValue"] == ".*"
        if variable["name"] == "volume":
            assert CLAIM_FILTER in variable["definition"]
    for title, expr in panel_queries():
        for name, selector in SELECTOR.findall(expr):
            if name.startswith(("ebs_analyzer_volume_", "ebs_analyzer_finding")):
                assert CLAIM_FILTER in selector, f"{title}: {name}{selector}"


def test_the_pod_of_a_claim_is_joined_from_kube_state_metrics(tmp_path):
    """Asked of promtool with kube-state-metrics' series beside the analyzer's: a claim's
    volume names its pod; a claim kube-state-metrics does not list, and a volume no claim
    owns, are there without one."""
    joined = {title: expr for title, expr in panel_queries() if CLAIM_PODS.search(expr)}
    assert set(joined) == {"Active findings", "Volumes, their claims and the pods that mount them"}
    chosen = dict.fromkeys(["account", "region", *CLAIM_VARIABLES, "volume"], ".*")
    analyzer = 'region="us-east-1",volume_type="gp2",instance_id="i-1",status="ok",pod="ebs-0"'
    ksm = 'kube_pod_spec_volumes_persistentvolumeclaims_info{job="ksm",uid="u",volume="data"'
    series = [
        f'ebs_analyzer_volume_up{{{analyzer},volume_id="vol-pg",namespace="db",'
        'persistentvolumeclaim="data-postgres-0"}',
        f'ebs_analyzer_volume_up{{{analyzer},volume_id="vol-mq",namespace="queue",'
        'persistentvolumeclaim="data-rabbitmq-0"}',
        f'ebs_analyzer_volume_up{{{analyzer},volume_id="vol-logs"}}',
        f'{ksm},instance="a",namespace="db",pod="postgres-0",persistentvolumeclaim="data-postgres-0"}}',
        f'{ksm},instance="b",namespace="db",pod="postgres-0",persistentvolumeclaim="data-postgres-0"}}',
        f'{ksm},instance="a",namespace="queue",pod="rabbitmq-0",persistentvolumeclaim="other"}}',
    ]
    volume = 'instance_id="i-1",region="us-east-1",status="ok",volume_type="gp2"'
    expected = [
        f'{{{volume},volume_id="vol-pg",namespace="db",persistentvolumeclaim="data-postgres-0",'
        'pod="postgres-0"}',
        f'{{{volume},volume_id="vol-mq",namespace="queue",persistentvolumeclaim="data-rabbitmq-0"}}',
        f'{{{volume},volume_id="vol-logs"}}',
    ]
    expr = substitute(joined["Volumes, their claims and the pods that mount them"], chosen)
    (tmp_path / "none.yml").write_text("groups: []\n")
    (tmp_path / "test.yml").write_text(
        json.dumps(
            {
                "rule_files": ["none.yml"],
                "tests": [
                    {
                        "interval": "1m",
                        "input_series": [{"series": s, "values": "1x5"} for s in series],
                        "promql_expr_test": [
                            {
                                "expr": expr,
                                "eval_time": "2m",
                                "exp_samples": [{"labels": e, "value": 1} for e in expected],
                            }
                        ],
                    }
                ],
            }
        )
    )
    result = promtool("test", "rules", str(tmp_path / "test.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
