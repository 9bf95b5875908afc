"""An attempt as the audit trail keeps it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from analyzer.model.applied import Attempt


def test_an_attempt_is_frozen_with_its_configurations_and_reads_as_a_record() -> None:
    before = {"volume_type": "gp2", "size_gib": 50}
    attempt = Attempt(
        "vol-1:type=gp3",
        "U1",
        "slack",
        datetime(2026, 11, 28, tzinfo=UTC),
        "applied",
        "modification optimizing",
        before,
        {"volume_type": "gp3"},
        "optimizing",
    )
    before["size_gib"] = 99
    assert attempt.before["size_gib"] == 50 and attempt.applied
    with pytest.raises(TypeError):
        attempt.target["volume_type"] = "io2"  # type: ignore[index]
    assert attempt.as_dict() == {
        "fix_id": "vol-1:type=gp3",
        "who": "U1",
        "via": "slack",
        "at": "2026-11-28T00:00:00+00:00",
        "outcome": "applied",
        "reason": "modification optimizing",
        "before": {"volume_type": "gp2", "size_gib": 50},
        "target": {"volume_type": "gp3"},
        "state": "optimizing",
        "started": None,
        "settled": True,
        "count": 1,
    }
    assert not Attempt("x", "U1", "slack", datetime(2026, 11, 28, tzinfo=UTC), "refused").applied
