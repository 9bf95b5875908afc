"""`backtest --tune`'s settings, rows and recommendation: the credit rules' own knobs, the
backtest's counting summed over a fleet, and a setting chosen on one half of it and judged on
the other."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.analyze import rules
from analyzer.analyze.kinds.credit_forecast import BurnWindows, CreditForecast
from analyzer.errors import ConfigError
from analyzer.model.findings import Bottleneck, Severity
from analyzer.model.metrics import Measure
from analyzer.model.resources import Instance, Inventory, Volume
from analyzer.offline import tune
from analyzer.offline.backtest import Quality, judge
from analyzer.offline.replay import Fired
from tests.helpers import T0, minutes, series, volume_state

SHIPPED = rules.load(None)


def _burn(setting: tune.Setting, rid: str = "gp2-burst-exhaustion") -> list[tuple[float, ...]]:
    return [(p.long, p.short, p.within) for p in setting.burn[rid]]


def test_the_settings_are_the_rules_own_knobs_in_force_first() -> None:
    found = tune.settings(SHIPPED)
    assert [s.name for s in found] == [
        "shipped",
        "no burn",
        "within ×1.5",
        "within ×2",
        "within ×3",
    ]
    assert [s.in_force for s in found] == [True, False, False, False, False]
    # rules/credits.yaml: gp2 burns over 15 and 5 min within 10; st1/sc1 twice that.
    assert _burn(found[0]) == [(900.0, 300.0, 600.0)]
    assert _burn(found[1]) == []
    assert [_burn(s)[0][2] for s in found[2:]] == [900.0, 1200.0, 1800.0]
    assert [_burn(s, "hdd-burst-exhaustion")[0][2] for s in found[2:]] == [1800.0, 2400.0, 3600.0]
    # Every credit_forecast rule in force, and nothing else.
    credit = {r.id for r in SHIPPED.rules if isinstance(r, CreditForecast)}
    assert all(set(s.burn) == credit for s in found)


def test_a_setting_changes_the_burn_alone_and_leaves_the_other_rules_as_they_are() -> None:
    widened = tune.named(tune.settings(SHIPPED), "within ×2").ruleset(SHIPPED)
    before = {r.id: r for r in SHIPPED.rules}
    for rule in widened.rules:
        if isinstance(rule, CreditForecast):
            assert rule.model_copy(update={"burn": before[rule.id].burn}) == before[rule.id]
            assert rule.burn != before[rule.id].burn
        else:
            assert rule == before[rule.id]


def test_the_in_force_row_is_named_for_what_is_in_force(tmp_path: Path) -> None:
    ids = [r.id for r in SHIPPED.rules if isinstance(r, CreditForecast)]
    text = "rules:\n" + "".join(f"  - id: {rid}\n    burn: []\n" for rid in ids)
    (tmp_path / "mine.yaml").write_text(text, encoding="utf-8")
    found = tune.settings(rules.load([Path(rules.BUILTIN), tmp_path]))
    assert found[0].name == "in force"
    # Without a burn in force, "no burn" is the same rules and is not weighed twice; widening
    # starts from the default pair, in proportion to the rule's hour.
    assert "no burn" not in [s.name for s in found]
    assert _burn(tune.named(found, "within ×2")) == [(900.0, 300.0, 1200.0)]


def test_rules_without_a_credit_forecast_have_nothing_to_tune(tmp_path: Path) -> None:
    ids = [r.id for r in SHIPPED.rules if isinstance(r, CreditForecast)]
    text = "rules:\n" + "".join(f"  - id: {rid}\n    enabled: false\n" for rid in ids)
    (tmp_path / "off.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="no credit_forecast rule in force"):
        tune.settings(rules.load([Path(rules.BUILTIN), tmp_path]))


@pytest.mark.parametrize("name", ["shipped", "no burn", "within ×1.5", "within ×2", "within ×3"])
def test_each_settings_layer_is_a_rules_file_that_gives_it(tmp_path: Path, name: str) -> None:
    setting = tune.named(tune.settings(SHIPPED), name)
    (tmp_path / "tuned.yaml").write_text(tune.written(setting, ["builtin"]), encoding="utf-8")
    layered = rules.load([Path(rules.BUILTIN), tmp_path])
    assert tune.settings(layered)[0].burn == setting.burn
    assert setting.ruleset(SHIPPED).rules == layered.rules


# The backtest's own counting, on a hand-made balance a minute a point: empty at minute 10, a
# near miss at 8 % at minute 26 (judged as in tests/offline/test_backtest_judge.py).
BALANCE = [
    *(60, 50, 40, 30, 20, 15, 10, 5, 2, 1.5, 0.5, 0.0, 3, 6, 0.8, 0.2, 4, 10, 19),
    *(30, 40, 50, 40, 30, 19, 12, 8, 12, 25, 40),
]


def _judged(rid: str, *spans: tuple[float, float]) -> Quality:
    state = volume_state(volume_id=rid, measures={Measure.BURST_BALANCE: series(BALANCE)})
    fired = [
        Fired(
            "r", Severity.WARNING, rid, Bottleneck.BURST_CREDITS, T0 + minutes(a), T0 + minutes(b)
        )
        for a, b in spans
    ]
    return judge([state], fired, T0, T0 + minutes(30)).by_resource[rid]


def test_a_row_sums_the_backtests_counting_over_the_fleet() -> None:
    # vol-1: warned at minute 1 (9 min ahead), and once more at the near miss (false); the
    # alarm: below 20 % from minute 5 (known at 6: 4 min ahead), and again at the near miss.
    # vol-2: warned at minute 7 only (3 min ahead, later than the alarm).
    judged = {
        "shipped": {
            "vol-1": _judged("vol-1", (1, 14), (23, 27)),
            "vol-2": _judged("vol-2", (7, 14)),
        }
    }
    [row] = tune.rows(tune.settings(SHIPPED)[:1], judged)
    assert (row.resources, row.exhaustions, row.warned, row.later_than_alarm) == (2, 2, 2, 1)
    assert row.median_lead_s == (9 * 60 + 3 * 60) / 2
    assert row.false_warnings == 1
    assert row.hours_warned == round((13 + 4 + 7) * 60 / 3600, 1)
    assert row.alarm_median_lead_s == 4 * 60
    assert row.alarm_false_warnings == 2  # the near miss, on each volume
    found = row.as_dict()
    assert set(found) == {
        "setting",
        "shipped",
        "rules",
        "exhaustions",
        "warned",
        "later_than_alarm",
        "median_lead_s",
        "false_warnings",
        "hours_warned",
        "alarm_median_lead_s",
        "alarm_false_warnings",
    }
    assert found["shipped"] is True and found["rules"]["rules"][0]["id"] == "gp2-burst-exhaustion"


def _q(exhaustions: int, lead_min: float, false: int, alarm_false: int, later: int = 0) -> Quality:
    return Quality(
        exhaustions=exhaustions,
        warned=exhaustions,
        leads=[lead_min * 60.0] * exhaustions,
        false_warnings=false,
        later_than_alarm=later,
        alarm_warned=exhaustions,
        alarm_leads=[600.0] * exhaustions,
        alarm_false_episodes=alarm_false,
    )


def test_rows_go_from_the_latest_warning_to_the_earliest() -> None:
    found = tune.settings(SHIPPED)
    leads = {"shipped": 20, "no burn": 19, "within ×1.5": 21, "within ×2": 30, "within ×3": 25}
    judged = {name: {"vol-1": _q(3, lead, 0, 0)} for name, lead in leads.items()}
    order = [r.setting.name for r in tune.rows(found, judged)]
    assert order == ["no burn", "shipped", "within ×1.5", "within ×3", "within ×2"]


def _fleet(count: int) -> list[Inventory]:
    """`count` instances with two volumes each: i-00 with vol-00a and vol-00b, …"""
    instances = tuple(
        Instance(f"i-{n:02d}", "us-east-1", "m5.large", "running") for n in range(count)
    )
    volumes = tuple(
        Volume(f"vol-{n:02d}{x}", "us-east-1", "gp2", 100, "in-use", attached_to=f"i-{n:02d}")
        for n in range(count)
        for x in "ab"
    )
    return [Inventory("us-east-1", volumes=volumes, instances=instances)]


def test_halves_keep_neighbours_together_and_share_the_exhaustions() -> None:
    group_of = tune.groups(_fleet(6))
    exhaustions = {f"vol-{n:02d}{x}": n for n in range(6) for x in "ab"}
    first, second = tune.halves(exhaustions, group_of)
    assert first | second == set(exhaustions) and not first & second
    for n in range(6):
        assert {f"vol-{n:02d}a", f"vol-{n:02d}b"} <= first or {
            f"vol-{n:02d}a",
            f"vol-{n:02d}b",
        } <= second
    # 2 × (5 + 4 + … + 0) = 30 exhaustions: 5+2+1 → 16 against 4+3+0 → 14, by greedy halves.
    counts = sorted(sum(exhaustions[r] for r in half) for half in (first, second))
    assert counts == [14, 16]
    # The split depends on the fleet, not on the order it is listed in.
    assert tune.halves(dict(reversed(exhaustions.items())), group_of) == (first, second)


def _two_halves() -> tuple[dict[str, str], frozenset[str], frozenset[str]]:
    group_of = tune.groups(_fleet(4))
    counts = {f"vol-{n:02d}{x}": 3 for n in range(4) for x in "ab"}
    first, second = tune.halves(counts, group_of)
    return group_of, first, second


def test_the_recommendation_is_chosen_on_one_half_and_reported_on_the_other() -> None:
    group_of, first, second = _two_halves()
    found = tune.settings(SHIPPED)
    # On the half it is chosen on, "within ×2" gives the longest lead within the alarm's
    # false warnings (6 there); "within ×3" gives more false warnings than the alarm. On the
    # other half "within ×2" is noisier than it looked: that is what is reported.
    on_first = {
        "shipped": (20, 2),
        "no burn": (19, 1),
        "within ×1.5": (22, 4),
        "within ×2": (25, 6),
        "within ×3": (30, 9),
    }
    on_second = {
        "shipped": (21, 1),
        "no burn": (20, 1),
        "within ×1.5": (23, 3),
        "within ×2": (26, 12),
        "within ×3": (31, 15),
    }
    judged = {
        name: {
            rid: _q(3, (on_first if rid in first else on_second)[name][0], 0, 0)
            for rid in first | second
        }
        for name in on_first
    }
    for name in on_first:  # the false warnings, all on the first volume of each half; the
        # alarm's: 6 on the first half, 10 on the other
        judged[name][min(first)].false_warnings = on_first[name][1]
        judged[name][min(second)].false_warnings = on_second[name][1]
        judged[name][min(first)].alarm_false_episodes = 6
        judged[name][min(second)].alarm_false_episodes = 10
    found_rec = tune.recommend(found, judged, group_of, tune.Limit(), 14 * 86400.0)
    assert found_rec.setting is not None and found_rec.setting.name == "within ×2"
    assert found_rec.chosen_on == first and found_rec.judged_on == second
    assert found_rec.picked is not None and found_rec.picked.false_warnings == 6
    assert found_rec.held_out is not None
    assert (found_rec.held_out.false_warnings, found_rec.held_out.median_lead_s) == (12, 26 * 60)
    assert found_rec.in_force is not None and found_rec.in_force.setting.name == "shipped"
    document = found_rec.as_dict(14 * 86400.0)
    assert document["setting"] == "within ×2" and document["held_out_keeps_limit"] is False
    # A number a resource-fortnight: 4 resources on each half, 0.5 each → 2 false warnings.
    strict = tune.recommend(found, judged, group_of, tune.Limit(0.5), 14 * 86400.0)
    assert strict.setting is not None and strict.setting.name == "shipped"
    none = tune.recommend(found, judged, group_of, tune.Limit(0.0), 14 * 86400.0)
    assert none.setting is None and "no setting keeps to at most 0 false" in none.reason


def test_a_setting_that_warns_later_than_the_alarm_is_not_recommended_for_its_lead() -> None:
    group_of, first, second = _two_halves()
    found = tune.settings(SHIPPED)
    judged = {s.name: {rid: _q(3, 20, 0, 1) for rid in first | second} for s in found}
    judged["within ×3"] = {rid: _q(3, 40, 0, 1, later=1) for rid in first | second}
    picked = tune.recommend(found, judged, group_of, tune.Limit(), 14 * 86400.0)
    assert picked.setting is not None and picked.setting.name != "within ×3"


def test_too_few_exhaustions_recommend_nothing() -> None:
    group_of, first, second = _two_halves()
    found = tune.settings(SHIPPED)
    judged = {
        s.name: {rid: _q(1 if rid in first else 0, 20, 0, 1) for rid in first | second}
        for s in found
    }
    picked = tune.recommend(found, judged, group_of, tune.Limit(), 14 * 86400.0)
    assert picked.setting is None and picked.held_out is None
    assert picked.reason.startswith(
        "too few exhaustions to judge: 2 in the half a setting would be "
        "chosen on and 2 in the half it would be judged on; at least 5"
    )


@pytest.mark.parametrize("text", ["-1", "lots", "inf", "nan"])
def test_a_limit_is_the_alarm_or_a_number(text: str) -> None:
    assert tune.Limit.parse("alarm") == tune.Limit()
    assert tune.Limit.parse("1.5") == tune.Limit(1.5)
    with pytest.raises(ConfigError, match=f"--max-false {text}: give 'alarm'"):
        tune.Limit.parse(text)


def test_a_burn_is_written_as_a_rules_file_writes_durations() -> None:
    pair = BurnWindows(long=5400.0, short=90.0, within=3600.0)
    assert tune.said((pair,)) == "90m/90s within 1h"
    assert tune.said(()) == "no burn"
