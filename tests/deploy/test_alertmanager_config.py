"""The shipped Alertmanager example (deploy/alertmanager/alertmanager.yml): it loads, and each
alert takes the route its comments promise, as amtool (Debian's prometheus-alertmanager, which
CI installs) resolves them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers import external

CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "alertmanager" / "alertmanager.yml"

DAEMON = {"resource_type": "volume", "bottleneck": "burst_credits", "region": "us-east-1"}
"""The labels every alert the analyzer posts about a volume carries."""
CLAIM = {"namespace": "db", "persistentvolumeclaim": "data-postgres-0"}


def amtool(*args: str) -> subprocess.CompletedProcess:
    binary = external("amtool", install="apt-get install prometheus-alertmanager")
    return subprocess.run([binary, *args], capture_output=True, text=True, check=False)


def receivers(labels: dict[str, str]) -> list[str]:
    """The receivers Alertmanager sends an alert with these labels to."""
    result = amtool(
        "config", "routes", "test", f"--config.file={CONFIG}",
        *(f"{name}={value}" for name, value in labels.items()),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.split()[0].split(",")


def test_amtool_checks_the_example():
    result = amtool("check-config", str(CONFIG))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("labels", "receiver"),
    [
        # A claim in a namespace a team owns: that team, paged when critical.
        ({**DAEMON, **CLAIM, "severity": "warning"}, "team-db"),
        ({**DAEMON, **CLAIM, "severity": "critical"}, "team-db-pager"),
        ({**DAEMON, **CLAIM, "severity": "info"}, "team-db"),
        ({**DAEMON, **CLAIM, "namespace": "postgres", "severity": "warning"}, "team-db"),
        # The shipped Prometheus rules' alerts carry no resource_type: the claim is enough.
        (
            {"alertname": "EbsBurstCreditsRunningOut", **CLAIM, "pod": "postgres-0"},
            "team-db",
        ),
        # A claim no team's namespaces hold: today's route.
        ({**DAEMON, "namespace": "web", "persistentvolumeclaim": "cache", "severity": "warning"},
         "storage"),
        # A volume no claim owns: today's routes, whatever namespace the scrape added.
        ({**DAEMON, "severity": "warning"}, "storage"),
        ({**DAEMON, "severity": "critical"}, "storage-pager"),
        ({**DAEMON, "namespace": "db", "severity": "warning"}, "storage"),
        ({"alertname": "EbsAnalyzerStale", "namespace": "db", "severity": "warning"}, "default"),
    ],
)  # fmt: skip
def test_an_alert_about_a_claim_reaches_the_team_of_its_namespace(labels, receiver):
    assert receivers(labels) == [receiver]
