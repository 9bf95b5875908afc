"""`ebs-analyzer demo`: the daemon, or one report, over the built-in simulated accounts (or over
a recording, `--from FILE`).

The only product module that enters `sim/`: the accounts, their workloads and the clock.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from analyzer import settings as settings_mod
from analyzer.act.apply import Applier, Outcome, Result, audit
from analyzer.analyze import prices
from analyzer.analyze import rules as rule_files
from analyzer.analyze.catalog import Catalog
from analyzer.collect import recording
from analyzer.collect.accounts import Account
from analyzer.collect.regions import Region
from analyzer.deliver import report
from analyzer.deliver.notify import ConsoleChannel
from analyzer.errors import ConfigError
from analyzer.live import daemon
from analyzer.live.cycle import LOOKBACK_MARGIN_S, Analyzer
from analyzer.live.watched import Watched
from analyzer.model.resources import scope_of
from analyzer.model.units import duration
from analyzer.sim.account import (
    ACCOUNTS,
    DemoAccounts,
    accounts,
    no_real_account,
    require_moto,
)
from analyzer.sim.clock import SimulatedClock
from analyzer.sim.playback import RecordedAccount
from analyzer.sim.scenario import REGION

MAX_SPEED = 3600.0
REPEAT_EVERY_REAL_S = 240.0
"""At least this much real time between repeats of an unchanged alert on the console."""


def repeat_interval(speed: float) -> float:
    """The daemon's 4 hours between repeats, stretched at high speed: at 1800× they came every
    8 real seconds and buried the alerts that changed."""
    return max(4 * 3600.0, REPEAT_EVERY_REAL_S * speed)


PROMETHEUS_FOR_S = 300.0
"""The `for:` of the shipped Prometheus rules on the forecasts."""


def run(
    once: bool,
    fmt: str,
    speed: float,
    listen: str,
    rules: list[str] | None,
    source: Path | None = None,
    now: datetime | None = None,
    apply: str | None = None,
) -> int:
    """The daemon on simulated time `speed` times faster than real time, or with `once`, one
    report on stdout; over the built-in accounts (their present `now`, the wall clock's unless
    given), or over the recording at `source`."""
    if not 0 < speed <= MAX_SPEED:
        raise ConfigError(f"--speed {speed:g}: must be above 0 and at most {MAX_SPEED:g}")
    if apply is not None and (not once or source is not None):
        raise ConfigError("--apply: with --once, over the built-in accounts")
    if source is not None:
        return _playback(recording.read(source), source, once, fmt, speed, listen, rules)
    settings = _settings(
        {
            "region": [REGION],
            "rules": rules,
            "listen": listen,
            "repeat_interval": repeat_interval(speed),
            # The demo's own account, then one reached through a role.
            "accounts": [spec.entry() for spec in ACCOUNTS],
        }
    )
    ruleset = rule_files.load(settings.rule_dirs)
    require_moto()
    # The address first: a busy port is said before seconds of simulation.
    bound = None if once else daemon.bind(settings)
    if not once or fmt == "text":
        print("Simulating two AWS accounts and four hours of their history…", flush=True)
    with accounts(now or datetime.now(UTC)) as simulated:
        if bound is not None:
            clock = SimulatedClock(simulated.now, speed)
            watched: list[Watched] = []
            process, server = daemon.build(
                settings,
                ruleset,
                simulated.region,
                clock,
                fallback=ConsoleChannel(),
                server=bound,
                connect_account=reading(simulated, lambda: watched[0]),
            )
            watched.append(process.analyzer.accounts)
            _banner(simulated)
            _live(settings, server.port, speed, process.dispatcher.channel.name)
            return process.run(server, speed=speed)
        analyzer = over(simulated, settings, ruleset).offering()
        applied = _applied(analyzer, settings, apply) if apply is not None else None
        result = analyzer.proven(analyzer.run(simulated.now), simulated.now)
    if fmt == "text":
        _banner(simulated)
    sys.stdout.write(
        report.render(result.snapshot, result.readings, result.findings, fmt, result.projection)
    )
    return applied.exit_code if applied is not None else 0


def _applied(analyzer: Analyzer, settings: settings_mod.Settings, fix_id: str) -> Result:
    """A fix applied to the simulated account as `apply --yes` applies it (moto takes the
    ModifyVolume), said on stderr, before the report reads the account again."""
    regions = [analyzer.scopes.connected(r, a) for a, r in analyzer.scopes.targets()]
    applier = Applier(
        [(r.scope, r.changes) for r in regions if r.changes is not None],
        Catalog(prices.load(settings.prices), analyzer.offers),
        settings.apply_policy(),
        lambda: datetime.now(UTC),
    )
    planned = applier.plan(fix_id)
    if isinstance(planned, Result):
        result = planned
    else:
        print("\n".join(planned.lines()), file=sys.stderr)
        result = applier.yes(planned, dry_run=False, wait_s=0)
    audit(result, "demo", "cli")
    print(result.said(), file=sys.stderr)
    if result.outcome is Outcome.APPLIED:
        print(
            "(the report reads the account as it is now; the simulated history before now was "
            "played under the old configuration)",
            file=sys.stderr,
        )
    return result


def _playback(
    recorded: recording.Recording,
    source: Path,
    once: bool,
    fmt: str,
    speed: float,
    listen: str,
    rules: list[str] | None,
) -> int:
    """The daemon (or one report) over a recording, its clock starting once the rules have
    the history they read, and running on past the recording's end only into silence."""
    owners = recorded.accounts()
    settings = _settings(
        {
            "region": recorded.regions() or [REGION],
            "rules": rules,
            "listen": listen,
            "repeat_interval": repeat_interval(speed),
            # A recording made across accounts is played as those accounts, each scope as
            # it was recorded.
            "accounts": [{"id": i, "name": n or None} for i, n in sorted(owners.items())],
        }
    )
    ruleset = rule_files.load(settings.rule_dirs)
    played = RecordedAccount(recorded)

    def recorded_account(account: Account, region: str) -> Region:
        return replace(played.region(scope_of(account.id, region)), name=region, account=account)

    if once:
        analyzer = Analyzer(
            settings, ruleset, connect=played.region, connect_account=recorded_account
        ).offering()
        result = analyzer.proven(analyzer.run(recorded.end), recorded.end)
        sys.stdout.write(
            report.render(result.snapshot, result.readings, result.findings, fmt, result.projection)
        )
        return 0
    start = recorded.start + timedelta(seconds=ruleset.reach() + LOOKBACK_MARGIN_S)
    clock = SimulatedClock(start, speed)
    process, server = daemon.build(
        settings,
        ruleset,
        played.region,
        clock,
        fallback=ConsoleChannel(),
        connect_account=recorded_account,
    )
    count = recorded.resources()
    print(
        f"A recording ({source}): {count} resource{'' if count == 1 else 's'}, "
        f"{recorded.start:%Y-%m-%d %H:%M} → {recorded.end:%Y-%m-%d %H:%M} UTC. No credentials, "
        f"no network; simulated time starts at {start:%Y-%m-%d %H:%M} UTC."
    )
    _live(settings, server.port, speed, process.dispatcher.channel.name)
    return process.run(server, speed=speed)


def _settings(given: dict[str, object]) -> settings_mod.Settings:
    """The demo's settings, priced from the simulated accounts' snapshot of prices (labelled
    with its source and date), never the Price List. Loaded with the user's AWS settings set
    aside: the regions are the simulation's, and a profile meant for a real account (one that
    is not there) is not read to check them."""
    with no_real_account():
        return settings_mod.load({**given, "prices": str(prices.DEMO), "pricing_api": False})


def over(
    simulated: DemoAccounts, settings: settings_mod.Settings, ruleset: rule_files.RuleSet
) -> Analyzer:
    """An analyzer of the simulated accounts, as `demo --once` runs it."""
    watched = Watched(settings)
    return Analyzer(
        settings,
        ruleset,
        connect=simulated.region,
        connect_account=reading(simulated, lambda: watched),
        watched=watched,
    )


def reading(
    simulated: DemoAccounts, watched: Callable[[], Watched]
) -> Callable[[Account, str], Region]:
    """How the analyzer reads each simulated account: as it reads a real one, through the
    session `Watched` gives it (the role assumed in moto's STS by botocore's own fetcher; the
    demo's own credentials for its own account), its metrics from that account's simulator."""

    def connect_account(account: Account, region: str) -> Region:
        member = watched().session(account, region)
        return simulated[account.id].region_as(account, region, member)

    return connect_account


def _banner(simulated: DemoAccounts) -> None:
    print("The simulated accounts (no credentials, no network):")
    for one in simulated.accounts:
        how = f"through the role {one.role_arn}" if one.role_arn else "the demo's own"
        print(f"  {one.label}, {how}:")
        for name, story in one.stories.items():
            print(f"    {name:<14} {story}")
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
    if speed > 1:
        print(
            "Timestamps on /metrics are real time and the CloudWatch cost a simulated month. "
            "Prometheus rules count real time: their `for: 5m` spans "
            f"{duration(PROMETHEUS_FOR_S * speed)} of simulated time here, longer than most "
            "forecasts in the demo last, so those wait as pending."
        )
    print(flush=True)
