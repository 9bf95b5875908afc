"""`ebs-analyzer demo`: the daemon, or one report, over the built-in simulated account.

The only product module that enters `sim/`: the account, its workloads and its clock.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime

from analyzer import daemon
from analyzer import settings as settings_mod
from analyzer.analyze import prices
from analyzer.analyze import rules as rule_files
from analyzer.cycle import Analyzer
from analyzer.deliver import report
from analyzer.deliver.notify import ConsoleChannel
from analyzer.errors import ConfigError
from analyzer.sim.account import DemoAccount, account
from analyzer.sim.clock import SimulatedClock
from analyzer.sim.scenario import REGION

MAX_SPEED = 3600.0


def run(once: bool, fmt: str, speed: float, listen: str, rules: list[str] | None) -> int:
    """The daemon on simulated time `speed` times faster than real time, or with `once`, one
    report on stdout."""
    if not 0 < speed <= MAX_SPEED:
        raise ConfigError(f"--speed {speed:g}: must be above 0 and at most {MAX_SPEED:g}")
    settings = settings_mod.load(
        {
            "region": [REGION],
            "rules": rules,
            "listen": listen,
            # The simulated account's prices: a snapshot, labelled with its source and date.
            "prices": str(prices.DEMO),
            "pricing_api": False,
        }
    )
    ruleset = rule_files.load(settings.rule_dirs)
    with account(datetime.now(UTC)) as simulated:
        if not once:
            clock = SimulatedClock(simulated.now, speed)
            process, server = daemon.build(
                settings, ruleset, simulated.region, clock, fallback=ConsoleChannel()
            )
            _banner(simulated)
            _live(settings, server.port, speed, process.dispatcher.channel.name)
            return process.run(server, speed=speed)
        analyzer = Analyzer(settings, ruleset, connect=simulated.region).offering()
        result = analyzer.run(simulated.now)
    if fmt == "text":
        _banner(simulated)
    sys.stdout.write(report.render(result.snapshot, result.findings, fmt, result.projection))
    return 0


def _banner(simulated: DemoAccount) -> None:
    print("A simulated AWS account (no credentials, no network) with four hours of history:")
    for name, story in simulated.stories.items():
        print(f"  {name:<14} {story}")
    print()


def _live(settings: settings_mod.Settings, port: int, speed: float, channel: str) -> None:
    host = settings.listen_address[0]
    shown = "localhost" if host in ("0.0.0.0", "127.0.0.1") else host
    where = "to Slack" if channel == "slack" else "here"
    print(
        f"Simulated time runs {speed:g}× faster than real time. Metrics: "
        f"http://{shown}:{port}/metrics · Ctrl-C to stop."
    )
    print(f"Alerts appear {where} as they fire and resolve.")
    print(flush=True)
