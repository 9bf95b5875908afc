"""Each setting of the rules replayed over one history, in parallel: the figures `--tune`
sets side by side.

The history is fetched (or read) once. It is cut into parts, each a group of neighbours (a
volume with its instance and the instance's other volumes, which the analysis reads
together), and every part is replayed under every setting: a part's figures are those the
whole fleet's replay gives for its resources, since the analysis never looks beyond a
resource's neighbours. Resources with no balance in the history are left out: no setting of
the credit rules changes what they show, and the backtest counts nothing for them. Parts run
in worker processes, as many as `jobs`, each holding the history once (forked, where the
platform can, so that it is not copied).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from analyzer import logs
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.rules import RuleSet
from analyzer.collect.recording import Raw, Recording
from analyzer.errors import ConfigError
from analyzer.model import units
from analyzer.model.layers import balance_metric
from analyzer.offline.backtest import Backtest, Quality, backtest
from analyzer.offline.replay import BALANCES, EVERY_MINUTE, Sight
from analyzer.offline.tune import Judged, Setting, groups

_NAMES = frozenset(balance_metric(m) for m in BALANCES)


@dataclass(frozen=True, slots=True)
class Span:
    """What every replay shares: the history, and how it is replayed."""

    history: Recording
    catalog: Catalog
    start: datetime
    end: datetime
    resolve_after_s: float
    sight: Sight = EVERY_MINUTE
    """What each cycle reads, as the daemon reads it (`settle_delay`, `publication_lag`)."""

    @classmethod
    def over(
        cls,
        history: Recording,
        since_s: float,
        reach_s: float,
        catalog: Catalog,
        resolve_after_s: float,
        sight: Sight = EVERY_MINUTE,
    ) -> Span:
        """The last `since_s` of the history, replayed; what comes before it is the past the
        rules read at its first minute (at least `reach_s` of it), as the daemon would have
        read it."""
        start = max(
            history.start + timedelta(seconds=reach_s), history.end - timedelta(seconds=since_s)
        )
        if start >= history.end:
            raise ConfigError(
                f"--since: the history must be longer than the {units.duration(reach_s)} "
                "the rules read before their first cycle"
            )
        return cls(history, catalog, start, history.end, resolve_after_s, sight)

    def replayed(self, ruleset: RuleSet, ids: frozenset[str] | None = None) -> Backtest:
        """The rules over the history from `start` to `end`, judged: `backtest` as the
        command runs it (with `ids`, over those resources alone)."""
        history = self.history if ids is None else _only(self.history, ids)
        return backtest(
            history.inventories,
            history.raw,
            ruleset,
            self.catalog,
            self.start,
            self.end,
            self.resolve_after_s,
            history.past,
            self.sight,
        )


def _only(history: Recording, ids: frozenset[str]) -> Recording:
    def kept(raw: Raw) -> Raw:
        return {
            scope: {rid: found for rid, found in by_rid.items() if rid in ids}
            for scope, by_rid in raw.items()
        }

    inventories = {
        scope: replace(
            inventory,
            volumes=tuple(v for v in inventory.volumes if v.volume_id in ids),
            instances=tuple(i for i in inventory.instances if i.instance_id in ids),
            db_instances=tuple(d for d in inventory.db_instances if d.db_instance_id in ids),
        )
        for scope, inventory in history.inventories.items()
    }
    return replace(history, inventories=inventories, raw=kept(history.raw), past=kept(history.past))


def with_balance(history: Recording) -> set[str]:
    """The resources whose history (or past days) holds a balance."""
    return {
        rid
        for raw in (history.raw, history.past)
        for by_rid in raw.values()
        for rid, by_metric in by_rid.items()
        if any(name.split(":")[0] in _NAMES for name in by_metric)
    }


def parts(history: Recording) -> list[frozenset[str]]:
    """The history's resources with a balance, each with its neighbours: a group a part, in
    the order of their names. One group at a time, not several: a replay's cost grows faster
    than its resources (each step's garbage is collected among every resource's live objects:
    eight volumes with their instances took twice as long together as one by one), and the
    progress moves with each group."""
    group_of = groups(history.inventories.values())
    members: dict[str, set[str]] = {}
    for rid, group in group_of.items():
        members.setdefault(group, set()).add(rid)
    wanted = {group_of.get(rid, rid) for rid in with_balance(history)}
    return [frozenset(members.get(group, {group})) for group in sorted(wanted)]


Weigh = Callable[[Backtest], Any]
"""What a part's replay gives back from the worker: by default each resource's figures."""


def by_resource(result: Backtest) -> dict[str, Quality]:
    return result.by_resource


_HELD: dict[str, Any] = {}
"""In a worker: the span, the rule sets and how a part is weighed, given once."""


def _hold(span: Span, rulesets: Sequence[RuleSet], weigh: Weigh, level: str) -> None:
    logs.configure(level)  # the replayed alerts are the figures, not the log
    _HELD.update(span=span, rulesets=rulesets, weigh=weigh)


def _run(index: int, ids: frozenset[str]) -> Any:
    span: Span = _HELD["span"]
    return _HELD["weigh"](span.replayed(_HELD["rulesets"][index], ids))


def _context() -> Any:
    """Fork where the platform has it: the workers share the parent's history unchanged."""
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    return multiprocessing.get_context(method)


def each(
    span: Span,
    rulesets: Sequence[RuleSet],
    jobs: int,
    weigh: Weigh = by_resource,
    level: str = "warning",
) -> Iterator[tuple[int, frozenset[str], Any]]:
    """Every part of the history replayed under every one of `rulesets`, as each finishes:
    the rule set's index, the part's resources, and what `weigh` made of its backtest."""
    tasks = [(index, ids) for index in range(len(rulesets)) for ids in parts(span.history)]
    if jobs <= 1:
        for index, ids in tasks:
            yield index, ids, weigh(span.replayed(rulesets[index], ids))
        return
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(tasks)) or 1,
        mp_context=_context(),
        initializer=_hold,
        initargs=(span, tuple(rulesets), weigh, level),
    ) as pool:
        running: dict[Future[Any], tuple[int, frozenset[str]]] = {
            pool.submit(_run, index, ids): (index, ids) for index, ids in tasks
        }
        try:
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    index, ids = running.pop(future)
                    yield index, ids, future.result()
        except BaseException:  # a replay failed, or the reader stopped: the rest is not run
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def judged(
    span: Span,
    found: Sequence[Setting],
    base: RuleSet,
    jobs: int,
    advance: Callable[[], None] = lambda: None,
    level: str = "warning",
) -> Judged:
    """Each setting's figures, by resource: `advance` is called as each part under each
    setting is done."""
    out: dict[str, dict[str, Quality]] = {s.name: {} for s in found}
    rulesets = [s.ruleset(base) for s in found]
    for index, _ids, figures in each(span, rulesets, jobs, level=level):
        out[found[index].name].update(figures)
        advance()
    return out
