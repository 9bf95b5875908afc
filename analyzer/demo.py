"""`ebs-analyzer demo`: the daemon, or one report, over the built-in simulated accounts (or over
a recording, `--from FILE`).

The only product module that enters `sim/`: the accounts, their workloads and the clock.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from analyzer import settings as settings_mod
from analyzer.act import past as act_past
from analyzer.act.apply import Applier, Outcome, Result, audit
from analyzer.analyze import prices
from analyzer.analyze import rules as rule_files
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.sold import Asked
from analyzer.arguments import PROG
from analyzer.collect import recording
from analyzer.collect.accounts import Account
from analyzer.collect.regions import Region
from analyzer.deliver import report
from analyzer.deliver.notify import ConsoleChannel
from analyzer.errors import ConfigError
from analyzer.live import daemon, fleet_savings
from analyzer.live.cycle import LOOKBACK_MARGIN_S, Analyzer
from analyzer.live.watched import Watched
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

APPLY = "ebs-analyzer demo --once --apply"
"""What applies a fix_id to the simulated accounts: `ebs-analyzer apply` would look for the
resource in a real account."""


def run(
    once: bool,
    fmt: str,
    speed: float,
    listen: str,
    rules: list[str] | None,
    source: Path | None = None,
    now: datetime | None = None,
    apply: str | None = None,
    allow_cost_increase: bool = False,
) -> int:
    """The daemon on simulated time `speed` times faster than real time, or with `once`, one
    report on stdout; over the built-in accounts (their present `now`, the wall clock's unless
    given), or over the recording at `source`. With `apply`, that fix applied to the built-in
    accounts before the report reads them, its outcome said after it."""
    if not 0 < speed <= MAX_SPEED:
        raise ConfigError(f"--speed {speed:g}: must be above 0 and at most {MAX_SPEED:g}")
    if apply is not None and (not once or source is not None):
        raise ConfigError("--apply: with --once, over the built-in accounts")
    if allow_cost_increase and apply is None:
        raise ConfigError("--allow-cost-increase: with --apply")
    if apply is not None:
        checked(apply)  # a fix that cannot name a resource is said before seconds of simulation
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
                fallback=ConsoleChannel(apply=APPLY),
                server=bound,
                connect_account=reading(simulated, lambda: watched[0]),
            )
            watched.append(process.analyzer.accounts)
            process.dispatcher.apply = APPLY
            if process.long_pasts is not None:
                process.long_pasts.at_once = True  # a simulated account's reads cost nothing
            _banner(simulated)
            _live(settings, server.port, speed, process.dispatcher.channel.name)
            return process.run(server, speed=speed)
        analyzer = over(simulated, settings, ruleset).offering()
        applied = (
            _applied(analyzer, settings, apply, allow_cost_increase, simulated.now)
            if apply is not None
            else None
        )
        result = analyzer.proven(analyzer.run(simulated.now), simulated.now)
        # As `once --savings`: the savings weighed on each volume's long past.
        found = fleet_savings.find(analyzer, simulated.now)
        result.snapshot.stats.past_requested += found.stats.metrics_requested
    if fmt == "text":
        _banner(simulated)
    sys.stdout.write(
        report.render(
            result.snapshot,
            result.readings,
            result.findings,
            fmt,
            result.projection,
            APPLY,
            savings=found.savings,
        )
    )
    if applied is None:
        return 0
    # Said last, below the report, where a terminal leaves it in view.
    sys.stdout.flush()
    print("\n".join(applied.lines), file=sys.stderr)
    return applied.result.exit_code


RESOURCE_IDS = (
    ("vol-", re.compile(r"vol-[0-9a-f]{8}(?:[0-9a-f]{9})?"), "a volume id (vol-, 17 hex digits)"),
    ("i-", re.compile(r"i-[0-9a-f]{8}(?:[0-9a-f]{9})?"), "an instance id (i-, 17 hex digits)"),
    ("", re.compile(r"[A-Za-z](?:-?[A-Za-z0-9]){0,62}"), "an RDS instance identifier"),
)
"""How AWS spells each kind of id a fix may name: the first whose prefix the id has."""


def checked(fix_id: str) -> Asked:
    """The fix read as `apply` reads it, its resource id spelt as AWS spells one; a ConfigError
    (exit 2) otherwise."""
    asked = Asked.parse(fix_id.strip(), flag="--apply")
    rid = asked.resource_id
    pattern, what = next((p, w) for prefix, p, w in RESOURCE_IDS if rid.startswith(prefix))
    if pattern.fullmatch(rid) is None:
        raise ConfigError(f"{asked.where}: {rid} is not {what}")
    return asked


@dataclass(frozen=True, slots=True)
class Applied:
    """A fix's attempt on the simulated account, and the lines that say it."""

    result: Result
    lines: list[str]


def _applied(
    analyzer: Analyzer,
    settings: settings_mod.Settings,
    fix_id: str,
    allow_cost: bool,
    now: datetime,
) -> Applied:
    """A fix applied to the simulated account as `apply --yes` applies it (moto takes the
    ModifyVolume), before the report reads the account again: its plan and its outcome. Its
    past is read as the simulated account holds it at `now`, the simulation's present."""
    regions = [analyzer.scopes.connected(r, a) for a, r in analyzer.scopes.targets()]
    applier = Applier(
        [(r.scope, r.changes) for r in regions if r.changes is not None],
        Catalog(prices.load(settings.prices), analyzer.offers),
        settings.apply_policy(),
        lambda: datetime.now(UTC),
        # The past as `apply` reads it: a cut goes ahead only where it proves it.
        past=act_past.reader(
            {r.scope: r.metrics for r in regions}, settings.settle_delay, lambda: now
        ),
    )
    planned = applier.plan(fix_id)
    lines: list[str] = []
    if isinstance(planned, Result):
        result = planned
    else:
        lines += planned.lines()
        ended = applier.check(planned, allow_cost)
        result = ended or applier.apply(planned, dry_run=False, wait_s=0)
    audit(result, "demo", "cli")
    lines.append(result.said() if result.went_ahead else f"{PROG}: {result.said()}")
    if result.outcome is Outcome.APPLIED:
        lines.append(
            "(the report above reads the account as it is now; the simulated history before "
            "now was played under the old configuration)"
        )
    return Applied(result, lines)


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

    if once:
        analyzer = Analyzer(
            settings, ruleset, connect=played.region, connect_account=played.account_region
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
        connect_account=played.account_region,
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
