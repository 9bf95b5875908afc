"""The command line as a user meets it: exit codes, one-line errors, stdout for the report."""

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from moto.server import ThreadedMotoServer

from analyzer.analyze import rules
from analyzer.cli import main
from analyzer.model.units import KIB
from analyzer.sim.workloads import Demand, steps
from tests.account import Account


def run_cli(*args, env=None, timeout=120, cwd=None):
    environment = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "analyzer", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=timeout,
        check=False,
        cwd=cwd,
    )


def with_cloudwatch_at(moto_server, cloudwatch, *args, **env):
    """`ebs-analyzer ARGS --region us-east-1` over a moto account with a gp2 volume on an
    m5.large, its CloudWatch calls sent to `cloudwatch`."""
    account = Account(endpoint_url=moto_server)
    account.volume("gp2", 50, account.instance("m5.large"))
    endpoints = {"AWS_ENDPOINT_URL": moto_server, "AWS_ENDPOINT_URL_CLOUDWATCH": cloudwatch}
    return run_cli(*args, "--region", "us-east-1", env={**endpoints, **env})


def test_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "once" in out and "rules" in out and "exit codes" in out


def test_a_wrong_flag_exits_2_with_usage(capsys):
    with pytest.raises(SystemExit) as info:
        main(["once", "--formt", "json"])
    assert info.value.code == 2
    assert "unrecognized arguments: --formt json (did you mean --format?)" in (
        capsys.readouterr().err
    )


def test_rules_check_on_the_shipped_rules(capsys):
    assert main(["rules", "check"]) == 0
    assert "rule(s) valid" in capsys.readouterr().out


def test_rules_list(capsys):
    assert main(["rules", "list"]) == 0
    assert "gp2-burst-exhaustion" in capsys.readouterr().out


def test_a_broken_rule_file_exits_2_with_one_line(tmp_path, capsys):
    (tmp_path / "mine.yaml").write_text(
        "rules:\n  - id: x\n    kind: iops_cap\n    resource_types: [volume]\n"
        "    severity: warning\n    utilisation: 0.9\n"
    )
    assert main(["rules", "check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "mine.yaml: rule 'x': utilisation: unknown key" in err
    assert "Traceback" not in err


def test_files_that_are_not_utf_8_exit_2_with_one_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "mine.yaml").write_bytes(b"rules: []\n# caf\xe9\n")
    assert main(["rules", "check", str(tmp_path / "rules")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "mine.yaml: not UTF-8 text" in err
    config = tmp_path / "config.yaml"
    config.write_bytes(b"region: [us-east-1]\n# \xff\n")
    monkeypatch.setenv("EBS_ANALYZER_CONFIG", str(config))
    assert main(["once"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config.yaml: not UTF-8 text" in err


def test_rules_with_none_in_force_exit_2(tmp_path, capsys):
    """A directory holding only an empty file used to run with zero rules and exit 0."""
    (tmp_path / "empty.yaml").write_text("")
    assert main(["rules", "check", "--alone", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no rule in force" in err


def test_once_with_broken_rules_exits_2_before_calling_aws(tmp_path, capsys):
    (tmp_path / "a.yaml").write_text("rules: [")
    assert main(["once", "--rules", str(tmp_path), "--region", "us-east-1"]) == 2


def test_no_region_exits_2(monkeypatch, capsys):
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    assert main(["once"]) == 2
    err = capsys.readouterr().err
    assert "no AWS region: pass --region, or set EBS_ANALYZER_REGION, AWS_REGION or" in err
    assert "AWS_DEFAULT_REGION" in err


def test_unreachable_aws_exits_3_naming_the_call():
    result = run_cli(
        "once",
        "--region",
        "us-east-1",
        env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1"},
    )
    assert result.returncode == 3
    assert result.stderr.startswith("ebs-analyzer: error: ec2:DescribeVolumes in us-east-1:")
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.fixture
def moto_server():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.mark.slow
def test_once_json_against_an_endpoint(moto_server):
    account = Account(endpoint_url=moto_server)
    instance = account.instance("m5.large")
    volume = account.volume("gp2", 50, instance)
    start = (datetime.now(UTC) - timedelta(hours=1)).replace(second=0, microsecond=0)
    heavy = Demand(steps((0, 100), (20 * 60, 1_500)), io_size_bytes=4 * KIB)
    account.put(account.simulation(instance, {volume: heavy}, start).run(60))

    result = run_cli(
        "once", "--format", "json", "--region", "us-east-1", env={"AWS_ENDPOINT_URL": moto_server}
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    rows = {r["resource_id"]: r for r in report["resources"]}
    assert rows[volume]["attached_to"] == instance
    assert rows[volume]["status"] == "ok"
    assert {f["rule"] for f in report["findings"] if f["resource_id"] == volume} == {
        "gp2-burst-exhaustion"
    }

    text = run_cli("once", "--region", "us-east-1", env={"AWS_ENDPOINT_URL": moto_server})
    assert text.returncode == 0
    assert "gp2-burst-exhaustion" in text.stdout
    assert "→ 0 in" in text.stdout

    # The region from AWS_REGION alone, as `docker run -e AWS_REGION=…` gives it.
    only_aws_region = {k: v for k, v in os.environ.items() if k != "AWS_DEFAULT_REGION"}
    only_aws_region |= {"AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": moto_server}
    alone = subprocess.run(
        [sys.executable, "-m", "analyzer", "once"],
        capture_output=True,
        text=True,
        env=only_aws_region,
        timeout=120,
        check=False,
    )
    assert alone.returncode == 0, alone.stderr
    assert "gp2-burst-exhaustion" in alone.stdout


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def running_daemon(
    port: int, state_file: Path, *extra: str, env: dict[str, str], interval_s: int = 2, **io: Any
) -> subprocess.Popen[str]:
    """`ebs-analyzer run` in a process of its own, in us-east-1, on 127.0.0.1:`port`, with
    these variables beside the test's environment (AWS_ENDPOINT_URL, …); `io`: Popen's
    stdout and stderr (the terminal's by default)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "analyzer",
            "run",
            "--region",
            "us-east-1",
            "--listen",
            f"127.0.0.1:{port}",
            "--interval",
            str(interval_s),
            "--state-file",
            str(state_file),
            *extra,
        ],
        env={**os.environ, **env},
        text=True,
        **io,
    )


def wait_for(url: str, want: int = 200, timeout_s: float = 60.0) -> tuple[int, str]:
    """Poll until the URL answers `want` (the daemon starts, its first cycle completes)."""
    import time
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout_s
    last: tuple[int, str] = (0, "")
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                last = (response.status, response.read().decode())
        except urllib.error.HTTPError as exc:
            last = (exc.code, exc.read().decode())
        except OSError:
            pass
        if last[0] == want:
            return last
        time.sleep(0.2)
    return last


@pytest.mark.slow
def test_run_serves_metrics_and_stops_cleanly_on_sigterm(moto_server, tmp_path):
    import signal

    from tests.helpers import promtool

    account = Account(endpoint_url=moto_server)
    instance = account.instance("m5.large")
    volume = account.volume("gp2", 50, instance)
    start = (datetime.now(UTC) - timedelta(hours=1)).replace(second=0, microsecond=0)
    heavy = Demand(steps((0, 100), (20 * 60, 1_500)), io_size_bytes=4 * KIB)
    account.put(account.simulation(instance, {volume: heavy}, start).run(60))

    port = free_port()
    process = running_daemon(
        port,
        tmp_path / "state.json",
        "--dry-run",
        "--log-format",
        "json",
        env={"AWS_ENDPOINT_URL": moto_server},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        assert wait_for(f"{base}/healthz")[0] == 200
        status, body = wait_for(f"{base}/readyz")
        assert (status, body) == (200, "ready\n")
        _, metrics = wait_for(f"{base}/metrics")
        assert f'volume_id="{volume}"' in metrics
        assert 'ebs_analyzer_finding{bottleneck="burst_credits"' in metrics
        assert "ebs_analyzer_cloudwatch_metrics_requested_total" in metrics
        checked = promtool("check", "metrics", stdin=metrics)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert wait_for(f"{base}/nope", want=404)[0] == 404
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    events = [json.loads(line)["event"] for line in err.splitlines() if line.startswith("{")]
    assert "daemon.started" in events
    assert "poll.completed" in events
    assert "notification.logged" in events  # --dry-run: the payload goes to the log
    assert events[-1] == "daemon.stopped"
    assert json.loads((tmp_path / "state.json").read_text())["alerts"]


def test_run_with_a_bad_interval_exits_2_naming_it(capsys):
    assert main(["run", "--interval", "abc", "--region", "us-east-1"]) == 2
    err = capsys.readouterr().err
    assert err == "ebs-analyzer: error: --interval: 'abc' is not a duration such as 90s, 15m, 1h\n"


def test_run_on_a_port_in_use_exits_2(capsys):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["run", "--listen", f"127.0.0.1:{port}", "--region", "us-east-1"]) == 2
    assert f"--listen 127.0.0.1:{port}:" in capsys.readouterr().err


def test_run_without_a_region_exits_2_at_start(monkeypatch, capsys):
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    assert main(["run", "--listen", "127.0.0.1:0"]) == 2
    assert "no AWS region" in capsys.readouterr().err


def test_cost_prints_the_bill_per_region_without_fetching_metrics(aws, capsys):
    account = Account()
    instance = account.instance("m5.large")
    account.volume("gp2", 50, instance)
    assert main(["cost", "--region", "us-east-1"]) == 0
    out = capsys.readouterr().out
    assert "ALL IDLE" in out and "POLLING FULL" in out and "us-east-1" in out
    assert main(["cost", "--region", "us-east-1", "--format", "json"]) == 0
    bill = json.loads(capsys.readouterr().out)["us-east-1"]
    # Two volumes (the root and the gp2 data volume) and an m5.large on Nitro:
    # idle, each volume's two operation counts every 10 minutes; the instance nothing.
    assert bill["idle"] == pytest.approx(2 * 2 * 30 * 86400 / 600 * 1e-5, abs=0.01)
    assert bill["idle"] < bill["active"] < bill["hot"] < bill["full"]


def test_cost_with_a_sample_prints_the_bill_at_todays_load(aws, capsys):
    account = Account()
    instance = account.instance("m5.large")
    volume = account.volume("gp2", 50, instance)
    account.volume("gp3", 100, instance)
    start = (datetime.now(UTC) - timedelta(hours=1)).replace(second=0, microsecond=0)
    heavy = Demand(steps((0, 100), (20 * 60, 1_500)), io_size_bytes=4 * KIB)
    account.put(account.simulation(instance, {volume: heavy}, start).run(60))

    assert main(["cost", "--region", "us-east-1", "--sample", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    bill = json.loads(out)["us-east-1"]
    # The draining gp2 volume is hot, read every third minute once its alert fires steadily;
    # the gp3 and the root volume are idle.
    assert bill["idle"] < bill["sampled"] < bill["hot"]
    assert err.startswith("ebs-analyzer: fetched ") and err.count("\n") == 1

    assert main(["cost", "--region", "us-east-1", "--sample"]) == 0
    out = capsys.readouterr().out
    assert "AT TODAY'S LOAD" in out and f"${bill['sampled']:,.2f}" in out
    # Without it, nothing is read.
    assert main(["cost", "--region", "us-east-1"]) == 0
    out, err = capsys.readouterr()
    assert "AT TODAY'S LOAD" not in out and "--sample" in out and err == ""


def test_cost_with_a_sample_cloudwatch_does_not_answer_keeps_the_bracket_and_exits_3(
    moto_server, failing_endpoint
):
    result = with_cloudwatch_at(moto_server, failing_endpoint, "cost", "--sample")
    assert result.returncode == 3
    assert "ALL IDLE" in result.stdout and "AT TODAY'S LOAD" not in result.stdout
    assert "error: no metric could be read" in result.stderr
    assert "no bill at today's load" in result.stderr


def test_a_bad_log_level_in_the_environment_is_one_line(monkeypatch, capsys):
    monkeypatch.setenv("EBS_ANALYZER_LOG_LEVEL", "bogus")
    assert main(["once"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "EBS_ANALYZER_LOG_LEVEL 'bogus'" in err


@pytest.mark.slow
def test_the_demo_ignores_settings_meant_for_a_real_account(monkeypatch, capsys):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_PROFILE", "nosuch")
    assert main(["demo", "--once", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"]
    assert os.environ["AWS_PROFILE"] == "nosuch"  # given back afterwards


def answering(status: int, body: bytes) -> Iterator[str]:
    """An endpoint that answers every request with this status and JSON body."""

    class Fixed(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(status)
            self.send_header("Content-Type", "application/x-amz-json-1.0")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Fixed)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def failing_endpoint() -> Iterator[str]:
    """An endpoint that answers every request with HTTP 500, as CloudWatch does in an
    outage."""
    yield from answering(500, b'{"__type": "InternalFailure", "message": "internal failure"}')


def test_an_empty_aws_profile_is_no_profile(moto_server):
    """Compose's `${AWS_PROFILE:-}` sets AWS_PROFILE to "": boto3 alone would look for a
    profile named "" and stop; keys from the environment must work beside it."""
    result = run_cli(
        "once",
        "--region",
        "us-east-1",
        env={"AWS_ENDPOINT_URL": moto_server, "AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": ""},
    )
    assert result.returncode == 0, result.stderr
    assert "could not be found" not in result.stderr


def test_a_missing_aws_profile_is_one_line_whatever_the_flags():
    """The region's name is checked against botocore's data, not through a session, which
    would stop at the missing profile before the settings are loaded."""
    result = run_cli("once", "--region", "us-east-1", env={"AWS_PROFILE": "no-such-profile"})
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "ebs-analyzer: error: AWS profile: The config profile (no-such-profile) could not be found"
    ]


def test_once_exits_3_when_no_metric_could_be_read(moto_server, failing_endpoint):
    """EC2 answers, every GetMetricData call fails: the report gives no verdict and the exit
    code says the data was not read, in one line."""
    result = with_cloudwatch_at(moto_server, failing_endpoint, "once", AWS_MAX_ATTEMPTS="1")
    assert result.returncode == 3, result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.startswith("ebs-analyzer:")]
    assert line.startswith(
        "ebs-analyzer: error: no metric could be read: cloudwatch:GetMetricData in us-east-1:"
    )
    assert "Traceback" not in result.stderr
    assert "No verdict" in result.stdout
    assert "No findings" not in result.stdout


def test_a_wrong_flag_on_a_subcommand_gets_that_subcommands_usage(capsys):
    with pytest.raises(SystemExit) as info:
        main(["rules", "list", "--bogus"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: ebs-analyzer rules list")
    assert "ebs-analyzer rules list: error: unrecognized arguments: --bogus" in err


def test_rules_list_has_a_header(capsys):
    assert main(["rules", "list"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.split() == ["RULE", "KIND", "SEVERITY", "APPLIES", "TO", "FILE"]


def test_rules_list_keeps_its_columns_in_line_past_a_very_long_rule_id(tmp_path, capsys):
    long_id = "volume-iops-cap-for-the-checkout-database-in-every-region-" * 2
    (tmp_path / "mine.yaml").write_text(
        f"rules:\n  - id: {long_id.rstrip('-')}\n    kind: iops_cap\n"
        "    resource_types: [volume, instance, db_instance]\n    severity: critical\n"
        "    utilization: 0.9\n    window: 15m\n    min_fraction: 0.8\n"
    )
    assert main(["rules", "list", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "\x1b" not in "".join(lines)  # no colour in a pipe
    [mine] = [line for line in lines if line.startswith(long_id.rstrip("-"))]
    assert mine.split() == [
        long_id.rstrip("-"),
        "iops_cap",
        "critical",
        "volume,instance,db_instance",
        "mine.yaml",
    ]
    header = lines[0]
    # Every row, the long one included, starts each cell where the header names its column.
    starts = [header.index(column) for column in ("KIND", "SEVERITY", "APPLIES TO", "FILE")]
    for line in lines[1:]:
        assert all(line[i - 2 : i] == "  " and line[i] != " " for i in starts), line


@pytest.fixture
def malformed_endpoint() -> Iterator[str]:
    """An endpoint that answers every GetMetricData with an answer off its contract: a
    MetricDataResults that is a string, on which botocore's own parser trips."""
    yield from answering(200, b'{"MetricDataResults": "x"}')


def test_once_exits_3_in_one_line_when_cloudwatch_answers_off_its_contract(
    moto_server, malformed_endpoint
):
    """It ended in a traceback (AttributeError: 'str' object has no attribute 'get')."""
    result = with_cloudwatch_at(moto_server, malformed_endpoint, "once")
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.startswith("ebs-analyzer:")]
    assert line.startswith(
        "ebs-analyzer: error: no metric could be read: cloudwatch:GetMetricData in us-east-1: "
        "malformed answer: "
    )
    assert "No verdict" in result.stdout


OVERRIDE = "rules:\n  - id: gp2-burst-exhaustion\n    horizon: 2h\n"
"""A partial override as users write it: a shipped rule's id and the one key it changes."""


def test_rules_check_layers_a_directory_on_the_shipped_rules(tmp_path, capsys):
    (tmp_path / "mine.yaml").write_text(OVERRIDE)
    shipped = len(rules.load())
    assert main(["rules", "check", str(tmp_path)]) == 0
    assert main(["rules", "check", "builtin", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == out[1] and out[0].startswith(f"{shipped} rule(s) valid")


def test_rules_check_alone_checks_a_complete_set_and_says_how_to_layer(tmp_path, capsys):
    (tmp_path / "mine.yaml").write_text(OVERRIDE)
    assert main(["rules", "check", "--alone", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "'gp2-burst-exhaustion' is a shipped rule's id" in err
    assert f"--rules builtin --rules {tmp_path}" in err


def test_rules_list_shows_the_override_in_force(tmp_path, capsys):
    (tmp_path / "mine.yaml").write_text(OVERRIDE)
    assert main(["rules", "list", str(tmp_path)]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "gp2-burst-exhaustion" in x]
    assert "mine.yaml" in line


def test_recordings_lists_the_shipped_ones_by_the_name_from_takes(capsys):
    assert main(["recordings"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("incident-3-fortnight  2026-11-02 00:03 → 2026-11-13 20:03 UTC")
    assert "1 resource in us-east-1" in line


@pytest.mark.slow
def test_backtest_replays_a_shipped_recording_by_name_and_logs_no_alert(capsys):
    """The replay's alerts are its report: none of them is logged on stderr beside it."""
    assert main(["backtest", "--from", "incident-3-fortnight", "--since", "2d"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Backtest ")
    assert err == ""


def test_from_a_name_neither_a_file_nor_shipped_lists_the_shipped_ones(capsys):
    assert main(["backtest", "--from", "tuesday.json.gz"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "tuesday.json.gz: no such file, nor a shipped recording" in err
    assert "incident-3-fortnight" in err


def test_an_unknown_rule_key_suggests_the_kinds_own(tmp_path, capsys):
    (tmp_path / "mine.yaml").write_text(
        "rules:\n  - id: x\n    kind: iops_cap\n    resource_types: [volume]\n"
        "    severity: warning\n    utilisation: 0.9\n"
    )
    assert main(["rules", "check", str(tmp_path)]) == 2
    assert "utilisation: unknown key (did you mean 'utilization'?)" in capsys.readouterr().err


def test_iam_policy_prints_the_shipped_policy(capsys):
    assert main(["iam-policy"]) == 0
    printed = json.loads(capsys.readouterr().out)
    shipped = Path(__file__).resolve().parents[1] / "deploy" / "iam-policy.json"
    assert printed == json.loads(shipped.read_text())


def test_a_shard_that_cannot_be_told_exits_2_before_calling_aws(monkeypatch, capsys):
    monkeypatch.setenv("POD_NAME", "laptop")  # no StatefulSet ordinal
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    assert main(["once", "--region", "us-east-1", "--total-shards", "3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ebs-analyzer: error: total_shards is 3 but no shard is given")
    assert "DescribeVolumes" not in err


def _ebs_controller(sys_root: Path, name: str, volume_id: str) -> None:
    ctrl = sys_root / "class" / "nvme" / name
    (ctrl / f"{name}n1").mkdir(parents=True)
    (ctrl / "model").write_text("Amazon Elastic Block Store              \n")
    (ctrl / "serial").write_text(volume_id.replace("-", "") + "\n")


def test_node_without_an_ebs_volume_says_where_it_looked(tmp_path):
    result = run_cli("node", "--once", "--region", "us-east-1", "--sys-root", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"ebs-analyzer: error: no EBS volume under {tmp_path}/class/nvme: not a Nitro "
        "instance, no EBS volume attached, or the host's sysfs not mounted there (--sys-root)"
    )


def test_node_capture_that_can_read_no_page_says_why_and_exits_3(tmp_path):
    """A device node that is a plain file answers the NVMe ioctl with ENOTTY."""
    _ebs_controller(tmp_path / "sys", "nvme1", "vol-0aaaaaaaaaaaaaaaa")
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "nvme1n1").write_bytes(b"")
    out = tmp_path / "capture.jsonl"
    result = run_cli(
        "node",
        "--capture",
        str(out),
        "--seconds",
        "1",
        "--sys-root",
        str(tmp_path / "sys"),
        "--dev-root",
        str(tmp_path / "dev"),
        "--region",
        "us-east-1",
        env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9"},  # nothing answers: no inventory line
    )
    assert result.returncode == 3, result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.startswith("ebs-analyzer: error:")]
    assert "no page could be read: vol-0aaaaaaaaaaaaaaaa" in line
    assert "/dev/nvme1n1" in line
    # What it did read is kept: the failed reads, each with its reason.
    assert '"error"' in out.read_text()


def test_node_replay_of_a_broken_capture_names_the_line(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text('{"t": 1, "serial": "vol-0a", "page": "not base64!"}\n')
    result = run_cli("node", "--replay", str(path), "--once")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"ebs-analyzer: error: {path}:1 (vol-0a): `page` is not base64"
    )


@pytest.fixture
def refusing_endpoint() -> Iterator[str]:
    """An endpoint that answers every request as EC2 answers an identity it does not allow."""
    body = (
        b'<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error>'
        b"<Code>UnauthorizedOperation</Code><Message>You are not authorized to perform this "
        b"operation.</Message></Error></Errors><RequestID>r</RequestID></Response>"
    )
    yield from answering(403, body)


def test_apply_exits_3_where_aws_cannot_be_reached_and_1_where_it_answers_no(
    tmp_path, refusing_endpoint
):
    """No credentials, or no connection: nothing was asked of AWS, exit 3 as `once` exits;
    AWS answering with an error is apply's 1."""
    empty = tmp_path / "empty"
    empty.write_text("")
    fix = ("apply", "vol-0123456789abcdef0:type=gp3", "--yes", "--region", "us-east-1")
    no_credentials = {
        "AWS_ACCESS_KEY_ID": "",
        "AWS_SECRET_ACCESS_KEY": "",
        "AWS_SHARED_CREDENTIALS_FILE": str(empty),
        "AWS_CONFIG_FILE": str(empty),
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    once = run_cli("once", "--region", "us-east-1", env=no_credentials)
    unreachable = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1"}
    for env, why in ((no_credentials, "Unable to locate credentials"), (unreachable, "connect")):
        result = run_cli(*fix, env=env)
        assert (result.returncode, once.returncode) == (3, 3), result.stderr
        [line] = result.stderr.splitlines()
        assert line.startswith("ebs-analyzer: error: ec2:DescribeVolumes in us-east-1:")
        assert why in line
    refused = run_cli(*fix, env={"AWS_ENDPOINT_URL": refusing_endpoint})
    assert refused.returncode == 1, refused.stderr
    assert "UnauthorizedOperation" in refused.stderr and "Traceback" not in refused.stderr
