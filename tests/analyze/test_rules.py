from pathlib import Path

import pytest

from analyzer.analyze import rules
from analyzer.analyze.kinds.caps import IopsCap
from analyzer.errors import ConfigError
from tests.helpers import ruleset_of

GOOD = """
rules:
  - id: my-cap
    kind: iops_cap
    resource_types: [volume]
    severity: critical
    for: 5m
    window: 10m
"""


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    return path


def error_of(directory: Path) -> str:
    with pytest.raises(ConfigError) as info:
        rules.load([directory])
    return str(info.value)


def test_shipped_rules_load_and_cover_every_bottleneck_the_issue_names():
    ruleset = rules.load()
    ids = {r.id for r in ruleset.rules}
    assert {
        "gp2-burst-exhaustion",
        "volume-burst-credits-exhausted",
        "volume-iops-cap",
        "volume-throughput-cap",
        "instance-iops-cap",
        "instance-throughput-cap",
        "instance-ebs-burst-exhaustion",
        "instance-ebs-burst-exhausted",
    } <= ids
    assert all(r.source.parent == rules.builtin_dir() for r in ruleset.loaded)


def test_durations_and_for(tmp_path):
    write(tmp_path, "a.yaml", GOOD)
    [rule] = rules.load([tmp_path]).rules
    assert rule.for_ == 300
    assert rule.window == 600


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace("window: 10m", "windwo: 10m"), "a.yaml: rule 'my-cap': windwo: unknown key"),
        (
            GOOD.replace("kind: iops_cap", "kind: iops_capp"),
            "a.yaml: rule 'my-cap': kind: unknown kind 'iops_capp' (known kinds: credit_forecast, "
            "credit_trend, credits_exhausted, io_impaired, iops_cap, memory_pressure, "
            "throughput_cap)",
        ),
        (GOOD.replace("window: 10m", "window: -1m"), "a.yaml: rule 'my-cap': window:"),
        (GOOD.replace("window: 10m", "window: soon"), "'soon' is not a duration"),
        (
            GOOD.replace("severity: critical", "severity: urgent"),
            "a.yaml: rule 'my-cap': severity: Input should be 'info', 'warning' or 'critical'",
        ),
        (
            GOOD.replace("kind: iops_cap", "kind: memory_pressure"),
            "kind 'memory_pressure' does not apply to volume (it applies to db_instance)",
        ),
        (GOOD.replace("    kind: iops_cap\n", ""), "a.yaml: rule 'my-cap': kind: missing"),
        (GOOD.replace("rules:", "rulez:"), "a.yaml: rulez: unknown key"),
        ("rules:\n  - id: x\n    kind: [unclosed\n", "a.yaml: line 4: invalid YAML"),
        ("- just a list\n", "a.yaml: expected a mapping with a `rules:` list"),
        (GOOD + GOOD.replace("rules:\n", ""), "a.yaml: rule 'my-cap': duplicate id in this file"),
    ],
)
def test_errors_name_the_file_the_rule_and_the_problem(tmp_path, text, message):
    write(tmp_path, "a.yaml", text)
    error = error_of(tmp_path)
    assert message in error
    assert "\n" not in error


def test_the_same_id_in_two_files_of_one_directory(tmp_path):
    write(tmp_path, "a.yaml", GOOD)
    write(tmp_path, "b.yaml", GOOD)
    assert "b.yaml: rule 'my-cap': id already defined in" in error_of(tmp_path)


def test_a_later_directory_overrides_and_disables(tmp_path):
    override = GOOD.replace("id: my-cap", "id: volume-iops-cap")
    disable = """
rules:
  - id: gp2-burst-exhaustion
    kind: credit_forecast
    resource_types: [volume]
    severity: warning
    enabled: false
"""
    write(tmp_path / "mine", "a.yaml", override + disable.replace("rules:\n", ""))
    ruleset = rules.load([Path("builtin"), tmp_path / "mine"])
    in_force = {r.id: r for r in ruleset.rules}
    assert in_force["volume-iops-cap"].severity == "critical"
    assert "gp2-burst-exhaustion" not in in_force
    assert len(ruleset) == len(rules.load())


def test_missing_or_empty_directories(tmp_path):
    assert "no such rules directory" in error_of(tmp_path / "nope")
    tmp_path.mkdir(exist_ok=True)
    assert "no rule files" in error_of(tmp_path)


def test_an_empty_file_has_no_rules(tmp_path):
    write(tmp_path, "a.yaml", "")
    write(tmp_path, "b.yaml", GOOD)
    assert len(rules.load([tmp_path])) == 1


def test_reach_is_the_furthest_any_rule_or_default_outlook_reads_back():
    shipped = rules.load()
    assert shipped.reach() == 1800.0  # a 30-minute window; the forecast's trend window
    slow = IopsCap(
        id="slow", resource_types=("volume",), severity="warning", window=3600, **{"for": 600}
    )
    assert ruleset_of(slow).reach() == 4200.0
    assert ruleset_of().reach() == 1800.0  # outlooks read the default trend window


def test_a_shipped_rule_is_switched_off_or_changed_by_its_id_alone(tmp_path):
    (tmp_path / "mine.yaml").write_text(
        "rules:\n"
        "  - id: gp2-burst-exhaustion\n    enabled: false\n"
        "  - id: hdd-burst-exhaustion\n    horizon: 3h\n"
    )
    ruleset = rules.load([Path(rules.BUILTIN), tmp_path])
    by_id = {loaded.rule.id: loaded.rule for loaded in ruleset.loaded}
    assert not by_id["gp2-burst-exhaustion"].enabled
    hdd = by_id["hdd-burst-exhaustion"]
    assert hdd.horizon == 3 * 3600  # type: ignore[union-attr]
    assert hdd.volume_types == ("st1", "sc1")  # the rest as shipped


def test_a_partial_rule_with_nothing_to_change_is_refused(tmp_path):
    (tmp_path / "mine.yaml").write_text("rules:\n  - id: mine\n    horizon: 3h\n")
    with pytest.raises(
        ConfigError, match="rule 'mine': kind: missing, and no earlier rule with this id"
    ):
        rules.load([Path(rules.BUILTIN), tmp_path])


def test_the_window_after_a_bucket_empties_is_the_longest_rule_on_an_empty_bucket_s() -> None:
    """How long the poller reads an emptied bucket every minute: the window of the rule on
    an empty bucket that applies to it (the shipped ones: 10 minutes a volume's, 15 an
    instance's), none where no such rule is in force."""
    from tests.fakes import M5
    from tests.helpers import instance_state, volume_state

    shipped = rules.load()
    assert shipped.empty_window(volume_state("gp2", 100)) == 600.0
    assert shipped.empty_window(instance_state(M5)) == 900.0
    caps_only = rules.load([Path("rules/caps.yaml")])
    assert caps_only.empty_window(volume_state("gp2", 100)) == 0.0
