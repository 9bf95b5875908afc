"""The report of a cycle: JSON as the contract gives it, or a table for a terminal."""

from __future__ import annotations

import json
from collections.abc import Sequence

from analyzer.deliver.rows import to_dict
from analyzer.deliver.text import to_text
from analyzer.model.findings import Finding
from analyzer.model.state import Snapshot


def to_json(snap: Snapshot, findings: Sequence[Finding]) -> str:
    return json.dumps(to_dict(snap, findings), indent=2, allow_nan=False)


def render(snap: Snapshot, findings: Sequence[Finding], fmt: str) -> str:
    """The report as `once` and `demo --once` print it: `text` or `json`, newline-terminated."""
    if fmt == "json":
        return to_json(snap, findings) + "\n"
    return to_text(snap, findings)
