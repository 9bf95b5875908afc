"""Alertmanager: the firing alerts posted to its v2 API every cycle, the way Prometheus does.

Each cycle every firing alert is posted again with `endsAt` a few intervals ahead, so that an
alert the daemon stops sending (it died, it lost the resource) expires by itself; an alert that
resolved is posted with `endsAt` at its resolution, for a quarter of an hour, so that a receiver
down at that moment still hears of it. Alertmanager deduplicates by labels, so a restarted
daemon, which restores its alerts from the state file, re-sends the same alerts, not new ones.
Every URL (each member of an HA pair) gets every post. Labels use the names the metrics use,
so inhibition rules can match a volume's findings with its instance's. An Alertmanager behind
basic auth or a bearer token gets an Authorization header, never credentials in its URL.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog

from analyzer.analyze.alerts import Alert, AlertBook, AlertKey, Read
from analyzer.deliver import labels
from analyzer.deliver.auth import AlertmanagerUrl, alertmanager_endpoint
from analyzer.deliver.notify import Record
from analyzer.model import units
from analyzer.model.resources import ResourceType

log = structlog.get_logger(__name__)

CHANNEL = "alertmanager"
RESEND_INTERVALS = 4
"""`endsAt` lies this many cycle intervals ahead (Prometheus: four resend delays)."""
RESOLVED_FOR_S = 15 * 60.0
"""A resolved alert is posted again for this long (as Prometheus does)."""


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def labels_of(alert: Alert, read: Read | None) -> dict[str, str]:
    """What identifies the alert: the rule and its resource, with the metrics' label names
    (a volume's also the instance it is attached to, and a claim's volume its namespace and
    claim, which an Alertmanager route can send to the team that owns the namespace)."""
    finding = alert.finding
    ref = finding.resource
    out = {
        "alertname": finding.rule,
        labels.SEVERITY: finding.severity.value,
        labels.BOTTLENECK: finding.bottleneck.value,
        labels.RESOURCE_TYPE: ref.resource_type.value,
        labels.RESOURCE_ID: ref.resource_id,
        labels.REGION: ref.region,
        labels.ID_LABELS[ref.resource_type]: ref.resource_id,
    }
    if ref.claim is not None:
        out[labels.NAMESPACE] = ref.claim.namespace
        out[labels.PERSISTENTVOLUMECLAIM] = ref.claim.name
        if ref.claim.cluster:
            out[labels.KUBERNETES_CLUSTER] = ref.claim.cluster
    if ref.account_id:
        out[labels.ACCOUNT_ID] = ref.account_id
        if ref.account_name:
            out[labels.ACCOUNT_NAME] = ref.account_name
    if ref.resource_type is ResourceType.VOLUME and read is not None:
        reading = read(ref.scope, ref.resource_id)
        if reading is not None and reading.attached_to:
            out[labels.INSTANCE_ID] = reading.attached_to
    return out


def annotations_of(alert: Alert, runbook_url: str | None) -> dict[str, str]:
    """What to read and do: the summary, the time to empty, the next bottleneck, the fix with
    its price, and the docs' Alerts section."""
    finding = alert.finding
    out = {"summary": finding.summary}
    if finding.seconds_to_empty is not None:
        out["time_to_empty"] = units.duration(finding.seconds_to_empty)
    if finding.next_bottleneck is not None:
        out["next_bottleneck"] = finding.next_bottleneck.text()
    if finding.remedies:
        out["fix"] = finding.remedies[0].text()
    if runbook_url:
        out["runbook_url"] = f"{runbook_url.rstrip('#')}#alerts"
    return out


def _headers(url: AlertmanagerUrl) -> dict[str, str]:
    """JSON, and the credentials where the Alertmanager wants some (a secret file is read
    again: OSError when it cannot be)."""
    headers = {"Content-Type": "application/json"}
    if url.credentials is not None:
        headers["Authorization"] = url.credentials.header()
    return headers


@dataclass
class Alertmanager:
    """Posts the alert book to one or more Alertmanagers after every cycle."""

    urls: Sequence[str]
    interval_s: float
    record: Record = lambda _channel, _outcome: None
    runbook_url: str | None = None
    timeout_s: float = 10.0
    _sent: dict[AlertKey, dict[str, Any]] = field(default_factory=dict)
    """What was posted as firing last time, by alert."""
    _resolved: dict[AlertKey, tuple[dict[str, Any], datetime]] = field(default_factory=dict)
    """Posted as resolved until the time given."""
    _endpoints: list[AlertmanagerUrl] = field(default_factory=list)
    """The URLs without user:password@, each with the credentials it is sent."""

    def __post_init__(self) -> None:
        self._endpoints = [alertmanager_endpoint(url) for url in self.urls]

    def payload(self, book: AlertBook, now: datetime, read: Read | None) -> list[Any]:
        """The alerts to post at `now`: those firing, and those resolved in the last quarter
        of an hour."""
        ends = now + timedelta(seconds=RESEND_INTERVALS * self.interval_s)
        firing: dict[AlertKey, dict[str, Any]] = {}
        for alert in book.firing():
            firing[alert.key] = {
                "labels": labels_of(alert, read),
                "annotations": annotations_of(alert, self.runbook_url),
                "startsAt": _stamp(alert.firing_since or alert.since),
                "endsAt": _stamp(ends),
            }
        for key, posted in self._sent.items():
            if key not in firing:
                ended = {**posted, "endsAt": _stamp(now)}
                self._resolved[key] = (ended, now + timedelta(seconds=RESOLVED_FOR_S))
        self._resolved = {
            k: kept for k, kept in self._resolved.items() if kept[1] > now and k not in firing
        }
        self._sent = firing
        return [*firing.values(), *(posted for posted, _ in self._resolved.values())]

    def push(self, book: AlertBook, now: datetime, read: Read | None = None) -> int:
        """Posts to every URL; returns how many took it. A failure is logged and counted; the
        next cycle posts everything again."""
        body = json.dumps(self.payload(book, now, read)).encode()
        took = 0
        for url in self._endpoints:
            try:
                request = urllib.request.Request(
                    f"{url.rstrip('/')}/api/v2/alerts",
                    data=body,
                    method="POST",
                    headers=_headers(url),
                )
                with urllib.request.urlopen(request, timeout=self.timeout_s) as answer:
                    answer.read()
            except (urllib.error.URLError, OSError, ValueError) as exc:
                self.record(CHANNEL, "error")
                reason = getattr(exc, "reason", None) or exc
                log.warning("alertmanager.failed", url=str(url), error=str(reason))
                continue
            self.record(CHANNEL, "success")
            took += 1
        return took
