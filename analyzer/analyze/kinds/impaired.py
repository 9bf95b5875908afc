"""Rule kind for impaired storage: AWS says that I/O has stopped, not that a limit binds.

A volume whose `VolumeStalledIOCheck` fails (Nitro, one-minute, free) completes no operations
while its queue stays; an instance whose `StatusCheckFailed_AttachedEBS` fails cannot reach
one or more of its volumes. On such data a volume looks idle, or pinned at a cap, and the
other rules would advise growing it or moving it to gp3: the analysis stage keeps every other
finding of an impaired resource (and of the volumes of an instance whose attached-EBS check
fails) out while it lasts, and this finding says what AWS says to do.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import Field

from analyzer.analyze.kinds.base import RuleBase
from analyzer.model import metrics
from analyzer.model.findings import Bottleneck, Finding
from analyzer.model.metrics import Namespace
from analyzer.model.resources import ResourceType
from analyzer.model.series import recent, window_evidence
from analyzer.model.state import ResourceState, Snapshot
from analyzer.model.units import PositiveDuration, Unit

ADVICE = {
    ResourceType.VOLUME: (
        "AWS's guidance for a volume whose stalled-I/O check fails: look for an event on it "
        "in AWS Health; if it persists, stop and start the instance (or detach and reattach "
        "the volume), or restore the volume from its latest snapshot. Growing it or changing "
        "its type does not help."
    ),
    ResourceType.INSTANCE: (
        "AWS's guidance for a failed attached-EBS status check: look for an event on its "
        "volumes in AWS Health; if it persists, stop and start the instance, or replace the "
        "impaired volume from its latest snapshot."
    ),
}


class IoImpaired(RuleBase):
    kind: Literal["io_impaired"] = "io_impaired"
    window: PositiveDuration = 300.0
    min_failed: int = Field(default=2, ge=1)
    """Failed checks in the window, the latest among them, before it speaks: `observed` is
    the share of the window's checks that failed, in percent."""

    supported: ClassVar[frozenset[ResourceType]] = frozenset(
        {ResourceType.VOLUME, ResourceType.INSTANCE}
    )

    def evaluate(self, state: ResourceState, snapshot: Snapshot, at: datetime) -> Finding | None:
        since = state.impaired_since(at)
        if since is None:
            return None
        series = recent(state.measure(state.impairment_check), at, self.window)
        failed = sum(1 for v in series.values if v >= 1)
        if failed < self.min_failed:
            return None
        namespace = Namespace.EBS if state.is_volume else Namespace.EC2
        check = metrics.feeding(namespace, state.impairment_check)
        name = check.name if check else state.impairment_check.value
        what = "I/O stalled" if state.is_volume else "attached EBS impaired"
        minutes = (at - since).total_seconds() / 60
        return self.finding(
            state,
            Bottleneck.IMPAIRED,
            self.window,
            summary=(
                f"{state.label}: {what} since {since:%H:%M} UTC ({name} failing for "
                f"{minutes:.0f} min). {ADVICE[state.ref.resource_type]}"
            ),
            observed=round(100.0 * failed / len(series), 1),
            limit=0.0,
            unit=Unit.PERCENT,
            evidence={
                **window_evidence(series, self.window),
                "failed_checks": failed,
                "check": name,
                "impaired_since": since.isoformat(),
            },
        )
