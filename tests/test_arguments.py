"""The command line's shape: its commands, their options and where their help comes from."""

from __future__ import annotations

import pytest

from analyzer.arguments import build_parser, subcommand

COMMANDS = ("once", "run", "cost", "demo", "rules", "backtest", "record")


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
