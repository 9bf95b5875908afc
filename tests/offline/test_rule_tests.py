"""`ebs-analyzer rules test`: the shipped rules pass their tests, and a test can fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.offline.rule_tests import expand

SHIPPED = sorted((Path(__file__).resolve().parents[2] / "rules" / "tests").glob("*.yaml"))

DRAIN = """
tests:
  - name: drain
    resource:
      volume: {type: gp2, size_gib: 50}
    series:
      iops: 1500x30
      throughput: 6144000x30
      burst_balance: 100-1.5x30
    expect:
      - at: 20m
        firing: [EXPECTED]
"""


def test_the_shipped_rules_pass_their_tests(capsys) -> None:  # type: ignore[no-untyped-def]
    assert SHIPPED
    assert main(["rules", "test", *map(str, SHIPPED)]) == 0
    assert "passed" in capsys.readouterr().out


def test_a_mismatch_names_the_file_the_test_the_time_and_both_sets(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "t.yaml"
    path.write_text(DRAIN.replace("EXPECTED", "volume-iops-cap"))
    assert main(["rules", "test", str(path)]) == 1
    out = capsys.readouterr().out
    assert (
        f"{path}: test 'drain' at 20 min: expected firing ['volume-iops-cap'], "
        "got ['gp2-burst-exhaustion']"
    ) in out
    path.write_text(DRAIN.replace("EXPECTED", "gp2-burst-exhaustion"))
    assert main(["rules", "test", str(path)]) == 0


def test_a_broken_test_file_says_where(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "t.yaml"
    path.write_text(DRAIN.replace("burst_balance", "burst_balanse"))
    assert main(["rules", "test", str(path)]) == 2
    assert "tests.0.series.burst_balanse" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("1 2 3", [1, 2, 3]),
        ("1+1x2", [1, 2, 3]),
        ("10-2.5x2", [10, 7.5, 5]),
        ("5x2", [5, 5, 5]),
        ("_ 1 _x2 2", [None, 1, None, None, 2]),
        ("1e6x1", [1e6, 1e6]),
    ],
)
def test_series_in_promtools_notation(text, values) -> None:  # type: ignore[no-untyped-def]
    assert expand(text) == values


def test_a_term_that_is_not_the_notation_is_refused() -> None:
    with pytest.raises(ValueError, match="'1x'"):
        expand("1x")
