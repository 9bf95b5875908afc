"""The node agent over a sysfs tree built here and a stand-in for the kernel's NVMe ioctl: what
it reads, what it keeps when a read fails, what it captures, and the daemon's cycle on it."""

from __future__ import annotations

import io
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from analyzer import settings
from analyzer.analyze import rules
from analyzer.collect import capture
from analyzer.collect.aws import NO_REGION
from analyzer.collect.describe import Ec2Rds
from analyzer.collect.devices import Device, DeviceError
from analyzer.collect.logpage import INSTANCE_STORE_MAGIC, Stats, pack
from analyzer.collect.queries import MetricQuery
from analyzer.collect.window import Window
from analyzer.errors import ConfigError
from analyzer.live.cycle import Analyzer
from analyzer.model.series import Series
from analyzer.node import agent
from analyzer.node.source import NodeMetrics
from analyzer.node.telemetry import NodeCollector
from tests.account import Account

EBS = "Amazon Elastic Block Store"
T0 = datetime(2026, 11, 21, 6, 0, tzinfo=UTC).timestamp()


def controller(sys_root: Path, name: str, volume_id: str) -> None:
    ctrl = sys_root / "class" / "nvme" / name
    (ctrl / f"{name}n1").mkdir(parents=True)
    (ctrl / "model").write_text(f"{EBS:<40}\n")
    (ctrl / "serial").write_text(f"{volume_id.replace('-', ''):<20}\n")


class Kernel:
    """Answers each device's page from its counters, grown by `iops` a second of the clock; a
    volume in `failing` raises the error given."""

    def __init__(self, clock: list[float], iops: dict[str, float]) -> None:
        self.clock = clock
        self.iops = iops
        self.failing: dict[str, DeviceError] = {}
        self.offset: dict[str, float] = {}

    def read(self, device: Device) -> bytes:
        if device.volume_id in self.failing:
            raise self.failing[device.volume_id]
        elapsed = self.clock[0] - T0 - self.offset.get(device.volume_id, 0.0)
        ops = int(self.iops[device.volume_id] * elapsed)
        return pack(Stats(read_ops=ops, read_bytes=ops * 4096, read_time_us=ops * 500))


@pytest.fixture
def node(tmp_path: Path) -> Iterator[tuple[agent.Reader, Kernel, list[float]]]:
    controller(tmp_path, "nvme1", "vol-0aaaaaaaaaaaaaaaa")
    controller(tmp_path, "nvme2", "vol-0bbbbbbbbbbbbbbbb")
    clock = [T0]
    kernel = Kernel(clock, {"vol-0aaaaaaaaaaaaaaaa": 100.0, "vol-0bbbbbbbbbbbbbbbb": 0.0})
    reader = agent.Reader(
        NodeMetrics("us-east-1"),
        5,
        tmp_path,
        Path("/dev"),
        read=kernel.read,
        clock=lambda: clock[0],
    )
    yield reader, kernel, clock


def test_each_read_lands_in_its_volumes_counters(node) -> None:  # type: ignore[no-untyped-def]
    reader, _, clock = node
    for step in range(4):
        clock[0] = T0 + 5 * step
        reader.sample()
    counters = reader.metrics.counters["vol-0aaaaaaaaaaaaaaaa"]
    assert [s.stats.read_ops for s in counters.samples] == [0, 500, 1000, 1500]
    assert reader.reads == {"ok": 8}


def test_a_read_sooner_than_half_a_period_is_not_taken(node) -> None:  # type: ignore[no-untyped-def]
    reader, _, clock = node
    reader.sample()
    clock[0] += 2
    reader.sample()
    assert reader.reads == {"ok": 2}


def test_a_failed_read_marks_the_volume_unreadable_until_one_succeeds(node) -> None:  # type: ignore[no-untyped-def]
    reader, kernel, clock = node
    why = DeviceError(
        "vol-0aaaaaaaaaaaaaaaa (/dev/nvme1n1): reading the NVMe log page needs CAP_SYS_ADMIN"
    )
    kernel.failing["vol-0aaaaaaaaaaaaaaaa"] = why
    with capture_logs() as logs:
        reader.sample()
        clock[0] += 5
        reader.sample()
    assert reader.metrics.unreadable == {"vol-0aaaaaaaaaaaaaaaa": str(why)}
    # Said once, not at every read.
    assert [e["event"] for e in logs if e["event"] != "node.devices"] == ["node.read_failed"]
    assert reader.reads == {"error": 2, "ok": 2}
    del kernel.failing["vol-0aaaaaaaaaaaaaaaa"]
    clock[0] += 5
    reader.sample()
    assert reader.metrics.unreadable == {}


def test_a_counter_reset_is_counted_and_said(node) -> None:  # type: ignore[no-untyped-def]
    reader, kernel, clock = node
    reader.sample()
    clock[0] += 60
    reader.sample()
    kernel.offset["vol-0aaaaaaaaaaaaaaaa"] = 55.0  # detached and attached again
    clock[0] += 5
    with capture_logs() as logs:
        reader.sample()
    assert reader.metrics.counters["vol-0aaaaaaaaaaaaaaaa"].resets == 1
    assert ("node.counter_reset", "vol-0aaaaaaaaaaaaaaaa") in [
        (e["event"], e.get("volume_id")) for e in logs
    ]


class BalanceReadings:
    """CloudWatch's BurstBalance, as the node asks for it."""

    def __init__(self, percent: float) -> None:
        self.percent = percent
        self.asked: list[str] = []
        self.region = "us-east-1"

    def fetch(self, queries, window):  # type: ignore[no-untyped-def]
        from analyzer.model.state import FetchStats

        self.asked += [q.resource_id for q in queries]
        last = datetime.fromtimestamp(window.end.timestamp() - 60, UTC)
        return {q: Series.of([(last, self.percent)], 60) for q in queries}, FetchStats()


def test_cloudwatchs_balance_anchors_the_model_every_ten_minutes(node) -> None:  # type: ignore[no-untyped-def]
    from analyzer.model.resources import Volume

    reader, _, clock = node
    readings = BalanceReadings(73.0)
    reader.cloudwatch = readings
    gp2 = Volume("vol-0aaaaaaaaaaaaaaaa", "us-east-1", "gp2", 50, "in-use", attached_to="i-1")
    gp3 = Volume("vol-0bbbbbbbbbbbbbbbb", "us-east-1", "gp3", 50, "in-use", attached_to="i-1")
    reader.metrics.volumes = {v.volume_id: v for v in (gp2, gp3)}
    reader.sample()
    clock[0] += 300
    reader.sample()
    clock[0] += 300
    reader.sample()
    # gp3 has no bucket: never asked. Asked at the first read and ten minutes on.
    assert readings.asked == ["vol-0aaaaaaaaaaaaaaaa"] * 2
    [first, second] = reader.metrics.anchors["vol-0aaaaaaaaaaaaaaaa"]
    assert first.percent == second.percent == 73.0
    assert second.t - first.t == 600


def test_a_capture_holds_the_inventory_then_every_page(node, aws: None) -> None:  # type: ignore[no-untyped-def]
    reader, _, clock = node
    account = Account()
    instance = account.instance("m5.large")
    mine = [account.volume("gp2", 50, instance), account.volume("gp2", 50, instance)]
    describer = agent.NodeDescriber(Ec2Rds(account.clients), lambda: mine)
    out = io.StringIO()
    real_sleep = agent.time.sleep

    def tick(seconds: float) -> None:
        clock[0] += seconds

    agent.time.sleep = tick  # type: ignore[assignment]
    try:
        pages = agent.capture_for(reader, 20, out, describer)
    finally:
        agent.time.sleep = real_sleep  # type: ignore[assignment]
    assert pages == 2 * 5  # at 0, 5, 10, 15 and 20 s
    path = Path(reader.sys_root) / "capture.jsonl"
    path.write_text(out.getvalue())
    found = capture.read(path)
    assert found.inventory is not None
    assert sorted(v.volume_id for v in found.inventory.volumes) == sorted(mine)
    assert [i.instance_id for i in found.inventory.instances] == [instance]
    assert found.every() == 5


def test_the_describer_asks_only_for_the_nodes_volumes_and_their_instance(aws: None) -> None:
    account = Account()
    instance = account.instance("m5.large")
    other = account.instance("m5.large")
    mine = account.volume("gp2", 50, instance)
    account.volume("gp2", 50, other)
    describer = agent.NodeDescriber(Ec2Rds(account.clients), lambda: [mine])
    assert [i.instance_id for i in describer.instances()] == [instance]
    assert [v.volume_id for v in describer.volumes()] == [mine]
    assert describer.db_instances() == []


def test_without_a_volume_the_node_says_where_it_looked(tmp_path: Path) -> None:
    reader = agent.Reader(NodeMetrics("us-east-1"), 5, tmp_path, Path("/dev"))
    with pytest.raises(ConfigError, match=f"no EBS volume under {tmp_path}/class/nvme"):
        agent.capture_for(reader, 5, io.StringIO(), None)


def test_a_capture_without_an_inventory_finds_its_region_as_every_command_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "bare.jsonl"
    capture.Writer(path.open("w")).page(T0, "vol0aaaaaaaaaaaaaaaa", pack(Stats()))
    found = capture.read(path)
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    with pytest.raises(ConfigError) as raised:
        agent.replay(found, settings.load({}), rules.load(), 5)
    assert str(raised.value) == NO_REGION


@pytest.mark.parametrize(
    ("page", "reason"),
    [
        (
            pack(Stats(), magic=INSTANCE_STORE_MAGIC),
            "magic 0xEC2C0D7E is an instance store volume's, not EBS",
        ),
        (pack(Stats(), size=1_000), "log page is 1,000 bytes, not 4,096 (a short read)"),
    ],
    ids=["instance-store", "short-read"],
)
def test_a_page_the_node_cannot_read_fails_that_volumes_series_and_no_other(
    node, page: bytes, reason: str
) -> None:  # type: ignore[no-untyped-def]
    """Read live, as in a replay: the volume is unreadable, saying which device and why,
    written so to a capture; the other volume's reads go on."""
    reader, kernel, clock = node
    good = kernel.read

    def read(device: Device) -> bytes:
        return page if device.volume_id == "vol-0bbbbbbbbbbbbbbbb" else good(device)

    reader.read = read
    out = io.StringIO()
    reader.capture = capture.Writer(out)
    for _ in range(3):
        reader.sample()
        clock[0] += 5
    where = f"vol-0bbbbbbbbbbbbbbbb ({Path('/dev')}/nvme2n1)"
    assert reader.metrics.unreadable == {"vol-0bbbbbbbbbbbbbbbb": f"{where}: {reason}"}
    assert reader.reads == {"ok": 3, "error": 3}
    window = Window(datetime.fromtimestamp(T0, UTC), datetime.fromtimestamp(T0 + 15, UTC), 5)
    ops = [
        MetricQuery(vid, "AWS/EBS", "VolumeReadOps", (("VolumeId", vid),), "Sum", 5)
        for vid in ("vol-0aaaaaaaaaaaaaaaa", "vol-0bbbbbbbbbbbbbbbb")
    ]
    answered, _ = reader.metrics.fetch(ops, window)
    assert answered[ops[0]].values.tolist() == [500.0, 500.0]
    assert answered[ops[1]].error == f"{where}: {reason}"
    errors = [line for line in out.getvalue().splitlines() if '"error"' in line]
    assert len(errors) == 3 and all(reason in line for line in errors)


def test_the_daemon_runs_its_cycle_on_the_nodes_reads(node, aws: None) -> None:  # type: ignore[no-untyped-def]
    """The node as a daemon, one cycle in process: the volumes' series and its own metrics on
    /metrics, nothing billed, a volume whose page cannot be read an error, never zeros."""
    reader, kernel, clock = node
    account = Account()
    instance = account.instance("m5.large")
    volumes = [account.volume("gp2", 50, instance), account.volume("gp2", 50, instance)]
    sys_root = reader.sys_root
    for name in ("nvme1", "nvme2"):
        for child in (sys_root / "class" / "nvme" / name).iterdir():
            if child.is_file():
                child.unlink()
            else:
                child.rmdir()
        (sys_root / "class" / "nvme" / name).rmdir()
    controller(sys_root, "nvme1", volumes[0])
    controller(sys_root, "nvme2", volumes[1])
    kernel.iops = {volumes[0]: 1_500.0, volumes[1]: 10.0}
    kernel.failing[volumes[1]] = DeviceError(f"{volumes[1]}: NVMe status 0x4002")
    config = settings.load({"region": ["us-east-1"], "listen": "127.0.0.1:0", "pricing_api": False})
    process, server, node_reader = agent.serve(
        config, rules.load(), 5, sys_root, Path("/dev"), read=kernel.read
    )
    node_reader.clock = lambda: clock[0]
    node_reader.cloudwatch = None
    process.clock = lambda: datetime.fromtimestamp(clock[0], UTC)
    process.analyzer.clock = process.clock
    process.telemetry.registry.register(NodeCollector(node_reader, "node-a"))
    server.start()
    try:
        with capture_logs() as logs:
            for _ in range(4):
                assert process.cycle()
                clock[0] += 5
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics") as answer:
            exposition = answer.read().decode()
    finally:
        server.stop()
    lines = exposition.splitlines()
    [iops] = [line for line in lines if line.startswith("ebs_analyzer_volume_iops{")]
    assert f'volume_id="{volumes[0]}"' in iops and iops.endswith(" 1500.0")
    [down] = [line for line in lines if f'volume_id="{volumes[1]}"' in line and "_up{" in line]
    assert 'status="error"' in down and down.endswith(" 0.0")
    assert 'ebs_analyzer_node_page_reads_total{outcome="error"}' in exposition
    assert 'ebs_analyzer_node_volumes{readable="false"} 1.0' in exposition
    assert 'ebs_analyzer_node_info{every_seconds="5",node="node-a"} 1.0' in exposition
    assert 'ebs_analyzer_cloudwatch_metrics_requested_total{tier="full"} 0.0' in exposition
    # Said as the node's failure, not CloudWatch's.
    said = {e["event"] for e in logs}
    assert "node.metrics_failed" in said and "cloudwatch.failed" not in said


def test_a_node_reads_its_own_volumes_whatever_the_shared_settings_say_of_coverage() -> None:
    shared = settings.load({"node_coverage_url": "http://prometheus:9090"})
    mine = agent.node_settings(shared, 5)
    assert mine.node_coverage_url is None
    assert Analyzer(mine, rules.load()).coverage.prometheus is None
    assert Analyzer(shared, rules.load()).coverage.prometheus is not None


def test_a_node_runs_in_the_first_region_named_else_the_sdks_default(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    assert agent.region_of(settings.load({"region": ["eu-west-1", "us-east-1"]})) == "eu-west-1"
    with pytest.raises(ConfigError) as raised:
        agent.region_of(settings.load({}))
    assert str(raised.value) == NO_REGION
    monkeypatch.setenv("AWS_REGION", "us-east-2")
    assert agent.region_of(settings.load({})) == "us-east-2"


def test_one_cycles_analyzer_is_wired_as_the_daemons(tmp_path: Path) -> None:
    """`node --once`'s analyzer: the node's settings in its region, its period, nothing billed,
    its regions read from the node, its balances qualified by the node."""
    shared = settings.load({"region": ["eu-west-1"], "pricing_api": False})
    analyzer, reader = agent.analyzer_for(shared, rules.load(), 2, tmp_path, tmp_path)
    assert analyzer.settings.region == ["eu-west-1"]
    assert (analyzer.settings.interval, analyzer.settings.polling) == (2.0, "full")
    assert analyzer.resolution_s == 2 and reader.every_s == 2
    assert not analyzer.adaptive
    assert analyzer.scopes.connect("eu-west-1").metrics is reader.metrics
    # Its balance, where carried from a reading before the first page, says so in its rows.
    assert analyzer.qualified == reader.metrics.qualified
