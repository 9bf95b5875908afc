"""The README and docs/ as a user reads them: every `ebs-analyzer` command in their shell blocks
works as written, every link between them lands on a file and a heading, and docs/cli.md is
what scripts/docs-cli writes from the parser.

A command that can run here (no AWS) is run, in a folder holding what the docs' own examples
create; one that needs AWS is parsed by the program's own parser, so that an unknown option or
command fails all the same."""

from __future__ import annotations

import contextlib
import glob
import importlib.machinery
import importlib.util
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from analyzer.arguments import build_parser, every_parser
from tests.test_cli import run_cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"sh", "bash", "shell", "console"}
RUN_TIMEOUT_S = 600  # a backtest over a shipped fortnight: about 20 s on 2 CPUs, more when busy


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int  # of the opening fence
    language: str
    text: str


@dataclass(frozen=True)
class Command:
    where: str
    argv: tuple[str, ...]


def _blocks(doc: Path) -> list[Block]:
    blocks: list[Block] = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    opened: tuple[int, str] | None = None
    body: list[str] = []
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            if opened is None:
                opened, body = (number, line[3:].strip()), []
            else:
                blocks.append(Block(doc, opened[0], opened[1], "\n".join(body)))
                opened = None
        elif opened is not None:
            body.append(line)
    assert opened is None, f"{doc.name}:{opened[0] if opened else ''}: a fence left open"
    return blocks


def _commands_in(block: Block) -> list[Command]:
    """Each `ebs-analyzer …` of a shell block: lines continued with a backslash are one, comments
    and redirections are dropped, and a command ends at `&&`, `;`, `|` or `&`."""
    found: list[Command] = []
    logical = re.sub(r"\\\n", " ", block.text)
    for offset, line in enumerate(logical.splitlines()):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
        for start, token in enumerate(tokens):
            if token != "ebs-analyzer" and not token.endswith("/ebs-analyzer"):
                continue
            argv: list[str] = []
            for word in tokens[start + 1 :]:
                if set(word) <= set("();<>|&"):
                    break
                argv.append(word)
            where = f"{block.doc.relative_to(ROOT)}:{block.line + 1 + offset}"
            found.append(Command(where, tuple(argv)))
    return found


def documented_commands() -> list[Command]:
    seen: dict[tuple[str, ...], Command] = {}
    for doc in DOCS:
        for block in _blocks(doc):
            if block.language in SHELL:
                for command in _commands_in(block):
                    seen.setdefault(command.argv, command)
    return list(seen.values())


def why_not_run(argv: tuple[str, ...]) -> str | None:
    """None for a command that can run here; otherwise why it is parsed only."""
    if {"-h", "--help", "--version"} & set(argv):
        return None
    command = argv[0] if argv else ""
    if command in ("rules", "recordings"):
        return None
    if command == "demo":
        return None if "--once" in argv else "the demo runs until it is stopped"
    if command == "backtest" and "--from" in argv:
        source = argv[argv.index("--from") + 1]
        if "/" not in source and not source.endswith(".gz"):
            return None  # a shipped recording, by name
        return f"{source} is a file `record` writes from AWS"
    return f"`{command}` reads AWS"


COMMANDS = documented_commands()
RUN = [c for c in COMMANDS if why_not_run(c.argv) is None]
PARSED = [c for c in COMMANDS if why_not_run(c.argv) is not None]


def _id(command: Command) -> str:
    return f"{command.where} {' '.join(command.argv)}"


def _example(doc: str, starts: str) -> str:
    """The first YAML block of a doc that starts so: a file the doc's example has one write."""
    for block in _blocks(ROOT / "docs" / doc):
        if block.language == "yaml" and block.text.startswith(starts):
            return block.text + "\n"
    raise AssertionError(f"docs/{doc}: no YAML example starting {starts!r}")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with what the docs' examples name: the shipped `rules/` (as in a checkout),
    `my-rules/` and `my-tests.yaml` as docs/rules.md writes them, and `tuned/` as
    docs/backtest.md shows `--write-rules` writing it."""
    folder = tmp_path_factory.mktemp("docs")
    (folder / "rules").symlink_to(ROOT / "rules")
    (folder / "my-rules").mkdir()
    (folder / "my-rules" / "overrides.yaml").write_text(
        _example("rules.md", "rules:\n  - id: gp2-burst-exhaustion\n    enabled: false")
    )
    (folder / "my-tests.yaml").write_text(_example("rules.md", "tests:"))
    (folder / "tuned").mkdir()
    (folder / "tuned" / "tuned.yaml").write_text(_example("backtest.md", TUNED))
    return folder


TUNED = "# The credit rules' burn as `backtest --tune` weighed it"


def test_the_tuned_rules_file_shown_is_what_write_rules_writes() -> None:
    from analyzer.analyze import rules
    from analyzer.offline import tune

    shown = _example("backtest.md", TUNED)
    name = shown.splitlines()[0].removeprefix(TUNED + ": ").removesuffix(".")
    setting = tune.named(tune.settings(rules.load(None)), name)
    assert shown == tune.written(setting, [rules.BUILTIN])


def test_the_docs_hold_commands_of_both_kinds() -> None:
    assert len(RUN) >= 5 and len(PARSED) >= 10, (len(RUN), len(PARSED))


@pytest.mark.parametrize("command", RUN, ids=_id)
@pytest.mark.slow
def test_a_command_that_needs_no_aws_runs_as_written(command: Command, workdir: Path) -> None:
    argv: list[str] = []
    for word in command.argv:  # the shell would expand a glob
        matches = sorted(glob.glob(word, root_dir=workdir)) if "*" in word else []
        argv += [str(Path(m)) for m in matches] or [word]
    done = run_cli(*argv, cwd=workdir, timeout=RUN_TIMEOUT_S)
    # `rules test` exits 1 on a mismatch: a documented outcome of a user's own tests.
    allowed = {0, 1} if command.argv[:2] == ("rules", "test") else {0}
    assert done.returncode in allowed, (
        f"{_id(command)} exited {done.returncode}:\n{done.stderr[-2000:]}"
    )
    assert done.stdout.strip(), f"{_id(command)} printed nothing"


@pytest.mark.parametrize("command", PARSED, ids=_id)
def test_a_command_that_cannot_run_here_parses(command: Command) -> None:
    parser = build_parser()
    said = io.StringIO()
    with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
        try:
            _, extra = parser.parse_known_args(list(command.argv))
        except SystemExit:
            pytest.fail(f"{_id(command)}: {said.getvalue().strip()}")
    if extra:  # as the program says it (cli.main): its parser takes them, the command does not
        pytest.fail(f"{_id(command)}: unrecognized arguments: {' '.join(extra)}")


def test_a_wrong_command_would_be_caught() -> None:
    block = Block(ROOT / "README.md", 1, "sh", "ebs-analyzer once \\\n  --regoin x  # typo\n")
    [command] = _commands_in(block)
    assert command.argv == ("once", "--regoin", "x")
    with pytest.raises(pytest.fail.Exception, match="regoin"):
        test_a_command_that_cannot_run_here_parses(command)
    assert why_not_run(("backtest", "--since", "14d")) is not None
    assert why_not_run(("backtest", "--from", "incident-3-fortnight")) is None


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    found: set[str] = set()
    fenced = False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"#{1,6} (.+)", line)):
            base = slug(match.group(1))
            name, n = base, 0
            while name in found:
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def _links(doc: Path) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    text = re.sub(r"`[^`]*`", "", text)
    return re.findall(r"\[[^\]]+\]\(([^)\s]+)\)", text)


def test_every_link_between_the_docs_lands_on_a_file_and_a_heading() -> None:
    broken = []
    for doc in DOCS:
        for target in _links(doc):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            landing = (doc.parent / path).resolve() if path else doc
            if not landing.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}: no such file")
            elif anchor and landing.suffix == ".md" and anchor not in anchors(landing):
                broken.append(f"{doc.relative_to(ROOT)}: {target}: no such heading")
    assert broken == []


def test_the_readme_links_every_doc_and_stays_short() -> None:
    readme = ROOT / "README.md"
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in _links(readme)}
    assert [d.name for d in DOCS[1:] if d not in linked] == []
    assert len(readme.read_text(encoding="utf-8").splitlines()) <= 400


def test_alert_runbook_links_land_on_the_alerts_section() -> None:
    assert "alerts" in anchors(ROOT / "docs" / "metrics.md")


def _docs_cli():  # type: ignore[no-untyped-def]
    loader = importlib.machinery.SourceFileLoader("docs_cli", str(ROOT / "scripts" / "docs-cli"))
    spec = importlib.util.spec_from_loader("docs_cli", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_docs_cli_md_is_what_the_script_writes_from_the_parser() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert text == _docs_cli().rewrite(text), (
        "docs/cli.md differs from the parser's help: run `.venv/bin/python scripts/docs-cli`"
    )


def test_docs_cli_md_has_every_command() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for parser in every_parser(build_parser()):
        assert f"\n## {parser.prog}\n" in text


def test_every_setting_has_its_row_in_the_configuration_table() -> None:
    """docs/configuration.md's table and the settings model: one set of names."""
    from analyzer.settings import Settings

    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    first_cells = re.findall(r"^\| (`[^|]*`) \|", text, re.MULTILINE)
    documented = {name for cell in first_cells for name in re.findall(r"`([a-z_]+)`", cell)}
    assert documented == set(Settings.model_fields)
