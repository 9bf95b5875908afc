"""`backtest --tune`: what an earlier credit warning costs, on the fleet's own data.

The credit rules in force are replayed over the same fetched history under several settings of
their own knobs (`settings`): as they are, without the burn, and with the burn speaking 1.5, 2
and 3 times as far from empty. Each setting's figures (`Row`) are the backtest's own counting,
summed over the fleet, beside the `BurstBalance < 20 %` alarm's on the same data.

The recommendation (`recommend`) is chosen on one half of the fleet and reported on the other
(`halves`), so that the figures it is judged by are not those it was picked on: of the settings
that keep to the operator's limit on false warnings there, the one warning of fewest
exhaustions later than the alarm and, of those, with the longest median lead. With too few
exhaustions in either half, it recommends nothing.
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import yaml

from analyzer.analyze.kinds.credit_forecast import DEFAULT_BURN, BurnWindows, CreditForecast
from analyzer.analyze.rules import BUILTIN, LoadedRule, RuleSet, builtin_dir
from analyzer.errors import ConfigError
from analyzer.model.resources import Inventory
from analyzer.model.units import as_written
from analyzer.offline.backtest import Quality, summed

WIDER = (1.5, 2.0, 3.0)
"""The earlier settings: every burn pair's `within` this many times the rule's own."""
HOUR_S = 3600.0
FORTNIGHT_S = 14 * 86400.0
MIN_EXHAUSTIONS = 5
"""A half of the fleet with fewer exhaustions than this judges nothing: one or two drains
would pick the setting by chance."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting of the credit rules in force: for each `credit_forecast` rule, its burn."""

    name: str
    burn: Mapping[str, tuple[BurnWindows, ...]]
    """By rule id."""
    in_force: bool = False

    def ruleset(self, base: RuleSet) -> RuleSet:
        """`base` with each rule's burn set as this setting has it."""
        return RuleSet(
            tuple(
                replace(loaded, rule=loaded.rule.model_copy(update={"burn": self.burn[rid]}))
                if (rid := loaded.rule.id) in self.burn
                else loaded
                for loaded in base.loaded
            )
        )

    def layer(self) -> dict[str, Any]:
        """The rule layer that gives this setting over the rules in force, as a rules file
        holds it (`rules check` accepts it): each rule's id and its burn, the rest as it is."""
        return {
            "rules": [
                {"id": rid, "burn": [_pair(p) for p in pairs]} for rid, pairs in self.burn.items()
            ]
        }

    def describe(self) -> str:
        """`gp2-burst-exhaustion 15m/5m within 20m; hdd-burst-exhaustion …`."""
        return "; ".join(f"{rid} {said(pairs)}" for rid, pairs in self.burn.items())


def _pair(pair: BurnWindows) -> dict[str, str]:
    return {
        "long": as_written(pair.long),
        "short": as_written(pair.short),
        "within": as_written(pair.within),
    }


def said(pairs: Sequence[BurnWindows]) -> str:
    """`15m/5m within 20m`, or `no burn`."""
    words = [_pair(p) for p in pairs]
    return ", ".join(f"{w['long']}/{w['short']} within {w['within']}" for w in words) or "no burn"


def _shipped(loaded: Iterable[LoadedRule]) -> bool:
    """Whether every one of `loaded` comes from the shipped rules' files."""
    home = builtin_dir().resolve()
    return all(home in r.source.resolve().parents for r in loaded)


def settings(ruleset: RuleSet) -> list[Setting]:
    """The settings weighed: the rules in force, without the burn, and the burn's `within`
    widened by each of `WIDER` (a rule without a burn widens the default pair, in proportion
    to its horizon). Settings that would give the same rules as an earlier one are left out."""
    credit = [r for r in ruleset.loaded if r.rule.enabled and isinstance(r.rule, CreditForecast)]
    if not credit:
        raise ConfigError("--tune: no credit_forecast rule in force: there is no setting to weigh")
    rules = {r.rule.id: r.rule for r in credit if isinstance(r.rule, CreditForecast)}
    name = "shipped" if _shipped(credit) else "in force"
    found = [
        Setting(name, {rid: rule.burn for rid, rule in rules.items()}, in_force=True),
        Setting("no burn", dict.fromkeys(rules, ())),
    ]
    for factor in WIDER:
        burn = {rid: _widened(rule, factor) for rid, rule in rules.items()}
        found.append(Setting(f"within ×{factor:g}", burn))
    out: list[Setting] = []
    for setting in found:
        if all(setting.burn != kept.burn for kept in out):
            out.append(setting)
    return out


def _widened(rule: CreditForecast, factor: float) -> tuple[BurnWindows, ...]:
    scale = rule.horizon / HOUR_S
    pairs = rule.burn or tuple(
        BurnWindows(long=p.long * scale, short=p.short * scale, within=p.within * scale)
        for p in DEFAULT_BURN
    )
    return tuple(p.model_copy(update={"within": p.within * factor}) for p in pairs)


def named(found: Sequence[Setting], name: str) -> Setting:
    for setting in found:
        if setting.name == name:
            return setting
    raise ConfigError(f"{name}: no such setting (settings: {', '.join(s.name for s in found)})")


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


@dataclass(frozen=True, slots=True)
class Row:
    """A setting's figures over some resources, the backtest's own counting summed."""

    setting: Setting
    resources: int
    exhaustions: int
    warned: int
    later_than_alarm: int
    median_lead_s: float | None
    """Over the exhaustions warned, as the backtest's `median_lead_seconds`."""
    false_warnings: int
    hours_warned: float
    alarm_median_lead_s: float | None
    alarm_false_warnings: int

    @classmethod
    def of(cls, setting: Setting, qualities: Iterable[Quality]) -> Row:
        every = list(qualities)
        total = summed(every)
        return cls(
            setting,
            len(every),
            total.exhaustions,
            total.warned,
            total.later_than_alarm,
            _median(total.leads),
            total.false_warnings,
            round(total.warning_seconds / HOUR_S, 1),
            _median(total.alarm_leads),
            total.alarm_false_episodes,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "setting": self.setting.name,
            "shipped": self.setting.in_force,
            "rules": self.setting.layer(),
            "exhaustions": self.exhaustions,
            "warned": self.warned,
            "later_than_alarm": self.later_than_alarm,
            "median_lead_s": self.median_lead_s,
            "false_warnings": self.false_warnings,
            "hours_warned": self.hours_warned,
            "alarm_median_lead_s": self.alarm_median_lead_s,
            "alarm_false_warnings": self.alarm_false_warnings,
        }


Judged = Mapping[str, Mapping[str, Quality]]
"""By setting name, then resource id: each resource's figures under the setting."""


def rows(found: Sequence[Setting], judged: Judged, only: Iterable[str] | None = None) -> list[Row]:
    """One row a setting over every resource (or `only` these), from the latest warning to
    the earliest: by median lead, then by the hours warned."""
    keep = set(only) if only is not None else None
    out = [
        Row.of(s, (q for rid, q in judged[s.name].items() if keep is None or rid in keep))
        for s in found
    ]
    return sorted(out, key=lambda r: (r.median_lead_s or 0.0, r.hours_warned))


def groups(inventories: Iterable[Inventory]) -> dict[str, str]:
    """By resource id, the group it is judged with: a volume with the instance it is attached
    to (its neighbours share the workload that drains them), anything else by itself."""
    out: dict[str, str] = {}
    for inventory in inventories:
        for instance in inventory.instances:
            out[instance.instance_id] = instance.instance_id
        for volume in inventory.volumes:
            out[volume.volume_id] = volume.attached_to or volume.volume_id
        for db in inventory.db_instances:
            out[db.db_instance_id] = db.db_instance_id
    return out


def _order(key: str) -> str:
    return hashlib.blake2b(key.encode(), digest_size=8).hexdigest()


def halves(
    exhaustions: Mapping[str, int], group_of: Mapping[str, str]
) -> tuple[frozenset[str], frozenset[str]]:
    """The fleet's resources (the keys of `exhaustions`: how many each had, the same under
    every setting) in two halves, each group of neighbours whole in one: groups with the most
    exhaustions first, each to the half with fewer so far (then fewer resources; then the
    first). Within a count, groups go in the order of a hash of their name, so the split
    depends on nothing a setting changes, and on no listing order."""
    by_group: dict[str, list[str]] = {}
    for rid in exhaustions:
        by_group.setdefault(group_of.get(rid, rid), []).append(rid)
    weight = {g: sum(exhaustions[r] for r in members) for g, members in by_group.items()}
    chosen: list[list[str]] = [[], []]
    counted = [0, 0]
    for group in sorted(by_group, key=lambda g: (-weight[g], _order(g))):
        side = min((0, 1), key=lambda i: (counted[i], len(chosen[i]), i))
        chosen[side] += by_group[group]
        counted[side] += weight[group]
    return frozenset(chosen[0]), frozenset(chosen[1])


@dataclass(frozen=True, slots=True)
class Limit:
    """How many false warnings the operator accepts: no more than the alarm gives on the same
    resources (`per_fortnight` None), or this many a resource-fortnight."""

    per_fortnight: float | None = None

    @classmethod
    def parse(cls, text: str) -> Limit:
        if text == "alarm":
            return cls()
        try:
            number = float(text)
        except ValueError:
            number = -1.0
        if not 0 <= number < float("inf"):
            raise ConfigError(
                f"--max-false {text}: give 'alarm' (no more false warnings than the "
                "BurstBalance < 20 % alarm) or a number per resource-fortnight, 0 or more"
            )
        return cls(number)

    def allowed(self, row: Row, span_s: float) -> float:
        """How many false warnings `row`'s resources may have over `span_s`."""
        if self.per_fortnight is None:
            return float(row.alarm_false_warnings)
        return self.per_fortnight * row.resources * span_s / FORTNIGHT_S

    def describe(self) -> str:
        if self.per_fortnight is None:
            return "no more false warnings than the BurstBalance < 20 % alarm"
        return f"at most {self.per_fortnight:g} false warning(s) a resource-fortnight"

    def as_text(self) -> str:
        return "alarm" if self.per_fortnight is None else f"{self.per_fortnight:g}"


@dataclass(frozen=True, slots=True)
class Recommendation:
    limit: Limit
    chosen_on: frozenset[str]
    judged_on: frozenset[str]
    setting: Setting | None
    """None: nothing recommended (`reason` says why)."""
    reason: str
    picked: Row | None = None
    """The setting's figures on the half it was chosen on."""
    held_out: Row | None = None
    """Its figures on the other half: what to expect of it."""
    in_force: Row | None = None
    """The rules in force on that other half, to compare."""

    def as_dict(self, span_s: float) -> dict[str, Any]:
        def figures(row: Row | None) -> dict[str, Any] | None:
            if row is None:
                return None
            found = row.as_dict()
            del found["rules"]
            return {**found, "resources": row.resources}

        return {
            "max_false": self.limit.as_text(),
            "setting": self.setting.name if self.setting is not None else None,
            "reason": self.reason,
            "chosen_on": sorted(self.chosen_on),
            "judged_on": sorted(self.judged_on),
            "chosen_on_figures": figures(self.picked),
            "held_out": figures(self.held_out),
            "held_out_keeps_limit": (
                self.held_out.false_warnings <= self.limit.allowed(self.held_out, span_s)
                if self.held_out is not None
                else None
            ),
            "in_force_held_out": figures(self.in_force),
        }


def recommend(
    found: Sequence[Setting],
    judged: Judged,
    group_of: Mapping[str, str],
    limit: Limit,
    span_s: float,
) -> Recommendation:
    """The setting to run, chosen on one half of the fleet and reported on the other."""
    in_force = next(s for s in found if s.in_force)
    exhaustions = {rid: q.exhaustions for rid, q in judged[in_force.name].items()}
    for setting in found:  # a resource any setting judged counts, with its exhaustions
        for rid, quality in judged[setting.name].items():
            exhaustions.setdefault(rid, quality.exhaustions)
    chosen_on, judged_on = halves(exhaustions, group_of)
    counts = [sum(exhaustions[r] for r in half) for half in (chosen_on, judged_on)]
    base = Recommendation(limit, chosen_on, judged_on, None, "")
    if min(counts) < MIN_EXHAUSTIONS:
        return replace(
            base,
            reason=f"too few exhaustions to judge: {counts[0]} in the half a setting would be "
            f"chosen on and {counts[1]} in the half it would be judged on; at least "
            f"{MIN_EXHAUSTIONS} in each are needed",
        )
    on_picked = rows(found, judged, chosen_on)
    keeping = [r for r in on_picked if r.false_warnings <= limit.allowed(r, span_s)]
    if not keeping:
        fewest = min(on_picked, key=lambda r: r.false_warnings)
        return replace(
            base,
            reason=f"no setting keeps to {limit.describe()} on the half it would be chosen on "
            f"(the fewest: {fewest.setting.name}, {fewest.false_warnings} false warnings "
            f"where {limit.allowed(fewest, span_s):g} are allowed)",
        )
    best = min(
        keeping, key=lambda r: (r.later_than_alarm, -(r.median_lead_s or 0.0), r.false_warnings)
    )
    others = {r.setting.name: r for r in rows(found, judged, judged_on)}
    return replace(
        base,
        setting=best.setting,
        reason=f"of the settings that keep to {limit.describe()} on half the fleet, the one "
        "warning of fewest exhaustions later than the alarm, then with the longest median lead",
        picked=best,
        held_out=others[best.setting.name],
        in_force=others[in_force.name],
    )


def written(setting: Setting, layers: Sequence[str]) -> str:
    """The rules file that gives `setting`, with a header that says how to run with it."""
    under = " ".join(f"--rules {d}" for d in layers) if layers else f"--rules {BUILTIN}"
    header = (
        f"# The credit rules' burn as `backtest --tune` weighed it: {setting.name}.\n"
        f"# Layer it over the rules it was weighed on: {under} --rules <this directory>\n"
    )
    return header + yaml.safe_dump(setting.layer(), sort_keys=False, default_flow_style=None)
