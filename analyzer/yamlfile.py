"""Reading a YAML file the user wrote: its document, or one line saying where it is broken;
and that line for any document a pydantic model refuses."""

from __future__ import annotations

import difflib
import os
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from analyzer.errors import ConfigError

MAX_FILE_BYTES = 1024 * 1024
"""The most a configuration or rule file may hold, refused before it is parsed. The largest
file shipped is under 10 KB, but PyYAML parses 0.1 to 0.4 MB a second and holds some 50 bytes
for each byte it reads: at 1 MiB a file takes a few seconds and tens of MB at worst, where one
of 5 MB took 12 s and 267 MB."""
MAX_NODES = 2 * MAX_FILE_BYTES
"""The most values (each key, item and scalar) a file may expand to, its aliases followed:
twice what a file of `MAX_FILE_BYTES` holds without aliases (a value takes a byte at least,
`{a,b}` is two keys and two empty values), far below the thousand million that a kilobyte of
nested aliases reaches ("billion laughs")."""


def _read_text(path: Path) -> str:
    """The file's text, read no further than `MAX_FILE_BYTES`."""
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            data = b"" if size > MAX_FILE_BYTES else file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if size > MAX_FILE_BYTES or len(data) > MAX_FILE_BYTES:
        held = f"{size:,} bytes" if size > MAX_FILE_BYTES else f"more than {MAX_FILE_BYTES:,} bytes"
        raise ConfigError(
            f"{path}: too large: {held}, over the limit of {MAX_FILE_BYTES:,} bytes (1 MiB)"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte {exc.start}: {exc.object[exc.start : exc.start + 1]!r})"
        ) from None


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expansion(path: Path, root: yaml.Node) -> None:
    """Refuse a document whose aliases make it more than `MAX_NODES` values, or endless (an
    alias inside the value it names). Each node is counted once, whatever refers to it, and
    without recursion: a file nested too deeply for that has failed to parse already."""
    sizes: dict[int, int] = {}
    entered: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            if sizes[key] > MAX_NODES:
                raise ConfigError(
                    f"{path}: its aliases expand it to more than {MAX_NODES:,} values"
                )
            continue
        if key in sizes:
            continue
        if key in entered:  # met again before it was done: it holds itself
            raise ConfigError(f"{path}: an alias refers to a value that holds it")
        entered.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))


def _load(path: Path, text: str) -> Any:
    """What `yaml.safe_load` gives, once the document's expansion is checked."""
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _check_expansion(path, root)
        return loader.construct_document(root)
    finally:
        loader.dispose()


def read_yaml(path: Path) -> Any:
    """The parsed document (None for an empty file). A file over `MAX_FILE_BYTES` or one whose
    aliases expand past `MAX_NODES`, an unreadable file, or broken YAML is a ConfigError
    naming the file, and the line where the parser gave up."""
    text = _read_text(path)
    try:
        return _load(path, text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}:" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}:{where} invalid YAML: {problem}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid YAML: nested too deeply") from None


Location = tuple[int | str, ...]
"""Where in a document pydantic found a problem: keys and list indexes, outermost first."""

UNKNOWN_KEY: Mapping[str, str] = MappingProxyType({"extra_forbidden": "unknown key"})
"""The reasons worded for people rather than as pydantic words them, by pydantic's error type."""


def dotted(location: Iterable[int | str]) -> str:
    """A location as a user writes it: `volumes.gp2.per_gb`, `alerts.0.since`."""
    return ".".join(str(part) for part in location)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, through `Model | None`, `tuple[Model, ...]` and the like."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, typing.Annotated, tuple, list):
        for inner in typing.get_args(annotation):
            found = _model_in(inner)
            if found is not None:
                return found
    return None


def keys_of(model: type[BaseModel]) -> Callable[[Location], list[str]]:
    """The keys `model` takes at a location: its own at the top, a nested model's below."""

    def keys(location: Location) -> list[str]:
        current: type[BaseModel] | None = model
        for part in location:
            if isinstance(part, int):
                continue  # an item of a list of models: the same model's keys
            field = current.model_fields.get(str(part)) if current else None
            current = _model_in(field.annotation) if field else None
        if current is None:
            return []
        return [f.alias or name for name, f in current.model_fields.items()]

    return keys


def nearest(name: str, known: Iterable[str]) -> str | None:
    """The known name `name` is most likely a slip of (`intervall` for `interval`)."""
    found = difflib.get_close_matches(name, list(known), n=1, cutoff=0.7)
    return found[0] if found else None


def explain(
    error: ValidationError,
    place: Callable[[Location], str] = dotted,
    reasons: Mapping[str, str] = UNKNOWN_KEY,
    *,
    first: bool = False,
    known: Callable[[Location], Iterable[str]] | None = None,
    word: Callable[[Any], str | None] | None = None,
) -> str:
    """Each problem pydantic found, as `where: why`, joined by `; ` (only the first with
    `first`). `place` names where from pydantic's location; a problem it places nowhere (the
    empty string) is its reason alone. The reason is `reasons`' for the error's type, or
    pydantic's message without the `Value error, ` it puts before a validator's own words.
    `known`: the keys valid where an unknown one was found, for a "did you mean"; `word`: a
    reason of the caller's for a problem (pydantic's error dict), or None for the usual."""
    problems = []
    for problem in error.errors()[:1] if first else error.errors():
        where = place(problem["loc"])
        why = (
            (word(problem) if word is not None else None)
            or reasons.get(problem["type"])
            or problem["msg"].removeprefix("Value error, ")
        )
        location = problem["loc"]
        if problem["type"] == "extra_forbidden" and known is not None and location:
            guess = nearest(str(location[-1]), known(location[:-1]))
            if guess is not None:
                why = f"{why} (did you mean {guess!r}?)"
        problems.append(f"{where}: {why}" if where else why)
    return "; ".join(problems)


Model = TypeVar("Model", bound=BaseModel)


def read_model(path: Path, model: type[Model]) -> Model:
    """The YAML file at `path` as `model`; a broken file, or one the model refuses, is a
    ConfigError naming the file and each problem's key: `p.yaml: volumes.gp2.per_gb: unknown
    key`."""
    document = read_yaml(path)
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {explain(exc, known=keys_of(model))}") from None
