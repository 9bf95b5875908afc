"""Findings become alerts keyed by (rule, resource): pending, firing, resolved.

- pending: the condition holds but not yet for the rule's `for`; nothing is sent.
- firing: sent once, then again only after the repeat interval, or when its severity changes;
  an alert below the book's least severity is sent only once it rises to it.
- resolved: once the condition has been gone for `resolve_after` and at least two cycles, so
  that one missing datapoint does not resolve an alert; then a resolved message is sent.

What is owed to the channels sits in an outbox (an `outbox` mark on the alert) until it is
delivered: a failed delivery is tried again next cycle, never dropped. An alert that resolves
before its firing message got out is dropped quietly: nobody heard of it. The book keeps typed
findings; `deliver/statefile.py` writes it to the state file after every cycle, so a restart
neither re-sends nor forgets firing alerts.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

import structlog

from analyzer.model import units
from analyzer.model.applied import OFFERS_KEPT
from analyzer.model.findings import Bottleneck, Finding, Severity
from analyzer.model.reading import Reading
from analyzer.model.resources import ResourceType
from analyzer.model.units import format_rate

MIN_ABSENT_CYCLES = 2
FIX_MOVES = 0.2
"""A firing alert keeps the fixes it was sent with until the rates they were sized for move
by more than this share: one fix an operator can act on, not a new one every cycle."""

log = structlog.get_logger(__name__)


class _Silent:
    """A logger that says nothing."""

    def info(self, event: str, **fields: object) -> None:
        pass

    warning = info


SILENT = _Silent()

AlertKey = tuple[str, str, str]
"""(rule, scope, resource id): `scope_of` an account's region."""
Read = Callable[[str, str], Reading | None]
"""(scope, resource id) → its reading this cycle; None where the cycle holds none: what a
held alert weighs its balance against, and what a cleared one says of its refill."""


class AlertState(StrEnum):
    PENDING = "pending"
    FIRING = "firing"
    RESOLVED = "resolved"


class Owed(StrEnum):
    """What the channels have yet to hear about an alert."""

    FIRING = "firing"
    REPEAT = "repeat"
    RESOLVED = "resolved"


@dataclass
class Alert:
    finding: Finding
    """The latest finding: what the messages say."""
    state: AlertState
    since: datetime
    """When the condition first held."""
    firing_since: datetime | None = None
    absent_since: datetime | None = None
    absent_cycles: int = 0
    last_sent: datetime | None = None
    sent_severity: Severity | None = None
    outbox: Owed | None = None
    refill_s: float | None = None
    """A credit alert that cleared: how long its bucket takes to fill at the rate then."""
    unknown_since: datetime | None = None
    """Since when its resource's data has been missing, stale or failed."""
    refilled_percent: float | None = None
    """A held credit alert that cleared: the balance that released it, at or above its
    level; None where no reading did (the resource gone, its balance missing)."""
    attached_to: str | None = None
    """A volume's instance when its alert began: a volume moved since has ended it."""
    ended: str | None = None
    """What the inventory says ended it (`vol-… was detached from i-…`), where it did."""
    offered: tuple[str, ...] = ()
    """The fixes its messages offered on an Apply button (fix_ids, newest last): a click
    applies one of these while the alert lives, and nothing else."""

    def offer(self, fix_id: str) -> None:
        """A message about to be sent carries an Apply button for this fix."""
        if fix_id not in self.offered:
            self.offered = (*self.offered, fix_id)[-OFFERS_KEPT:]

    @property
    def key(self) -> AlertKey:
        return self.finding.key

    @property
    def rule(self) -> str:
        return self.finding.rule

    @property
    def resource_id(self) -> str:
        return self.finding.resource.resource_id

    @property
    def resource_type(self) -> ResourceType:
        return self.finding.resource.resource_type

    @property
    def severity(self) -> Severity:
        return self.finding.severity

    @property
    def notified(self) -> bool:
        return self.last_sent is not None

    def cleared(self, now: datetime) -> str:
        """What cleared and when, for a resolved message: not the firing text again."""
        f = self.finding
        credits = f.bottleneck in (Bottleneck.BURST_CREDITS, Bottleneck.INSTANCE_BURST_CREDITS)
        if self.ended is not None:
            return self._ended_text(now)
        # An exhausted bucket's finding counts the datapoints pinned at its baseline; a
        # forecast's does not, even once its time to empty has reached 0.
        until = f.credit.holds_until_percent if f.credit is not None else None
        if credits and f.credit is not None and f.credit.empty:
            what = "no longer held at its baseline: credits are coming back or the load has eased"
        elif credits and self.refilled_percent is not None and until is not None and _was_below(f):
            what = (
                f"refilled past {until:.0f}% ({self.refilled_percent:.0f}% "
                "now) and no longer forecast to run out of burst credits within the rule's "
                "horizon"
            )
        elif credits:
            what = "no longer forecast to run out of burst credits within the rule's horizon"
        elif f.bottleneck is Bottleneck.MEMORY:
            what = "reads no longer outrun the memory of its class"
        else:
            what = f"no longer pinned at its {format_rate(f.limit, f.unit, f.owner)} cap"
        when = self.absent_since or now
        started = self.firing_since or self.since
        fired = units.duration((when - started).total_seconds())
        refill = (
            f"; credits full again in {units.duration(self.refill_s)} at the present rate"
            if credits and self.refill_s is not None
            else ""
        )
        if not self.notified:
            return (
                f"{self.resource_id}: fired {started.astimezone(UTC):%H:%M} UTC and cleared "
                f"{when.astimezone(UTC):%H:%M} UTC while its firing message could not be "
                f"delivered: {self.finding.summary.rstrip('.')}; now {what}{refill}."
            )
        return (
            f"{self.resource_id}: {what}; cleared {when.astimezone(UTC):%H:%M} UTC "
            f"after firing for {fired}{refill}."
        )

    def _ended_text(self, now: datetime) -> str:
        """The inventory ended it: what happened, never a cap or credit reason."""
        when = self.absent_since or now
        started = self.firing_since or self.since
        fired = units.duration((when - started).total_seconds())
        return f"{self.ended}; resolved {when.astimezone(UTC):%H:%M} UTC after firing for {fired}."


@runtime_checkable
class Ending(Protocol):
    """What the analysis knows of the resources the inventory changed (`Unjudged`)."""

    def __contains__(self, key: object) -> bool: ...

    def attachment(self, scope: str, resource_id: str) -> str | None: ...

    def ended(self, scope: str, resource_id: str, attached_to: str | None) -> str | None: ...

    def reconfigured(
        self, scope: str, resource_id: str, judged_since: datetime | None, since: datetime
    ) -> str | None: ...

    def node_reads(self, scope: str, resource_id: str) -> bool: ...


ONLY_CLOUDWATCH = frozenset({Bottleneck.IMPAIRED, Bottleneck.INSTANCE_BURST_CREDITS})
"""What this daemon still alerts on where a node agent reads a resource's rates: AWS's checks
and an instance's own EBS bucket, which the node cannot see."""
HANDED_OVER = "{resource_id}: its rates are read by a node agent now, which alerts on them"


def _ended(alert: Alert, ending: Ending | None) -> str | None:
    """What the inventory says ended an alert's resource, if anything did (a volume's
    instance is noted in the cycle its alert is raised, to tell a move later); that a
    modification of the volume put other limits in force than those its finding was judged
    by (a stalled volume's alert is about no limit, and stays); or that a node agent now
    reads the rates the alert rests on, and alerts on them itself."""
    if ending is None or alert.state is AlertState.RESOLVED:
        return None
    scope, resource_id = alert.finding.resource.scope, alert.resource_id
    ended = ending.ended(scope, resource_id, alert.attached_to)
    if ended is None and alert.finding.bottleneck is not Bottleneck.IMPAIRED:
        judged = alert.finding.limits_since
        ended = ending.reconfigured(scope, resource_id, judged, alert.since)
    if ended is not None or alert.finding.bottleneck in ONLY_CLOUDWATCH:
        return ended
    if ending.node_reads(scope, resource_id):
        return HANDED_OVER.format(resource_id=resource_id)
    return None


@dataclass
class AlertBook:
    repeat_s: float
    resolve_after_s: float
    least: Severity = Severity.INFO
    """The least severity the channels hear of: an alert below it fires, shows and resolves
    without a message, until it escalates to it."""
    alerts: dict[AlertKey, Alert] = field(default_factory=dict)
    cleared: list[Alert] = field(default_factory=list)
    """Alerts whose "Resolved" is still owed although they have fired again since: queued
    ahead of the new firing, never overwritten by it."""
    log: Any = field(default=log, repr=False, compare=False)
    """Where the lifecycle is logged: `SILENT` for a replay, whose report tells it."""

    def restore(self, alerts: Iterable[Alert]) -> None:
        """Take in alerts as the state file kept them: an owed resolution of an alert that
        fired again is queued ahead of it."""
        self.alerts, self.cleared = {}, []
        for alert in alerts:
            other = self.alerts.get(alert.key)
            if other is not None and other.outbox is Owed.RESOLVED:
                self.cleared.append(other)
            elif alert.outbox is Owed.RESOLVED and other is not None:
                self.cleared.append(alert)
                continue
            self.alerts[alert.key] = alert

    # --- the lifecycle --------------------------------------------------------------------

    def update(
        self,
        now: datetime,
        firing: Iterable[Finding],
        pending: Iterable[Finding],
        unknown: Container[tuple[str, str]] = (),
        read: Read | None = None,
    ) -> None:
        """Take in a cycle's findings. An alert whose resource is `unknown` this cycle,
        (scope, id), neither clears nor counts towards clearing: it keeps its state until data
        shows the condition gone. A credit alert whose finding holds it until its bucket
        refills past a level (`Credit.holds_until_percent`) does not count towards clearing
        while its reading (`read`) shows the bucket below it."""
        firing_by_key = {f.key: f for f in firing}
        pending_by_key = {f.key: f for f in pending}
        if isinstance(unknown, Ending):
            self._inventory_ends(now, unknown, firing_by_key, pending_by_key)
        for finding in list(firing_by_key.values()):
            alert = self.alerts.get(finding.key)
            if (
                alert is not None
                and alert.state is AlertState.FIRING
                and finding.severity.rank < alert.severity.rank
                and (hold := _hold(alert, read)) is not None
                and hold.held
            ):
                del firing_by_key[finding.key]  # held: a milder word does not replace it
                continue
            self._fire(finding, now)
        for key, finding in pending_by_key.items():
            alert = self.alerts.get(key)
            if alert is None:
                self.alerts[key] = Alert(finding, AlertState.PENDING, now)
            elif alert.state is AlertState.PENDING:
                alert.finding = finding
        for key, alert in list(self.alerts.items()):
            if key not in firing_by_key and key not in pending_by_key:
                self._not_found(alert, now, unknown, read)
        for alert in self.alerts.values():
            if isinstance(unknown, Ending) and alert.attached_to is None:
                where = (alert.finding.resource.scope, alert.resource_id)
                alert.attached_to = unknown.attachment(*where)
            if self._repeat_due(alert, now):
                alert.outbox = Owed.REPEAT

    def _inventory_ends(
        self,
        now: datetime,
        ending: Ending,
        firing: dict[AlertKey, Finding],
        pending: dict[AlertKey, Finding],
    ) -> None:
        """Alerts whose resource the inventory says is deleted, detached, moved, stopped or
        modified since they were judged, or whose rates a node agent now reads, resolve at
        once, saying so, whatever the data of its last minutes still shows; and nothing new
        is raised this cycle about a resource that is gone, detached or stopped (a moved
        volume's alerts start afresh from the next cycle, on its new instance, and a modified
        one's from the next cycle, on its new limits)."""
        for alert in list(self.alerts.values()):
            ended = _ended(alert, ending)
            if ended is not None:
                self._end(alert, now, ended)
                firing.pop(alert.key, None)
                pending.pop(alert.key, None)
        for found in (firing, pending):
            for key, finding in list(found.items()):
                if ending.ended(finding.resource.scope, finding.resource.resource_id, None):
                    del found[key]

    def _not_found(
        self,
        alert: Alert,
        now: datetime,
        unknown: Container[tuple[str, str]],
        read: Read | None,
    ) -> None:
        """An alert this cycle's findings do not hold: unknown (its data missing), or absent
        (towards clearing)."""
        if (alert.finding.resource.scope, alert.resource_id) in unknown:
            self._unknown(alert, now)
            return
        alert.unknown_since = None
        if alert.state is AlertState.PENDING:
            del self.alerts[alert.key]
        elif alert.state is AlertState.FIRING:
            self._absent(alert, now, read, _hold(alert, read))

    def _repeat_due(self, alert: Alert, now: datetime) -> bool:
        if alert.state is not AlertState.FIRING or alert.outbox is not None:
            return False
        if alert.severity.rank < self.least.rank:
            return False  # told once that it dropped below the floor: no reminders
        if alert.last_sent is None:
            return False
        return (now - alert.last_sent).total_seconds() >= self.repeat_s

    def _fire(self, finding: Finding, now: datetime) -> None:
        alert = self.alerts.get(finding.key)
        if alert is None or alert.state is AlertState.RESOLVED:
            if alert is not None and alert.outbox is Owed.RESOLVED:
                self.cleared.append(alert)  # its "Resolved" goes out first
            alert = Alert(finding, AlertState.PENDING, now)
            self.alerts[finding.key] = alert
        alert.finding = _steady(alert.finding, finding) if alert.notified else finding
        alert.absent_since, alert.absent_cycles = None, 0
        heard = alert.severity.rank >= self.least.rank
        if alert.state is AlertState.PENDING:
            alert.state = AlertState.FIRING
            alert.firing_since = now
            alert.outbox = Owed.FIRING if heard else None
            self.log.info(
                "alert.firing",
                **_about(alert),
                severity=alert.severity.value,
                summary=finding.summary,
            )
        elif alert.notified and alert.sent_severity is not alert.severity:
            alert.outbox = Owed.FIRING
            self._changed(alert)
        elif not alert.notified and heard is not (alert.outbox is Owed.FIRING):
            # Unheard so far: owed once it reaches the channels' floor, not once it drops
            # below it before its message got out.
            alert.outbox = Owed.FIRING if heard else None
            self._changed(alert)

    def _changed(self, alert: Alert) -> None:
        self.log.info(
            "alert.changed",
            **_about(alert),
            severity=alert.severity.value,
        )

    def _end(self, alert: Alert, now: datetime, ended: str) -> None:
        """The inventory ended it (deleted, detached, moved, stopped): resolved at once."""
        self.log.info(
            "alert.resolved",
            **_about(alert),
            reason=ended,
        )
        if alert.state is AlertState.PENDING or (
            not alert.notified and alert.outbox is not Owed.FIRING
        ):
            del self.alerts[alert.key]
            return
        alert.ended = ended
        alert.absent_since = alert.absent_since or now
        alert.state = AlertState.RESOLVED
        alert.outbox = Owed.RESOLVED

    def _unknown(self, alert: Alert, now: datetime) -> None:
        # What data showed before it went missing does not count towards clearing after.
        alert.absent_since, alert.absent_cycles = None, 0
        if alert.unknown_since is None and alert.state is not AlertState.RESOLVED:
            alert.unknown_since = now
            self.log.warning(
                "alert.unknown",
                **_about(alert),
                state=alert.state.value,
                reason="its data is missing, stale or failed: the alert keeps its state",
            )

    def _absent(
        self, alert: Alert, now: datetime, read: Read | None, hold: Hold | None = None
    ) -> None:
        if hold is not None and hold.held:
            alert.absent_since, alert.absent_cycles = None, 0
            alert.finding = _held_finding(alert.finding, hold)
            return
        alert.refilled_percent = hold.now if hold is not None else None
        if alert.absent_since is None:
            alert.absent_since = now
        alert.absent_cycles += 1
        gone_for = (now - alert.absent_since).total_seconds()
        if alert.absent_cycles < MIN_ABSENT_CYCLES or gone_for < self.resolve_after_s:
            return
        self.log.info(
            "alert.resolved",
            **_about(alert),
        )
        if not alert.notified and alert.outbox is not Owed.FIRING:
            del self.alerts[alert.key]
            return
        # Announced, or owed and never delivered (the channel was down while it fired and
        # cleared): either way the channel hears that it cleared, the latter with both times.
        alert.state = AlertState.RESOLVED
        alert.outbox = Owed.RESOLVED
        if read is not None and alert.finding.is_credits:
            reading = read(alert.finding.resource.scope, alert.resource_id)
            alert.refill_s = reading.seconds_to_full if reading is not None else None

    # --- delivery -------------------------------------------------------------------------

    def owed(self) -> list[Alert]:
        """What the channels have yet to hear, oldest news first."""
        return [*self.cleared, *(a for a in self.alerts.values() if a.outbox is not None)]

    def delivered(self, alerts: Iterable[Alert], now: datetime) -> None:
        for alert in alerts:
            if alert.outbox is Owed.RESOLVED:
                if self.alerts.get(alert.key) is alert:
                    del self.alerts[alert.key]
                else:
                    self.cleared = [a for a in self.cleared if a is not alert]
                continue
            alert.last_sent = now
            alert.sent_severity = alert.severity
            alert.outbox = None

    def firing(self) -> list[Alert]:
        return [a for a in self.alerts.values() if a.state is AlertState.FIRING]

    def __iter__(self) -> Iterator[Alert]:
        """Every alert kept, owed resolutions of alerts that fired again first."""
        return iter([*self.cleared, *self.alerts.values()])

    def steady(self, daily: Container[str] = ()) -> dict[tuple[str, str], frozenset[Bottleneck]]:
        """By (scope, id) of each resource with an alert kept, none of them pending and none
        clearing: the limits its firing alerts name, those of `daily` rules (whose condition
        moves with the days) aside. Adaptive polling reads such a resource less often where
        every limit that makes it hot is named (`RegionPoller`)."""
        out: dict[tuple[str, str], set[Bottleneck]] = {}
        unsettled: set[tuple[str, str]] = set()
        for alert in self:
            where = (alert.finding.resource.scope, alert.resource_id)
            named = out.setdefault(where, set())
            if alert.state is AlertState.PENDING:
                unsettled.add(where)
            elif alert.state is AlertState.FIRING:
                if alert.rule not in daily:
                    named.add(alert.finding.bottleneck)
                if alert.absent_since is not None:
                    unsettled.add(where)
        return {where: frozenset(named) for where, named in out.items() if where not in unsettled}


def _was_below(finding: Finding) -> bool:
    """Its last finding saw the bucket below the level it holds until."""
    credit = finding.credit
    if credit is None or credit.holds_until_percent is None or credit.balance_percent is None:
        return False
    return credit.balance_percent < credit.holds_until_percent


@dataclass(frozen=True, slots=True)
class Hold:
    until: float
    """The level the alert holds until, percent."""
    now: float
    """The balance in this cycle's data."""

    @property
    def held(self) -> bool:
        return self.now < self.until


def _hold(alert: Alert, read: Read | None) -> Hold | None:
    """Where its finding holds it until its bucket refills past a level, and the balance is
    read this cycle: the level and the reading."""
    f = alert.finding
    credit = f.credit
    if read is None or credit is None or credit.holds_until_percent is None:
        return None
    reading = read(f.resource.scope, f.resource.resource_id)
    now = reading.balances.get(credit.balance) if reading is not None else None
    return Hold(credit.holds_until_percent, now) if now is not None else None


def _held_finding(finding: Finding, hold: Hold) -> Finding:
    """What a held alert says while its condition is gone: the balance now, and the forecast
    it last gave (no time to empty: that one is out of date)."""
    last = finding.held if finding.held is not None else finding.summary
    credit = finding.credit
    return replace(
        finding,
        summary=(
            f"Held until the balance refills past {hold.until:.0f}% (now {hold.now:.0f}%). "
            f"Last forecast: {last}"
        ),
        seconds_to_empty=None,
        evidence={**finding.evidence, "balance_percent": hold.now},
        credit=replace(credit, balance_percent=hold.now) if credit is not None else None,
        held=last,
    )


def _steady(before: Finding, now: Finding) -> Finding:
    """`now`, with the fixes of `before` where the rates they were sized for moved by less than
    `FIX_MOVES` in every dimension."""
    old, new = before.sized_for, now.sized_for
    if old is None or new is None or old.keys() != new.keys():
        return now
    for key, was in old.items():
        moved = abs(new[key] - was)
        if moved > FIX_MOVES * max(abs(was), 1e-9):
            return now
    evidence = {**now.evidence, "fix_sized_for": dict(old)}
    return replace(now, remedies=before.remedies, evidence=evidence, sized_for=old)


def _about(alert: Alert) -> dict[str, str]:
    """What an alert's log lines say it is about: the claim a volume was provisioned for
    first, where it has one, then the rule, the resource, and the account it belongs to,
    where there are accounts."""
    ref = alert.finding.resource
    out = {"claim": ref.claim.ref} if ref.claim is not None else {}
    out |= {"rule": alert.rule, "resource": alert.resource_id}
    if ref.account_id:
        out["account_id"] = ref.account_id
    return out
