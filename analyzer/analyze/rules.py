"""Rule files: YAML, validated into the rule kinds, with errors that say where.

A file holds `rules:`, a list of rules. Each rule's `kind` picks its class; unknown keys are
errors. Directories are read in the order given, files in name order; a rule whose id was
already loaded from an earlier directory replaces it, so a user directory can override or
(with `enabled: false`) switch off a shipped rule. The same id twice in one directory is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, reduce
from importlib.resources import as_file, files
from operator import or_
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from analyzer.analyze.kinds import KINDS
from analyzer.analyze.kinds.base import RuleBase
from analyzer.analyze.kinds.credit_forecast import CreditForecast
from analyzer.analyze.kinds.credits_exhausted import CreditsExhausted
from analyzer.errors import ConfigError
from analyzer.model.outlook import ForecastWindows
from analyzer.model.state import ResourceState
from analyzer.yamlfile import UNKNOWN_KEY, Location, dotted, explain, keys_of, read_yaml

Rule = RuleBase
"""A rule of any kind in `KINDS`."""

_ANY_KIND: Any = Annotated[reduce(or_, KINDS.values()), Field(discriminator="kind")]
_RULE: TypeAdapter[Rule] = TypeAdapter(_ANY_KIND)
"""A rule as a rule file gives it, its class picked by its `kind`."""


class _RuleFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rules: list[dict[str, Any]] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LoadedRule:
    rule: Rule
    source: Path


@dataclass(frozen=True, slots=True)
class RuleSet:
    loaded: tuple[LoadedRule, ...]

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules in force: disabled ones are left out."""
        return tuple(r.rule for r in self.loaded if r.rule.enabled)

    def __len__(self) -> int:
        return len(self.loaded)

    def reach(self) -> float:
        """How far back the analysis reads: the rules in force (`for` included), and the
        default windows of an outlook worked out where no rule sets them."""
        defaults = ForecastWindows()
        return max([defaults.rate_s, defaults.trend_s, *(r.reach() for r in self.rules)])

    def reads_past(self) -> bool:
        """Whether a rule in force reads the past days (and they are worth fetching)."""
        return any(getattr(r, "reads_past", False) for r in self.rules)

    def daily(self) -> frozenset[str]:
        """The ids of the rules in force whose condition moves with the days (`daily`)."""
        return frozenset(r.id for r in self.rules if r.daily)

    def longest_horizon(self) -> float:
        """The furthest any `credit_forecast` rule in force looks ahead (0 without one)."""
        return max((r.horizon for r in self.rules if isinstance(r, CreditForecast)), default=0.0)

    def forecast_rule(self, state: ResourceState) -> CreditForecast | None:
        """The first `credit_forecast` rule in force that applies to `state`: the one whose
        windows its credit outlook is read over, and whose floor it warns at."""
        for rule in self.rules:
            if isinstance(rule, CreditForecast) and rule.applies_to(state):
                return rule
        return None

    def empty_window(self, state: ResourceState) -> float:
        """The longest window of a `credits_exhausted` rule in force that applies to `state`
        (0 without one): how long after its bucket empties such a rule may still speak."""
        mine = [r for r in self.rules if isinstance(r, CreditsExhausted) and r.applies_to(state)]
        return max((r.window for r in mine), default=0.0)

    def forecast_windows(self, state: ResourceState) -> ForecastWindows:
        """The windows of `forecast_rule`, or the kind's defaults: the one set of windows its
        credit outlook is read over."""
        rule = self.forecast_rule(state)
        return ForecastWindows(rule.rate_window, rule.trend_window) if rule else ForecastWindows()


def builtin_dir() -> Path:
    with as_file(files("analyzer.default_rules")) as path:
        return Path(path)


def rule_files(directory: Path) -> list[Path]:
    if not directory.exists():
        raise ConfigError(f"{directory}: no such rules directory")
    if directory.is_file():
        return [directory]
    found = sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])
    if not found:
        raise ConfigError(f"{directory}: no rule files (*.yaml) in this directory")
    return found


def _explain(error: ValidationError, kind: object) -> str:
    """The problems of a rule (of `kind`, as given) or of a file. pydantic places a field under
    the kind's union tag (`kind_name.horizon`): the field is named without it. A problem placed
    at the rule itself is the tag's: its kind is unknown or missing."""
    known = ", ".join(sorted(KINDS))

    def place(location: Location) -> str:
        return dotted([part for part in location if part != kind]) if location else "kind"

    reasons = {
        **UNKNOWN_KEY,
        "union_tag_invalid": f"unknown kind {kind!r} (known kinds: {known})",
        "union_tag_not_found": f"missing (one of: {known})",
    }

    def keys(location: Location) -> list[str]:
        model = KINDS.get(str(kind)) if kind is not None else _RuleFile
        if model is None:
            return []
        inner = location[1:] if location and location[0] == kind else location
        return keys_of(model)(inner)

    return explain(error, place, reasons, known=keys)


def parse_file(path: Path, earlier: Mapping[str, Rule] | None = None) -> list[Rule]:
    """The rules of one file. A rule without a `kind` whose id an `earlier` layer defines
    changes only the keys it gives (`- id: gp2-burst-exhaustion` with `enabled: false`, or
    with `horizon: 2h`)."""
    document = read_yaml(path)
    if document is None:
        return []
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: expected a mapping with a `rules:` list")
    try:
        parsed = _RuleFile.model_validate(document)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {_explain(exc, None)}") from None
    rules: list[Rule] = []
    seen: set[str] = set()
    for index, raw in enumerate(parsed.rules):
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: rule #{index + 1}: expected a mapping")
        name = raw.get("id")
        label = f"rule {name!r}" if name else f"rule #{index + 1}"
        base = (earlier or {}).get(str(name)) if "kind" not in raw else None
        given = {**base.model_dump(by_alias=True), **raw} if base is not None else raw
        if base is None and "kind" not in raw and earlier:
            raise ConfigError(
                f"{path}: {label}: kind: missing, and no earlier rule with this id to change "
                "(a rule of its own needs a kind)"
            )
        if base is None and "kind" not in raw and not earlier and str(name) in _shipped_ids():
            raise ConfigError(
                f"{path}: {label}: kind: missing; {name!r} is a shipped rule's id: to change "
                "only the keys given, layer this file on the shipped rules "
                f"(--rules {BUILTIN} --rules {path.parent})"
            )
        try:
            rule = _RULE.validate_python(given)
        except ValidationError as exc:
            raise ConfigError(f"{path}: {label}: {_explain(exc, given.get('kind'))}") from None
        if rule.id in seen:
            raise ConfigError(f"{path}: {label}: duplicate id in this file")
        seen.add(rule.id)
        rules.append(rule)
    return rules


BUILTIN = "builtin"
"""As a rules directory: the shipped rules (`--rules builtin --rules /etc/my-rules`)."""


@cache
def _shipped_ids() -> frozenset[str]:
    """The ids of the shipped rules, read as plain YAML: for the hint that a rule without a
    kind may mean to change one of them."""
    ids: set[str] = set()
    for path in rule_files(builtin_dir()):
        document = read_yaml(path)
        entries = document.get("rules") if isinstance(document, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and "id" in entry:
                ids.add(str(entry["id"]))
    return frozenset(ids)


def load(directories: Iterable[Path] | None = None) -> RuleSet:
    """Rules from the directories in order; with none given, the shipped rules."""
    dirs = [builtin_dir() if str(d) == BUILTIN else d for d in directories or []]
    dirs = dirs or [builtin_dir()]
    by_id: dict[str, LoadedRule] = {}
    for directory in dirs:
        in_this_dir: dict[str, Path] = {}
        earlier = {rid: loaded.rule for rid, loaded in by_id.items()}
        for path in rule_files(directory):
            for rule in parse_file(path, earlier):
                if rule.id in in_this_dir:
                    raise ConfigError(
                        f"{path}: rule {rule.id!r}: id already defined in {in_this_dir[rule.id]}"
                    )
                in_this_dir[rule.id] = path
                by_id[rule.id] = LoadedRule(rule, path)
    ruleset = RuleSet(tuple(by_id.values()))
    if not ruleset.rules:
        where = ", ".join(str(d) for d in dirs)
        raise ConfigError(
            f"{where}: no rule in force ({len(ruleset)} loaded, all disabled): nothing would "
            "ever be found; add the shipped rules with 'builtin'"
        )
    return ruleset
