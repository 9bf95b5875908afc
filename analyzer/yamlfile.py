"""Reading a YAML file the user wrote: its document, or one line saying where it is broken."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from analyzer.errors import ConfigError


def read_yaml(path: Path) -> Any:
    """The parsed document (None for an empty file). An unreadable file or broken YAML is a
    ConfigError naming the file, and the line where the parser gave up."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte {exc.start}: {exc.object[exc.start : exc.start + 1]!r})"
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}:" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}:{where} invalid YAML: {problem}") from None


Model = TypeVar("Model", bound=BaseModel)


def read_model(path: Path, model: type[Model]) -> Model:
    """The YAML file at `path` as `model`; a broken file, or one the model refuses, is a
    ConfigError naming the file and each problem's key: `p.yaml: volumes.gp2.per_gb: unknown
    key`."""
    document = read_yaml(path)
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc'])}: "
            f"{'unknown key' if e['type'] == 'extra_forbidden' else e['msg']}"
            for e in exc.errors()
        ]
        raise ConfigError(f"{path}: {'; '.join(problems)}") from None
