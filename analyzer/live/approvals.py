"""Fixes approved in Slack: which alert carries an Apply button, and what a click does.

A click applies through the same path as `apply --yes` (read afresh, the guards, one call,
read back), never above the cost ceiling (a click cannot pass --allow-cost-increase), and only
by a named approver. Every attempt, applied or not, is one `apply.attempt` log line, a count on
`ebs_analyzer_apply_attempts_total`, a record in the state file, and a reply in the channel.
A fix the ledger says was applied within a day is not asked of AWS again; one being applied
by another click waits for nothing and says so.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import structlog

from analyzer.act.apply import Applier, Outcome, Result, audit
from analyzer.act.cluster import KubernetesCluster
from analyzer.act.guards import Policy
from analyzer.act.ledger import Ledger
from analyzer.act.plan import Plan
from analyzer.analyze.alerts import Alert
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.sold import Asked, described
from analyzer.deliver.interactions import Click, Respond, outcome_message, respond
from analyzer.errors import ConfigError
from analyzer.live.scopes import Scopes
from analyzer.model.applied import Attempt
from analyzer.model.findings import Remedy
from analyzer.model.kubernetes import unclaimed_owner
from analyzer.model.resources import Inventory
from analyzer.settings import Settings
from analyzer.settings.applying import AUTOMATIC

log = structlog.get_logger(__name__)

AGAIN_AFTER = timedelta(hours=24)
"""A fix applied within this is not applied again by a click: it is said to be done."""


@dataclass
class Approvals:
    applier_for: Callable[[], Applier]
    """An applier over the regions watched now."""
    approvers: frozenset[str]
    ledger: Ledger
    policy: Policy
    inventories: Callable[[], Mapping[str, Inventory]]
    respond: Respond
    record: Callable[[str, str], None]
    """Counts an attempt: (via, outcome)."""
    saved: Callable[[], None]
    """Writes the state file, with the ledger."""
    clock: Callable[[], datetime]
    wait_s: float = 20.0
    claims: bool = False
    """A claim's volume gets a button: its fix goes through the Kubernetes API."""
    automatic: frozenset[str] = frozenset()
    """The kinds of fix that go ahead without a click (`apply_automatically`)."""
    announce: Callable[[list[str]], None] = lambda lines: None
    """Says a fix the policy applied where alerts go."""
    firing: Callable[[], Sequence[Alert]] = lambda: ()
    """The alerts firing now: a click applies a fix one of their messages offered, or is
    refused."""
    dry_run: bool = False
    """A dry run of the daemon (`--dry-run`): a click and the policy ask AWS's DryRun, and
    change nothing."""
    stopping: threading.Event = field(default_factory=threading.Event)
    """Set when the daemon stops: a read-back under way ends at its next reading."""
    _clicks: int = field(default=0, init=False, repr=False)
    _quiet: threading.Condition = field(default_factory=threading.Condition, init=False)

    def offer(self, alert: Alert) -> str | None:
        """The fix_id of the Apply button on a message about to be sent, remembered on the
        alert as offered (a click applies only what was offered); None for no button."""
        fix = self.offerable(alert)
        if fix is not None:
            alert.offer(fix)
        return fix

    def offerable(self, alert: Alert) -> str | None:
        """The fix_id of the alert's first fix applied in place, where its resource is in the
        apply scope and no cluster owns it behind a claim the analyzer cannot go through;
        None otherwise."""
        fix = next((r.fix_id for r in alert.finding.remedies if r.fix_id), None)
        ref = alert.finding.resource
        if fix is None or (ref.claim is not None and not self.claims):
            return None
        inventory = self.inventories().get(ref.scope)
        if inventory is None:
            return None
        tags = next((v.tags for v in inventory.volumes if v.volume_id == ref.resource_id), None)
        if tags is None:
            tags = next(
                (d.tags for d in inventory.db_instances if d.db_instance_id == ref.resource_id),
                None,
            )
        if tags is None or not self.policy.allows(tags):
            return None
        if ref.claim is None and unclaimed_owner(tags) is not None:
            return None
        return fix

    def click(self, click: Click) -> None:
        """A click on an Apply button, on a worker: its outcome posted to its response_url.
        Once the daemon stops, a click is refused: nothing is asked of AWS that the stop
        could cut short before its record is written."""
        with self._quiet:
            stopping = self.stopping.is_set()
            if not stopping:
                self._clicks += 1
        if stopping:
            gone = Result(
                Outcome.REFUSED,
                click.fix_id,
                "the daemon is stopping: nothing changed; click again once it is back",
            )
            self._finish(click, gone)
            return
        try:
            self._click(click)
        finally:
            with self._quiet:
                self._clicks -= 1
                self._quiet.notify_all()

    def finish(self, timeout_s: float) -> bool:
        """A stop: the read-backs under way cut short, and the clicks being handled waited
        for (their outcome recorded and said), at most `timeout_s`; False where one still
        runs."""
        self.stopping.set()
        with self._quiet:
            return self._quiet.wait_for(lambda: self._clicks == 0, timeout_s)

    def _click(self, click: Click) -> None:
        if click.user not in self.approvers:
            self._deny(click)
            return
        resource_id = click.fix_id.partition(":")[0].strip()
        alert = self._offering(click.fix_id)
        if alert is None:
            unasked = Result(
                Outcome.REFUSED,
                click.fix_id,
                f"no alert firing now carries an Apply button for {click.fix_id} (its alert "
                "resolved, or the button is not one this daemon sent): nothing changed; apply "
                "it from a terminal: ebs-analyzer apply",
            )
            self._finish(click, unasked)
            return
        with self.ledger.holding(resource_id) as mine:
            if not mine:
                busy = Result(
                    Outcome.ALREADY,
                    click.fix_id,
                    f"a fix of {resource_id} is being applied: nothing called",
                )
                self._finish(click, busy)
                return
            earlier = self.ledger.applied(click.fix_id, self.clock() - AGAIN_AFTER)
            if earlier is not None:
                done = Result(
                    Outcome.ALREADY,
                    click.fix_id,
                    f"already applied by {_who(earlier)} at {earlier.at:%Y-%m-%d %H:%M} UTC: "
                    "nothing called",
                )
                self._finish(click, done)
                return
            scope = alert.finding.resource.scope
            self._answer(click, self._apply(click.fix_id, click.user, "slack", self.dry_run, scope))

    def _deny(self, click: Click) -> None:
        """A click by someone who is not an approver: refused, logged and counted each time;
        kept, saved and answered only the first time within the hour, so that a flood of
        them neither evicts the audit trail nor rewrites the state file nor fills the
        channel."""
        result = Result(
            Outcome.REFUSED,
            click.fix_id,
            f"<@{click.user}> is not an approver (apply_approvers): nothing changed",
        )
        audit(result, click.user, "slack")
        self.record("slack", "denied")
        if self.ledger.denied(self._attempt(result, click.user, "slack", "denied")):
            self.saved()
            self.respond(click.response_url, outcome_message(reply(result, click.user)))

    def apply_automatically(self, firing: Sequence[Alert]) -> list[Result]:
        """Each firing alert's fix of a kind the policy names, in scope, not tried by the policy
        within the day: applied through the same path as a click, and announced."""
        done = []
        now = self.clock()
        for alert in firing:
            if self.stopping.is_set():
                break
            remedy = automatic_fix(alert.finding.remedies, self.automatic)
            if remedy is None or remedy.fix_id is None or self.offerable(alert) != remedy.fix_id:
                continue
            fix = remedy.fix_id
            if self.ledger.tried(fix, now - AGAIN_AFTER, "policy") or self.ledger.applied(
                fix, now - AGAIN_AFTER
            ):
                continue
            who = f"policy:{GP2_TO_GP3}"
            with self.ledger.holding(alert.finding.resource.resource_id) as mine:
                if not mine:
                    continue
                result = self._apply(
                    fix, who, "policy", self.dry_run, alert.finding.resource.scope, still_gp2
                )
            if result.outcome is not Outcome.ALREADY:
                self.announce(announced(result, alert))
            done.append(result)
        return done

    def _offering(self, fix_id: str) -> Alert | None:
        """The firing alert whose messages offered this fix for its own resource (read while a
        cycle may change the book: tried again where it changed under the reading; none, so
        nothing is applied, at worst)."""
        resource_id = fix_id.partition(":")[0]
        for _ in range(3):
            try:
                return next(
                    (
                        a
                        for a in self.firing()
                        if fix_id in a.offered and a.resource_id == resource_id
                    ),
                    None,
                )
            except RuntimeError:
                continue
        return None

    def _apply(
        self,
        fix_id: str,
        who: str,
        via: str,
        dry_run: bool,
        scope: str,
        still: Callable[[Plan], str | None] = lambda plan: None,
    ) -> Result:
        """The same path as `apply --yes`, on the resource in `scope` alone, recorded: the
        moment AWS accepts the change (the log, the ledger, the state file), then once it
        has been read back. `still`: why the fresh read no longer allows it, if it does not.
        An unexpected error ends this attempt, recorded as failed, never the worker or the
        cycle."""
        accepted: list[Attempt] = []

        def on_accepted(result: Result) -> None:
            attempt = self._attempt(result, who, via)
            self.ledger.record(attempt)
            accepted.append(attempt)
            self.saved()

        try:
            applier = self.applier_for()
            applier.accepted = on_accepted
            applier.stopping = self.stopping
            planned = applier.plan(fix_id, scope)
            if isinstance(planned, Result):
                result = planned
            elif (changed := still(planned)) is not None:
                result = Result(Outcome.REFUSED, fix_id, changed, planned)
            else:
                result = applier.yes(planned, dry_run, self.wait_s)
        except Exception as exc:
            log.exception("apply.failed", fix_id=fix_id)
            outcome = Outcome.UNKNOWN if accepted else Outcome.FAILED
            result = Result(outcome, fix_id, f"unexpected error: {type(exc).__name__}: {exc}")
        audit(result, who, via)
        final = self._attempt(result, who, via)
        if accepted:
            started = final.started or accepted[0].started
            self.ledger.settle(accepted[0], replace(final, started=started))
        else:
            self.ledger.record(final)
        self.record(via, result.outcome.value)
        self.saved()
        return result

    def _finish(self, click: Click, result: Result) -> None:
        """A click's outcome decided before any apply (refused, already so): recorded, and
        said in the channel."""
        audit(result, click.user, "slack")
        self.ledger.record(self._attempt(result, click.user, "slack"))
        self.record("slack", result.outcome.value)
        self.saved()
        self._answer(click, result)

    def _answer(self, click: Click, result: Result) -> None:
        self.respond(click.response_url, outcome_message(reply(result, click.user)))

    def _attempt(self, result: Result, who: str, via: str, outcome: str | None = None) -> Attempt:
        plan = result.plan
        return Attempt(
            result.fix_id,
            who,
            via,
            self.clock(),
            outcome or result.outcome.value,
            result.reason,
            plan.before if plan is not None else {},
            plan.after if plan is not None else {},
            result.state,
            result.started,
            result.settled,
        )


GP2_TO_GP3 = AUTOMATIC[0]
"""A gp2 volume moved to gp3, where gp3 costs no more and its replay over the volume's past
days limited nothing."""


GP3_INCLUDED = {"type": "gp3", "iops": 3000, "throughput": 125}
"""What `gp2-to-gp3` applies, and all it applies: gp3 at the IOPS and throughput its price
includes (3,000 IOPS, 125 MiB/s: Amazon EBS User Guide, "General Purpose SSD volumes"), the
size unchanged."""


def automatic_fix(remedies: Sequence[Remedy], kinds: frozenset[str]) -> Remedy | None:
    """The first fix applied in place, where it is of a kind the policy names and the past
    says it holds; None otherwise. For `gp2-to-gp3`, the fix must be exactly gp3 at its
    included 3,000 IOPS and 125 MiB/s with the size unchanged, read from the fix_id that
    would be applied: more IOPS, more throughput or more storage wait for a person."""
    remedy = next((r for r in remedies if r.fix_id), None)
    if remedy is None or remedy.change is None or remedy.fix_id is None:
        return None
    if GP2_TO_GP3 not in kinds:
        return None
    try:
        asked = Asked.parse(remedy.fix_id, flag="apply")
    except ConfigError:
        return None
    change = remedy.change
    moved = change.before.get("volume_type") == "gp2" and dict(asked.settings) == GP3_INCLUDED
    cheaper = remedy.monthly_delta is not None and remedy.monthly_delta <= 0
    held = remedy.past is not None and remedy.past.held
    return remedy if moved and cheaper and held else None


def still_gp2(plan: Plan) -> str | None:
    """The policy's own conditions on the resource as read afresh: the cycle's picture may be
    minutes old, and a volume an operator moved to io2 since must not be moved back. (The
    target itself was checked where the fix was chosen, `automatic_fix`, on the fix_id this
    plan was read from.)"""
    before = plan.before
    if before.get("volume_type") != "gp2":
        return (
            f"{plan.resource_id} is {before.get('volume_type')} now, not gp2: the policy "
            f"{GP2_TO_GP3} leaves it to a person; nothing changed"
        )
    delta = plan.monthly_delta
    if delta is None or delta > 0:
        return (
            f"{plan.fix_id} costs {plan.cost_text()} as read now: the policy {GP2_TO_GP3} "
            "takes only a move that costs no more; nothing changed"
        )
    return None


def announced(result: Result, alert: Alert) -> list[str]:
    """A fix the policy applied, as the channel reads it: which alert, and what was done."""
    head = f"*Applied by policy ({GP2_TO_GP3})* for `{alert.rule}`: {alert.finding.summary}"
    return [head, *reply(result, f"policy:{GP2_TO_GP3}")[1:]]


def approvals_for(
    settings: Settings,
    scopes: Scopes,
    ledger: Ledger,
    record: Callable[[str, str], None],
    saved: Callable[[], None],
    clock: Callable[[], datetime],
    catalog: Catalog,
    announce: Callable[[list[str]], None],
    firing: Callable[[], Sequence[Alert]] = lambda: (),
) -> Approvals | None:
    """Fixes applied from Slack (a signing secret and approvers, both or neither) or by the
    policy (`apply_automatically`); None where neither is set up."""
    secret, approvers = settings.signing_secret(), frozenset(settings.apply_approvers)
    automatic = frozenset(settings.apply_automatically)
    if secret is None and not approvers and not automatic:
        return None
    if (secret is None) != (not approvers):
        missing = "apply_approvers" if secret is not None else "slack_signing_secret"
        raise ConfigError(
            f"{missing}: Slack approvals need both slack_signing_secret and apply_approvers "
            "(Slack user ids); set the missing one, or neither"
        )
    if settings.state_file is None:
        what = "apply_automatically" if secret is None else "apply_approvers"
        raise ConfigError(
            f"{what}: applying fixes needs state_file: the record of what was applied, the "
            "fixes offered and the Slack requests seen must outlive a restart"
        )
    policy = settings.apply_policy()
    cluster = (
        KubernetesCluster.connect(settings.kubernetes_cluster)
        if settings.apply_through_kubernetes
        else None
    )

    def applier() -> Applier:
        found = [(where, scopes.at(where)) for where in scopes.inventories()]
        return Applier(
            [(where, r.changes) for where, r in found if r.changes is not None],
            catalog,
            policy,
            clock,
            cluster=cluster,
            made=ledger.made,
        )

    return Approvals(
        applier,
        approvers,
        ledger,
        policy,
        scopes.inventories,
        respond,
        record,
        saved,
        clock,
        settings.apply_wait,
        claims=cluster is not None,
        automatic=automatic,
        announce=announce,
        firing=firing,
        dry_run=settings.dry_run,
    )


def report_unsettled(
    ledger: Ledger, announce: Callable[[list[str]], None], saved: Callable[[], None]
) -> None:
    """Changes AWS accepted before a stop whose read-back never ended (a kill, a crash):
    each said in the log and where alerts go, then marked as reported (the cycles read the
    resource as it is now)."""
    unsettled = ledger.unsettled()
    for attempt in unsettled:
        log.warning(
            "apply.unsettled",
            fix_id=attempt.fix_id,
            who=attempt.who,
            via=attempt.via,
            at=attempt.at.isoformat(),
            state=attempt.state,
        )
        announce(
            [
                f"*Applied before a restart*: `{attempt.fix_id}` by {_who(attempt)} at "
                f"{attempt.at:%Y-%m-%d %H:%M} UTC was accepted by AWS (state "
                f"{attempt.state or 'not read'}), and its read-back was cut short: the next "
                "cycles read the resource as it is now"
            ]
        )
        ledger.settle(
            attempt,
            replace(
                attempt, settled=True, reason=f"{attempt.reason}; read-back cut short by a stop"
            ),
        )
    if unsettled:
        saved()


def _who(attempt: Attempt) -> str:
    return f"<@{attempt.who}>" if attempt.via == "slack" else attempt.who


def reply(result: Result, user: str) -> list[str]:
    """The outcome in the channel: the plan where there is one, then what happened."""
    lines = [f"*Apply* `{result.fix_id}`"]
    plan: Plan | None = result.plan
    if plan is not None:
        resource, *labelled = plan.lines()[1:]
        lines.append(resource.strip())
        for line in labelled:
            label, _, value = line.strip().partition(":")
            if label != "past" or plan.past is not None:
                lines.append(f"*{label}:* {value.strip()}")
    match result.outcome:
        case Outcome.APPLIED:
            now = f"; now {described(result.after, plan.kind)}" if result.after and plan else ""
            who = user if user.startswith("policy:") else f"<@{user}>"
            lines.append(f":white_check_mark: applied by {who}: {result.reason}{now}")
        case Outcome.ALREADY:
            lines.append(f":information_source: {result.reason}")
        case Outcome.REFUSED:
            lines.append(f":no_entry: refused: {result.reason}")
        case Outcome.DRY_RUN:
            lines.append(f":test_tube: dry run (the daemon runs with --dry-run): {result.reason}")
        case _:
            lines.append(f":x: {result.outcome.value}: {result.reason}")
    return lines
