from collections.abc import Iterator

import pytest
import structlog
from moto import mock_aws

from analyzer.sim.account import teach_moto

REGION = "us-east-1"
teach_moto()  # DescribeVolumeStatus, which moto lacks; DescribeInstanceTypes, built once


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The whole stories first (tests/scenarios/ and the modules directly in tests/: a few
    tests each, tens of seconds to minutes, some waiting on real servers), then the modules
    of the package's own, many quick tests: the workers (`--dist loadscope`, in this order,
    `--no-loadscope-reorder`) start on the long ones and end together on the short ones,
    where ordering modules by their number of tests left a story of three tests to the end."""
    items.sort(key=lambda item: 0 if _is_story(item.nodeid) else 1)
    for item in items:
        if item.nodeid.startswith("tests/scenarios/"):
            item.add_marker(pytest.mark.slow)  # every scenario is a whole story: `slow`


def _is_story(nodeid: str) -> bool:
    path = nodeid.split("::", 1)[0]
    return path.startswith("tests/scenarios/") or path.count("/") == 1


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach a real AWS account or pick up the developer's settings, nor the log
    level a command run in an earlier test configured (the one-shot commands log from WARNING
    up, and `capture_logs` sees only what that level lets through)."""
    _isolate(monkeypatch)
    _plain_defaults()


def _plain_defaults() -> None:
    """structlog's defaults, with an exception as plain text, as `analyzer.logs` writes it:
    the default renders it through rich, source and locals in boxes, a second or more for
    each failed cycle a test logs."""
    structlog.reset_defaults()
    *processors, _ = structlog.get_config()["processors"]
    renderer = structlog.dev.ConsoleRenderer(exception_formatter=structlog.dev.plain_traceback)
    structlog.configure(processors=[*processors, renderer])


def _isolate(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith(("EBS_ANALYZER_", "AWS_")) or name == "SLACK_WEBHOOK_URL":
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")


@pytest.fixture
def aws() -> Iterator[None]:
    with mock_aws():
        yield


@pytest.fixture(scope="module")
def aws_module() -> Iterator[None]:
    """One moto account for a whole module: for a replay that several tests read."""
    with pytest.MonkeyPatch.context() as monkeypatch, mock_aws():
        _isolate(monkeypatch)
        yield
