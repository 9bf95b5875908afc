"""DescribeVolumeStatus for the simulated account, which moto does not answer.

Every volume is `ok`, its I/O enabled; a volume marked with `initializing` reports AWS's
`initialization-state: initializing` and its `InitializationStatusDetails` (progress and time
left), as a volume restored from a snapshot does while it fetches its blocks (Amazon EC2 API
Reference, DescribeVolumeStatus). Installed once, for the demo and the tests.
"""

from __future__ import annotations

from typing import Any

_KEY = "_initializations"
"""Where each moto EC2 backend keeps its initializing volumes: volume id → (progress, s left)."""


def initializing(region: str, volume_id: str, progress: int, seconds_left: int) -> None:
    """Mark a volume of the simulated account as still initializing from its snapshot."""
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends

    backend = ec2_backends[DEFAULT_ACCOUNT_ID][region]
    backend.__dict__.setdefault(_KEY, {})[volume_id] = (progress, seconds_left)


def _status(volume: Any, initialization: tuple[int, int] | None) -> dict[str, Any]:
    state = "initializing" if initialization else "completed"
    item: dict[str, Any] = {
        "VolumeId": volume.id,
        "AvailabilityZone": volume.zone.name,
        "VolumeStatus": {
            "Status": "ok",
            "Details": [
                {"Name": "io-enabled", "Status": "passed"},
                {"Name": "io-performance", "Status": "not-applicable"},
                {"Name": "initialization-state", "Status": state},
            ],
        },
        "Events": [],
        "Actions": [],
    }
    if initialization:
        progress, seconds_left = initialization
        item["InitializationStatusDetails"] = {
            "InitializationType": "default",
            "Progress": progress,
            "EstimatedTimeToCompleteInSeconds": seconds_left,
        }
    return item


def _describe_volume_status(self: Any) -> Any:
    from moto.core.responses import ActionResult

    wanted = self._get_param("VolumeIds", [])
    marked = self.ec2_backend.__dict__.get(_KEY, {})
    volumes = self.ec2_backend.describe_volumes(volume_ids=wanted or None)
    return ActionResult({"VolumeStatuses": [_status(v, marked.get(v.id)) for v in volumes]})


def install() -> None:
    """Teach moto's EC2 to answer DescribeVolumeStatus (idempotent)."""
    from moto.ec2.responses.elastic_block_store import ElasticBlockStore

    ElasticBlockStore.describe_volume_status = _describe_volume_status  # type: ignore[method-assign]
