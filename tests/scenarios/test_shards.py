"""Three shard processes over one fleet, as a StatefulSet of three runs them: every resource is
watched by exactly one shard, the three reports together are the one a single process gives,
their `/metrics` together export no resource series twice, and no alert is posted twice."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from moto.server import ThreadedMotoServer
from prometheus_client.parser import text_string_to_metric_families

from analyzer.model.units import KIB
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.scenario import QUIET_DAYS
from analyzer.sim.workloads import Demand, steps
from tests.account import Account
from tests.cloudwatch_endpoint import CloudWatchEndpoint
from tests.conftest import _isolate
from tests.receiver import Receiver
from tests.test_cli import free_port, run_cli, running_daemon, wait_for

SHARDS = 3
RESOURCE_SERIES = ("ebs_analyzer_volume", "ebs_analyzer_instance", "ebs_analyzer_db_instance")
"""The series about resources (and `ebs_analyzer_finding`): each must come from one shard. The
daemon's own series (`ebs_analyzer_cycles_total`, `process_*`) are each process's, told apart
by the target labels Prometheus adds to every scrape."""


@pytest.fixture(scope="module")
def fleet() -> Iterator[tuple[dict[str, str], set[str]]]:
    """Eight instances with two gp2 volumes each (four draining, eight idle) and a detached
    volume: the endpoints (EC2 in moto, CloudWatch from the simulator) and every id."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _isolate(monkeypatch)
        yield from served_fleet()


def served_fleet() -> Iterator[tuple[dict[str, str], set[str]]]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    account = Account(endpoint_url=f"http://{host}:{port}")
    start = (datetime.now(UTC) - timedelta(hours=1)).replace(second=0, microsecond=0)
    heavy = Demand(steps((0, 100), (20 * 60, 1_500)), io_size_bytes=4 * KIB)
    light = Demand(steps((0, 50)), io_size_bytes=16 * KIB)
    idle = Demand(steps((0, 0)))
    ids: set[str] = set()
    simulations = []
    for n in range(8):
        instance = account.instance("m5.large")
        volumes = {
            account.volume("gp2", 50, instance, device="/dev/sdf"): heavy if n % 2 else light,
            account.volume("gp2", 200, instance, device="/dev/sdg"): idle,
        }
        simulations.append(account.simulation(instance, volumes, start))
        ids |= {instance, *volumes}
    ids.add(account.volume("gp2", 100))
    cloudwatch = CloudWatchEndpoint(
        SimulatedCloudWatch(simulations=simulations, quiet_days=QUIET_DAYS)
    ).start()
    yield (
        {
            "AWS_ENDPOINT_URL": f"http://{host}:{port}",
            "AWS_ENDPOINT_URL_CLOUDWATCH": cloudwatch.url,
        },
        ids,
    )
    cloudwatch.stop()
    server.stop()


def once(endpoints: dict[str, str], *shard: str) -> dict[str, Any]:
    result = run_cli(
        "once",
        "--format",
        "json",
        "--region",
        "us-east-1",
        *shard,
        env=endpoints,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def row_key(row: dict[str, Any]) -> tuple[Any, ...]:
    """What a row says that does not move from one minute to the next."""
    return (row["resource_id"], row["resource_type"], row["status"], row.get("attached_to"))


def finding_key(finding: dict[str, Any]) -> tuple[str, str, str]:
    return (finding["rule"], finding["resource_id"], finding["severity"])


def test_the_shards_reports_together_are_the_one_process_report(fleet) -> None:  # type: ignore[no-untyped-def]
    endpoints, ids = fleet
    whole = once(endpoints)
    parts = [
        once(endpoints, "--shard", str(i), "--total-shards", str(SHARDS)) for i in range(SHARDS)
    ]
    watched = Counter(row["resource_id"] for part in parts for row in part["resources"])
    everything = {row["resource_id"] for row in whole["resources"]}
    assert set(watched) == everything >= ids  # and each instance's root volume
    assert set(watched.values()) == {1}, "a resource watched by two shards"
    # moto's ids are random: with a dozen groups, at least two shards have a share.
    assert sum(1 for part in parts if part["resources"]) >= 2
    # An instance and its volumes in one shard: the analysis needs them together.
    for part in parts:
        here = {row["resource_id"] for row in part["resources"]}
        for row in part["resources"]:
            assert row.get("attached_to") in (None, *here)
    assert sorted(row_key(r) for p in parts for r in p["resources"]) == sorted(
        row_key(r) for r in whole["resources"]
    )
    found = sorted(finding_key(f) for p in parts for f in p["findings"])
    assert found == sorted(finding_key(f) for f in whole["findings"])
    assert any(rule == "gp2-burst-exhaustion" for rule, _, _ in found)


def test_cost_says_what_one_shard_costs(fleet) -> None:  # type: ignore[no-untyped-def]
    env, _ = fleet

    def full(*shard: str) -> float:
        result = run_cli("cost", "--format", "json", "--region", "us-east-1", *shard, env=env)
        assert result.returncode == 0, result.stderr
        return float(json.loads(result.stdout)["us-east-1"]["full"])

    parts = [full("--shard", str(i), "--total-shards", str(SHARDS)) for i in range(SHARDS)]
    # moto's ids are random, so a shard may draw no group of the nine: at least two have a share.
    assert sum(1 for part in parts if part > 0) >= 2
    assert sum(parts) == pytest.approx(full(), abs=0.02)
    text = run_cli("cost", "--region", "us-east-1", "--shard", "1", "--total-shards", "3", env=env)
    assert "GetMetricData a month for the resources of shard 1 of 3" in text.stdout


def series(exposition: str) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    return [
        (sample.name, tuple(sorted(sample.labels.items())))
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
    ]


def test_three_running_shards_export_each_series_once_and_post_each_alert_once(
    fleet, tmp_path: Path
) -> None:
    endpoints, ids = fleet
    alertmanagers = [Receiver().start() for _ in range(SHARDS)]  # one per shard, to tell them
    ports = [free_port() for _ in range(SHARDS)]
    processes = [
        running_daemon(
            port,
            tmp_path / f"state-{i}.json",
            "--alertmanager-url",
            alertmanagers[i].url,
            "--total-shards",
            str(SHARDS),
            # The shard from the pod's name, as in a StatefulSet.
            env={**endpoints, "POD_NAME": f"ebs-analyzer-{i}"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for i, port in enumerate(ports)
    ]
    try:
        scraped = []
        for port in ports:
            base = f"http://127.0.0.1:{port}"
            assert wait_for(f"{base}/readyz", timeout_s=120)[0] == 200
            scraped.append(wait_for(f"{base}/metrics")[1])
        deadline = time.monotonic() + 30
        while any(len(am.requests) < 2 for am in alertmanagers) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        errors = [process.communicate(timeout=60)[1] for process in processes]
        for am in alertmanagers:
            am.stop()
    assert [p.returncode for p in processes] == [0] * SHARDS, errors

    about_resources = [
        s for text in scraped for s in series(text) if s[0].startswith(RESOURCE_SERIES)
    ]
    assert [s for s, n in Counter(about_resources).items() if n > 1] == []
    exported = {
        dict(labels)["volume_id"]
        for name, labels in about_resources
        if name == "ebs_analyzer_volume_up"
    }
    exported |= {
        dict(labels)["instance_id"]
        for name, labels in about_resources
        if name == "ebs_analyzer_instance_info"
    }
    assert exported >= ids
    assert len(exported) == len(ids) + 8  # and each instance's root volume
    findings = [s for text in scraped for s in series(text) if s[0] == "ebs_analyzer_finding"]
    assert findings and len(findings) == len(set(findings))
    for i, text in enumerate(scraped):
        assert ("ebs_analyzer_shards", (("shard", str(i)),)) in series(text)

    # Each alert from one shard only: Alertmanager never hears one alert from two.
    posted = [
        {tuple(sorted(alert["labels"].items())) for body in am.requests for alert in body}
        for am in alertmanagers
    ]
    assert sum(len(p) for p in posted) == len(set().union(*posted)) == len(findings)
