"""Which volumes the CloudWatch agent publishes its EBS NVMe statistics for, and with which
dimensions: asked of ListMetrics at each inventory refresh.

The agent (`diskio` with its `ebs_*` measurements) publishes a volume's NVMe counters as
`diskio_ebs_*` in its namespace (`CWAgent` unless configured otherwise), with `VolumeId` and
whatever its `append_dimensions` adds: usually `InstanceId`, sometimes the image, the instance
type or the Auto Scaling group. CloudWatch answers a GetMetricData query only on an exact match
of its dimensions, so the set is taken from ListMetrics, never assumed. Where ListMetrics shows
a volume under several sets (it moved, or the agent's configuration changed), the set naming
its current instance is taken; where none does and there are several, none is: the volume is
read from AWS/EBS, as it is where the agent does not run.

A failed ListMetrics (no `cloudwatch:ListMetrics` permission, an error) costs nothing but the
agent's metrics: every volume is read from AWS/EBS, with one warning until it answers again.
It is billed as a request ($0.01 per 1,000; one request per 500 metrics listed).

An agent that stops (its instance stopped, the agent crashed or was reconfigured) stays in
ListMetrics for up to three hours. The agent publishes every collection interval, zeros
included, so a volume whose agent's operations have no datapoint for five minutes has lost its
agent, not gone idle: it is read from AWS/EBS again at once, with a warning (`Silence`), and
its agent is tried again three hours later.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Protocol

import structlog

from analyzer.errors import AwsAccessError, AwsCallError
from analyzer.model import metrics
from analyzer.model.metrics import Dimension, Namespace
from analyzer.model.resources import AgentMetrics, Inventory, Volume
from analyzer.model.series import Series, Status, spacing

log = structlog.get_logger(__name__)

Listed = list[tuple[str, tuple[tuple[str, str], ...]]]
"""(metric name, its dimensions as (name, value) pairs), as ListMetrics gives them."""


class Lister(Protocol):
    """ListMetrics of one region (`cloudwatch.CloudWatch.list_metrics`)."""

    region: str

    def list_metrics(self, namespace: str, dimension: str, metric: str | None = None) -> Listed: ...


def by_volume(listed: Listed, namespace: str) -> dict[str, list[AgentMetrics]]:
    """By volume id, each dimension set the agent's metrics are published with, and the names
    published with it (only the metrics the analyzer reads)."""
    wanted = {m.name for m in metrics.of(Namespace.AGENT)}
    sets: dict[str, dict[tuple[tuple[str, str], ...], set[str]]] = {}
    for name, dims in listed:
        volume_id = dict(dims).get(Dimension.VOLUME.value)
        if name in wanted and volume_id:
            sets.setdefault(volume_id, {}).setdefault(dims, set()).add(name)
    return {
        vid: [AgentMetrics(namespace, dims, tuple(sorted(names))) for dims, names in found.items()]
        for vid, found in sets.items()
    }


def chosen(volume: Volume, found: list[AgentMetrics]) -> AgentMetrics | None:
    """The set to ask for this volume: the one naming its instance, else the only one. None
    for a Multi-Attach volume (the agent of each instance publishes it apart)."""
    if volume.multi_attach or not found:
        return None
    mine = [a for a in found if dict(a.dimensions).get(Dimension.INSTANCE.value) is not None]
    here = [a for a in mine if dict(a.dimensions)[Dimension.INSTANCE.value] == volume.attached_to]
    if len(here) == 1:
        return here[0]
    if mine:
        return None  # published from other instances only: not what it does now
    return found[0] if len(found) == 1 else None


def attach(inv: Inventory, found: Mapping[str, list[AgentMetrics]]) -> Inventory:
    """The inventory with each volume's agent metrics, where the agent publishes them."""
    if not found:
        return inv
    volumes = tuple(
        replace(v, agent=chosen(v, found.get(v.volume_id, []))) if v.active else v
        for v in inv.volumes
    )
    return replace(inv, volumes=volumes)


@dataclass
class AgentDiscovery:
    """ListMetrics for the agent's namespace, one warning per region while it fails."""

    namespace: str
    failing: dict[str, str] = field(default_factory=dict)
    """By region (scope): why its last ListMetrics failed."""
    listed: dict[str, dict[str, list[AgentMetrics]]] = field(default_factory=dict)
    """By region (scope): what its last ListMetrics that answered showed, by volume id."""

    def discover(self, inv: Inventory, lister: Lister) -> Inventory:
        """The inventory with its volumes' agent metrics. Where ListMetrics fails for a
        while (an error, throttling), what it last showed is kept: the agents do not stop
        because one call did. Refused (no permission), every volume is read from AWS/EBS."""
        where = lister.region
        try:
            listed = lister.list_metrics(self.namespace, Dimension.VOLUME.value)
        except (AwsAccessError, AwsCallError) as exc:
            refused = isinstance(exc, AwsAccessError)
            if refused:
                self.listed.pop(where, None)
            if where not in self.failing:
                log.warning(
                    "agent_metrics.failed",
                    region=where,
                    error=str(exc),
                    fallback=(
                        "every volume's rates from AWS/EBS"
                        if refused
                        else "the agent metrics it listed last"
                    ),
                )
            self.failing[where] = str(exc)
            return attach(inv, self.listed.get(where, {}))
        if self.failing.pop(where, None) is not None:
            log.info("agent_metrics.answered", region=where)
        self.listed[where] = by_volume(listed, self.namespace)
        found = attach(inv, self.listed[where])
        log.debug(
            "agent_metrics.found",
            region=where,
            volumes=sum(1 for v in found.volumes if v.agent),
        )
        return found


SILENT_S = 300
"""An agent with no datapoint for this long before the end of the data has stopped."""
RETRY_S = 3 * 3600
"""ListMetrics' only `RecentlyActive` horizon: a silent agent is tried again after it."""


@dataclass
class Silence:
    """The volumes whose CloudWatch agent fell silent, read from AWS/EBS until `RETRY_S`
    after."""

    since: dict[str, datetime] = field(default_factory=dict)
    """By volume id: when its agent was found silent."""
    volumes: frozenset[str] = frozenset()
    """Their ids; a new object only when they change, so that queries are planned again only
    then."""

    def expire(self, now: datetime) -> None:
        """Try again the agents silent for `RETRY_S`."""
        retry = [vid for vid, at in self.since.items() if now - at >= timedelta(seconds=RETRY_S)]
        for vid in retry:
            del self.since[vid]
            log.info("agent_metrics.retried", volume=vid)
        if retry:
            self.volumes = frozenset(self.since)

    def check(
        self,
        inv: Inventory,
        current: Mapping[str, Mapping[str, Series]],
        polled: Collection[str],
        end: datetime,
        now: datetime,
    ) -> set[str]:
        """The volumes polled now whose agent fell silent: no datapoint of any of its metrics
        read now in the `SILENT_S` before `end`, the end of the data (or two of its collection
        intervals, where they are longer). A failed fetch is not silence."""
        found = set()
        for volume in inv.volumes:
            vid = volume.volume_id
            if volume.agent is None or vid not in polled or vid in self.since:
                continue
            mine = current.get(vid, {})
            read = [mine[name] for name in volume.agent.names if name in mine]
            if not read or any(s.status is Status.ERROR for s in read):
                continue  # not read from the agent this time, or failed: said elsewhere
            last = max((s.timestamps[-1] for s in read if s.timestamps), default=None)
            quiet = max(SILENT_S, 2 * max(spacing(s) for s in read))
            if last is not None and last >= end - timedelta(seconds=quiet):
                continue
            log.warning(
                "agent_metrics.silent",
                volume=vid,
                last_datapoint=last.isoformat() if last else None,
                fallback="its rates from AWS/EBS",
            )
            self.since[vid] = now
            found.add(vid)
        if found:
            self.volumes = frozenset(self.since)
        return found
