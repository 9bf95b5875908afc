"""The demo must show what the product is for, with the numbers the model gives, in the two
accounts it simulates: its own, holding the incidents, and a staging one read through a role."""

import contextlib
import io
import itertools
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from analyzer import demo as demo_command
from analyzer import logs, settings
from analyzer.analyze import rules
from analyzer.arguments import build_parser
from analyzer.cli import main
from analyzer.live.cycle import Analyzer
from analyzer.model.findings import Bottleneck
from analyzer.model.kubernetes import Node, NodeOwner
from analyzer.model.resources import Volume
from analyzer.sim import account as demo
from analyzer.sim import cluster
from analyzer.sim.account import ACCOUNTS, OWN_ID, STAGING_ID
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.datapoints import fold
from analyzer.sim.scenario import CYCLE_S, REGION
from tests.helpers import T0

pytestmark = pytest.mark.slow  # the demo and the CLI, whole, in subprocesses


def analyzer(simulated: demo.DemoAccounts) -> Analyzer:
    """The demo's analyzer of both accounts, with the settings' defaults otherwise."""
    config = settings.load({"region": [REGION], "accounts": [a.entry() for a in ACCOUNTS]})
    return demo_command.over(simulated, config, rules.load())


@pytest.fixture(scope="module")
def result():
    with demo.accounts(datetime(2026, 11, 21, 12, 0, tzinfo=UTC)) as simulated:
        return analyzer(simulated).run(simulated.now)


PRESENT = datetime(2026, 11, 25, 21, 0, tzinfo=UTC)
"""The fixed present `demo --once` runs at in the tests that read its report."""


def _once(form: str) -> tuple[str, str]:
    """`demo --once` at `PRESENT`, in this process: its stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    logs.configure("warning")  # as the command does: the log on stderr, the report alone on stdout
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert demo_command.run(True, form, 30.0, "127.0.0.1:9877", None, now=PRESENT) == 0
    return out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def once_text() -> str:
    """The text report of `demo --once` at `PRESENT`, run once for the tests that read it."""
    return _once("text")[0]


@pytest.fixture(scope="module")
def once_json() -> dict:  # type: ignore[type-arg]
    """The JSON report of `demo --once` at `PRESENT`, run once for the tests that read it."""
    return json.loads(_once("json")[0])  # type: ignore[no-any-return]


def by_name(result, account: str = "prod"):
    """The rules firing on each resource of one account, by the resource's Name tag (a claim's
    volume by its claim, as the report names it first)."""
    out = {}
    for f in result.findings:
        if f.resource.account_name != account:
            continue
        state = result.snapshot.get(f.resource.scope, f.resource.resource_id)
        name = f.resource.claim.text() if f.resource.claim else state.resource.tags.get("Name")
        out.setdefault(name, set()).add(f.rule)
    return out


def test_the_demo_replays_each_incident(result):
    assert by_name(result, "prod") == {
        "shop-data": {"gp2-burst-exhaustion"},
        "shop-db-data": {"volume-burst-credits-exhausted"},
        "reporting-data": {"gp2-burst-exhaustion"},
        "batch-gp3-data": {"volume-throughput-cap"},
        "batch-io2": {"instance-throughput-cap"},
        "batch-io2-big-data": {"volume-iops-cap"},
        "orders-replica": {"rds-burst-exhaustion", "rds-memory-pressure"},
        "etl": {"instance-ebs-burst-exhaustion"},
        "search": {"instance-iops-cap"},
        "PVC db/data-postgres-0": {"gp2-burst-exhaustion"},
    }
    assert by_name(result, "staging") == {"staging-api-data": {"gp2-burst-exhaustion"}}


def test_each_account_is_read_as_itself(result):
    """Every resource and finding carries its account; the staging account's, read through its
    role, are the ones its moto account holds, and no incident of prod's leaks into it."""
    accounts = {(s.resource.account_id, s.resource.account_name) for s in result.snapshot.resources}
    assert accounts == {(OWN_ID, "prod"), (STAGING_ID, "staging")}
    staging = {
        s.resource.tags.get("Name")
        for s in result.snapshot.resources
        if s.resource.account_id == STAGING_ID
    }
    assert staging == {"staging-api", "staging-api-data", "staging-api-root"}
    assert {f.resource.account for f in result.findings} == {
        "prod (123456789012)",
        "staging (210987654321)",
    }


def test_every_bottleneck_kind_shows_and_the_jobs_come_back():
    """Over one cycle of the demo's jobs every kind of bottleneck is found at some point, and
    the jobs that come back make their findings resolve and fire again. (Impaired I/O is an
    AWS fault, not a limit a workload reaches: tests/scenarios/test_impaired.py replays it;
    the demo's databases have no Dedicated Log Volume: rules/tests/rds.yaml and
    tests/model/test_rds_storage.py hold one.)"""
    seen: set[Bottleneck] = set()
    timeline: list[set[tuple[str, str]]] = []
    with demo.accounts(datetime(2026, 11, 21, 12, 0, tzinfo=UTC)) as simulated:
        watching = analyzer(simulated)
        for step in range(int(CYCLE_S // 300) + 1):
            result = watching.run(simulated.now + timedelta(minutes=5 * step))
            seen |= {f.bottleneck for f in result.findings}
            timeline.append(_pairs(result) | _pairs(result, "staging"))
    elsewhere = {Bottleneck.IMPAIRED, Bottleneck.LOG_VOLUME_IOPS, Bottleneck.LOG_VOLUME_THROUGHPUT}
    assert seen == set(Bottleneck) - elsewhere
    for pair in [("search", "instance-iops-cap"), ("batch-gp3-data", "volume-throughput-cap")]:
        present = [pair in active for active in timeline]
        assert present[0] and present[-1] and not all(present), pair
    # Staging's load test: the forecast, then the exhaustion, then credits refilling in quiet.
    load_test = [
        {rule for name, rule in active if name == "staging-api-data"} for active in timeline
    ]
    assert load_test[0] == {"gp2-burst-exhaustion"}
    assert {"volume-burst-credits-exhausted"} in load_test
    assert load_test[-1] == set()


def _pairs(result, account: str = "prod") -> set[tuple[str, str]]:
    return {(name, rule) for name, found in by_name(result, account).items() for rule in found}


def test_a_claim_drains_on_a_node_of_a_managed_node_group(result):
    """Among the incidents, a cluster: a StatefulSet's three claims on one node of an EKS
    managed node group, the primary's draining its gp2 credits and the replicas' quiet."""
    claimed = [f for f in result.findings if f.resource.claim is not None]
    [finding] = claimed
    assert finding.rule == "gp2-burst-exhaustion"
    assert finding.resource.claim.text() == "PVC db/data-postgres-0"
    assert finding.summary.startswith("PVC db/data-postgres-0 (vol-")
    assert "→ 0 in 35 min at 1,800 IOPS; then throttled to 300 IOPS" in finding.summary
    volume = result.snapshot.get(finding.resource.scope, finding.resource.resource_id).resource
    node = result.snapshot.get(finding.resource.scope, volume.attached_to).resource
    assert node.node == Node(NodeOwner.NODEGROUP, "db", "prod-eks", cluster.LAUNCH_TEMPLATE)
    claims = {
        v.claim.name: (v.attached_to, state.status.value)
        for state in result.snapshot.resources
        if isinstance(v := state.resource, Volume) and v.claim is not None
    }
    assert claims == {f"data-postgres-{i}": (node.instance_id, "ok") for i in range(3)}


def test_the_shop_volume_empties_in_27_minutes(result):
    [finding] = [
        f for f in result.findings if f.rule == "gp2-burst-exhaustion" and "shop-data" in f.summary
    ]
    assert "→ 0 in 27 min at 1,500 IOPS; then throttled to 150 IOPS" in finding.summary


def test_healthy_resources_stay_quiet_and_all_have_data(result):
    statuses = {s.resource.tags.get("Name"): s.status.value for s in result.snapshot.resources}
    assert statuses["spare"] == "no_data"
    assert {v for k, v in statuses.items() if k != "spare"} == {"ok"}
    assert "logs" not in by_name(result)
    assert "logs-archive" not in by_name(result)


def test_simulated_cloudwatch_aggregates_like_cloudwatch():
    points = [(T0 + timedelta(minutes=m), float(m)) for m in range(10)]
    cw = SimulatedCloudWatch(
        {("vol-1", "VolumeReadOps"): points, ("vol-1", "BurstBalance"): points}
    )

    def ask(metric, period, stat):
        query = {
            "Id": "m0",
            "MetricStat": {
                "Metric": {
                    "Namespace": "AWS/EBS",
                    "MetricName": metric,
                    "Dimensions": [{"Name": "VolumeId", "Value": "vol-1"}],
                },
                "Period": period,
                "Stat": stat,
            },
        }
        [answer] = cw.get_metric_data(
            MetricDataQueries=[query], StartTime=T0, EndTime=T0 + timedelta(minutes=10)
        )["MetricDataResults"]
        return list(zip(answer["Timestamps"], answer["Values"], strict=True))

    assert ask("VolumeReadOps", 300, "Sum") == fold(points, 300, "Sum")
    assert ask("BurstBalance", 300, "Average") == [(T0, 2.0), (T0 + timedelta(minutes=5), 7.0)]
    assert ask("VolumeWriteOps", 60, "Sum") == []


def test_demo_once_prints_the_stories_then_the_report(once_text):
    """At a fixed present: the stories run on the last four hours, and the instance's EBS
    burst story gives no finding in the first hours of a UTC day."""
    args = build_parser().parse_args(["demo", "--once"])
    # What `demo --once` passes on is what `once_text` ran with.
    assert (args.once, args.format, args.speed, args.listen, args.rules) == (
        True,
        "text",
        30.0,
        "127.0.0.1:9877",
        None,
    )
    out = once_text
    assert out.startswith("Simulating two AWS accounts")
    assert "shop-web" in out
    assert "staging (210987654321), through the role arn:aws:iam::210987654321:role/" in out
    assert "FINDINGS (12)" in out
    assert "across 2 account(s)" in out
    prod, staging = (
        out.index("  ACCOUNT prod (123456789012)\n"),
        out.index("  ACCOUNT staging (210987654321)\n"),
    )
    assert prod < out.index("shop-data ") and staging < out.index("staging-api-data ")
    assert "gp2-burst-exhaustion  · account staging (210987654321)" in out
    # Each volume fix replayed over the four hours the demo's CloudWatch holds.
    assert "/month; would have limited 0 min of the last 4 h" in out


def test_demo_once_in_json_names_each_resources_account(once_json):
    report = once_json
    accounts = {
        row["name"]: (row["account_id"], row["account_name"]) for row in report["resources"]
    }
    assert accounts["staging-api-data"] == (STAGING_ID, "staging")
    assert accounts["staging-api"] == (STAGING_ID, "staging")
    assert accounts["shop-data"] == (OWN_ID, "prod")
    assert {a for name, a in accounts.items() if not name.startswith("staging-")} == {
        (OWN_ID, "prod")
    }
    found = {
        (f["rule"], f["account_id"], f["account_name"])
        for f in report["findings"]
        if f["account_id"] == STAGING_ID
    }
    assert found == {("gp2-burst-exhaustion", STAGING_ID, "staging")}
    assert sum(f["account_name"] == "prod" for f in report["findings"]) == 11


def test_demo_once_in_json_names_the_draining_claim(once_json):
    """The JSON report's claim: the finding and its volume's row carry the claim, the
    replicas' rows theirs, and no other row or finding has one."""
    report = once_json
    [finding] = [f for f in report["findings"] if f["kubernetes"] is not None]
    assert finding["rule"] == "gp2-burst-exhaustion"
    assert finding["account_name"] == "prod"
    assert finding["kubernetes"] == {
        "cluster": "prod-eks",
        "namespace": "db",
        "persistentvolumeclaim": "data-postgres-0",
        "persistentvolume": cluster.PERSISTENT_VOLUMES[0],
    }
    assert finding["summary"].startswith("PVC db/")
    pasts = [r["past"] for r in finding["remedies"]]
    assert all(p is not None and p["days"] == 0.2 for p in pasts)  # four hours
    limited = [p["minutes_limited"] > 0 for p in pasts]
    assert limited == sorted(limited)  # the fixes that would have held first
    claims = {
        r["kubernetes"]["persistentvolumeclaim"]: r
        for r in report["resources"]
        if r["kubernetes"] is not None
    }
    assert sorted(claims) == [f"data-postgres-{i}" for i in range(3)]
    assert claims["data-postgres-0"]["resource_id"] == finding["resource_id"]
    [node] = {r["attached_to"] for r in claims.values()}
    [row] = [r for r in report["resources"] if r["resource_id"] == node]
    assert row["name"] == "eks-db-node" and row["kubernetes"] is None
    # The node's row says the node group it belongs to; other instances' say none.
    assert row["node"] == {
        "owner": "nodegroup",
        "name": cluster.NODEGROUP,
        "cluster": cluster.CLUSTER,
        "launch_template": cluster.LAUNCH_TEMPLATE,
    }
    others = [r for r in report["resources"] if r["resource_type"] == "instance" and r is not row]
    assert others and all(r["node"] is None for r in others)


def test_the_live_demo_fires_and_resolves_alerts_and_serves_metrics():
    """The README's first command: within a minute, findings for burst credits, a volume cap
    and an instance cap on /metrics, and alerts that fire and resolve on the console."""
    import signal
    import subprocess
    import sys
    import threading
    import time

    from tests.test_cli import free_port, wait_for

    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "analyzer",
            "demo",
            "--speed",
            "120",
            "--listen",
            f"127.0.0.1:{port}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.extend(iter(process.stdout.readline, "")), daemon=True
    )
    reader.start()
    try:
        assert wait_for(f"http://127.0.0.1:{port}/readyz")[0] == 200
        _, metrics = wait_for(f"http://127.0.0.1:{port}/metrics")
        # Each series names its account: the incidents in prod, the load test in staging,
        # which answered through its role.
        prod = 'account_id="123456789012",account_name="prod"'
        for bottleneck in ("burst_credits", "volume_throughput", "instance_throughput"):
            assert f'ebs_analyzer_finding{{{prod},bottleneck="{bottleneck}"' in metrics
        staging = 'account_id="210987654321",account_name="staging"'
        assert f'ebs_analyzer_finding{{{staging},bottleneck="burst_credits"' in metrics
        assert f"ebs_analyzer_account_up{{{staging}}} 1.0" in metrics
        deadline = time.monotonic() + 60
        resolved = "RESOLVED  volume-throughput-cap"
        while time.monotonic() < deadline and not any(resolved in line for line in lines):
            time.sleep(0.5)
        # The savings, each volume's long past read at once on the simulated account.
        saving = f'ebs_analyzer_savings_monthly_dollars{{{prod},kind="iops_above_need"'
        while time.monotonic() < deadline + 30 and saving not in metrics:
            time.sleep(0.5)
            _, metrics = wait_for(f"http://127.0.0.1:{port}/metrics")
        assert saving in metrics
        # The digest once no more than one volume in ten is still being read.
        digest = "Savings this week"
        while time.monotonic() < deadline + 60 and not any(digest in line for line in lines):
            time.sleep(0.5)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    reader.join(timeout=5)
    assert process.returncode == 0, err
    text = "".join(lines)
    assert "Alerts appear here as they fire and resolve." in text
    assert "FIRING    CRITICAL volume-burst-credits-exhausted" in text
    assert "RESOLVED  volume-throughput-cap" in text
    assert re.search(r"^── \w{3} \d\d \w{3} \d{4} \(UTC\) ──$", text, re.MULTILINE)
    # Each fix that can be applied names the command that applies it to the demo's account.
    assert "             apply: ebs-analyzer demo --once --apply vol-" in text
    assert "ebs-analyzer apply " not in text
    # The savings digest, on the console where the demo's alerts go.
    assert "Savings this week: $293.80 a month over 1 volume" in text
    assert "ebs-analyzer demo --once --apply vol-" in text.split("Savings this week")[1]


def test_the_scrape_benchmark_serves_the_size_the_performance_notes_give():
    """docs/performance.md gives the size of the exposition benchmarks/scrape.py serves: the
    demo's own account alone, without account labels (the two-account demo serves more)."""
    from benchmarks.scrape import demo_exposition

    performance = (Path(__file__).resolve().parents[1] / "docs" / "performance.md").read_text()
    kb = int(re.search(r"`/metrics` \(about (\d+) KB\)", performance).group(1))
    assert abs(len(demo_exposition()) / 1000 - kb) <= 0.25 * kb


def test_a_busy_port_is_said_before_the_simulation(capsys):
    """Not after seconds of simulating the account's history."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["demo", "--listen", f"127.0.0.1:{port}"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"ebs-analyzer: error: --listen 127.0.0.1:{port}: ")


def test_the_demo_plays_a_shipped_recording_once(capsys):
    """`demo --from FILE --once`: one report at the recording's end, without AWS."""
    from tests.scenarios.test_incident_3_fortnight import SHIPPED

    assert main(["demo", "--from", str(SHIPPED), "--once"]) == 0
    out = capsys.readouterr().out
    assert "2026-11-13 20:03 UTC" in out
    assert "burst-daily-minimum-falling" in out
    assert "orders-replica" in out


def test_a_recording_made_across_accounts_plays_as_those_accounts(tmp_path, capsys):
    """The same database recorded in two accounts: two rows and two findings, each with its
    account, where a recording keyed by scope used to be refused as a region's name."""
    import json
    from dataclasses import replace

    from analyzer.collect import recording
    from tests.scenarios.test_incident_3_fortnight import SHIPPED

    one = recording.read(SHIPPED)
    [(region, inventory)] = one.inventories.items()
    inventories, raw, past = {}, {}, {}
    for account_id, name in (("111111111111", "prod"), ("222222222222", "")):
        owned = replace(
            inventory,
            db_instances=tuple(
                replace(d, account_id=account_id, account_name=name) for d in inventory.db_instances
            ),
            account_id=account_id,
            account_name=name,
        )
        inventories[owned.scope] = owned
        raw[owned.scope] = one.raw[region]
        past[owned.scope] = one.past.get(region, {})
    path = tmp_path / "two.json.gz"
    recording.write(path, replace(one, inventories=inventories, raw=raw, past=past))
    assert main(["demo", "--from", str(path), "--once", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    rows = [r for r in document["resources"] if r["resource_id"] == "orders-replica"]
    assert {(r["account_id"], r["account_name"]) for r in rows} == {
        ("111111111111", "prod"),
        ("222222222222", None),
    }
    assert {r["region"] for r in rows} == {region}
    trend = [f for f in document["findings"] if f["rule"] == "burst-daily-minimum-falling"]
    assert {f["account_id"] for f in trend} == {"111111111111", "222222222222"}


def test_a_recording_is_described_and_answered_as_recorded():
    from dataclasses import replace
    from datetime import timedelta

    from analyzer.collect import recording
    from analyzer.collect.queries import for_inventory
    from analyzer.collect.window import Window
    from analyzer.sim.playback import RecordedAccount
    from tests.scenarios.test_incident_3_fortnight import SHIPPED

    recorded = recording.read(SHIPPED)
    region = RecordedAccount(recorded).region("us-east-1")
    [db] = region.describe.db_instances()
    assert db.db_instance_id == "orders-replica"
    assert [t.name for t in region.describe.instance_types(["m5.2xlarge", "r5.large"])] == [
        "m5.2xlarge"
    ]
    [query] = [
        q
        for q in for_inventory(recorded.inventories["us-east-1"])["orders-replica"]
        if q.metric == "BurstBalance"
    ]
    daily = replace(query, stat="Minimum", period_s=86_400)
    friday = recorded.end.replace(hour=0, minute=0)
    found, _ = region.metrics.fetch([daily], Window(friday - timedelta(days=4), friday, 86_400))
    lows = [round(v, 1) for v in found[daily].values]
    # The second week's minima, Monday to Thursday: what the daily `Minimum` request answers.
    assert lows == [14.8, 12.1, 9.6, 6.9]


def test_the_readme_excerpt_is_what_the_demo_prints(once_text):
    """README, "What it finds": each piece of the excerpt between its `…` is in the report the
    demo prints at a fixed present (ids, random in the demo, are cut where they start)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    excerpt = readme.split("## What it finds\n\n```\n", 1)[1].split("```", 1)[0]
    printed = " ".join(once_text.split())
    pieces = [
        re.sub(r"\b(vol|i|db)-[0-9a-f]*$", "", " ".join(piece.split())).strip(' "(),:;')
        for line in excerpt.splitlines()
        for piece in line.split("…")
    ]
    assert [p for p in pieces if len(p) >= 12 and p not in printed] == []


def test_without_moto_the_demo_says_how_to_install_it_before_anything(capsys, monkeypatch):
    from analyzer.sim import account as simulated

    real = simulated.importlib.util.find_spec
    monkeypatch.setattr(
        simulated.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "moto" else real(name, *a),
    )
    assert main(["demo", "--once"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "pip install 'ebs-bottleneck-analyzer[demo]'" in err and err.count("\n") == 1


@pytest.mark.parametrize(("speed", "hours"), [(1, 4), (30, 4), (1800, 120)])
def test_repeats_come_no_oftener_than_every_four_real_minutes(speed, hours):
    assert demo_command.repeat_interval(speed) == hours * 3600


def test_a_fix_the_demo_printed_applies_to_its_simulated_account(once_json, capsys):
    """The ids are the same every run: a fix_id the report printed names the same volume the
    next time, and `--apply` changes it in the simulated account before the report."""
    present = PRESENT
    logs.configure("warning")
    report = once_json
    [row] = [r for r in report["resources"] if r.get("name") == "shop-db-data"]
    [finding] = [f for f in report["findings"] if f["resource_id"] == row["resource_id"]]
    fix = finding["remedies"][0]["fix_id"]
    assert fix == f"{row['resource_id']}:type=gp3,iops=3000,throughput=125"
    assert row["iops_limit"] == 150.0  # gp2 50 GiB at its baseline
    code = demo_command.run(True, "json", 30.0, "127.0.0.1:9877", None, now=present, apply=fix)
    captured = capsys.readouterr()
    assert code == 0
    assert "applied: modification completed; now gp3 50 GiB, 3,000 IOPS" in captured.err
    [after] = [r for r in json.loads(captured.out)["resources"] if r.get("name") == "shop-db-data"]
    assert after["resource_id"] == row["resource_id"] and after["iops_limit"] == 3_000.0
    # A volume without the apply tag: refused, unchanged, exit 3.
    [other] = [r for r in report["resources"] if r.get("name") == "reporting-data"]
    untagged = f"{other['resource_id']}:type=gp3,iops=3600,throughput=125"
    code = demo_command.run(True, "json", 30.0, "127.0.0.1:9877", None, now=present, apply=untagged)
    assert code == 3 and "outside the apply scope" in capsys.readouterr().err


def test_each_fix_names_the_command_that_applies_it_to_the_simulated_account(once_text):
    """`ebs-analyzer apply` would look for the volume in a real account, without credentials:
    the demo's report names `demo --once --apply`, which changes its simulated one."""
    lines = [line.strip() for line in once_text.splitlines()]
    applies = [line for line in lines if line.startswith("apply:")]
    assert len(applies) >= 10 and "ebs-analyzer apply" not in once_text
    assert all(a.startswith("apply: ebs-analyzer demo --once --apply ") for a in applies)


@pytest.mark.parametrize(
    ("fix", "says"),
    [
        ("vol-0abc", "expected ID:KEY=VALUE[,KEY=VALUE…]"),
        ("vol-xyz:type=gp3", "vol-xyz is not a volume id"),
        ("vol-0123456789abcdef0:type=gp3,colour=red", "unknown key 'colour'"),
        ("orders--replica:size=400", "orders--replica is not an RDS instance identifier"),
    ],
)
def test_a_fix_that_names_no_resource_is_refused_before_anything_is_simulated(fix, says, capsys):
    assert main(["demo", "--once", "--apply", fix]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # not even "Simulating…"
    [line] = err.splitlines()
    assert line.startswith(f"ebs-analyzer: error: --apply {fix}: ") and says in line


def test_the_flag_a_refusal_names_is_taken_and_the_outcome_said_below_the_report(once_json, capsys):
    """The cost ceiling says "pass --allow-cost-increase": `demo` takes it, as `apply` does.
    The outcome is the last thing printed, below the report it would otherwise scroll past."""
    [row] = [r for r in once_json["resources"] if r.get("name") == "shop-db-data"]
    grow = f"{row['resource_id']}:type=gp2,size=600"  # +$55.00/month, above the $50 ceiling
    both = io.StringIO()
    with contextlib.redirect_stdout(both), contextlib.redirect_stderr(both):
        code = demo_command.run(True, "text", 30.0, "127.0.0.1:9877", None, now=PRESENT, apply=grow)
    assert code == 3
    said = both.getvalue()
    assert said.index("CLOUDWATCH  this run requested") < said.index(f"\napply {grow}\n")
    assert said.splitlines()[-1] == (
        f"ebs-analyzer: refused: {grow} adds +$55.00/month, above apply_max_monthly_increase "
        "($50.00/month): pass --allow-cost-increase to apply it"
    )
    assert main(["demo", "--once", "--apply", grow, "--allow-cost-increase"]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines()[-2] == "applied: modification completed; now gp2 600 GiB"
    [after] = [line for line in out.splitlines() if f"{row['resource_id']}  shop-db-data" in line]
    assert "gp2 600 GiB" in after


def test_allow_cost_increase_without_a_fix_is_refused(capsys):
    assert main(["demo", "--once", "--allow-cost-increase"]) == 2
    assert capsys.readouterr().err == "ebs-analyzer: error: --allow-cost-increase: with --apply\n"


def test_after_the_readmes_fix_the_report_reads_the_volume_on_its_new_limits(capsys):
    """The walk-through: shop-db-data, gp2 50 GiB held at its 150 IOPS baseline, moved to gp3
    3,000 IOPS by `--apply`. Its minutes before were held at the old baseline (flagged by
    CloudWatch's exceeded check): they say nothing of the gp3's caps, and its row says the
    modification is in effect."""
    present = PRESENT
    volume = "vol-7380509773a143d7b"
    fix = f"{volume}:type=gp3,iops=3000,throughput=125"
    logs.configure("warning")
    assert demo_command.run(True, "text", 30.0, "127.0.0.1:9877", None, now=present, apply=fix) == 0
    lines = capsys.readouterr().out.splitlines()
    # Each finding: its severity and rule, then the resource it is about.
    found = [
        (heading.split()[1], about.split()[0])
        for heading, about in itertools.pairwise(lines)
        if re.match(r"  (CRITICAL|WARNING|INFO) ", heading)
    ]
    assert ("volume-iops-cap", "vol-a06e551b98eed4205") in found  # the io2's, at 32,000
    assert [rule for rule, about in found if about == volume] == []
    assert demo_command.run(True, "json", 30.0, "127.0.0.1:9877", None, now=present, apply=fix) == 0
    report = json.loads(capsys.readouterr().out)
    assert [f["rule"] for f in report["findings"] if f["resource_id"] == volume] == []
    [row] = [r for r in report["resources"] if r["resource_id"] == volume]
    assert (row["volume_type"], row["iops_limit"]) == ("gp3", 3_000.0)
    assert row["notes"] == [
        "modified gp2 50 GiB → gp3 50 GiB 3,000 IOPS 125 MiB/s at 21:00 UTC (completed), in "
        "effect: its limits are the new ones, and only its datapoints since are judged against "
        "them"
    ]


def test_demo_once_weighs_the_savings_and_names_the_idle_io2(once_text, once_json):
    """The logs host's index, io2 bought for 5,000 IOPS, has run at 400 for a month: a cut
    proven on that month, beside the findings and never among them."""
    assert "SAVINGS (1)" in once_text
    assert '"logs-index"  saves $293.80 a month' in once_text
    assert "    apply: ebs-analyzer demo --once --apply vol-" in once_text.split("SAVINGS")[1]
    assert "io2 100 GiB, 5,000 IOPS → io2 100 GiB, 480 IOPS" in once_text
    [saving] = once_json["savings"]
    assert (saving["name"], saving["kind"]) == ("logs-index", "iops_above_need")
    assert saving["target"]["iops"] == 480 and saving["window_days"] >= 30
    assert once_json["total_monthly_saving"] == 293.8
    assert saving["resource_id"] not in {f["resource_id"] for f in once_json["findings"]}


def test_the_demos_saving_applies_once_its_past_proves_it(once_json, capsys):
    """The cut `demo --once` printed goes through every guard `apply` has, the fortnight read
    afresh among them, and the simulated volume is cut."""
    logs.configure("warning")
    [saving] = once_json["savings"]
    code = demo_command.run(
        True, "json", 30.0, "127.0.0.1:9877", None, now=PRESENT, apply=saving["fix_id"]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "past:   would have limited 0 min of the last 14 days" in captured.err
    assert "applied: modification completed; now io2 100 GiB, 480 IOPS" in captured.err
    assert json.loads(captured.out)["savings"] == []
