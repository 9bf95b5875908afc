"""The accounts the demo watches: the one it runs in, holding the incidents, and a second one
reached through a role, holding a small scenario of its own."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.model.units import KIB
from analyzer.sim.scenario import (
    DATABASES,
    SCENARIO,
    DemoDatabase,
    DemoInstance,
    DemoVolume,
    ago,
)
from analyzer.sim.workloads import Demand, periodic

OWN_ID = "123456789012"
"""moto's default account: the one the demo's own credentials are in."""
ROLE_NAME = "ebs-analyzer"


@dataclass(frozen=True)
class DemoAccountSpec:
    """One simulated account: who it is, how it is reached, and what it holds."""

    id: str
    name: str
    instances: tuple[DemoInstance, ...]
    databases: tuple[DemoDatabase, ...] = ()
    role_arn: str | None = None
    """None: the account the demo runs in, read with its own credentials."""
    spare: bool = False
    """A detached gp3 volume beside the instances: a resource without data."""

    def entry(self) -> dict[str, str]:
        """Its `accounts:` entry in the settings."""
        given = {"id": self.id, "name": self.name}
        return given | ({"role_arn": self.role_arn} if self.role_arn else {})


DAY_S = 86_400.0
LOAD_TEST = periodic(2_400, 100, DAY_S, busy_s=3600.0, busy_from_s=ago(15))
"""A nightly load test of 2,400 IOPS (below gp2's 3,000 IOPS burst) for an hour, started a
quarter of an hour before now: a gp2 100 GiB volume (300 IOPS baseline, 5.4 million credits,
full after a quiet day) drains in about 43 minutes of it, so the test outlasts the credits:
the forecast now, the exhaustion half an hour into the live demo, credits that refill once
the test ends."""

STAGING_SCENARIO: tuple[DemoInstance, ...] = (
    DemoInstance(
        "staging-api",
        "m5.large",
        "A nightly load test drains a gp2 100 GiB volume's burst credits, as in incident 1",
        (DemoVolume("staging-api-data", "gp2", 100, Demand(LOAD_TEST, 4 * KIB, 0.9)),),
    ),
)

PROD = DemoAccountSpec(OWN_ID, "prod", SCENARIO, DATABASES, spare=True)
STAGING_ID = "210987654321"
STAGING = DemoAccountSpec(
    STAGING_ID,
    "staging",
    STAGING_SCENARIO,
    role_arn=f"arn:aws:iam::{STAGING_ID}:role/{ROLE_NAME}",
)
ACCOUNTS: tuple[DemoAccountSpec, ...] = (PROD, STAGING)
