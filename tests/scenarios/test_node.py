"""The incidents replayed through a node agent: what a node on each instance would have read,
one NVMe statistics page per volume every five seconds, counted from the very seconds the
simulator turned into CloudWatch's datapoints. `ebs-analyzer node --replay` finds what the
CloudWatch path finds, and sees a drain seconds after it starts, minutes before CloudWatch can
show it."""

from __future__ import annotations

import base64
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from analyzer import settings
from analyzer.analyze import prices, rules
from analyzer.cli import main
from analyzer.collect import capture
from analyzer.collect.aws import NO_REGION
from analyzer.collect.describe import Ec2Rds
from analyzer.collect.inventory import InstanceTypeCache, discover
from analyzer.collect.logpage import INSTANCE_STORE_MAGIC, Stats, pack
from analyzer.live.cycle import Analyzer, CycleResult
from analyzer.model.metrics import Measure
from analyzer.model.units import KIB
from analyzer.node import agent
from analyzer.sim import nvme
from analyzer.sim.workloads import Demand, constant, periodic, steps
from tests.account import Account
from tests.test_cli import run_cli

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
SETTLE = timedelta(seconds=0)
"""Where the CloudWatch path runs after `now`: moto holds every datapoint at once, so a cycle at
`now` reads the minutes up to it (a balance at once, a sum once its next minute is there)."""
EVERY_S = 5
CONFIG = {"region": ["us-east-1"], "prices": str(prices.DEMO), "pricing_api": False}


def node_capture(
    account: Account,
    instance: str,
    demands: dict[str, Demand],
    minutes: int,
    path: Path,
    balances: dict[str, float] | None = None,
    every_s: int = EVERY_S,
) -> None:
    """Simulate `minutes` of the instance's volumes: CloudWatch's datapoints put in moto, the
    node's pages written to `path`, its inventory (the instance, all its volumes) first."""
    sim = account.simulation(instance, demands, START, balances=balances)
    mine = [v.volume_id for v in Ec2Rds(account.clients).volumes() if v.attached_to == instance]
    describer = agent.NodeDescriber(Ec2Rds(account.clients), lambda: mine)
    inventory = discover(describer, InstanceTypeCache(), with_rds=False)
    out = io.StringIO()
    account.put(nvme.capture(sim, minutes, every_s, out, inventory))
    path.write_text(out.getvalue())


def cloudwatch(now: datetime) -> CycleResult:
    """The CloudWatch path: one cycle over moto, `SETTLE` after `now` as the daemon reads."""
    return Analyzer(settings.load(CONFIG), rules.load()).run(now + SETTLE)


def replay(path: Path, until: datetime | None = None) -> CycleResult:
    """The node path, in process: a cycle at the end of the capture (or at `until`), at the
    capture's own period."""
    found = capture.read(path)
    if until is not None:
        found.reads = [r for r in found.reads if r.t <= until.timestamp()]
    return agent.replay(found, settings.load(CONFIG), rules.load(), found.every())


def replay_cli(path: Path) -> dict[str, Any]:
    """The node path as a user runs it."""
    result = run_cli("node", "--replay", str(path), "--once", "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def keys(findings: Any, ids: set[str]) -> set[tuple[str, str, str]]:
    out = set()
    for f in findings:
        if isinstance(f, dict):
            rule, rid, severity = f["rule"], f["resource_id"], f["severity"]
        else:
            rule, rid, severity = f.rule, f.resource.resource_id, str(f.severity)
        if rid in ids:
            out.add((rule, rid, severity))
    return out


HEAVY_S = 3 * 3600
INCIDENT_1 = Demand(steps((0, 100), (HEAVY_S, 1_500)), io_size_bytes=4 * KIB, read_fraction=0.95)
"""Incident 1: a shop's gp2 50 GiB volume, 100 IOPS, then 1,500 from three hours in: 1,350
credits a second drain the full bucket of 5.4 million in 4,000 s."""


@pytest.fixture(scope="module")
def incident_1(aws_module: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp2", 50, instance)
    path = tmp_path_factory.mktemp("node") / "incident-1.jsonl"
    node_capture(account, instance, {volume: INCIDENT_1}, HEAVY_S // 60 + 40, path)
    return volume, path


def test_incident_1_through_the_node_finds_what_cloudwatch_finds(incident_1) -> None:  # type: ignore[no-untyped-def]
    volume, path = incident_1
    heavy_at = START + timedelta(seconds=HEAVY_S)
    now = heavy_at + timedelta(minutes=40)
    empty_at = heavy_at + timedelta(seconds=4_000)
    report = replay_cli(path)
    central = cloudwatch(now)
    assert keys(report["findings"], {volume}) == keys(central.findings, {volume})
    assert keys(report["findings"], {volume}) == {("gp2-burst-exhaustion", volume, "warning")}
    [warning] = [f for f in report["findings"] if f["resource_id"] == volume]
    # The node's time to empty is the truth at its last read; CloudWatch's, on the same minutes.
    assert warning["seconds_to_empty"] == pytest.approx((empty_at - now).total_seconds(), abs=15)
    [cw] = [f for f in central.findings if f.resource.resource_id == volume]
    assert cw.seconds_to_empty == pytest.approx(warning["seconds_to_empty"], abs=30)
    # Nothing billed for what the node read.
    assert report["watch_cost"]["this_run_metrics_requested"] == 0
    assert report["watch_cost"]["this_run_metrics_from_nvme"] > 0


def test_incident_1_the_node_sees_the_drain_ten_seconds_in(incident_1) -> None:  # type: ignore[no-untyped-def]
    volume, path = incident_1
    heavy_at = START + timedelta(seconds=HEAVY_S)
    at = heavy_at + timedelta(seconds=10)
    node = replay(path, until=at).reading("us-east-1", volume)
    assert node is not None and node.seconds_to_empty is not None
    assert node.seconds_to_empty == pytest.approx(4_000 - 10, rel=0.02)
    # CloudWatch has not published the minute yet: nothing drains in what it shows.
    central = cloudwatch(at).reading("us-east-1", volume)
    assert central is not None and central.seconds_to_empty is None


def pages_only(path: Path, into: Path) -> Path:
    """The capture as a node that could not call AWS writes it: its pages alone, no inventory
    and no BurstBalance reading."""
    lines = [line for line in path.read_text().splitlines() if '"page"' in line]
    into.write_text("".join(line + "\n" for line in lines))
    return into


def replay_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`ebs-analyzer node --replay … --once --format json` in this process, where moto
    answers for AWS: its exit code, stdout and stderr."""
    code = main(["node", "--replay", *args, "--once", "--format", "json"])
    out, err = capsys.readouterr()
    return code, out, err


def row(report: dict[str, Any], resource_id: str) -> dict[str, Any]:
    [found] = [r for r in report["resources"] if r["resource_id"] == resource_id]
    return found


@pytest.mark.parametrize(
    ("flags", "variables"),
    [
        (["--region", "us-east-1"], {"AWS_REGION": "eu-west-1"}),
        ([], {"EBS_ANALYZER_REGION": "us-east-1", "AWS_REGION": "eu-west-1"}),
        ([], {"AWS_REGION": "us-east-1"}),
        ([], {"AWS_DEFAULT_REGION": "us-east-1"}),
        ([], {"AWS_CONFIG_FILE": "profile"}),
    ],
    ids=["flag", "setting", "AWS_REGION", "AWS_DEFAULT_REGION", "profile"],
)
def test_a_capture_of_pages_alone_finds_its_region_and_its_balance_as_the_node_does(
    incident_1,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    variables: dict[str, str],
) -> None:  # type: ignore[no-untyped-def]
    """The region as every command finds it (settings, AWS_REGION, then the SDK's chain); the
    volumes described by EC2 and their BurstBalance read from CloudWatch every ten minutes
    from the first page, as the live node reads it: the drain found as from the whole
    capture, to the second."""
    volume, path = incident_1
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    profile = tmp_path / "config"
    profile.write_text("[default]\nregion = us-east-1\n")
    for name, value in variables.items():
        monkeypatch.setenv(name, str(profile) if value == "profile" else value)
    code, out, err = replay_main(capsys, str(pages_only(path, tmp_path / "pages.jsonl")), *flags)
    assert code == 0, err
    report = json.loads(out)
    assert {r["region"] for r in report["resources"]} == {"us-east-1"}
    assert keys(report["findings"], {volume}) == {("gp2-burst-exhaustion", volume, "warning")}
    whole = replay(path).reading("us-east-1", volume)
    assert whole is not None and whole.seconds_to_empty is not None
    mine = row(report, volume)
    assert mine["seconds_to_empty"] == pytest.approx(whole.seconds_to_empty, abs=5)
    assert mine["burst_balance_percent"] == pytest.approx(39.99, abs=0.5)
    assert err == ""


def test_a_capture_of_pages_alone_without_a_region_says_how_to_name_one(
    incident_1, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    _, path = incident_1
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    code, out, err = replay_main(capsys, str(pages_only(path, tmp_path / "pages.jsonl")))
    assert (code, out, err) == (2, "", f"ebs-analyzer: error: {NO_REGION}\n")


def test_where_cloudwatch_does_not_answer_the_balance_is_unknown_and_said_once(
    incident_1, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    """EC2 answers, CloudWatch cannot be reached: the rates are the pages', the balance is
    not guessed, and one line says why."""
    volume, path = incident_1
    monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDWATCH", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    code, out, err = replay_main(capsys, str(pages_only(path, tmp_path / "pages.jsonl")))
    assert code == 0, err
    report = json.loads(out)
    mine = row(report, volume)
    assert (mine["status"], mine["iops"]) == ("ok", pytest.approx(1_500, rel=0.01))
    assert mine["burst_balance_percent"] is None and mine["seconds_to_empty"] is None
    assert keys(report["findings"], {volume}) == set()
    [said] = err.splitlines()
    assert "node.balance_unread" in said and "cloudwatch:GetMetricData" in said
    assert "127.0.0.1:9" in said


def test_a_capture_of_pages_alone_without_credentials_says_ec2_could_not_describe_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "pages.jsonl"
    with path.open("w") as out:
        writer = capture.Writer(out)
        for i in range(3):
            writer.page(START.timestamp() + 5 * i, "vol0aaaaaaaaaaaaaaaa", pack(Stats()))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    result = run_cli(
        "node", "--replay", str(path), "--once", env={"AWS_EC2_METADATA_DISABLED": "true"}
    )
    assert result.returncode == 3
    assert result.stdout == ""
    [said] = result.stderr.splitlines()
    assert said.startswith("ebs-analyzer: error: ec2:DescribeVolumes in us-east-1: ")
    assert "credentials" in said


@pytest.mark.parametrize(
    ("page", "reason"),
    [
        (
            pack(Stats(), magic=INSTANCE_STORE_MAGIC),
            "magic 0xEC2C0D7E is an instance store volume's, not EBS",
        ),
        (pack(Stats(), size=512), "log page is 512 bytes, not 4,096 (a short read)"),
    ],
    ids=["instance-store", "short-read"],
)
def test_a_page_the_node_cannot_read_fails_that_volumes_series_and_no_other(
    incident_1, tmp_path: Path, page: bytes, reason: str
) -> None:  # type: ignore[no-untyped-def]
    """The instance's root volume last answered a page the node cannot read: its row is an
    error saying where and why; the drained volume's row and finding are as before."""
    volume, path = incident_1
    lines = path.read_text().splitlines()
    inventory = json.loads(lines[0])["inventory"]
    [root] = [v["volume_id"] for v in inventory["volumes"] if v["volume_id"] != volume]
    last = max(i for i, line in enumerate(lines) if '"page"' in line and root in line)
    broken = json.loads(lines[last])
    broken["page"] = base64.b64encode(page).decode("ascii")
    lines[last] = json.dumps(broken)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(line + "\n" for line in lines))
    result = run_cli("node", "--replay", str(bad), "--once", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    failed = row(report, root)
    assert failed["status"] == "error"
    assert failed["error"] == f"{bad}:{last + 1} ({root}): {reason}"
    assert row(report, volume)["status"] == "ok"
    assert keys(report["findings"], {volume}) == {("gp2-burst-exhaustion", volume, "warning")}
    assert "could not be read (their rows say error)" in result.stderr


def first_warning(results: dict[datetime, CycleResult], volume: str) -> datetime:
    return min(
        t for t, r in results.items() if any(f.resource.resource_id == volume for f in r.findings)
    )


def test_incident_1_the_node_warns_when_the_hour_is_due_and_no_later_than_cloudwatch(
    incident_1,
) -> None:  # type: ignore[no-untyped-def]
    """Each path as it runs: the node on data up to its last read, CloudWatch's cycle SETTLE
    after the minutes it reads (its forecast carried to the moment it runs)."""
    volume, path = incident_1
    heavy_at = START + timedelta(seconds=HEAVY_S)
    node = {
        heavy_at + timedelta(seconds=s): replay(path, until=heavy_at + timedelta(seconds=s))
        for s in range(300, 480, 15)
    }
    central = {
        heavy_at + timedelta(seconds=s) + SETTLE: cloudwatch(heavy_at + timedelta(seconds=s))
        for s in range(180, 600, 60)
    }
    # The one-hour warning is due when 3,600 s are left: 400 s into the drain.
    node_first = first_warning(node, volume)
    assert heavy_at + timedelta(seconds=390) <= node_first <= heavy_at + timedelta(seconds=405)
    assert node_first <= first_warning(central, volume)


def test_a_low_bucket_that_starts_draining_is_warned_of_minutes_before_cloudwatch(
    aws_module: None, tmp_path: Path
) -> None:
    """A gp2 50 GiB volume with 30 % of its credits left (1.6 million), above the 20 % floor, at
    100 IOPS, then 1,500: empty about 20 minutes into the drain. The node warns at its first
    reads of it; CloudWatch shows the drain only once its first minute has settled."""
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp2", 50, instance)
    drain_s = 20 * 60
    demand = Demand(steps((0, 100), (drain_s, 1_500)), io_size_bytes=4 * KIB, read_fraction=0.95)
    path = tmp_path / "low.jsonl"
    node_capture(account, instance, {volume: demand}, 30, path, balances={volume: 30.0})
    drain_at = START + timedelta(seconds=drain_s)
    node = {
        drain_at + timedelta(seconds=s): replay(path, until=drain_at + timedelta(seconds=s))
        for s in range(5, 60, 5)
    }
    central = {
        drain_at + timedelta(seconds=s) + SETTLE: cloudwatch(drain_at + timedelta(seconds=s))
        for s in range(0, 240, 60)
    }
    node_first = first_warning(node, volume)
    assert node_first <= drain_at + timedelta(seconds=15)
    assert first_warning(central, volume) - node_first >= timedelta(minutes=2)


def test_three_minutes_of_pages_show_the_balance_from_cloudwatch_s_reading_and_warn(
    aws: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A gp2 50 GiB volume at 30 %, draining at 1,500 IOPS; the node's pages begin 90 s in, and
    CloudWatch's latest BurstBalance stands for the middle of the first minute, a minute
    before them. The balance is that reading less what the pages drained, said to be at most
    what a minute at the burst rate could take lower, and the drain is warned of."""
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp2", 50, instance)
    demand = Demand(constant(1_500), io_size_bytes=4 * KIB, read_fraction=0.95)
    whole = tmp_path / "whole.jsonl"
    node_capture(account, instance, {volume: demand}, 5, whole, balances={volume: 30.0})
    first = (START + timedelta(seconds=90)).timestamp()
    last = first + 180
    lines = [
        line
        for line in whole.read_text().splitlines()
        if '"page"' in line and first <= json.loads(line)["t"] <= last
    ]
    pages = tmp_path / "pages.jsonl"
    pages.write_text("".join(line + "\n" for line in lines))
    [reading] = [
        p["Average"]
        for p in account.cloudwatch.get_metric_statistics(
            Namespace="AWS/EBS",
            MetricName="BurstBalance",
            Dimensions=[{"Name": "VolumeId", "Value": volume}],
            StartTime=START,
            EndTime=START + timedelta(minutes=1),
            Period=60,
            Statistics=["Average"],
        )["Datapoints"]
    ]
    code, out, err = replay_main(capsys, str(pages))
    assert code == 0, err
    report = json.loads(out)
    mine = row(report, volume)
    # 1,350 credits a second above the 150 IOPS baseline, from the first page to the last
    # whole period the pages cover, of 5.4 million.
    drained = 1_350 * (last - first - EVERY_S) / 5.4e6 * 100
    assert mine["burst_balance_percent"] == pytest.approx(reading - drained, abs=0.3)
    # The 60 s between the reading and the first page at 3,000 IOPS: 2,850 × 60 of 5.4 million.
    note = (
        f"BurstBalance carried from CloudWatch's {reading:.0f}% of 06:00:30 UTC across the 60 s "
        "before the node's first page: up to 3.2 points lower"
    )
    assert note in mine["notes"]
    [warning] = [f for f in report["findings"] if f["resource_id"] == volume]
    assert warning["rule"] == "gp2-burst-exhaustion"
    assert note in warning["summary"]


@pytest.fixture(scope="module")
def batch_job(
    aws_module: None, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, tuple[str, str, Path]], CycleResult]:
    """Incident 4: the same batch job on three instance and volume combinations, a node on
    each instance."""
    account = Account()
    job = Demand(constant(60_000), io_size_bytes=112 * KIB, read_fraction=0.6)
    steps_ = {
        "r6i.8xlarge": ("gp3", {"Iops": 16_000, "Throughput": 1_000}),
        "r6in.8xlarge": ("io2", {"Iops": 32_000}),
        "m6in.12xlarge": ("io2", {"Iops": 32_000}),
    }
    folder = tmp_path_factory.mktemp("batch")
    ids: dict[str, tuple[str, str, Path]] = {}
    for instance_type, (volume_type, extra) in steps_.items():
        instance = account.instance(instance_type)
        volume = account.volume(volume_type, 2_000, instance, **extra)
        path = folder / f"{instance_type}.jsonl"
        node_capture(account, instance, {volume: job}, 30, path)
        ids[instance_type] = (instance, volume, path)
    return ids, cloudwatch(START + timedelta(minutes=30))


@pytest.mark.parametrize(
    ("instance_type", "expected"),
    [
        ("r6i.8xlarge", ("volume-throughput-cap", "volume")),
        ("r6in.8xlarge", ("instance-throughput-cap", "instance")),
        ("m6in.12xlarge", ("volume-iops-cap", "volume")),
    ],
)
def test_incident_4_through_the_node_finds_each_cap_cloudwatch_finds(
    batch_job, instance_type: str, expected: tuple[str, str]
) -> None:  # type: ignore[no-untyped-def]
    ids, central = batch_job
    instance, volume, path = ids[instance_type]
    mine = {instance, volume}
    node = replay(path)
    assert keys(node.findings, mine) == keys(central.findings, mine)
    rule, where = expected
    assert {(r, rid) for r, rid, _ in keys(node.findings, mine)} == {
        (rule, volume if where == "volume" else instance)
    }


def test_a_micro_burst_at_the_cap_for_20_s_a_minute_is_found_by_both(
    aws_module: None, tmp_path: Path
) -> None:
    """A Nitro volume at its 3,000 IOPS cap for 20 s of every minute: CloudWatch's exceeded
    check flags each minute; the node, reading every second, sees the very seconds."""
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp3", 200, instance)
    burst = Demand(periodic(6_000, 0, 60, 20), io_size_bytes=16 * KIB)
    path = tmp_path / "micro.jsonl"
    node_capture(account, instance, {volume: burst}, 30, path, every_s=1)
    mine = {instance, volume}
    node = replay(path)
    flags = node.snapshot.get("us-east-1", volume)
    assert flags is not None
    exceeded = flags.measure(Measure.IOPS_EXCEEDED)
    assert exceeded.period_s == 1
    # 20 of every 60 seconds flagged, to the second.
    assert sum(exceeded.values[-60:]) == 20
    central = cloudwatch(START + timedelta(minutes=30))
    assert keys(node.findings, mine) == keys(central.findings, mine)
    assert {r for r, _, _ in keys(node.findings, mine)} == {"volume-iops-cap"}
