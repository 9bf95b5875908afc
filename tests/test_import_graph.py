"""The import graph keeps the layers honest: arrows point down the pipeline, never in a circle.

model ← collect ← analyze ← deliver ← live (the daemon's loop) ← node (the same loop on a
node's NVMe statistics) ← offline (replay, backtest, rule tests) ← cli/demo. `sim/` is a side
room: only the demo command and the tests may enter it. Every import counts, including one
inside a function: a late import hides an arrow, it does not remove it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import get_origin

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "analyzer"

BASE = ("analyzer", "analyzer.errors", "analyzer.yamlfile", "analyzer.redaction")
"""The root modules every stage may use: the version, errors with exit codes, a user's YAML
file, secrets kept out of text."""

SHELL = {"analyzer.settings": 4, "analyzer.logs": 4, "analyzer.arguments": 5, "analyzer.cli": 5}
SHELL |= {"analyzer.demo": 5, "analyzer.played": 5, "analyzer.__main__": 6}
"""The other root modules: the configuration the loops read, and the command line above them."""

RANKS = {
    **dict.fromkeys(BASE, 0),
    "analyzer.model": 0,
    "analyzer.collect": 1,
    "analyzer.sim": 1.5,
    "analyzer.analyze": 2,
    "analyzer.deliver": 3,
    "analyzer.act": 3.5,
    "analyzer.live": 4,
    "analyzer.node": 4.2,
    "analyzer.offline": 4.5,
    **SHELL,
}
"""A module may import modules of its own rank or below. Within one stage, only its own room.
Below the root, the folder carries the rank: a new module in a folder needs no entry here."""

SIM_USERS = frozenset({"analyzer.demo", "analyzer.played"})


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _room(module: str) -> str:
    """The entry of RANKS a module belongs to: its top-level module or its subpackage."""
    if module == "analyzer":
        return module
    parts = module.split(".")
    for n in range(len(parts), 1, -1):
        candidate = ".".join(parts[:n])
        if candidate in RANKS:
            return candidate
    raise AssertionError(f"{module}: no room in RANKS; add it")


def _resolve(name: str) -> str | None:
    """The analyzer module an imported name lives in (a name may be a module or an attribute)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str) -> Iterator[tuple[str, int]]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" for alias in node.names] or [base]
        else:
            continue
        for name in names:
            if name.startswith("analyzer") and (target := _resolve(name)) and target != module:
                yield target, node.lineno


GRAPH = {module: sorted(set(_imports(module))) for module in MODULES}


def test_every_module_has_a_room() -> None:
    for module in MODULES:
        _room(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down_the_pipeline(module: str) -> None:
    room = _room(module)
    for target, line in GRAPH[module]:
        other = _room(target)
        where = f"{MODULES[module].relative_to(PACKAGE.parent)}:{line} imports {target}"
        if other == "analyzer.sim":
            assert room in (*SIM_USERS, "analyzer.sim"), f"{where}: only the demo command uses sim/"
            continue
        assert RANKS[other] <= RANKS[room], f"{where}, which sits above it in the pipeline"
        if RANKS[other] == RANKS[room] and RANKS[room] in (1, 2, 3):
            assert other == room, f"{where}: a sibling room of the same stage"


def test_model_imports_nothing_else() -> None:
    for module in MODULES:
        if _room(module) == "analyzer.model":
            outside = [t for t, _ in GRAPH[module] if _room(t) != "analyzer.model"]
            assert not outside, f"{module} imports {outside}"


def test_no_import_cycles() -> None:
    edges = {m: {t for t, _ in targets} for m, targets in GRAPH.items()}
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            cycle = [*path[path.index(node) :], node]
            raise AssertionError("import cycle: " + " → ".join(cycle))
        if node in done:
            return
        for target in sorted(edges[node]):
            visit(target, [*path, node])
        done.add(node)

    for module in sorted(edges):
        visit(module, [])


def test_a_cycle_or_an_upward_arrow_would_be_caught() -> None:
    """The checks above read real import statements: one in a function body counts too."""
    source = "def f():\n    from analyzer.deliver import report\n"
    tree = ast.parse(source)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert found and _resolve("analyzer.deliver.report.to_text") == "analyzer.deliver.report"
    assert RANKS[_room("analyzer.deliver.report")] > RANKS[_room("analyzer.analyze.engine")]


TREE_DOC = PACKAGE.parent / "docs" / "development.md"


def _documented_tree() -> set[str]:
    """The modules the tree in docs/development.md names: each line's leading names, nested by
    indentation."""
    text = TREE_DOC.read_text(encoding="utf-8")
    block = text[text.index("```\nanalyzer/\n") + 4 :]
    block = block[: block.index("\nrules/ ")]
    folders: list[str] = []
    named: set[str] = set()
    for line in block.splitlines():
        depth = (len(line) - len(line.lstrip(" "))) // 2
        for token in line.split():
            if not token.endswith((".py", "/")):
                break
            if token.endswith("/"):
                folders[depth:] = [token.rstrip("/")]
            else:
                named.add("/".join([*folders[:depth], token]))
    return named


def test_the_documented_tree_names_every_module_and_only_those() -> None:
    on_disk = {
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py")
    }
    documented = _documented_tree()
    assert on_disk - documented == set(), "modules the tree in docs/development.md does not name"
    assert documented - on_disk == set(), "names in docs/development.md's tree that are not modules"


def _imported_names(module: str) -> Iterator[tuple[str, str, int]]:
    """(module imported from, name, line) of every `from … import name` in a module."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("analyzer."):
            for alias in node.names:
                yield node.module, alias.name, node.lineno


def test_delivery_names_the_analysis_types_and_calls_none_of_its_code() -> None:
    """`deliver/` shows what the analysis worked out: it may name the analysis' types (an
    alert, a book of them), never run its functions (a forecast worked out at publication is a
    second answer to the same question)."""
    for module in MODULES:
        if _room(module) != "analyzer.deliver":
            continue
        for source, name, line in _imported_names(module):
            if _room(source) != "analyzer.analyze":
                continue
            where = f"{MODULES[module].relative_to(PACKAGE.parent)}:{line}"
            assert source in MODULES, f"{where} imports the module {source}.{name}"
            found = getattr(importlib.import_module(source), name)
            assert inspect.isclass(found) or get_origin(found) is not None, (
                f"{where} imports {source}.{name}, which is not a type"
            )


EVIDENCE_READERS = {
    "analyzer.deliver.records": "state files written before findings carried typed fields",
}
"""Where a finding's evidence may be read by key outside the rule kinds that write it."""


def _evidence_reads(source: str) -> Iterator[int]:
    """Lines that read a key of something's `evidence`: `x.evidence[k]`, `x.evidence.get(k)`,
    `k in x.evidence`."""

    def is_evidence(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "evidence"

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and is_evidence(node.value):
            if isinstance(node.ctx, ast.Load):
                yield node.lineno
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "get" and is_evidence(node.func.value):
                yield node.lineno
        elif isinstance(node, ast.Compare) and any(is_evidence(c) for c in node.comparators):
            yield node.lineno


def test_evidence_is_read_by_key_only_by_the_rule_that_wrote_it() -> None:
    """Evidence is what a finding shows of how it was worked out; what another stage weighs
    (how long an alert holds, what a fix is sized for) is a typed field."""
    for module in sorted(MODULES):
        if module.startswith("analyzer.analyze.kinds.") or module in EVIDENCE_READERS:
            continue
        lines = list(_evidence_reads(MODULES[module].read_text(encoding="utf-8")))
        where = MODULES[module].relative_to(PACKAGE.parent)
        assert not lines, f"{where}:{lines[0] if lines else ''} reads evidence by key"


def test_an_evidence_read_would_be_caught() -> None:
    source = "def f(x):\n    return x.evidence.get('k'), x.evidence['k'], 'k' in x.evidence\n"
    assert len(list(_evidence_reads(source))) == 3
    assert list(_evidence_reads("def f(x):\n    x.evidence['k'] = 1\n")) == []


TESTED_ELSEWHERE = {
    "analyzer/analyze/advice/joint.py": "tests/scenarios/test_priced_decisions.py (incident 4)",
}
"""Modules whose tests are whole stories rather than a file of their own: where."""


def _test_file(module: Path) -> Path:
    relative = module.relative_to(PACKAGE)
    return PACKAGE.parent / "tests" / relative.parent / f"test_{relative.name}"


def test_every_module_has_a_test_file_of_its_own() -> None:
    """Tests mirror the package: `analyzer/x/y.py` is tested in `tests/x/test_y.py`."""
    missing = [
        str(path.relative_to(PACKAGE.parent))
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name not in ("__init__.py", "__main__.py")
        and not _test_file(path).exists()
        and str(path.relative_to(PACKAGE.parent)) not in TESTED_ELSEWHERE
    ]
    assert missing == [], "modules without tests/<folder>/test_<module>.py"
    for module, where in TESTED_ELSEWHERE.items():
        assert (PACKAGE.parent / where.split()[0]).exists(), f"{module}: {where} is gone"
