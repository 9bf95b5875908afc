"""DescribeInstanceTypes for the simulated account, answered once per question.

moto answers it from a static list of every instance type (about 1,400), and builds that
answer's XML afresh for each call: seconds a call, and the advice of each account and region
asks. The list never changes within a process, so the answer to the same question (region,
types, filters) is built once and given again as built. Installed once, for the demo and the
tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_ANSWERS: dict[str, str] = {}
_PLAIN: list[Callable[[Any], Any]] = []
"""moto's own method, kept the first time this is installed."""


def _describe_instance_types(self: Any) -> Any:
    key = json.dumps([self.region, self.querystring], sort_keys=True, default=str)
    answer = _ANSWERS.get(key)
    if answer is None:
        _, _, body = self.serialized(_PLAIN[0](self))
        answer = _ANSWERS[key] = body if isinstance(body, str) else body.decode()
    return answer


def install() -> None:
    """Have moto's EC2 build each DescribeInstanceTypes answer once (idempotent)."""
    from moto.ec2.responses.instances import InstanceResponse

    if not _PLAIN:
        _PLAIN.append(InstanceResponse.describe_instance_types)
    InstanceResponse.describe_instance_types = _describe_instance_types  # type: ignore[method-assign]
