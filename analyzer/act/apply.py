"""A fix applied: named by its `fix_id`, read afresh, checked, confirmed, asked of AWS once, and
read back. Every attempt ends in one `Result` and one `apply.attempt` log line, whatever its
outcome."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

import structlog

from analyzer.act.claims import claim_refusal, patch_of, program_of
from analyzer.act.cluster import Cluster, ClusterError
from analyzer.act.guards import Policy, refusal
from analyzer.act.plan import Changeable, Plan, plan_of
from analyzer.analyze.catalog import Catalog
from analyzer.analyze.sold import Asked, configuration, described
from analyzer.collect.changes import Changer
from analyzer.errors import AwsAccessError, AwsCallError, ConfigError
from analyzer.model.resources import DbInstance, Modification, Volume

log = structlog.get_logger(__name__)


class Outcome(StrEnum):
    APPLIED = "applied"
    ALREADY = "already"
    """The resource has the target already, or is being modified to it: nothing was called."""
    DRY_RUN = "dry_run"
    """AWS said the call would succeed; nothing changed."""
    UNCONFIRMED = "unconfirmed"
    """Neither --yes nor a `y` on a terminal: nothing changed."""
    REFUSED = "refused"
    """A guard refused it before anything was asked of AWS."""
    INVALID = "invalid"
    """A malformed fix, a target AWS does not sell, a resource that does not exist."""
    FAILED = "failed"
    """AWS answered with an error (a refused permission, a limit of its own)."""
    UNREACHABLE = "unreachable"
    """AWS could not be reached to read the resource (no credentials, no connection): nothing
    was asked of it, as `once` says it."""
    UNKNOWN = "unknown"
    """AWS's answer was lost (a timeout, a server error) and the resource could not be read
    back: it may have been modified."""

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self]


EXIT_CODES = {
    Outcome.APPLIED: 0,
    Outcome.ALREADY: 0,
    Outcome.DRY_RUN: 0,
    Outcome.UNCONFIRMED: 3,
    Outcome.REFUSED: 3,
    Outcome.INVALID: 2,
    Outcome.FAILED: 1,
    Outcome.UNREACHABLE: 3,
    Outcome.UNKNOWN: 1,
}


@dataclass(frozen=True, slots=True)
class Result:
    outcome: Outcome
    fix_id: str
    reason: str = ""
    """One line: why it was refused, failed or not confirmed; what was done otherwise."""
    plan: Plan | None = None
    state: str | None = None
    """The modification's state as last read: modifying, optimizing, completed."""
    after: dict[str, Any] = field(default_factory=dict)
    """The resource's configuration read back after the change."""
    started: datetime | None = None
    """When the modification started, as AWS reported it."""
    settled: bool = True
    """False for the record written the moment AWS accepted the change, before its
    read-back."""

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code

    @property
    def went_ahead(self) -> bool:
        """Applied, already so, or a dry run that would succeed: nothing to fix."""
        return self.outcome in (Outcome.APPLIED, Outcome.ALREADY, Outcome.DRY_RUN)

    def said(self) -> str:
        """The outcome in one line: `applied: modification optimizing; now gp3 50 GiB, …`,
        `refused: …`."""
        label = {
            Outcome.ALREADY: "already so",
            Outcome.DRY_RUN: "dry run",
            Outcome.UNCONFIRMED: "not applied",
            Outcome.INVALID: "error",
            Outcome.FAILED: "error",
            Outcome.UNKNOWN: "error",
            Outcome.UNREACHABLE: "error",
        }.get(self.outcome, self.outcome.value)
        now = ""
        if self.after and self.plan is not None:
            now = f"; now {described(self.after, self.plan.kind)}"
        return f"{label}: {self.reason}{now}"


@dataclass
class Applier:
    """Applies fixes in the regions `changers` reach (by scope)."""

    changers: Sequence[tuple[str, Changer]]
    catalog: Catalog
    policy: Policy
    clock: Callable[[], datetime]
    sleep: Callable[[float], None] = time.sleep
    past: Callable[[Plan], Plan] | None = None
    """Adds the target's replay over the resource's last days to a plan; None: not read."""
    cluster: Cluster | None = None
    """Where a claim's volume is changed through its claim; None: such a fix is refused with
    the kubectl commands that make it."""
    made: Callable[[str], Sequence[datetime]] = lambda resource_id: ()
    """When this analyzer's modifications of a resource started lately: AWS reports only a
    volume's latest modification, and its limit counts them all."""
    accepted: Callable[[Result], None] = lambda result: None
    """Told the moment AWS accepts a change, before it is read back: where the daemon writes
    its record first."""
    stopping: threading.Event = field(default_factory=threading.Event)
    """Set when the process stops: a read-back under way ends at its next reading, so that
    the outcome is recorded and said within the stop's grace."""

    def plan(self, fix_id: str, scope: str | None = None) -> Plan | Result:
        """The fix on its resource as it is now, or the Result that ends the attempt. With
        `scope`, the resource is looked for there and nowhere else: a click applies to the
        account and region of the alert that offered it, never to a namesake elsewhere."""
        try:
            asked = Asked.parse(fix_id.strip(), flag="apply")
        except ConfigError as exc:
            return Result(Outcome.INVALID, fix_id, str(exc))
        rid = asked.resource_id
        cannot = sorted(set(asked.settings) - APPLIED_KEYS)
        if cannot:
            return Result(
                Outcome.INVALID,
                fix_id,
                f"apply {fix_id}: {', '.join(f'{k}=' for k in cannot)} cannot be applied: apply "
                f"modifies one resource in place ({', '.join(sorted(APPLIED_KEYS))}); a striped "
                "set is new volumes built and copied to by hand (backtest --what-if weighs it)",
            )
        if rid.startswith("i-"):
            return Result(Outcome.REFUSED, fix_id, _instance_refusal(asked))
        try:
            found = self._find(rid, scope)
        except (AwsAccessError, AwsCallError) as exc:
            unreached = isinstance(exc, AwsAccessError) and exc.code is None
            return Result(Outcome.UNREACHABLE if unreached else Outcome.FAILED, fix_id, str(exc))
        if not found:
            where = scope or ", ".join(place for place, _ in self.changers) or "no region"
            kind = "volume" if rid.startswith("vol-") else "RDS instance"
            return Result(Outcome.INVALID, fix_id, f"apply {fix_id}: no {kind} {rid} in {where}")
        if len(found) > 1:
            places = ", ".join(scope for scope, _ in found)
            return Result(
                Outcome.INVALID,
                fix_id,
                f"apply {fix_id}: {rid} is in {places}: name one (--region, or the accounts "
                "in --config)",
            )
        [(scope, resource)] = found
        try:
            plan = plan_of(asked, scope, resource, self.catalog)
        except ConfigError as exc:
            return Result(Outcome.INVALID, fix_id, str(exc))
        if self.past is not None and not plan.already_so:
            plan = self.past(plan)
        return plan

    def _find(self, rid: str, only: str | None = None) -> list[tuple[str, Changeable]]:
        """Every place the id names a volume (or an RDS instance): an RDS id is unique in one
        account and region only. A place that cannot be read fails the search only where no
        other has the resource. `only`: that place alone."""
        found: list[tuple[str, Changeable]] = []
        failed: AwsAccessError | AwsCallError | None = None
        for scope, changer in self.changers:
            if only is not None and scope != only:
                continue
            try:
                resource: Changeable | None = (
                    changer.volume(rid) if rid.startswith("vol-") else None
                ) or changer.db_instance(rid)
            except (AwsAccessError, AwsCallError) as exc:
                failed = failed or exc
                continue
            if resource is not None:
                found.append((scope, resource))
        if not found and failed is not None:
            raise failed
        return found

    def check(self, plan: Plan, allow_cost: bool) -> Result | None:
        """The Result that ends the attempt before anything is asked of AWS: already so, or
        refused by a guard; None where it may go ahead."""
        if plan.already_so:
            return Result(
                Outcome.ALREADY,
                plan.fix_id,
                f"{plan.resource_id} is already so: nothing to do",
                plan,
            )
        under_way = _under_way_to(plan)
        if under_way is not None:
            return Result(
                Outcome.ALREADY,
                plan.fix_id,
                f"{plan.resource_id} is being modified to it already ({under_way.state}, started "
                f"{under_way.started:%Y-%m-%d %H:%M} UTC): nothing to do",
                plan,
                under_way.state,
            )
        reason = refusal(plan, self.policy, self.clock(), allow_cost, self.made(plan.resource_id))
        if reason is None:
            reason = claim_refusal(plan, self.cluster)
        if reason is not None:
            return Result(Outcome.REFUSED, plan.fix_id, reason, plan)
        return None

    def yes(self, plan: Plan, dry_run: bool, wait_s: float) -> Result:
        """`apply --yes`: the plan checked, then, where nothing ended the attempt, applied;
        never above the cost ceiling."""
        return self.check(plan, allow_cost=False) or self.apply(plan, dry_run, wait_s)

    def apply(self, plan: Plan, dry_run: bool, wait_s: float) -> Result:
        """Asks AWS for the change once (DryRun where `dry_run`), then reads the volume's
        modification until it is optimizing or completed, at most `wait_s`. The call is never
        sent twice: where its answer is lost (a timeout, a server error), the resource is read
        back to learn what AWS did."""
        changer = dict(self.changers)[plan.scope]
        target = plan.change.after
        if self.cluster is not None and program_of(plan) is not None:
            return self._through_claim(plan, self.cluster, changer, dry_run, wait_s)
        if dry_run and not isinstance(plan.resource, Volume):
            return Result(
                Outcome.DRY_RUN,
                plan.fix_id,
                "RDS's ModifyDBInstance has no dry run: every guard passed, nothing was asked "
                "of AWS",
                plan,
            )
        try:
            if isinstance(plan.resource, Volume):
                answered = changer.modify_volume(plan.resource_id, target, dry_run)
            else:
                answered = changer.modify_db_storage(plan.resource_id, target)
        except (AwsAccessError, AwsCallError) as exc:
            if dry_run or not answer_lost(exc):
                return Result(Outcome.FAILED, plan.fix_id, str(exc), plan)
            return self._after_lost_answer(plan, changer, exc, wait_s)
        if answered.dry_run:
            return Result(
                Outcome.DRY_RUN, plan.fix_id, "AWS says the change would succeed (DryRun)", plan
            )
        mod = answered.modification
        started = mod.started if mod is not None else None
        state = mod.state if mod is not None else None
        self._accepted(plan, state, started)
        return self._read_back(plan, changer, state, wait_s)

    def _accepted(self, plan: Plan, state: str | None, started: datetime | None) -> None:
        """AWS took the change: said at once (the log, and `accepted`, the daemon's ledger and
        state file), before the read-back, so that a kill during it loses no record."""
        log.info(
            "apply.accepted",
            fix_id=plan.fix_id,
            resource=plan.resource_id,
            state=state,
            started=started.isoformat() if started is not None else None,
        )
        self.accepted(
            Result(
                Outcome.APPLIED,
                plan.fix_id,
                "accepted by AWS; being read back",
                plan,
                state,
                started=started,
                settled=False,
            )
        )

    def _after_lost_answer(
        self,
        plan: Plan,
        changer: Changer,
        error: AwsAccessError | AwsCallError,
        wait_s: float,
    ) -> Result:
        """The modifying call's answer never came (or came as a server error): AWS may have
        acted. The resource is read back: a modification to the target that the plan's fresh
        read did not show is this one (decided on AWS's own records, whatever this machine's
        clock says), then read back as any other; none is a failure; a resource that cannot
        be read says the outcome is unknown."""
        try:
            if isinstance(plan.resource, Volume):
                volume = changer.volume(plan.resource_id)
                mod = _latest(volume)
                ours = mod is not None and _made_since(mod, plan)
                started, state = (mod.started, mod.state) if ours and mod else (None, None)
            else:
                db = changer.db_instance(plan.resource_id)
                ours = db is not None and _asked_of_rds(db, plan)
                started, state = None, (db.state if ours and db is not None else None)
        except (AwsAccessError, AwsCallError) as exc:
            log.warning("apply.unknown", fix_id=plan.fix_id, error=str(error), read=str(exc))
            return Result(
                Outcome.UNKNOWN,
                plan.fix_id,
                f"{error}; and the resource could not be read back ({exc}): it may have been "
                "modified; read it before trying again",
                plan,
            )
        if not ours:
            return Result(Outcome.FAILED, plan.fix_id, f"{error} (read back: not modified)", plan)
        log.warning("apply.answer_lost", fix_id=plan.fix_id, error=str(error))
        self._accepted(plan, state, started)
        read = self._read_back(plan, changer, state, wait_s)
        return replace(read, reason=f"{read.reason} (AWS's answer was lost: {error})")

    def _through_claim(
        self, plan: Plan, cluster: Cluster, changer: Changer, dry_run: bool, wait_s: float
    ) -> Result:
        """The class created where the target needs one, the claim patched; the driver then
        modifies the volume, read back as `apply` reads its own modification."""
        program = program_of(plan) or {}
        claim = f"PVC {program['namespace']}/{program['persistentvolumeclaim']}"
        patch = patch_of(program)
        try:
            bound = cluster.claim_volume(program["namespace"], program["persistentvolumeclaim"])
            if bound != plan.resource_id:
                return Result(
                    Outcome.REFUSED,
                    plan.fix_id,
                    f"{claim} is bound to {bound or 'no EBS volume'}, not {plan.resource_id} "
                    "(the volume's claim tags say otherwise): nothing changed",
                    plan,
                )
            manifest = program.get("volume_attributes_class")
            if manifest:
                cluster.ensure_class(manifest, dry_run)
            cluster.patch_claim(
                program["namespace"], program["persistentvolumeclaim"], patch, dry_run
            )
        except ClusterError as exc:
            return Result(Outcome.FAILED, plan.fix_id, str(exc), plan)
        said = json.dumps(patch["spec"])
        if dry_run:
            return Result(
                Outcome.DRY_RUN,
                plan.fix_id,
                f"the API server accepts {claim} patched with {said} (dryRun=All)",
                plan,
            )
        # Accepted by the API server: recorded before the driver is waited for.
        self._accepted(plan, None, None)
        read = self._read_back(plan, changer, None, wait_s)
        state = read.state if read.state is not None else "requested of the EBS CSI driver"
        return replace(read, reason=f"{claim} patched with {said}; modification {state}")

    def _read_back(
        self,
        plan: Plan,
        changer: Changer,
        state: str | None,
        wait_s: float,
    ) -> Result:
        """The resource read again until the change shows, at most `wait_s`: the volume's
        modification this fix made (`_made_since`, never an older one), an RDS instance's
        storage as asked."""
        deadline = time.monotonic() + wait_s
        after: dict[str, Any] = {}
        started: datetime | None = None
        while True:
            try:
                if isinstance(plan.resource, Volume):
                    volume = changer.volume(plan.resource_id)
                    mod = _latest(volume)
                    if mod is not None and _made_since(mod, plan):
                        state, started = mod.state, mod.started
                    after = _read(volume) if volume is not None else after
                    done = state in ("optimizing", "completed", "failed")
                else:
                    db = changer.db_instance(plan.resource_id)
                    after = _read(db) if db is not None else after
                    state = db.state if db is not None else state
                    done = all(after.get(k) == v for k, v in plan.after.items())
            except (AwsAccessError, AwsCallError) as exc:
                # Asked and accepted: the change stands; only the reading back failed.
                return Result(
                    Outcome.APPLIED,
                    plan.fix_id,
                    f"asked of AWS; its state could not be read back: {exc}",
                    plan,
                    state,
                    started=started,
                )
            cut = self.stopping.is_set()
            if done or cut or time.monotonic() >= deadline:
                break
            self.sleep(min(2.0, max(deadline - time.monotonic(), 0.0)))
        if state == "failed":
            return Result(
                Outcome.FAILED,
                plan.fix_id,
                "AWS reports the modification failed",
                plan,
                state,
                after,
                started,
            )
        said = f"modification {state}" if isinstance(plan.resource, Volume) else f"RDS {state}"
        said = said if state else "requested"
        if cut and not done:
            said += " (the read-back was cut short by a stop)"
        return Result(
            Outcome.APPLIED,
            plan.fix_id,
            said,
            plan,
            state,
            after,
            started,
        )


APPLIED_KEYS = frozenset({"type", "size", "iops", "throughput"})
"""What `apply` carries out: a fix's keys that ModifyVolume or ModifyDBInstance set. Any
other key `--what-if` knows (`stripes=`) is refused as bad input, never dropped."""


def _latest(volume: Volume | None) -> Modification | None:
    if volume is None or not volume.modifications:
        return None
    return max(volume.modifications, key=lambda m: m.started)


def _read(resource: Changeable) -> dict[str, Any]:
    """The configuration read back, the fields AWS gave."""
    return {k: v for k, v in configuration(resource).items() if v is not None}


def _under_way_to(plan: Plan) -> Modification | None:
    """A modification under way whose target is this fix's."""
    if not isinstance(plan.resource, Volume):
        return None
    mod = _latest(plan.resource)
    if mod is None or mod.state not in ("modifying", "optimizing"):
        return None
    return mod if _same_target(mod, plan) else None


def _made_since(mod: Modification, plan: Plan) -> bool:
    """Whether a modification is the one this fix asked for where AWS did not say which it
    started (its answer lost, or the CSI driver making it): one to the target that the
    plan's fresh read did not show, judged on AWS's own records rather than on this
    machine's clock."""
    earlier = plan.resource.modifications if isinstance(plan.resource, Volume) else ()
    return mod.started not in {m.started for m in earlier} and _same_target(mod, plan)


def _same_target(mod: Modification, plan: Plan) -> bool:
    """Whether the modification's target is this fix's, in every field the fix sets (a gp2
    target's IOPS are its baseline, no setting of its own)."""
    target = dict(mod.target_fields)
    kind = plan.after.get("volume_type")
    ignored = {"iops"} if kind not in ("gp3", "io1", "io2") else set()
    if kind != "gp3":
        ignored.add("throughput_mibps")
    return all(target.get(k) == v for k, v in plan.after.items() if k not in ignored)


def _asked_of_rds(db: DbInstance, plan: Plan) -> bool:
    """Whether an RDS instance shows the storage change asked: being modified, or already so
    (RDS reports no start time, so a change under way to the target is taken as this one)."""
    config = _read(db)
    if all(config.get(k) == v for k, v in plan.after.items()):
        return True
    return db.state in RDS_CHANGING and bool(db.pending)


RDS_CHANGING = frozenset({"modifying", "storage-optimization", "storage-initialization"})
SERVER_ERRORS = frozenset(
    {"InternalError", "InternalFailure", "ServiceUnavailable", "Unavailable", "RequestTimeout"}
)
"""AWS error codes of a 5xx answer: the request may have been carried out (Amazon EC2 API
Reference, "Server error codes")."""


def answer_lost(error: AwsAccessError | AwsCallError) -> bool:
    """Whether a modifying call's error leaves its outcome unknown: no answer (a timeout, a
    connection cut; no AWS error code) or a server error. A client error (4xx) is AWS's
    refusal: nothing was done."""
    return error.code is None or error.code in SERVER_ERRORS


def _instance_refusal(asked: Asked) -> str:
    rid, kind = asked.resource_id, asked.settings.get("type", "TYPE")
    return (
        f"{rid}: an instance type change needs a stop and start (or a node group's rollout) and "
        f"is not applied here; run: aws ec2 stop-instances --instance-ids {rid}; aws ec2 "
        f"modify-instance-attribute --instance-id {rid} --instance-type Value={kind}; aws ec2 "
        f"start-instances --instance-ids {rid}"
    )


def audit(result: Result, who: str, via: str) -> None:
    """The attempt, applied or not, as one structured log line."""
    plan = result.plan
    log.info(
        "apply.attempt",
        who=who,
        via=via,
        fix_id=result.fix_id,
        outcome=result.outcome.value,
        reason=result.reason,
        before=plan.before if plan is not None else None,
        target=plan.after if plan is not None else None,
        after=result.after or None,
        state=result.state,
        monthly_delta=plan.monthly_delta if plan is not None else None,
    )
