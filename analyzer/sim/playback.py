"""A recording played back as an AWS account: its inventory described, its datapoints answered.

`ebs-analyzer demo --from FILE` runs the daemon over a recording (`ebs-analyzer record`, or a
shipped incident) on a simulated clock: every Describe* call answers the recorded inventory,
and GetMetricData answers from the recorded datapoints, aggregated to the period and statistic
asked as CloudWatch would (the daily minima and the day profile included). Nothing calls AWS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from analyzer.collect.accounts import Account
from analyzer.collect.cloudwatch import CloudWatch
from analyzer.collect.described import RecordedDescriber
from analyzer.collect.recording import Recording
from analyzer.collect.regions import Region
from analyzer.model import metrics
from analyzer.model.resources import Inventory, scope_of
from analyzer.model.series import Series
from analyzer.sim.cloudwatch import SimulatedCloudWatch
from analyzer.sim.datapoints import Datapoints, namespace_of

KEEP_S = 63 * 86_400.0
"""Every recorded datapoint stays answerable, however far the clock has run."""


@dataclass
class RecordedAccount:
    """Each recorded region, as `Analyzer(connect=…)` and `daemon.build` take one."""

    recording: Recording
    published: Callable[[], datetime] | None = None
    """The simulated clock: where given, a datapoint is answered only once CloudWatch would
    have published it, `lag_s` after its period ends; otherwise every recorded one is."""
    lag_s: float = 0.0
    _regions: dict[str, Region] = field(default_factory=dict)
    _clouds: list[SimulatedCloudWatch] = field(default_factory=list)

    def region(self, name: str) -> Region:
        if name not in self._regions:
            inventory = self.recording.inventories.get(name, Inventory(name))
            data: Datapoints = {
                (rid, metric): _as_published(rid, metric, series)
                for rid, by_metric in self.recording.raw.get(name, {}).items()
                for metric, series in by_metric.items()
            }
            attached = {
                v.volume_id: v.attached_to
                for v in inventory.volumes
                if v.attached_to and not v.multi_attach
            }
            agents = {v.volume_id: v.agent for v in inventory.volumes if v.agent}
            cloud = SimulatedCloudWatch(
                data,
                keep_s=KEEP_S,
                attachments=attached,
                agents=agents,
                published=self.published,
                lag_s=self.lag_s,
            )
            self._clouds.append(cloud)
            metrics = CloudWatch(cloud, name)
            self._regions[name] = Region(
                name, RecordedDescriber(inventory), metrics, listing=metrics
            )
        return self._regions[name]

    def account_region(self, account: Account, region: str) -> Region:
        """An account's region as `Analyzer(connect_account=…)` reads one: the region the
        recording holds for that account and region, named as asked."""
        found = self.region(scope_of(account.id, region))
        return replace(found, name=region, account=account)

    def asked(self) -> int:
        """How many metric queries its regions' CloudWatch has answered."""
        return sum(c.asked for c in self._clouds)


def _as_published(resource_id: str, name: str, series: Series) -> list[tuple[datetime, float]]:
    """A recorded series' points as CloudWatch holds them: recorded in the catalogue's units,
    so a metric read at a scale (the agent's microseconds) goes back to its own."""
    namespace, _ = namespace_of(name, resource_id)
    scale = metrics.named(namespace, name).scale
    if scale == 1.0:
        return series.points()
    return [(t, v / scale) for t, v in series.points()]
