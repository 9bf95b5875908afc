"""The guards a fix passes before anything is asked of AWS, each a one-line reason to refuse.

- Scope: only a resource that carries the apply tag (or matches the scope's tag filters).
- AWS's limits: a volume is modified at most four times in a rolling 24 hours, each after the
  previous one completed, and only while it is `in-use` or `available` (Amazon EC2 API
  Reference, ModifyVolume); an RDS instance's storage only while it is `available`. Nothing
  shrinks.
- Cost: a fix adding more than `apply_max_monthly_increase` (or whose price is unknown) needs
  --allow-cost-increase.
- Claims: a CSI claim's volume is changed through its claim, never behind its back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from analyzer.act.plan import Plan
from analyzer.analyze.held import BOUND_AT
from analyzer.collect.inventory import TagFilter, tags_match
from analyzer.model.resources import DbInstance, Modification, Volume

MODIFICATIONS_PER_DAY = 4
"""ModifyVolume: "up to four times within a rolling 24-hour period" (Amazon EC2 API Reference,
ModifyVolume)."""
ROLLING = timedelta(hours=24)
SAME_MODIFICATION = timedelta(minutes=2)
"""A modification this analyzer recorded this close to one AWS reports is that one."""
MODIFIABLE_VOLUME_STATES = frozenset({"in-use", "available"})
MODIFIABLE_DB_STATES = frozenset({"available"})
UNDER_WAY = frozenset({"modifying", "optimizing"})


@dataclass(frozen=True, slots=True)
class Policy:
    """What the operator allows: the tag that opts a resource in, the filters that widen the
    scope, and the monthly increase a fix may add unasked."""

    tag: str
    scope: Sequence[str] = ()
    max_monthly_increase: float = 50.0

    @property
    def tag_pair(self) -> tuple[str, str]:
        key, _, value = self.tag.partition("=")
        return key.strip(), value.strip()

    def allows(self, tags: Mapping[str, str]) -> bool:
        key, value = self.tag_pair
        found = dict(tags)
        if found.get(key) == value:
            return True
        filters = [TagFilter.parse(t) for t in self.scope]
        return bool(filters) and tags_match(found, filters)


def out_of_scope(plan: Plan, policy: Policy) -> str | None:
    resource = plan.resource
    if policy.allows(dict(resource.tags)):
        return None
    key, value = policy.tag_pair
    if isinstance(resource, Volume):
        how = (
            f"aws ec2 create-tags --region {resource.region} --resources {resource.volume_id} "
            f"--tags Key={key},Value={value}"
        )
    else:
        how = (
            f"aws rds add-tags-to-resource --resource-name <its ARN> --tags Key={key},Value={value}"
        )
    widened = f" or match apply_scope ({', '.join(policy.scope)})" if policy.scope else ""
    return (
        f"{plan.resource_id} is outside the apply scope: it must carry the tag {key}={value}"
        f"{widened} ({how})"
    )


def shrinks(plan: Plan) -> str | None:
    before, after = plan.before, plan.after
    for field in ("size_gib", "allocated_gib"):
        if field in after and after[field] < before.get(field, 0):
            return (
                f"{plan.resource_id} has {before[field]:,} GiB: storage grows, never shrinks "
                f"(asked {after[field]:,} GiB)"
            )
    return None


def volume_limits(volume: Volume, now: datetime, also: Sequence[datetime] = ()) -> str | None:
    """AWS's own limits on modifying this volume now, read from its modifications and `also`,
    the starts of those this analyzer made (DescribeVolumesModifications reports only a
    volume's most recent modification: Amazon EC2 API Reference; AWS refuses the fifth all
    the same, and that refusal is an AWS error)."""
    if volume.state not in MODIFIABLE_VOLUME_STATES:
        return (
            f"{volume.volume_id} is {volume.state}: AWS modifies a volume only in-use or available"
        )
    mods: list[Modification] = sorted(volume.modifications, key=lambda m: m.started, reverse=True)
    if mods and mods[0].state in UNDER_WAY:
        done = f", {mods[0].progress} %" if mods[0].progress is not None else ""
        return (
            f"{volume.volume_id}'s modification to {mods[0].target or 'its target'} started "
            f"{mods[0].started:%Y-%m-%d %H:%M} UTC is still {mods[0].state}{done}: AWS takes the "
            "next once it has completed"
        )
    reported = [m.started for m in mods if m.state != "failed"]
    ours = [t for t in also if all(abs(t - r) > SAME_MODIFICATION for r in reported)]
    recent = sorted((t for t in reported + ours if now - t < ROLLING), reverse=True)
    if len(recent) >= MODIFICATIONS_PER_DAY:
        oldest = min(recent[:MODIFICATIONS_PER_DAY])
        return (
            f"{volume.volume_id} was modified {len(recent)} times in the last 24 h (AWS allows "
            f"{MODIFICATIONS_PER_DAY}): the next becomes possible at "
            f"{oldest + ROLLING:%Y-%m-%d %H:%M} UTC"
        )
    return None


def db_limits(db: DbInstance) -> str | None:
    if db.pending:
        return (
            f"{db.db_instance_id} has changes pending for its maintenance window "
            f"({', '.join(db.pending)}): a storage change applied now would apply them too; "
            "apply or cancel them first"
        )
    if db.state not in MODIFIABLE_DB_STATES:
        return (
            f"{db.db_instance_id} is {db.state}: RDS changes storage only while it is available "
            "(and six hours after its last storage change)"
        )
    return None


def busier(plan: Plan) -> str | None:
    """A cut (`Plan.cuts`) is applied only where the resource's past, read afresh, stays below
    the target's limits: one that got busier since the cut was offered is refused with its new
    peak, and one whose past could not be read is refused too."""
    if not plan.cuts:
        return None
    if plan.busiest is None:
        why = f" ({plan.past_note})" if plan.past_note else ""
        return (
            f"{plan.fix_id} provisions less than {plan.resource_id} has, and its past could not "
            f"be read{why}: a cut is applied only where its past proves it"
        )
    above = plan.busiest.above()
    if above is None:
        return None
    return (
        f"{plan.resource_id} is busier than the cut allows: its busiest minute in the last "
        f"{plan.busiest.days:.0f} days reached {above} (refused at {BOUND_AT:.0%} of a limit, "
        "where the cap rules warn): run `ebs-analyzer savings` again for a cut that carries it"
    )


def too_dear(plan: Plan, policy: Policy, allowed: bool) -> str | None:
    if allowed:
        return None
    delta = plan.monthly_delta
    ceiling = f"${policy.max_monthly_increase:,.2f}/month"
    if delta is None:
        return (
            f"the price of {plan.fix_id} is unknown here: pass --allow-cost-increase to apply it "
            f"above apply_max_monthly_increase ({ceiling})"
        )
    if delta > policy.max_monthly_increase:
        return (
            f"{plan.fix_id} adds {plan.cost_text()}, above apply_max_monthly_increase "
            f"({ceiling}): pass --allow-cost-increase to apply it"
        )
    return None


def refusal(
    plan: Plan, policy: Policy, now: datetime, allow_cost: bool, made: Sequence[datetime] = ()
) -> str | None:
    """The first guard that refuses the plan, in one line; None where every guard passes.
    `made`: the starts of the modifications this analyzer made of the resource lately."""
    resource = plan.resource
    reasons = (
        out_of_scope(plan, policy),
        shrinks(plan),
        volume_limits(resource, now, made) if isinstance(resource, Volume) else db_limits(resource),
        too_dear(plan, policy, allow_cost),
        busier(plan),
    )
    return next((reason for reason in reasons if reason is not None), None)
