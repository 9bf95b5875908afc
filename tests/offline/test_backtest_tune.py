"""`ebs-analyzer backtest --tune` against moto: one drain whose answer is known by hand, each
setting's lead, the shipped row equal to a plain backtest, and the options' refusals."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from analyzer import cli
from analyzer.analyze import rules
from analyzer.analyze.kinds.credit_forecast import CreditForecast
from analyzer.cli import main
from analyzer.collect.window import floor_to
from analyzer.errors import ConfigError
from analyzer.offline import tune
from analyzer.settings import Settings
from tests.offline.test_backtest import shop  # noqa: F401  (a fixture)

MINUTE = 60.0


@pytest.fixture
def drain(shop: tuple[str, datetime]) -> str:  # noqa: F811 (the fixture imported)
    """Incident 1's volume over the last six hours (`test_backtest.shop`): gp2 50 GiB (150
    IOPS earned, 5.4 M credits), from 2 h in 1,500 IOPS of 4 KiB, a net drain of 1,350
    credits/s that empties the full bucket in 66 min 40 s. The minute the data runs up to."""
    del shop
    return floor_to(datetime.now(UTC), 60).isoformat()


def _run(capsys: pytest.CaptureFixture[str], *extra: str) -> dict:  # type: ignore[type-arg]
    args = ["backtest", "--since", "6h", "--region", "us-east-1", "--format", "json", *extra]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


@pytest.mark.slow
def test_the_shipped_row_is_the_plain_backtest_and_every_setting_is_replayed(
    drain: str, capsys
) -> None:  # type: ignore[no-untyped-def]
    until = ["--until", drain]
    plain = _run(capsys, *until)["quality"]
    tuned = _run(capsys, *until, "--tune", "--jobs", "2")
    rows = {row["setting"]: row for row in tuned["tune"]}
    assert set(rows) == {"shipped", "no burn", "within ×1.5", "within ×2", "within ×3"}
    # With no drain in the volume's record, the physics forecast speaks under every setting
    # (the burn speaks only where the record does not vouch for a drain): from the drain's
    # first minute the daemon reads, an hour before the bucket is empty; the alarm, which sees
    # each minute two minutes after it ends (`publication_lag`), ten minutes before.
    for row in tuned["tune"]:
        assert (row["exhaustions"], row["warned"], row["later_than_alarm"]) == (1, 1, 0)
        assert row["median_lead_s"] == 59 * MINUTE and row["alarm_median_lead_s"] == 10 * MINUTE
        assert row["false_warnings"] == 0 and row["alarm_false_warnings"] == 0
    # The shipped row is the plain backtest's total.
    shipped = rows["shipped"]
    assert shipped["shipped"] is True
    assert (shipped["exhaustions"], shipped["warned"], shipped["false_warnings"]) == (
        plain["exhaustions"],
        plain["warned"],
        plain["false_warnings"],
    )
    assert shipped["median_lead_s"] == plain["median_lead_seconds"]
    assert shipped["later_than_alarm"] == plain["later_than_alarm"]
    assert shipped["hours_warned"] == round(plain["warning_seconds"] / 3600, 1)
    assert shipped["alarm_median_lead_s"] == plain["alarm"]["median_lead_seconds"]
    assert shipped["alarm_false_warnings"] == plain["alarm"]["false_episodes"]
    # One exhaustion judges nothing.
    recommendation = tuned["recommendation"]
    assert recommendation["setting"] is None
    assert recommendation["reason"].startswith("too few exhaustions to judge")
    # In one process, the same figures.
    assert _run(capsys, *until, "--tune", "--jobs", "1")["tune"] == tuned["tune"]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--write-rules", "x"], "--write-rules: only with --tune"),
        (["--max-false", "3"], "--max-false: only with --tune"),
        (["--tune", "--max-false", "some"], "--max-false some: give 'alarm'"),
        (["--tune", "--jobs", "0"], "--jobs 0: at least 1"),
        (["--tune", "--approve-within", "5m"], "--approve-within is a backtest of its own"),
        (["--tune", "--what-if", "vol-1:type=gp3"], "--what-if is a backtest of its own"),
    ],
)
def test_tune_options_are_checked_before_anything_is_read(
    extra: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["backtest", "--from", "nowhere.json.gz", *extra]) == 2
    err = capsys.readouterr().err
    assert said in err and "nowhere" not in err


@pytest.mark.slow
def test_nothing_recommended_writes_nothing(drain: str, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "tuned"
    args = ["backtest", "--since", "6h", "--region", "us-east-1", "--until", drain, "--tune"]
    assert main([*args, "--jobs", "1", "--write-rules", str(target)]) == 1
    out, err = capsys.readouterr()
    assert "RECOMMENDATION" in out and "none: too few exhaustions to judge: 1 in the half" in out
    assert "--write-rules" in err and "nothing recommended" in err and "no file written" in err
    assert not target.exists()


def _recommended(name: str) -> tune.Recommendation:
    setting = tune.named(tune.settings(rules.load(None)), name)
    return tune.Recommendation(tune.Limit(), frozenset(), frozenset(), setting, "chosen")


def test_the_recommended_rules_file_is_written_and_checks(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "tuned"
    cli._write_rules(target, _recommended("within ×2"), Settings())
    assert f"run with --rules builtin --rules {target}" in capsys.readouterr().err
    assert [p.name for p in target.iterdir()] == ["tuned.yaml"]
    assert main(["rules", "check", str(target)]) == 0
    assert "rule(s) valid" in capsys.readouterr().out
    layered = rules.load([Path(rules.BUILTIN), target])
    gp2 = next(r for r in layered.rules if r.id == "gp2-burst-exhaustion")
    assert isinstance(gp2, CreditForecast) and gp2.burn[0].within == 1200.0
    # Written again, it replaces its own file.
    cli._write_rules(target, _recommended("no burn"), Settings())
    assert tune.settings(rules.load([Path(rules.BUILTIN), target]))[0].burn == (
        _recommended("no burn").setting.burn  # type: ignore[union-attr]
    )


def test_a_rules_file_that_would_not_load_is_not_left_behind(tmp_path: Path) -> None:
    # The directory already changes the gp2 rule: the same id twice in one layer.
    target = tmp_path / "mine"
    target.mkdir()
    theirs = "rules:\n  - id: gp2-burst-exhaustion\n    horizon: 2h\n"
    (target / "a.yaml").write_text(theirs, encoding="utf-8")
    (target / "tuned.yaml").write_text("rules: []\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="id already defined"):
        cli._write_rules(target, _recommended("within ×2"), Settings())
    assert (target / "a.yaml").read_text(encoding="utf-8") == theirs
    assert (target / "tuned.yaml").read_text(encoding="utf-8") == "rules: []\n"
