"""The command line's shape: its commands, their options and where their help comes from."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from analyzer import arguments
from analyzer.arguments import build_parser, subcommand
from analyzer.sim.account import PROD

COMMANDS = (
    "once",
    "run",
    "cost",
    "demo",
    "rules",
    "backtest",
    "record",
    "recordings",
    "iam-policy",
)


def test_every_command_of_the_contract_is_there() -> None:
    parser = build_parser()
    [commands] = [a for a in parser._actions if a.dest == "command"]
    assert set(COMMANDS) <= set(commands.choices)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("argv", "prog"),
    [
        (["once"], "once"),
        (["run"], "run"),
        (["rules", "list"], "rules list"),
        (["rules", "check", "builtin"], "rules check"),
    ],
)
def test_subcommand_is_the_parser_the_arguments_were_parsed_for(argv, prog) -> None:
    parser = build_parser()
    found = subcommand(parser, parser.parse_args(argv))
    assert found.prog.endswith(prog)


def test_a_command_is_required() -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([])
    assert exit_.value.code == 2


def test_an_unknown_option_is_refused_with_exit_code_2(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["once", "--no-such-flag"])
    assert exit_.value.code == 2
    assert "--no-such-flag" in capsys.readouterr().err


def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    return [(p.prog, p) for p in arguments.every_parser(build_parser())]


@pytest.mark.parametrize(("prog", "parser"), _parsers(), ids=str)
def test_every_option_is_described_and_the_help_fits_the_terminal(
    prog: str, parser: argparse.ArgumentParser, monkeypatch: pytest.MonkeyPatch
) -> None:
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            assert action.help, f"{prog} {'/'.join(action.option_strings) or action.dest}"
    monkeypatch.setenv("COLUMNS", "80")
    long = [line for line in parser.format_help().splitlines() if len(line) > 80]
    # argparse leaves a usage's one long choice list as it is; every text wraps.
    assert [line for line in long if "{" not in line] == [], prog
    assert "exit codes: 0 " in parser.format_help(), prog


def test_the_demo_help_names_every_workload_it_simulates() -> None:
    demo = dict(_parsers())["ebs-analyzer demo"]
    for workload in (*PROD.instances, *PROD.databases):
        assert f"{workload.name}" in (demo.description or ""), workload.name


def test_the_exit_codes_are_the_ones_the_docs_give() -> None:
    """docs/cli.md's table and the help's list: one set of codes."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    table = re.findall(r"^\| `(\d+)` \|", text, re.MULTILINE)
    assert [int(c) for c in table] == [code for code, _ in arguments.EXIT_CODES]


@pytest.mark.parametrize("command", ["run", "demo"])
def test_the_serving_commands_name_every_endpoint(command: str) -> None:
    text = dict(_parsers())[f"ebs-analyzer {command}"].format_help()
    for path in ("/metrics", "/healthz", "/readyz", "/livez"):
        assert path in text


@pytest.mark.parametrize(
    ("command", "codes", "says"),
    [
        ("once", [0, 2, 3, 130], "3 AWS unreachable or refusing access, or no metric"),
        ("run", [0, 2, 130], "AWS unreachable does not stop it"),
        ("cost", [0, 2, 3, 130], "3 AWS unreachable or refusing access"),
        ("apply", [0, 1, 2, 3, 130], "3 refused by a guard, not confirmed, or AWS unreachable"),
        ("demo", [0, 1, 2, 3, 130], "3 with --apply: the fix refused by a guard"),
        ("backtest", [0, 1, 2, 3, 130], "1 --write-rules with nothing recommended"),
        ("record", [0, 2, 3, 130], "3 AWS unreachable or refusing access, or no metric"),
        ("node", [0, 2, 3, 130], "no volume's NVMe page"),
        ("rules test", [0, 1, 2, 130], "1 a test's expected alerts were not the ones that fired"),
        ("rules check", [0, 2], "2 invalid rule files"),
        ("rules list", [0, 2], "2 invalid rule files"),
        ("recordings", [0, 2], "2 a command line refused"),
        ("iam-policy", [0, 2], "2 a command line refused"),
    ],
)
def test_each_commands_help_gives_the_exit_codes_it_returns(
    command: str, codes: list[int], says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each command's own codes, as its code paths return them: `run` keeps running where AWS
    cannot be reached, `demo --apply`'s 3 is a guard's refusal, backtest's 1 is nothing to
    write; none but `rules test` exits 1 on a rule test."""
    monkeypatch.setenv("COLUMNS", "1000")  # one line: nothing wrapped at a hyphen
    text = dict(_parsers())[f"ebs-analyzer {command}"].format_help()
    [line] = [line for line in text.splitlines() if line.startswith("exit codes: ")]
    assert [int(c) for c in re.findall(r"(?:: |; )(\d+) ", line)] == codes
    assert says in line
    assert ("rule test" in line) == (command == "rules test")
