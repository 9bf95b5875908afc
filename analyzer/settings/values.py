"""The kinds of value a setting takes, shared by the groups: a duration, a list of text."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator
from pydantic_settings import NoDecode

from analyzer.model.units import parse_duration

Seconds = Annotated[float, BeforeValidator(parse_duration)]


def _split(value: Any) -> Any:
    """A list written as text (a flag or a variable): its comma-separated parts."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


List = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_split)]
"""A list of text: a YAML list, or text with its items separated by commas."""


def tag_filters(value: tuple[str, ...]) -> tuple[str, ...]:
    """Tag filters as `--tag` takes them, `Key=Value` or `Key`: ValueError for one with no key."""
    for item in value:
        if not item.partition("=")[0].strip():
            raise ValueError(f"{item!r} is not Key=Value or Key")
    return value
