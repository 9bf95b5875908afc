"""The command line: parse arguments, build the pieces, call them. Nothing else lives here."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from analyzer import demo, logs
from analyzer import settings as settings_mod
from analyzer.act import past as act_past
from analyzer.act.apply import Applier, Outcome, audit
from analyzer.act.apply import Result as ApplyResult
from analyzer.act.cluster import KubernetesCluster
from analyzer.act.plan import Plan
from analyzer.analyze import prices, rules, sold
from analyzer.analyze.catalog import Catalog
from analyzer.arguments import LOG_LEVELS, PROG, build_parser, subcommand
from analyzer.collect import aws, capture, demand, progress, recording
from analyzer.collect.boundaries import Describer
from analyzer.collect.past import PROFILE_PERIOD_S, PROFILE_SPAN_S, past_queries
from analyzer.collect.window import Window, data_end
from analyzer.deliver import report
from analyzer.deliver import savings as savings_report
from analyzer.errors import AnalyzerError, AwsCallError, ConfigError
from analyzer.live import daemon, fleet_savings
from analyzer.live.cycle import Analyzer, CycleResult
from analyzer.model import units
from analyzer.model.costs import Projection
from analyzer.model.resources import Instance, InstanceType, Inventory
from analyzer.model.series import Series
from analyzer.model.state import FetchStats
from analyzer.model.units import parse_duration
from analyzer.node import agent
from analyzer.node.agent import DEFAULT_EVERY_S
from analyzer.node.telemetry import NodeCollector
from analyzer.offline import (
    approval,
    backtest_text,
    judged,
    rule_tests,
    tune,
    tune_text,
    what_if,
)
from analyzer.offline.replay import PAST_STATS, Sight, past_name
from analyzer.yamlfile import nearest


def _settings(args: argparse.Namespace) -> settings_mod.Settings:
    config = args.config or (
        Path(os.environ["EBS_ANALYZER_CONFIG"]) if os.environ.get("EBS_ANALYZER_CONFIG") else None
    )
    names = (
        "region",
        "tag",
        "rules",
        "lookback",
        "listen",
        "interval",
        "state_file",
        "dry_run",
        "alertmanager_url",
        "log_format",
        "shard",
        "total_shards",
    )
    flags: dict[str, Any] = {name: getattr(args, name, None) for name in names}
    loaded = settings_mod.load(flags, config)
    loaded.sharding()  # a shard that cannot be told: say so before any call to AWS
    return loaded


def _once(args: argparse.Namespace) -> int:
    settings = _settings(args)
    ruleset = rules.load(settings.rule_dirs)
    analyzer = Analyzer(settings, ruleset).offering()
    now = datetime.now(UTC)
    result = analyzer.proven(analyzer.run(now), now)
    found = None
    if args.savings:
        found = fleet_savings.find(analyzer, now)
        result.snapshot.stats.past_requested += found.stats.metrics_requested
        if found.unread:
            print(
                f"{PROG}: warning: the past of {len(found.unread)} of {found.volumes} volumes "
                f"could not be read (no saving is weighed for them): {found.why}",
                file=sys.stderr,
            )
        _say_unpriced(found)
    return _report(args, result, found)


def _report(
    args: argparse.Namespace, result: CycleResult, found: fleet_savings.Found | None = None
) -> int:
    """The report of one cycle on stdout (with the savings `found`, where weighed); the exit
    code says whether its data was read."""
    sys.stdout.write(
        report.render(
            result.snapshot,
            result.readings,
            result.findings,
            args.format,
            result.projection,
            savings=found.savings if found is not None else None,
            currency=found.currency if found is not None else "USD",
        )
    )
    # Where none was read, the report says "No verdict" on every row, and the exit code says so.
    return _say_unread(result.snapshot.stats, "their rows say error")


def _say_unread(stats: FetchStats, effect: str, instead: str = "") -> int:
    """One line on stderr where metrics could not be read, with what that does to the output
    (`effect` where some were, `instead` where none was); the exit code that says whether any
    was read."""
    reason = stats.errors[0] if stats.errors else "unknown"
    if stats.outcome == "failed":
        print(f"{PROG}: error: no metric could be read: {reason}{instead}", file=sys.stderr)
        return AwsCallError.exit_code
    if stats.metrics_failed:
        print(
            f"{PROG}: warning: {stats.metrics_failed} of {stats.metrics_requested} metrics could "
            f"not be read ({effect}): {reason}",
            file=sys.stderr,
        )
    return 0


def _node(args: argparse.Namespace) -> int:
    settings = _settings(args)
    ruleset = rules.load(settings.rule_dirs)
    if args.replay is not None:
        found = capture.read(args.replay)
        every = args.every or found.every()
        return _report(args, agent.replay(found, settings, ruleset, every))
    every = args.every or DEFAULT_EVERY_S
    if args.capture is not None:
        region = agent.region_of(settings)
        _, reader, describer = agent.connected(region, every, args.sys_root, args.dev_root)
        try:
            out = args.capture.open("w", encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--capture {args.capture}: {exc.strerror or exc}") from None
        with out:
            pages = agent.capture_for(reader, args.seconds, out, describer)
        print(f"{PROG}: wrote {pages:,} pages to {args.capture}", file=sys.stderr)
        return 0
    if args.once:
        analyzer, reader = agent.analyzer_for(
            settings, ruleset, every, args.sys_root, args.dev_root
        )
        return _report(args, agent.once(analyzer, reader))
    if settings.log_format != "auto":
        logs.configure(args.log_level, json_lines=settings.log_format == "json")
    process, server, reader = agent.serve(settings, ruleset, every, args.sys_root, args.dev_root)
    name = os.environ.get("NODE_NAME") or socket.gethostname()
    process.telemetry.registry.register(NodeCollector(reader, name))
    return process.run(server)


def _cost(args: argparse.Namespace) -> int:
    settings = _settings(args)
    adaptive = settings.polling == "adaptive"
    analyzer = Analyzer(settings, rules.load(settings.rule_dirs), adaptive=adaptive)
    table = analyzer.costs()
    code = 0
    if args.sample:
        table, code = _sampled(analyzer, table, settings)
    names = analyzer.accounts.named()
    if args.format == "json":
        sys.stdout.write(json.dumps(report.cost_document(table, names), indent=2) + "\n")
        return code
    cadence = (settings.interval, settings.active_cadence, settings.idle_cadence)
    shard = settings.sharding()
    part = None if shard.whole else (shard.index, shard.total)
    asked = analyzer.coverage.prometheus
    covered = analyzer.coverage.volumes(analyzer.inventories().values())
    coverage = (covered, asked.failing) if asked is not None else None
    sys.stdout.write(report.cost_table(table, *cadence, names=names, shard=part, coverage=coverage))
    return code


def _savings(args: argparse.Namespace) -> int:
    settings = _settings(args)
    analyzer = Analyzer(settings, rules.load(settings.rule_dirs))
    found = fleet_savings.find(analyzer, datetime.now(UTC))
    _say_fetched(found.stats, settings)
    if found.volumes and len(found.unread) == found.volumes:
        # Nothing read: no table, which would say there is nothing to save.
        print(f"{PROG}: error: the past of no volume could be read: {found.why}", file=sys.stderr)
        return AwsCallError.exit_code
    if args.format == "json":
        document = savings_report.document(
            found.savings, found.stats.metrics_requested, found.unread, found.volumes
        )
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        sys.stdout.write(savings_report.table(found.savings, found.currency))
    if found.unread:
        print(
            f"{PROG}: warning: the past of {len(found.unread)} of {found.volumes} volumes could "
            f"not be read (nothing is offered on them: {found.why}): "
            f"{', '.join(found.unread[:5])}{' …' if len(found.unread) > 5 else ''}",
            file=sys.stderr,
        )
    _say_unpriced(found)
    return 0


def _say_unpriced(found: fleet_savings.Found) -> None:
    """One line where RDS instances with provisioned IOPS could not be weighed for want of a
    price: never a silent "nothing to save" about them."""
    if found.unpriced:
        names = ", ".join(found.unpriced[:5]) + (" …" if len(found.unpriced) > 5 else "")
        print(
            f"{PROG}: warning: {len(found.unpriced)} RDS instance(s) with provisioned IOPS not "
            f"weighed: the price of RDS's IOPS is not known (give rds_storage in the price file, "
            f"docs/savings.md): {names}",
            file=sys.stderr,
        )


def _sampled(
    analyzer: Analyzer, table: dict[str, dict[str, Projection]], settings: settings_mod.Settings
) -> tuple[dict[str, dict[str, Projection]], int]:
    """`cost --sample`: the table with each scope's bill at today's load, read now (the
    inventory `table` was worked out from is the one read: it is not described again); where
    no metric could be read, the table as it was and the exit code that says so."""
    sampled, stats = analyzer.sampled(datetime.now(UTC))
    _say_fetched(stats, settings)
    effect = "their resources count as idle at today's load"
    code = _say_unread(stats, effect, instead="; no bill at today's load")
    if code:
        return table, code
    sampled_table = {
        where: {report.SAMPLED: sampled[where], **row} if where in sampled else row
        for where, row in table.items()
    }
    return sampled_table, 0


MAX_SINCE_S = 15 * 86400.0
"""CloudWatch keeps 1-minute data for 15 days."""


def _since(args: argparse.Namespace) -> float:
    try:
        since_s = float(parse_duration(args.since))
    except ValueError as exc:
        raise ConfigError(f"--since {args.since}: {exc}") from None
    if not 0 < since_s <= MAX_SINCE_S:
        raise ConfigError(f"--since {args.since}: must be above 0 and at most 15d")
    return since_s


def _until(args: argparse.Namespace) -> datetime:
    if args.until is None:
        return datetime.now(UTC)
    try:
        until = datetime.fromisoformat(args.until)
    except ValueError:
        raise ConfigError(
            f"--until {args.until}: expected a time such as 2026-11-17T18:00:00Z"
        ) from None
    return until if until.tzinfo else until.replace(tzinfo=UTC)


def _live_history(args: argparse.Namespace, analyzer: Analyzer) -> recording.Recording:
    """The inventory's history over --since up to --until, fetched once, its cost said."""
    settings = analyzer.settings
    since_s, until = _since(args), _until(args)
    wanted = analyzer.history_queries()
    past_wanted = {
        region: [q for found in past_queries(inv).values() for q in found]
        for region, inv in analyzer.inventories().items()
    }
    price = prices.load(settings.prices).cloudwatch_per_1000_metrics / 1000
    count = sum(len(q) for q in wanted.values())
    count += len(PAST_STATS) * sum(len(q) for q in past_wanted.values())
    print(
        f"{PROG}: fetching {count:,} metrics over {units.duration(since_s)}: about "
        f"${count * price:,.4f} of GetMetricData",
        file=sys.stderr,
    )
    raw, stats = analyzer.history(wanted, since_s, until)
    if stats.outcome == "failed":
        reason = stats.errors[0] if stats.errors else "unknown"
        raise AwsCallError(f"no metric could be read: {reason}")
    end = data_end(until, settings.settle_delay)
    start = end - timedelta(seconds=since_s)
    # The days before, as the daemon would have read them at the first replayed minute.
    before: dict[str, dict[str, dict[str, Series]]] = {}
    for stat in PAST_STATS:
        asked = {
            region: [replace(q, stat=stat, period_s=PROFILE_PERIOD_S) for q in found]
            for region, found in past_wanted.items()
        }
        fetched, more = analyzer.history(asked, PROFILE_SPAN_S, start)
        stats.merge(more)
        for region, by_rid in fetched.items():
            for rid, by_metric in by_rid.items():
                into = before.setdefault(region, {}).setdefault(rid, {})
                into.update({past_name(m, stat): series for m, series in by_metric.items()})
    _say_fetched(stats, settings)
    return recording.Recording(start, end, analyzer.inventories(), raw, before)


def _say_fetched(stats: FetchStats, settings: settings_mod.Settings) -> None:
    """What a command's own reads of CloudWatch cost, on stderr."""
    price = prices.load(settings.prices).cloudwatch_per_1000_metrics / 1000
    print(
        f"{PROG}: fetched {stats.metrics_requested:,} metrics in "
        f"{sum(stats.requests.values()):,} call(s): ${stats.metrics_requested * price:,.4f}",
        file=sys.stderr,
    )


def _approve_within(args: argparse.Namespace) -> float | None:
    """--approve-within in seconds; None where it is not given."""
    if args.approve_within is None:
        return None
    try:
        seconds = float(parse_duration(args.approve_within))
    except ValueError as exc:
        raise ConfigError(f"--approve-within {args.approve_within}: {exc}") from None
    if not 0 < seconds <= approval.MOST_S:
        raise ConfigError(f"--approve-within {args.approve_within}: must be above 0 and at most 1h")
    if args.what_if:
        raise ConfigError(
            "--approve-within weighs the rules' warnings, which --what-if does not replay"
        )
    return seconds


def _backtest(args: argparse.Namespace) -> int:
    settings = _settings(args)
    approve_s = _approve_within(args)
    limit = _tune_options(args)
    if args.what_if:
        return _what_if(args, settings)
    ruleset = rules.load(settings.rule_dirs)
    if args.source is not None:
        history = recording.read(recording.resolve(args.source))
    else:
        history = _live_history(args, Analyzer(settings, ruleset))
    span = judged.Span.over(
        history,
        _since(args),
        ruleset.reach(),
        Catalog(prices.load(settings.prices)),
        settings.resolve_after,
        Sight(settings.settle_delay, settings.publication_lag),
    )
    if args.tune:
        return _tune(args, settings, ruleset, span, limit)
    result = span.replayed(ruleset)
    approved = approval.approve_within(result, approve_s) if approve_s is not None else None
    if args.format == "json":
        document = result.as_dict()
        if approved is not None:
            document["approve_within"] = approved.as_dict()
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        sys.stdout.write(backtest_text.render(result))
        if approved is not None:
            sys.stdout.write("\n" + backtest_text.approval_text(approved))
    return 0


def _tune_options(args: argparse.Namespace) -> tune.Limit:
    """--tune's own options, checked before anything is fetched."""
    if not args.tune:
        given = [f for f, v in (("--write-rules", args.write_rules), ("--jobs", args.jobs)) if v]
        if args.max_false != "alarm":
            given.append("--max-false")
        if given:
            raise ConfigError(f"{', '.join(given)}: only with --tune")
        return tune.Limit()
    if args.what_if or args.approve_within:
        with_what = "--what-if" if args.what_if else "--approve-within"
        raise ConfigError(
            f"--tune weighs the credit rules' settings; {with_what} is a backtest of its own"
        )
    if args.jobs is not None and args.jobs < 1:
        raise ConfigError(f"--jobs {args.jobs}: at least 1")
    if args.write_rules is not None and args.write_rules.exists() and not args.write_rules.is_dir():
        raise ConfigError(f"--write-rules {args.write_rules}: not a directory")
    return tune.Limit.parse(args.max_false)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _tune(
    args: argparse.Namespace,
    settings: settings_mod.Settings,
    ruleset: rules.RuleSet,
    span: judged.Span,
    limit: tune.Limit,
) -> int:
    """Each setting of the credit rules replayed over the history, one row each, and the
    recommendation under --max-false, chosen on half the fleet and judged on the other."""
    found = tune.settings(ruleset)
    jobs = args.jobs or _cpus()
    bucketed = len(judged.with_balance(span.history))
    tasks = len(found) * len(judged.parts(span.history))
    print(
        f"{PROG}: tune: {len(found)} settings over {bucketed} resource(s) with a burst "
        f"bucket, in {tasks} replays, {min(jobs, tasks)} at a time",
        file=sys.stderr,
    )
    with progress.step("tune: replaying", tasks, "replays") as step:
        results = judged.judged(span, found, ruleset, jobs, step.advance, args.log_level)
    rows = tune.rows(found, results)
    group_of = tune.groups(span.history.inventories.values())
    span_s = (span.end - span.start).total_seconds()
    recommended = tune.recommend(found, results, group_of, limit, span_s)
    if args.format == "json":
        document = {
            "from": span.start.isoformat(),
            "to": span.end.isoformat(),
            "tune": [row.as_dict() for row in rows],
            "recommendation": recommended.as_dict(span_s),
        }
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        sys.stdout.write(tune_text.render(rows, recommended, span.start, span.end))
    if args.write_rules is not None:
        sys.stdout.flush()
        _write_rules(args.write_rules, recommended, settings)
    return 0


TUNED = "tuned.yaml"


def _write_rules(
    directory: Path, recommended: tune.Recommendation, settings: settings_mod.Settings
) -> None:
    """The recommended setting's rules file, read back as it will run (layered after the
    rules in force) before it is kept. Nothing recommended: nothing written, exit 1."""
    if recommended.setting is None:
        raise AnalyzerError(
            f"--write-rules {directory}: nothing recommended ({recommended.reason}); "
            "no file written"
        )
    layers = [str(d) for d in settings.rule_dirs] or [rules.BUILTIN]
    made = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / TUNED
    kept = path.read_bytes() if path.exists() else None
    path.write_text(tune.written(recommended.setting, layers), encoding="utf-8")
    try:
        tuned = rules.load([*map(Path, layers), directory])
    except ConfigError:  # the directory is left as it was
        if kept is not None:
            path.write_bytes(kept)
        else:
            path.unlink()
            if made:
                directory.rmdir()
        raise
    if tune.settings(tuned)[0].burn != recommended.setting.burn:
        raise AnalyzerError(
            f"{path}: read back, its rules are not the setting {recommended.setting.name}"
        )
    under = " ".join(f"--rules {d}" for d in [*layers, str(directory)])
    print(f"{PROG}: wrote {path}: run with {under}", file=sys.stderr)


def _what_if(args: argparse.Namespace, settings: settings_mod.Settings) -> int:
    """Each --what-if replayed over its resource's demand: from the recording, or read from
    CloudWatch over --since (four metrics a resource), the cost said."""
    asked = [sold.Asked.parse(text) for text in args.what_if]
    since_s = _since(args)
    if args.source is not None:
        history = recording.read(recording.resolve(args.source))
        inventories = history.inventories
        end = history.end if args.until is None else min(history.end, _until(args))
        start = max(history.start, end - timedelta(seconds=since_s))
        if start >= end:
            raise ConfigError(f"--until {args.until}: before the recording begins")
    else:
        analyzer = Analyzer(settings, rules.load(settings.rule_dirs))
        inventories = analyzer.refresh_inventory()
    trials = []
    for one in asked:
        scope, resource = what_if.find(one, inventories)
        described = None if args.source is not None else analyzer.scopes.at(scope).describe
        types = _types_to_try(one, resource, inventories[scope], described)
        # Each checked against what AWS sells before any of the past is read (and billed).
        trials.append((scope, resource, what_if.trial(one, resource, inventories[scope], types)))
    tried = []
    stats = FetchStats()
    for scope, resource, trial in trials:
        rid = trial.asked.resource_id
        if args.source is not None:
            series = history.raw.get(scope, {}).get(rid, {})
            # At the period it was recorded at: five minutes for an instance under basic
            # monitoring, whose sums a minute would not split.
            period = max((s.period_s for s in series.values() if s.values), default=60)
            seen = demand.demand_of(series.items(), Window(start, end, period))
        else:
            metrics = analyzer.scopes.at(scope).metrics
            until, days = _until(args), since_s / 86_400
            found = demand.fetch_demand(
                metrics, [resource], until, settings.settle_delay, stats, days
            )
            seen = next((d for _, d in found), None)
        if seen is None:
            raise ConfigError(
                f"--what-if {trial.asked.text}: no operations of {rid} in the "
                f"{'recording' if args.source else 'last ' + units.duration(since_s)}"
            )
        tried.append(trial.over(seen))
    if args.source is None:
        _say_fetched(stats, settings)
    if args.format == "json":
        sys.stdout.write(json.dumps({"what_if": [t.as_dict() for t in tried]}, indent=2) + "\n")
    else:
        sys.stdout.write(what_if.render(tried))
    return 0


def _types_to_try(
    asked: sold.Asked,
    resource: sold.Tryable,
    inventory: Inventory,
    described: Describer | None,
) -> dict[str, InstanceType] | None:
    """The instance types an EC2 instance's --what-if may name, by name: those of the
    inventory's instances, and the one named as the region describes it (not a recording's)."""
    name = asked.settings.get("type")
    if not isinstance(resource, Instance) or not isinstance(name, str):
        return None
    known = [i.type_info for i in inventory.instances if i.type_info]
    if described is not None:
        known += described.instance_types([name])
    return {t.name: t for t in known}


def _record(args: argparse.Namespace) -> int:
    settings = _settings(args)
    history = _live_history(args, Analyzer(settings, rules.load(settings.rule_dirs)))
    recording.write(args.output, history)
    series = sum(len(r) for by_region in history.raw.values() for r in by_region.values())
    found = history.resources()
    print(
        f"{PROG}: recorded {series:,} series of {found:,} "
        f"resource{'' if found == 1 else 's'} to {args.output}",
        file=sys.stderr,
    )
    return 0


def _apply(args: argparse.Namespace) -> int:
    """A fix applied: its plan on stdout, then its outcome; the exit code says which."""
    settings = _settings(args)
    try:
        wait_s = float(parse_duration(args.wait))
    except ValueError as exc:
        raise ConfigError(f"--wait {args.wait}: {exc}") from None
    if not 0 <= wait_s <= 3_600:
        raise ConfigError(f"--wait {args.wait}: must be 0 to 1h")
    analyzer = Analyzer(settings, rules.load(settings.rule_dirs)).offering()
    regions = [analyzer.scopes.connected(r, a) for a, r in analyzer.scopes.targets()]

    past = act_past.reader(
        {r.scope: r.metrics for r in regions},
        settings.settle_delay,
        lambda: datetime.now(UTC),
        lambda stats: _say_fetched(stats, settings),
    )

    applier = Applier(
        [(r.scope, r.changes) for r in regions if r.changes is not None],
        Catalog(prices.load(settings.prices), analyzer.offers),
        settings.apply_policy(),
        lambda: datetime.now(UTC),
        past=None if args.no_past else past,
        cluster=(
            KubernetesCluster.connect(settings.kubernetes_cluster)
            if settings.apply_through_kubernetes
            else None
        ),
    )
    planned = applier.plan(args.fix_id)
    if isinstance(planned, ApplyResult):
        return _applied(planned)
    sys.stdout.write("\n".join(planned.lines()) + "\n")
    sys.stdout.flush()
    ended = applier.check(planned, args.allow_cost_increase)
    if ended is not None:
        return _applied(ended)
    if not (args.yes or args.dry_run):
        declined = _confirmed(planned)
        if declined is not None:
            return _applied(declined)
    return _applied(applier.apply(planned, args.dry_run, wait_s))


def _confirmed(plan: Plan) -> ApplyResult | None:
    """None where a `y` was typed on a terminal; else the Result that changes nothing."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return ApplyResult(
            Outcome.UNCONFIRMED,
            plan.fix_id,
            "nothing changed: pass --yes to apply it, or --dry-run to ask AWS whether it would "
            "succeed (on a terminal, apply asks)",
            plan,
        )
    try:
        answer = input(f"Apply {plan.fix_id}? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        return None
    return ApplyResult(Outcome.UNCONFIRMED, plan.fix_id, "nothing changed: not confirmed", plan)


def _applied(result: ApplyResult) -> int:
    """The outcome in one line (stdout where it went ahead, stderr where it did not), and in
    the log."""
    audit(result, getpass.getuser(), "cli")
    if result.went_ahead:
        print(result.said())
    else:
        print(f"{PROG}: {result.said()}", file=sys.stderr)
    return result.exit_code


def _demo(args: argparse.Namespace) -> int:
    return demo.run(
        once=args.once,
        apply=args.apply,
        allow_cost_increase=args.allow_cost_increase,
        fmt=args.format,
        speed=args.speed,
        listen=args.listen,
        rules=args.rules,
        source=recording.resolve(args.source) if args.source is not None else None,
    )


def _run(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if settings.log_format != "auto":
        logs.configure(args.log_level, json_lines=settings.log_format == "json")
        progress.configure(progress.for_stderr(console=settings.log_format == "console"))
    ruleset = rules.load(settings.rule_dirs)
    process, server = daemon.build(settings, ruleset)
    return process.run(server)


def _rule_layers(args: argparse.Namespace) -> list[Path] | None:
    """The directories `rules check` and `rules list` load: layered on the shipped rules unless
    --alone, or unless the shipped rules are named among them (`builtin my-rules/`)."""
    dirs: list[Path] = args.dirs or []
    if getattr(args, "alone", False) or any(str(d) == rules.BUILTIN for d in dirs):
        return dirs or None
    return [Path(rules.BUILTIN), *dirs]


def _rules(args: argparse.Namespace) -> int:
    if args.rules_command == "test":
        ruleset = rules.load(args.dirs or None)
    else:
        ruleset = rules.load(_rule_layers(args))
    if args.rules_command == "test":
        outcome = rule_tests.run_files(args.files, ruleset)
        for line in outcome.failures:
            print(line)
        files = len(args.files)
        if outcome.failures:
            print(f"{len(outcome.failures)} failure(s) in {outcome.tests} test(s), {files} file(s)")
            return 1
        print(f"{outcome.tests} test(s) in {files} file(s) passed")
        return 0
    if args.rules_command == "check":
        enabled = len(ruleset.rules)
        layers = [
            "the shipped rules" if str(d) == rules.BUILTIN else str(d)
            for d in _rule_layers(args) or [Path(rules.BUILTIN)]
        ]
        print(f"{len(ruleset)} rule(s) valid ({enabled} enabled): {' + '.join(layers)}")
        return 0
    from analyzer.deliver.text import print_table

    rows = [["RULE", "KIND", "SEVERITY", "APPLIES TO", "FILE"]]
    for loaded in ruleset.loaded:
        rule = loaded.rule
        state = "" if rule.enabled else "  (disabled)"
        types = ",".join(t.value for t in rule.resource_types)
        rows.append(
            [rule.id, rule.kind, rule.severity.value, types, f"{loaded.source.name}{state}"]
        )
    print_table(rows, sys.stdout)
    return 0


def _recordings(args: argparse.Namespace) -> int:
    """The shipped recordings, by the name `--from` takes."""
    for name, path in recording.shipped().items():
        found = recording.read(path)
        span = units.duration((found.end - found.start).total_seconds())
        count = found.resources()
        print(
            f"{name}  {found.start:%Y-%m-%d %H:%M} → {found.end:%Y-%m-%d %H:%M} UTC ({span}), "
            f"{count} resource{'' if count == 1 else 's'} in {', '.join(sorted(found.inventories))}"
        )
    return 0


def _iam_policy(args: argparse.Namespace) -> int:
    policy = aws.apply_policy() if args.apply else aws.iam_policy()
    sys.stdout.write(json.dumps(policy, indent=2) + "\n")
    return 0


def _unset_empty_profile() -> None:
    """An empty AWS_PROFILE (compose's `${AWS_PROFILE:-}`, an `env:` entry with no value) means
    no profile, not a profile named "": boto3 would stop at "The config profile () could not
    be found"."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        if os.environ.get(name, None) == "":
            del os.environ[name]


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "once": _once,
    "rules": _rules,
    "cost": _cost,
    "savings": _savings,
    "demo": _demo,
    "run": _run,
    "backtest": _backtest,
    "record": _record,
    "recordings": _recordings,
    "iam-policy": _iam_policy,
    "apply": _apply,
    "node": _node,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # Said by the subcommand's parser, whose usage lists the options it does take.
        taking = subcommand(parser, args)
        options = [o for action in taking._actions for o in action.option_strings]
        guesses = [
            guess
            for word in extra
            if word.startswith("--") and (guess := nearest(word.split("=")[0], options))
        ]
        hint = f" (did you mean {' or '.join(guesses)}?)" if guesses else ""
        taking.error(f"unrecognized arguments: {' '.join(extra)}{hint}")
    if getattr(args, "log_level", None) is None:
        daemon_like = args.command == "run" or (
            args.command == "node" and not (args.once or args.replay or args.capture)
        )
        args.log_level = "info" if daemon_like else "warning"
    if args.log_level not in LOG_LEVELS:
        print(
            f"{PROG}: error: EBS_ANALYZER_LOG_LEVEL {args.log_level!r}: "
            f"expected one of {', '.join(LOG_LEVELS)}",
            file=sys.stderr,
        )
        return ConfigError.exit_code
    logs.configure(args.log_level)
    progress.configure(progress.for_stderr(console=True))
    _unset_empty_profile()
    try:
        handler = COMMANDS.get(args.command)
        if handler is None:
            raise ConfigError(f"unknown command {args.command!r}")
        return handler(args)
    except AnalyzerError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader stopped reading (`ebs-analyzer rules list | head`): nothing more to say,
        # and no traceback when Python flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
