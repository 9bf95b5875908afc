"""botocore's service models as the process keeps them: parsed once, as plain dicts, without
the prose that only docstrings read.

botocore parses a model into OrderedDicts, about twice a plain dict's size, and keeps each
operation's, shape's and member's documentation. EC2's model held that way is about 20 MiB
of the heap for the life of the process; as plain dicts without the documentation, about 5.
The daemon's resident set is 14 MB smaller with its EC2, CloudWatch and RDS clients so held.
Clients behave alike: the operations, shapes, members and their order are the same.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from typing import IO, Any

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
    """botocore's JSON files, found where botocore finds them, parsed into plain dicts;
    service models without their documentation."""

    def _load_file(self, full_path: str, open_method: Callable[..., IO[bytes]]) -> Any:
        # botocore's own reads the same bytes, but parses them into OrderedDicts, whose
        # garbage would leave holes in the heap that the models kept are scattered across.
        if not os.path.isfile(full_path):
            return None
        with open_method(full_path, "rb") as file:
            data = json.loads(file.read().decode("utf-8"))
        name = os.path.basename(full_path).removesuffix(".gz").removesuffix(".json")
        if name == "service-2":
            without_prose(data)
        elif name == "service-2.sdk-extras":  # shapes and members merged into the model
            without_prose(data.get("merge", {}))
        return interned(data)


def interned(value: Any) -> Any:
    """`value` with its short strings interned, in place."""
    if isinstance(value, dict):
        for key, item in value.items():
            value[key] = interned(item)
    elif isinstance(value, list):
        for at, item in enumerate(value):
            value[at] = interned(item)
    elif isinstance(value, str) and len(value) <= INTERNED_UP_TO:
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


@functools.cache
def loader() -> Loader:
    """botocore's loader, one for the process, searching where botocore's own would (its data,
    `~/.aws/models`, `AWS_DATA_PATH`) and holding what it loads lean: each session would
    otherwise parse EC2's model (megabytes of JSON) again for its first client, in every
    region and account watched."""
    found: Loader = botocore.session.get_session().get_component("data_loader")
    found.file_loader = LeanFiles()
    return found
