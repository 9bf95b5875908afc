"""botocore's service models as the process keeps them: parsed once, as plain dicts, without
the prose that only docstrings read.

botocore parses a model into OrderedDicts, about twice a plain dict's size, and keeps each
operation's, shape's and member's documentation. EC2's model held that way is about 20 MiB
of the heap for the life of the process; as plain dicts without the documentation, about 5.
Clients behave alike: the operations, shapes, members and their order are the same.
"""

from __future__ import annotations

import sys
from typing import Any

import botocore.session
from botocore.loaders import JSONFileLoader, Loader

PROSE = ("documentation", "documentationUrl")
"""Keys of a service model (`service-2`) that only documentation reads: at the top, on each
operation, shape and structure member. Elsewhere (`clientContextParams`, endpoint rule sets)
botocore reads `documentation` as a field, so it is kept there."""

INTERNED_UP_TO = 64
"""Strings at most this long are interned: the names of shapes, repeated wherever a member
refers to one."""


class LeanFiles(JSONFileLoader):  # type: ignore[misc]  # botocore has no types
    """botocore's JSON files, read by botocore, then held as plain dicts; service models
    without their documentation."""

    def load_file(self, file_path: str) -> Any:
        data = super().load_file(file_path)
        if data is None:
            return None
        data = plain(data)
        name = file_path.rsplit("/", 1)[-1]
        if name == "service-2":
            without_prose(data)
        elif name == "service-2.sdk-extras":  # shapes and members merged into the model
            without_prose(data.get("merge", {}))
        return data


def plain(value: Any) -> Any:
    """JSON parsed into OrderedDicts → the same in dicts (which keep order), short strings
    interned."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, str) and len(value) <= INTERNED_UP_TO:
        return sys.intern(value)
    return value


def without_prose(model: dict[str, Any]) -> None:
    """Drop a service model's documentation, in place, where only docstrings read it."""
    _drop(model)
    for operation in model.get("operations", {}).values():
        _drop(operation)
    for shape in model.get("shapes", {}).values():
        _drop(shape)
        for member in shape.get("members", {}).values():
            _drop(member)


def _drop(entry: dict[str, Any]) -> None:
    for key in PROSE:
        entry.pop(key, None)


def loader() -> Loader:
    """botocore's loader, searching where botocore's own would (its data, `~/.aws/models`,
    `AWS_DATA_PATH`), holding what it loads lean."""
    found: Loader = botocore.session.get_session().get_component("data_loader")
    found.file_loader = LeanFiles()
    return found
