"""Each setting replayed over one history in parts: the parts keep neighbours together and
leave out what no setting changes, and the figures are those of one replay of the whole."""

from __future__ import annotations

from datetime import timedelta

import pytest

from analyzer.analyze import prices, rules
from analyzer.analyze.catalog import Catalog
from analyzer.collect import recording
from analyzer.collect.recording import Recording
from analyzer.errors import ConfigError
from analyzer.model.resources import DbInstance, Instance, Inventory, Volume
from analyzer.offline import judged, tune
from analyzer.offline.backtest import Backtest
from tests.helpers import T0, series

REGION = "us-east-1"


def _history(count: int, balance_on: set[str]) -> Recording:
    """`count` instances with two volumes each, a database, and a BurstBalance for the ids in
    `balance_on` (a rate for every volume)."""
    instances = tuple(
        Instance(
            f"i-{n:02d}",
            REGION,
            "m5.large",
            "running",
            volume_ids=(f"vol-{n:02d}a", f"vol-{n:02d}b"),
        )
        for n in range(count)
    )
    volumes = tuple(
        Volume(f"vol-{n:02d}{x}", REGION, "gp2", 100, "in-use", attached_to=f"i-{n:02d}")
        for n in range(count)
        for x in "ab"
    )
    db = DbInstance("orders", REGION, "mysql", "db.m5.large", "gp2", 200, "available")
    inventory = Inventory(REGION, volumes=volumes, instances=instances, db_instances=(db,))
    raw = {
        v.volume_id: {"VolumeReadOps": series([60.0] * 5)}
        | ({"BurstBalance": series([90.0] * 5)} if v.volume_id in balance_on else {})
        for v in volumes
    }
    raw["orders"] = {"ReadIOPS": series([1.0] * 5)}
    return Recording(T0, T0 + timedelta(minutes=5), {REGION: inventory}, {REGION: raw})


def test_parts_keep_an_instance_with_its_volumes_and_leave_out_what_has_no_balance() -> None:
    history = _history(5, {"vol-00b", "vol-02a", "vol-03a", "vol-03b"})
    found = judged.parts(history)
    # i-00, i-02 and i-03, each with both its volumes; i-01, i-04 and the database have no
    # balance.
    assert found == [
        frozenset({"i-00", "vol-00a", "vol-00b"}),
        frozenset({"i-02", "vol-02a", "vol-02b"}),
        frozenset({"i-03", "vol-03a", "vol-03b"}),
    ]
    assert judged.with_balance(history) == {"vol-00b", "vol-02a", "vol-03a", "vol-03b"}


def test_a_balance_in_the_past_days_alone_counts() -> None:
    history = _history(2, set())
    history = Recording(
        history.start,
        history.end,
        history.inventories,
        history.raw,
        {REGION: {"vol-01a": {"BurstBalance:Minimum": series([50.0])}}},
    )
    assert judged.parts(history) == [frozenset({"i-01", "vol-01a", "vol-01b"})]


def test_the_span_is_the_last_since_after_what_the_rules_read_first() -> None:
    history = _history(1, {"vol-00a"})
    catalog = Catalog(prices.load(None))
    span = judged.Span.over(history, 120.0, 60.0, catalog, 300.0)
    assert (span.start, span.end) == (history.end - timedelta(minutes=2), history.end)
    span = judged.Span.over(history, 3600.0, 60.0, catalog, 300.0)
    assert span.start == history.start + timedelta(minutes=1)
    with pytest.raises(ConfigError, match="--since: the history must be longer than the 5 min"):
        judged.Span.over(history, 3600.0, 300.0, catalog, 300.0)


@pytest.mark.slow
def test_the_parts_replayed_in_parallel_give_the_whole_fleets_figures() -> None:
    """The shipped recording of incident 3 (a replica, its instance, and the others of the
    shop), cut to its last two days: each setting's figures by resource, in parts and in two
    processes, equal one replay of the whole."""
    history = recording.read(recording.resolve("incident-3-fortnight"))
    ruleset = rules.load(None)
    span = judged.Span.over(
        history, 2 * 86400.0, ruleset.reach(), Catalog(prices.load(None)), 300.0
    )
    found = tune.settings(ruleset)[:2]
    whole = {s.name: span.replayed(s.ruleset(ruleset)).by_resource for s in found}
    done: list[None] = []
    parted = judged.judged(span, found, ruleset, jobs=2, advance=lambda: done.append(None))
    assert parted == whole
    assert len(done) == len(found) * len(judged.parts(span.history))
    assert any(q.exhaustions for q in whole["shipped"].values())


def _failing(result: Backtest) -> None:
    raise RuntimeError(f"weighed {sorted(result.by_resource)}")


def test_a_part_that_fails_ends_the_replays_with_its_error() -> None:
    history = _history(6, {f"vol-{n:02d}a" for n in range(6)})
    span = judged.Span.over(history, 120.0, 60.0, Catalog(prices.load(None)), 300.0)
    with pytest.raises(RuntimeError, match="weighed"):
        list(judged.each(span, [rules.load(None)], jobs=2, weigh=_failing))
    # In one process, the same.
    with pytest.raises(RuntimeError, match="weighed"):
        list(judged.each(span, [rules.load(None)], jobs=1, weigh=_failing))
