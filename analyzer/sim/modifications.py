"""ModifyVolume in the simulated account, as AWS records it and as the volume then behaves.

moto applies a ModifyVolume to the volume and records a VolumeModification, but stamps it with
the wall clock and gives an `Original*` value only for what the call changed. AWS gives the
volume's whole configuration before and after (`OriginalVolumeType`, `OriginalSize`,
`OriginalIops`, `OriginalThroughput` and their `Target*`; Amazon EC2 API Reference,
VolumeModification), and its `StartTime` is when the call was made: in the simulated account,
the simulated present, not the wall clock's. Here the record is completed so, and the volume's
simulation follows the change from that moment (its history before was played under the
configuration before). As in moto, the modification is `completed` at once: the simulated
account has no `optimizing` stage, whose performance AWS puts between the old and the new.
Installed once, for the demo and the tests.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

_KEY = "_simulated"
"""Where each moto EC2 backend keeps the simulation of its account."""
_PLAIN: list[Callable[..., Any]] = []
"""moto's own `Volume.modify`, kept the first time this is installed."""

CONFIGURATION = (
    ("volume_type", "volume_type"),
    ("size", "size_gib"),
    ("iops", "iops"),
    ("throughput", "throughput_mibps"),
)
"""moto's volume attributes (and its modification's `original_*`/`target_*`), and the
model's names for them."""


class Simulated(Protocol):
    """What a ModifyVolume tells an account's simulation (`SimulatedCloudWatch`)."""

    @property
    def present(self) -> datetime | None: ...

    def modify_volume(self, volume_id: str, at: datetime, **config: Any) -> None: ...


def follow(account_id: str, region: str, simulated: Simulated) -> None:
    """Have a ModifyVolume in this account and region stamped at `simulated`'s present and
    change the volume's simulation from then on."""
    from moto.ec2.models import ec2_backends

    ec2_backends[account_id][region].__dict__[_KEY] = simulated


def _modify(self: Any, *args: Any, **kwargs: Any) -> None:
    before = {mine: getattr(self, theirs) for theirs, mine in CONFIGURATION}
    _PLAIN[0](self, *args, **kwargs)
    made = self.modifications[-1]
    for theirs, mine in CONFIGURATION:
        if before[mine] is not None:
            setattr(made, f"original_{theirs}", before[mine])
        if getattr(self, theirs) is not None:
            setattr(made, f"target_{theirs}", getattr(self, theirs))
    simulated: Simulated | None = self.ec2_backend.__dict__.get(_KEY)
    present = simulated.present if simulated is not None else None
    if simulated is None or present is None:
        return
    made.start_time = made.end_time = present
    after = {mine: getattr(self, theirs) for theirs, mine in CONFIGURATION}
    simulated.modify_volume(self.id, present, **after)


def install() -> None:
    """Teach moto's ModifyVolume to record what AWS records (idempotent)."""
    from moto.ec2.models.elastic_block_store import Volume

    if not _PLAIN:
        _PLAIN.append(Volume.modify)
    Volume.modify = _modify  # type: ignore[method-assign]
