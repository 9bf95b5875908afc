"""The command line's arguments: the commands, their options and their help."""

from __future__ import annotations

import argparse
import os
import textwrap
from pathlib import Path

from analyzer import __version__

PROG = "ebs-analyzer"
LOG_LEVELS = ("debug", "info", "warning", "error")

EXIT_CODES = (
    (0, "success, whatever was found"),
    (
        1,
        "AWS answered a fix with an error (apply), a rule test failed (rules test), nothing to "
        "write (backtest --write-rules)",
    ),
    (
        2,
        "invalid configuration, rule files or input (a fix, a recording), or a command line "
        "refused",
    ),
    (
        3,
        "AWS unreachable or refusing access, or no metric could be read; a fix refused by a "
        "guard or not confirmed (apply, demo --apply)",
    ),
    (130, "interrupted"),
)
"""What each exit code means for one command or another: said by `ebs-analyzer --help` and in
docs/cli.md's table. Each command's help says the codes it returns (`COMMAND_EXIT_CODES`)."""

Codes = tuple[tuple[int, str], ...]
REFUSED = (2, "invalid configuration or rule files, or a command line refused")
UNREAD = (3, "AWS unreachable or refusing access, or no metric could be read")
INTERRUPTED = (130, "interrupted")

COMMAND_EXIT_CODES: dict[str, Codes] = {
    "once": (
        (0, "success, whatever was found (metrics that could not be read are said on stderr)"),
        REFUSED,
        UNREAD,
        INTERRUPTED,
    ),
    "run": (
        (0, "stopped by SIGTERM or Ctrl-C, once the running cycle finished"),
        (
            2,
            "invalid configuration or rule files, a command line refused, or --listen's address "
            "taken",
        ),
        (
            130,
            "interrupted while starting. AWS unreachable does not stop it: each cycle tries "
            "again, and /readyz answers 503 until one succeeds",
        ),
    ),
    "cost": (
        (0, "success"),
        REFUSED,
        (3, "AWS unreachable or refusing access; with --sample, also no metric could be read"),
        INTERRUPTED,
    ),
    "savings": (
        (
            0,
            "success, whatever was found (volumes whose past could not be read are said on stderr)",
        ),
        REFUSED,
        UNREAD,
        INTERRUPTED,
    ),
    "apply": (
        (0, "applied, already so, or a dry run AWS says would succeed"),
        (
            1,
            "AWS answered with an error (a permission it refused, a limit of its own), or its "
            "answer to the change was lost and the resource could not be read back",
        ),
        (
            2,
            "bad input (a malformed fix, a target AWS does not sell, a resource that does not "
            "exist), invalid configuration, or a command line refused",
        ),
        (
            3,
            "refused by a guard, not confirmed, or AWS unreachable (no credentials, no "
            "connection): nothing was changed",
        ),
        INTERRUPTED,
    ),
    "demo": (
        (0, "success, whatever was found; the live demo, stopped with Ctrl-C"),
        (1, "with --apply: the simulated account answered the fix with an error"),
        (
            2,
            "invalid rule files, a command line refused, --listen's address taken, or moto "
            "missing; with --apply, a malformed fix, or one naming no simulated resource or a "
            "target AWS does not sell",
        ),
        (3, "with --apply: the fix refused by a guard (the last line says why), nothing changed"),
        (130, "interrupted before the live demo started"),
    ),
    "rules": (
        (0, "success"),
        (1, "rules test: a test's expected alerts were not the ones that fired"),
        (2, "invalid rule files or rule test files, or a command line refused"),
    ),
    "rules check": (
        (0, "the rules are valid"),
        (
            2,
            "invalid rule files (one line naming the file, the rule and the problem), or a "
            "command line refused",
        ),
    ),
    "rules test": (
        (0, "every test passed"),
        (1, "a test's expected alerts were not the ones that fired (one line per mismatch)"),
        (2, "invalid rule files or rule test files, or a command line refused"),
        INTERRUPTED,
    ),
    "rules list": ((0, "success"), (2, "invalid rule files, or a command line refused")),
    "backtest": (
        (0, "success, whatever would have fired"),
        (1, "--write-rules with nothing recommended: no file written"),
        (
            2,
            "invalid configuration, rule files or recording, a --what-if AWS does not sell, or "
            "a command line refused",
        ),
        (3, "AWS unreachable or refusing access, or no metric could be read (never with --from)"),
        INTERRUPTED,
    ),
    "record": ((0, "written"), REFUSED, UNREAD, INTERRUPTED),
    "node": (
        (0, "success, whatever was found; the daemon, after SIGTERM"),
        REFUSED,
        (
            3,
            "AWS unreachable or refusing access, or nothing could be read: no volume's NVMe "
            "page (--capture), no metric (--once, --replay)",
        ),
        INTERRUPTED,
    ),
    "recordings": ((0, "success"), (2, "a command line refused")),
    "iam-policy": ((0, "success"), (2, "a command line refused")),
}
"""The exit codes each command returns, by its name after `ebs-analyzer`: said by its help."""


def said(codes: Codes) -> str:
    """`exit codes: 0 …; 2 ….`: one line."""
    return "exit codes: " + "; ".join(f"{code} {meaning}" for code, meaning in codes) + ".\n"


NOTES = (
    "Every option also reads an EBS_ANALYZER_<NAME> variable (lists comma-separated), e.g. "
    "EBS_ANALYZER_REGION=us-east-1,eu-west-1.\n"
    "AWS access uses the SDK's usual chain (AWS_PROFILE, AWS_REGION or AWS_DEFAULT_REGION, "
    "AWS_ENDPOINT_URL, instance and pod roles); the permissions it needs are in "
    "deploy/iam-policy.json (or ebs-analyzer iam-policy).\n"
)
EPILOG = said(EXIT_CODES) + "Each command's --help gives the codes it returns.\n" + NOTES


NODE_EXAMPLES = (
    "examples: ebs-analyzer node --capture pages.jsonl --seconds 180 keeps three minutes of "
    "pages; ebs-analyzer node --replay pages.jsonl --once --format json analyzes them anywhere "
    "later, as `once` reports.\n"
)


class Wrapped(argparse.HelpFormatter):
    """Descriptions and epilogs wrapped to the terminal, each line of the text its own
    paragraph (argparse's default joins them; its raw formatter wraps nothing)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(
            textwrap.fill(line, width, initial_indent=indent, subsequent_indent=indent)
            for line in text.splitlines()
        )


def _format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=["text", "json"], default="text", help="report format (default: text)"
    )


def _common(parser: argparse.ArgumentParser, lookback: bool = True) -> None:
    """The options every AWS command takes; `lookback` where a first analysis reads history."""
    group = parser.add_argument_group("common options")
    group.add_argument(
        "--config",
        metavar="FILE",
        type=Path,
        help="YAML file of settings (env: EBS_ANALYZER_CONFIG)",
    )
    group.add_argument(
        "--rules",
        metavar="DIR",
        action="append",
        help="rule directory; repeat to layer directories, later ids override "
        "earlier ones (default: the shipped rules)",
    )
    group.add_argument(
        "--region",
        metavar="R",
        action="append",
        help="AWS region to watch; repeatable (default: the SDK's region)",
    )
    group.add_argument(
        "--tag",
        metavar="KEY=VALUE",
        action="append",
        help="only resources with this tag, and what they are attached to; repeatable",
    )
    if lookback:
        group.add_argument(
            "--lookback",
            metavar="DURATION",
            help="history fetched for the first analysis, and kept, e.g. 3h (default and least: "
            "what the rules read, plus 10m)",
        )
    group.add_argument(
        "--log-level",
        default=os.environ.get("EBS_ANALYZER_LOG_LEVEL"),
        choices=["debug", "info", "warning", "error"],
        help="log level on stderr (default: info for run, warning otherwise)",
    )


def _sharding(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("shards")
    group.add_argument(
        "--shard",
        metavar="I",
        type=int,
        help="watch only shard I (from 0) of --total-shards; in a StatefulSet, its pod's "
        "ordinal by default",
    )
    group.add_argument(
        "--total-shards",
        metavar="N",
        type=int,
        help="split the resources over N processes by a stable hash, an instance with its "
        "volumes (default 1)",
    )


def _daemon_options(parser: argparse.ArgumentParser, interval: bool = True) -> None:
    group = parser.add_argument_group("daemon options")
    group.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="address for /metrics, /healthz, /readyz, /livez (default 0.0.0.0:9877)",
    )
    if interval:
        group.add_argument(
            "--interval",
            metavar="SECONDS",
            help="seconds between cycles, or a duration such as 5m (default 60)",
        )
    group.add_argument("--state-file", metavar="PATH", help="keep alert state here across restarts")
    group.add_argument(
        "--dry-run",
        action="store_true",
        default=None,
        help="log notifications instead of sending them",
    )
    group.add_argument(
        "--alertmanager-url",
        metavar="URL",
        action="append",
        help="post alerts to this Alertmanager (repeat for an HA pair), e.g. http://am:9093",
    )
    group.add_argument(
        "--log-format",
        choices=["auto", "json", "console"],
        help="log lines: console on a terminal, JSON elsewhere (default: auto)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Warns before a storage limit holds a workload back: an EBS volume's, an "
        "EC2 instance's or an RDS instance's.",
        epilog=EPILOG,
        formatter_class=Wrapped,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _once_command(commands)
    _run_command(commands)
    _cost_command(commands)
    _savings_command(commands)
    _apply_command(commands)
    _demo_command(commands)
    _rules_command(commands)
    _backtest_command(commands)
    _record_command(commands)
    _node_command(commands)
    commands.add_parser(
        "recordings",
        help="list the shipped recordings, by the name --from takes",
        description="Lists the recordings shipped with the analyzer: `backtest --from NAME` "
        "and `demo --from NAME` replay them without credentials.",
    )
    policy = commands.add_parser(
        "iam-policy",
        help="print the IAM policy the analyzer needs (read-only)",
        description="Prints the IAM policy that grants every action the analyzer calls, all "
        "read-only: attach it to the role or user the analyzer runs as. The same policy is "
        "deploy/iam-policy.json in the repository. With --apply, the separate policy that "
        "lets `apply` modify volumes and RDS storage, only those carrying the apply tag "
        "(deploy/iam-policy-apply.json): attach it only where fixes are applied.",
    )
    policy.add_argument(
        "--apply",
        action="store_true",
        help="the policy for applying fixes (ModifyVolume, ModifyDBInstance), on tagged "
        "resources only",
    )
    for sub in every_parser(parser):
        sub.formatter_class = Wrapped
        command = sub.prog.removeprefix(PROG).strip()
        if command:
            # Its own exit codes first, then its own notes (the options' variables, AWS access).
            sub.epilog = said(COMMAND_EXIT_CODES[command]) + (sub.epilog or NOTES)
    return parser


def every_parser(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parser and every (sub)command's below it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += every_parser(sub)
    return found


def subcommand(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the (sub)command `args` were parsed for: `rules list` is the list parser."""
    found = parser
    for dest in ("command", "rules_command"):
        name = getattr(args, dest, None)
        actions = [a for a in found._actions if isinstance(a, argparse._SubParsersAction)]
        if name is None or not actions:
            break
        found = actions[0].choices[name]
    return found


def _every(text: str) -> int:
    try:
        every = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: whole seconds, such as 5") from None
    if not 1 <= every <= 60:
        raise argparse.ArgumentTypeError(f"{every}: from 1 to 60 seconds")
    return every


def _node_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    node = commands.add_parser(
        "node",
        help="on a node: read its EBS volumes' NVMe statistics every few seconds, analyze "
        "them as `run` does",
        description="Runs beside the workload, on the instance its EBS volumes are attached "
        "to (a DaemonSet): reads each volume's NVMe statistics page (log page 0xD0, free, "
        "counted to the microsecond) every --every seconds, and runs the daemon's analysis on "
        "them, so that a drain shows seconds after it starts. Serves /metrics and alerts as "
        "`run` does. Reading the page needs CAP_SYS_ADMIN and read access to the devices. "
        "--capture keeps what it reads as JSON lines; --replay runs the analysis over such a "
        "file and prints the report `once` prints.",
        epilog=NODE_EXAMPLES + NOTES,
    )
    group = node.add_argument_group("node options")
    group.add_argument(
        "--every",
        metavar="SECONDS",
        type=_every,
        help="seconds between reads, the period of its series (default 5; for --replay, "
        "the capture's own)",
    )
    group.add_argument(
        "--sys-root",
        metavar="DIR",
        type=Path,
        default=Path("/sys"),
        help="where sysfs is mounted: the volumes are found under DIR/class/nvme (default /sys)",
    )
    group.add_argument(
        "--dev-root",
        metavar="DIR",
        type=Path,
        default=Path("/dev"),
        help="where the host's device nodes are (default /dev)",
    )
    group.add_argument(
        "--capture",
        metavar="FILE",
        type=Path,
        help="read for --seconds and write every page to FILE as JSON lines, then exit",
    )
    group.add_argument(
        "--seconds",
        metavar="N",
        type=float,
        default=60.0,
        help="how long --capture reads (default 60)",
    )
    group.add_argument(
        "--replay",
        metavar="FILE",
        type=Path,
        help="analyze a capture instead of the devices: one cycle at its end, printed as "
        "`once` prints it",
    )
    group.add_argument(
        "--once",
        action="store_true",
        help="one cycle, printed, then exit: on the devices, two reads --every apart",
    )
    _format(node)
    _common(node, lookback=False)
    _daemon_options(node, interval=False)


def _backtest_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    backtest = commands.add_parser(
        "backtest",
        help="replay the rules over past data: what would have fired, and what happened",
        description="Fetches the inventory's history from CloudWatch (the cost is printed "
        "before and after), replays the rules minute by minute over it as the daemon would "
        "have, and reports the alerts, every bucket that ran empty and every limit held, with "
        "the lead time of the first warning, beside a BurstBalance < 20 % alarm's.",
    )
    _span(backtest, "14d")
    backtest.add_argument(
        "--from",
        dest="source",
        metavar="FILE|NAME",
        help="replay a recording instead of fetching, no AWS needed: a file `record` wrote, "
        "or a shipped one by name (`ebs-analyzer recordings` lists them)",
    )
    backtest.add_argument(
        "--what-if",
        action="append",
        metavar="ID:KEY=VALUE,...",
        help="replay this configuration of a volume, an RDS instance's storage or an EC2 "
        "instance's type over its demand, beside it as it is, instead of the rules: keys "
        "type, size (GiB), iops, throughput (MiB/s) and, for a volume, stripes; e.g. "
        "vol-0abc:type=gp3,iops=6000 or i-0abc:type=m5.2xlarge. Repeat it to try several. "
        "Reads four metrics a resource",
    )
    backtest.add_argument(
        "--approve-within",
        metavar="DURATION",
        help="also weigh each warning's fix as if approved this long after it fired (90s, "
        "5m; at most 1h), taking effect 10 s later: the exhaustions it would have averted "
        "and the throttled minutes it would have saved",
    )
    backtest.add_argument(
        "--tune",
        action="store_true",
        help="replay the credit rules under several settings of their own knobs (as they "
        "are, without the burn, the burn speaking 1.5, 2 and 3 times as far from empty) and "
        "print one row a setting beside the BurstBalance < 20 %% alarm, with a recommendation "
        "chosen on half the fleet and judged on the other",
    )
    backtest.add_argument(
        "--max-false",
        default="alarm",
        metavar="alarm|N",
        help="with --tune: the false warnings the recommendation may give, no more than the "
        "alarm's (alarm, the default) or N a resource-fortnight",
    )
    backtest.add_argument(
        "--write-rules",
        metavar="DIR",
        type=Path,
        help="with --tune: write the recommended setting's rules file, tuned.yaml, into DIR "
        "(a directory of its own, layered after the rules in force)",
    )
    backtest.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="with --tune: replay in N processes (default: the CPUs available)",
    )
    _format(backtest)
    _common(backtest, lookback=False)


def _span(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--since",
        default=default,
        metavar="DURATION",
        help=f"how far back: 90m, 6h, 14d (default {default}; CloudWatch keeps 1-minute data "
        "15 days)",
    )
    parser.add_argument(
        "--until",
        metavar="TIME",
        help="the end of the span, such as 2026-11-17T18:00:00Z (default: now)",
    )


def _record_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    record = commands.add_parser(
        "record",
        help="save the inventory and its raw datapoints for offline backtests and demos",
        description="Fetches the inventory and its history from CloudWatch (the cost is "
        "printed before and after) and writes them to a gzip'd JSON file that "
        "`backtest --from FILE` replays without credentials.",
    )
    _span(record, "3d")
    record.add_argument(
        "-o", "--output", type=Path, required=True, metavar="FILE", help="where to write it"
    )
    _common(record, lookback=False)


def _once_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    once = commands.add_parser(
        "once",
        help="one full cycle (discover, backfill history, analyze), print the report",
        description="Discover resources, fetch their recent history from CloudWatch, analyze "
        "it and print the report on stdout. Logs go to stderr.",
    )
    _format(once)
    once.add_argument(
        "--savings",
        action="store_true",
        help="also weigh each volume's cut on its longest past, as `ebs-analyzer savings` does "
        "(14 metrics a volume more): the report gains its savings, which never page",
    )
    _common(once)
    _sharding(once)


def _run_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "run",
        help="the daemon: analyze every --interval, serve /metrics, alert in Slack",
        description="Runs an analysis cycle every --interval seconds, serves the last one on "
        "/metrics (with /healthz, /readyz and /livez), and sends alerts to Slack when "
        "SLACK_WEBHOOK_URL is set (to the log otherwise). SIGTERM lets the running "
        "cycle finish, then exits 0.",
    )
    _common(run)
    _sharding(run)
    _daemon_options(run)


def _cost_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cost = commands.add_parser(
        "cost",
        help="the monthly GetMetricData bill of watching the inventory, without fetching metrics",
        description="Discovers the inventory (Describe* calls only) and prints, per region, "
        "what GetMetricData would cost a month with every resource idle, active or hot, and "
        "with every metric polled every interval. The daemon's bill lies between the "
        "all-idle and all-hot figures, by how many resources are busy. With --sample, also "
        "the bill at today's load: what the daemon projects once the alerts of what it reads "
        "now fire.",
    )
    _format(cost)
    _common(cost, lookback=False)
    _sharding(cost)
    cost.add_argument(
        "--sample",
        action="store_true",
        help="read the load once, as the daemon's first cycle does (what that read costs is "
        "printed on stderr), and add the bill in the tiers it puts each resource in",
    )
    cost.add_argument(
        "--interval",
        metavar="SECONDS",
        help="seconds between the daemon's cycles, or a duration such as 5m (default 60)",
    )


def _savings_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    savings = commands.add_parser(
        "savings",
        help="what the fleet pays for and never uses: each volume's cut, proven on its past",
        description="Reads each volume's peaks over the longest past CloudWatch keeps (a "
        "minute for 15 days, five minutes for 63, an hour for 455), and prints the cheapest "
        "configuration AWS sells that would have carried every period of it with "
        "savings_headroom (gp2 to gp3, IOPS or throughput above need, io1 or io2 to gp3), "
        "sorted by monthly saving, with its fix_id for apply; and the volumes attached to "
        "nothing for longer than unattached_after, with the commands that snapshot and delete "
        "them. What the read cost is printed on stderr.",
    )
    _format(savings)
    _common(savings, lookback=False)


APPLY_EPILOG = (
    "Example: ebs-analyzer apply vol-0abc:type=gp3,iops=3000,throughput=125 prints the plan and "
    "asks y/N on a terminal; --dry-run asks AWS's permission check, --yes applies without "
    "asking.\n"
    "Applying takes its own IAM policy, for tagged resources only: deploy/iam-policy-apply.json "
    "(or ebs-analyzer iam-policy --apply). A claim's volume is changed through its claim "
    "(apply_through_kubernetes).\n"
)


def _apply_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    apply = commands.add_parser(
        "apply",
        help="apply a fix the report names (its fix_id): a volume's or RDS storage's "
        "modification, guarded",
        description="Reads the resource afresh, checks the target against what AWS sells and "
        "the guards (the resource carries the apply tag, AWS's four modifications in 24 hours, "
        "never a shrink, the monthly cost ceiling, a CSI claim's volume only through its claim), "
        "prints the plan (today → target, the monthly cost change, what the target would have "
        "limited over the last 14 days) and applies it with --yes or after a y typed on a "
        "terminal. Then reads the modification back until it is optimizing or completed, at "
        "most --wait.",
        epilog=APPLY_EPILOG,
    )
    apply.add_argument(
        "fix_id",
        metavar="FIX_ID",
        help="the fix as the report names it: ID:KEY=VALUE[,KEY=VALUE…], keys type, size, "
        "iops, throughput",
    )
    apply.add_argument("--yes", action="store_true", help="apply without asking")
    apply.add_argument(
        "--dry-run",
        action="store_true",
        help="ask AWS whether the call would succeed (DryRun: the permission check); change "
        "nothing",
    )
    apply.add_argument(
        "--wait",
        metavar="DURATION",
        default="30s",
        help="how long to read the modification back, e.g. 2m (default 30s; 0 to not wait)",
    )
    apply.add_argument(
        "--allow-cost-increase",
        action="store_true",
        help="apply a fix that adds more than apply_max_monthly_increase a month, or whose "
        "price is unknown",
    )
    apply.add_argument(
        "--no-past",
        action="store_true",
        help="do not read the last 14 days from CloudWatch for the plan (4 metrics)",
    )
    _common(apply, lookback=False)


def _demo_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = commands.add_parser(
        "demo",
        help="the daemon on a built-in simulated account that replays the incidents "
        "(no AWS account needed)",
        description="Runs the daemon against a simulated AWS account held in memory, with "
        "the incidents it exists for: the shop volume draining its gp2 burst credits, and its "
        "database's at baseline once they are gone (shop-web, shop-db); a gp2 volume grown "
        "online (reporting); a batch job's three steps, from a gp3 throughput cap to an "
        "instance's EBS limit to io2's IOPS (batch-gp3, batch-io2, batch-io2-big); an ETL job "
        "running out of its instance's EBS burst (etl); search indexing at its instance's IOPS "
        "limit (search); an RDS replica draining gp2 credits (orders-replica); a StatefulSet's "
        "claims on a node of an EKS managed node group, one draining its gp2 credits "
        "(eks-db-node); and healthy volumes beside them (logs). Four hours of history are "
        "simulated at start; then simulated time runs --speed times faster than real time. "
        "Alerts print here as they fire and resolve, under each simulated day's date (or go "
        "to Slack when SLACK_WEBHOOK_URL is set); /metrics is served on --listen. With "
        "--once, prints one report and exits. No credentials, no network.",
    )
    demo.add_argument("--once", action="store_true", help="analyze once, print the report and exit")
    demo.add_argument(
        "--apply",
        metavar="FIX_ID",
        help="with --once: apply this fix to the simulated account first, as `apply --yes` "
        "would (the shop's volumes carry the apply tag; their ids are the same every run), "
        "then report",
    )
    demo.add_argument(
        "--allow-cost-increase",
        action="store_true",
        help="with --apply: apply it even where it adds more than apply_max_monthly_increase a "
        "month ($50), or its price is unknown, as `apply --allow-cost-increase` does",
    )
    demo.add_argument(
        "--from",
        dest="source",
        metavar="FILE|NAME",
        help="play a recording instead of the built-in account: a file `record` wrote, or a "
        "shipped one by name (`ebs-analyzer recordings` lists them)",
    )
    _format(demo)
    demo.add_argument(
        "--speed",
        type=float,
        default=30.0,
        metavar="N",
        help="simulated time runs N times faster than real time (default 30)",
    )
    demo.add_argument(
        "--listen",
        metavar="HOST:PORT",
        default="127.0.0.1:9877",
        help="address for /metrics, /healthz, /readyz, /livez (default 127.0.0.1:9877)",
    )
    demo.add_argument(
        "--rules",
        metavar="DIR",
        action="append",
        help="rule directory; repeat to layer directories, later ids override earlier ones, "
        "e.g. --rules builtin --rules my-rules/ (default: the shipped rules)",
    )
    demo.add_argument(
        "--log-level",
        default="warning",
        choices=LOG_LEVELS,
        help="log level on stderr (default: warning; the alerts print on stdout)",
    )


def _rules_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rules_cmd = commands.add_parser("rules", help="validate, list or test rule files")
    rules_sub = rules_cmd.add_subparsers(dest="rules_command", metavar="ACTION", required=True)
    check = rules_sub.add_parser(
        "check",
        help="validate rule files; exit 2 on the first error",
        description="Validates rule directories or files. They are layered on the shipped "
        "rules, as `run --rules builtin --rules DIR` loads them, so an override that changes "
        "only a shipped rule's keys checks as it runs; --alone checks them as a complete set, "
        "as `run --rules DIR` loads them.",
    )
    _rule_dirs(check, "rule directories or files")
    testing = rules_sub.add_parser(
        "test",
        help="run rule tests (input series, expected alerts); exit 1 on a mismatch",
        description="Runs rule test files: each gives input series for a resource and the "
        "alerts expected to fire and resolve at given minutes. Prints one line per mismatch "
        "and exits 1 if there is any.",
    )
    testing.add_argument("files", nargs="+", metavar="FILE", type=Path, help="rule test files")
    testing.add_argument(
        "--rules",
        dest="dirs",
        action="append",
        type=Path,
        metavar="DIR",
        help="rule directories to test (repeatable; default: the shipped rules)",
    )
    listing = rules_sub.add_parser(
        "list",
        help="list the rules in force",
        description="Lists the rules in force: the shipped rules, with the directories given "
        "layered on them (later ids override earlier ones); --alone lists the directories' "
        "rules only.",
    )
    _rule_dirs(listing, "rule directories or files")


def _rule_dirs(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "dirs",
        nargs="*",
        metavar="DIR",
        type=Path,
        help=f"{what}, layered on the shipped rules (none: the shipped rules alone)",
    )
    parser.add_argument(
        "--alone",
        action="store_true",
        help="without the shipped rules beneath: the directories as a complete set",
    )
