"""Reading an AWS answer by its contract: each field the analyzer uses is checked for the type
the service's model gives it.

botocore checks what is sent, not what comes back: a JSON answer's fields arrive as the body
had them, and one of the wrong type would surface far from the call as a traceback, or as a
wrong number taken for a fact. Checked here, an answer off its contract raises `OffContract`
naming the field, and `aws.calling` makes it that call's error, in one line.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar, overload

T = TypeVar("T")

_REQUIRED: Any = object()
"""The default of a field that must be there."""
MAX_SHOWN = 40
"""Characters of a wrong value shown in the error: enough to recognise it, never a body."""


class OffContract(ValueError):
    """A field of an AWS answer is missing, or of the wrong type or shape."""


def _got(value: Any) -> str:
    shown = repr(value)
    if len(shown) > MAX_SHOWN:
        shown = shown[: MAX_SHOWN - 1] + "…"
    return f"{type(value).__name__} {shown}"


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_integer(value: Any) -> bool:
    """An int: a bool is one to Python, not to AWS."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    """An int or a float, JSON's numbers, and finite: JSON as Python reads it may say NaN."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond any double
        return False


def _is_flag(value: Any) -> bool:
    return isinstance(value, bool)


def _is_moment(value: Any) -> bool:
    return isinstance(value, datetime)


def _is_structure(value: Any) -> bool:
    return isinstance(value, Mapping)


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


def _numbers(values: Any, where: str) -> array[float]:
    """A list of finite numbers (GetMetricData's `Values`), as doubles."""
    if not isinstance(values, list):
        raise OffContract(f"{where}: expected a list of numbers, got {_got(values)}")
    try:
        out = array("d", values)
    except (TypeError, OverflowError):
        out = None
    # Three passes in C rather than one in Python: a page holds up to 100,800 values.
    if out is None or not all(map(math.isfinite, out)) or any(map(_is_flag, values)):
        wrong = next(v for v in values if not _is_number(v))
        raise OffContract(f"{where}: expected finite numbers, got {_got(wrong)}")
    return out


def _moments(values: Any, where: str) -> list[datetime]:
    """A list of timestamps (botocore parses them to datetimes; anything else is off)."""
    if not isinstance(values, list):
        raise OffContract(f"{where}: expected a list of timestamps, got {_got(values)}")
    if not all(map(_is_moment, values)):
        wrong = next(v for v in values if not _is_moment(v))
        raise OffContract(f"{where}: expected timestamps, got {_got(wrong)}")
    return values


class Reply:
    """One structure of an answer, `where` naming it in errors (`Volumes[]`; "" for the
    answer itself). A field that is absent, or null, takes the default given; one that must be
    there has none."""

    def __init__(self, raw: Any, where: str = "") -> None:
        if not isinstance(raw, Mapping):
            raise OffContract(f"{where or 'the answer'}: expected a structure, got {_got(raw)}")
        self._raw: Mapping[str, Any] = raw
        self.where = where

    @property
    def empty(self) -> bool:
        return not self._raw

    def present(self) -> list[str]:
        """The keys it holds a value for (not null, not empty), sorted."""
        return sorted(k for k, v in self._raw.items() if v not in (None, "", [], {}))

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def _field(self, key: str, wanted: str, fits: Callable[[Any], bool], default: Any) -> Any:
        value = self._raw.get(key)
        if value is None:
            if default is _REQUIRED:
                raise OffContract(f"{self._name(key)}: missing")
            return default
        if not fits(value):
            raise OffContract(f"{self._name(key)}: expected {wanted}, got {_got(value)}")
        return value

    @overload
    def text(self, key: str) -> str: ...
    @overload
    def text(self, key: str, default: T) -> str | T: ...
    def text(self, key: str, default: Any = _REQUIRED) -> Any:
        return self._field(key, "a string", _is_text, default)

    @overload
    def integer(self, key: str) -> int: ...
    @overload
    def integer(self, key: str, default: T) -> int | T: ...
    def integer(self, key: str, default: Any = _REQUIRED) -> Any:
        return self._field(key, "an integer", _is_integer, default)

    def number(self, key: str) -> float | None:
        """A finite number, None where absent."""
        value = self._field(key, "a finite number", _is_number, None)
        return None if value is None else float(value)

    def flag(self, key: str) -> bool | None:
        value: bool | None = self._field(key, "a boolean", _is_flag, None)
        return value

    def moment(self, key: str) -> datetime:
        value: datetime = self._field(key, "a timestamp", _is_moment, _REQUIRED)
        return value

    def texts(self, key: str) -> list[str]:
        """A list of strings, empty where absent."""
        found = self._field(key, "a list", _is_list, [])
        for value in found:
            if not isinstance(value, str):
                raise OffContract(f"{self._name(key)}[]: expected a string, got {_got(value)}")
        return list(found)

    def numbers(self, key: str) -> array[float]:
        """A list of finite numbers, as doubles; empty where absent."""
        return _numbers(self._field(key, "a list", _is_list, []), self._name(key))

    def moments(self, key: str) -> list[datetime]:
        """A list of timestamps; empty where absent."""
        return _moments(self._field(key, "a list", _is_list, []), self._name(key))

    def member(self, key: str) -> Reply:
        """A nested structure; an empty one where absent."""
        return Reply(self._field(key, "a structure", _is_structure, {}), self._name(key))

    def each(self, key: str) -> list[Reply]:
        """A list of structures, empty where absent."""
        found = self._field(key, "a list", _is_list, [])
        return [Reply(item, f"{self._name(key)}[]") for item in found]
