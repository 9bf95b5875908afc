"""What the analysis concludes: findings, their severity, the next bottleneck, the fixes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from analyzer.model.metrics import Measure
from analyzer.model.resources import ResourceRef, ResourceType
from analyzer.model.units import Unit, format_rate

HOLDS_UNTIL = "holds_until_percent"
"""In a credit finding's evidence: its alert holds, condition gone or not, while the bucket's
balance stays below this percent (a bucket hovering low between bursts is one alert)."""
TREND_HORIZON = "horizon_seconds"
"""A trend finding's evidence: how far ahead it speaks (an exhaustion within this follows it)."""
RATE_BEFORE_EMPTY = "rate_before_empty"
"""In an exhausted bucket's evidence: the mean rate over the last minutes it had credits (the
demand a fix is sized for), or None where no cycle has seen them."""
HOLDS_BALANCE = "holds_balance"
"""Beside `HOLDS_UNTIL`: the balance measure read against it (an instance has two buckets)."""


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.CRITICAL: 2}


class Bottleneck(StrEnum):
    BURST_CREDITS = "burst_credits"
    VOLUME_IOPS = "volume_iops"
    VOLUME_THROUGHPUT = "volume_throughput"
    INSTANCE_IOPS = "instance_iops"
    INSTANCE_THROUGHPUT = "instance_throughput"
    INSTANCE_BURST_CREDITS = "instance_burst_credits"
    MEMORY = "memory"
    LOG_VOLUME_IOPS = "log_volume_iops"
    """An RDS instance's Dedicated Log Volume, at its own IOPS limit."""
    LOG_VOLUME_THROUGHPUT = "log_volume_throughput"
    IMPAIRED = "impaired"
    """Not a limit: AWS reports the storage's I/O stopped (a volume's stalled-I/O check, an
    instance's attached-EBS status check)."""

    @property
    def owner(self) -> ResourceType:
        """Whose limit it is, and so the unit its rates read in: a volume's (or an RDS
        instance's storage) in MiB/s, an instance's (or an RDS class's) EBS in MB/s."""
        instance = self.value.startswith("instance")
        return ResourceType.INSTANCE if instance else ResourceType.VOLUME

    @property
    def is_credits(self) -> bool:
        return self in (Bottleneck.BURST_CREDITS, Bottleneck.INSTANCE_BURST_CREDITS)


_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A read-only copy; one frozen already (a finding `replace`d, which runs this again) is
    kept, not copied, and every empty one is the same."""
    if isinstance(mapping, MappingProxyType):
        return mapping
    return MappingProxyType(dict(mapping)) if mapping else _EMPTY


@dataclass(frozen=True, slots=True)
class NextBottleneck:
    """The limit that would cap the workload once the finding's own limit is lifted."""

    bottleneck: Bottleneck
    limit: float
    unit: Unit
    resource_id: str
    headroom: float | None
    """How many times today's rate the workload could grow before it hits this limit."""
    named: str | None = None
    """The resource as a report names it where the id alone says less: a claim's volume by
    its claim first (`PVC db/data-0 (vol-…)`), a cluster node by its node group."""

    def text(self) -> str:
        """`volume iops 3,000 IOPS on vol-… (at 2.00× today's rate)`, in the limit's own unit."""
        limit = format_rate(self.limit, self.unit, self.bottleneck.owner)
        grow = f" (at {self.headroom:.2f}× today's rate)" if self.headroom is not None else ""
        on = self.named or self.resource_id
        return f"{self.bottleneck.value.replace('_', ' ')} {limit} on {on}{grow}"


@dataclass(frozen=True, slots=True)
class Change:
    """What a remedy changes, for a program to read: the resource, its configuration before,
    and after (with the limits it then has)."""

    resource_type: ResourceType
    resource_id: str
    before: Mapping[str, Any]
    after: Mapping[str, Any]

    def __post_init__(self) -> None:
        object.__setattr__(self, "before", _frozen(self.before))
        object.__setattr__(self, "after", _frozen(self.after))

    def as_dict(self) -> dict[str, Any]:
        return {
            "resource_type": self.resource_type.value,
            "resource_id": self.resource_id,
            "from": dict(self.before),
            "to": dict(self.after),
        }


class RemedyKind(StrEnum):
    """What a fix does to the resource: what the advice reads where it words and orders fixes
    (the action says the same in words)."""

    MODIFY = "modify"
    """The resource modified in place: ModifyVolume, or ModifyDBInstance for its storage."""
    PAST_CEILING = "past_ceiling"
    """The volume modified to io2, past its type's own ceiling: its own limits no longer bind."""
    STRIPE = "stripe"
    """A new set of volumes striped together, the data copied over: the volume is not modified."""
    STOPGAP = "stopgap"
    """Now, to buy time: a modification that refills a bucket while the lasting fix waits."""
    INSTANCE = "instance"
    """Another instance type or DB class: a stop and start, or a restart."""
    BOTH = "both"
    """The volume and its instance changed together."""


APPLIABLE = frozenset({RemedyKind.MODIFY, RemedyKind.PAST_CEILING, RemedyKind.STOPGAP})
"""Fixes that modify one volume, or one RDS instance's storage, in place: those `apply` takes."""

FIX_FIELDS = (
    ("type", "volume_type", "storage_type"),
    ("size", "size_gib", "allocated_gib"),
    ("iops", "iops", "iops"),
    ("throughput", "throughput_mibps", "throughput_mibps"),
)
"""A fix's keys (those `backtest --what-if` takes) and the fields of a volume's change and an
RDS instance's that they set."""


def fix_id(change: Change) -> str | None:
    """The change as `backtest --what-if` and `apply` name it, the same for the same target:
    `vol-0abc:type=gp3,iops=3000,throughput=125`. The type always; the size where it changes;
    provisioned IOPS and throughput where the target has them. None for an instance's type."""
    if change.resource_type is ResourceType.VOLUME:
        column = 1
    elif change.resource_type is ResourceType.DB_INSTANCE:
        column = 2
    else:
        return None
    after, before = change.after, change.before
    kind = after.get(FIX_FIELDS[0][column])
    if not isinstance(kind, str) or not kind.isalnum():
        return None
    said = [f"type={kind}"]
    for key, *names in FIX_FIELDS[1:]:
        value = after.get(names[column - 1])
        if value is None or (key == "size" and value == before.get(names[column - 1])):
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            return None  # not a configuration AWS could be asked for
        said.append(f"{key}={int(value)}")
    return f"{change.resource_id}:{','.join(said)}"


def delta_text(delta: float, currency: str = "USD") -> str:
    """A monthly cost against today's: `+$12.50/month`, `−$1.00/month`, `±$0.00/month`."""
    symbol = "$" if currency == "USD" else f"{currency} "
    sign = "+" if delta > 0 else "−" if delta < 0 else "±"
    return f"{sign}{symbol}{abs(delta):,.2f}/month"


def past_span(days: float) -> str:
    """How much past a figure was read over: `14 days`, `4 h`, `20 min`."""
    hours = days * 24
    if days >= 1:
        return f"{days:.0f} days"
    return f"{hours:.0f} h" if hours >= 1 else f"{hours * 60:.0f} min"


@dataclass(frozen=True, slots=True)
class PastFit:
    """A fix replayed over the resource's own past, minute by minute (`analyze/held.py`): the
    minutes it would have held the workload below its demand."""

    days: float
    """The past replayed: fourteen days, or what history there is."""
    minutes_limited: int
    limited_days: int = 0
    worst_day: date | None = None
    """The UTC day with the most minutes limited; None where none was."""
    floor: bool = False
    """Part of the demand counted was held back then, and counts at the rate before the limit
    bound: the minutes are at least these."""
    bought_s: float | None = None
    """A fix to buy time: how much later than the resource as it is it would have begun to
    limit the workload, on the day the resource as it is was limited most."""
    days_spanned: int = 0
    """The UTC days the replayed past touches: 15 for fourteen days that start after midnight.
    `limited_days` counts among these; 0 where it was not kept (a state file written before),
    then read as the whole days of `days`."""

    @property
    def of_days(self) -> int:
        """The days `limited_days` is one of: those the past touches, never fewer."""
        return max(self.days_spanned or round(self.days), self.limited_days)

    @property
    def held(self) -> bool:
        return self.minutes_limited == 0

    def text(self) -> str:
        """`would have limited 0 min of the last 14 days`; `… 37 min, on 3 of 14 days`."""
        whole = self.days >= 1
        span = past_span(self.days)
        at_least = "at least " if self.floor and not self.held else ""
        said = f"would have limited {at_least}{self.minutes_limited:,} min"
        if self.held or not whole:
            said += f" of the last {span}"
        else:
            said += f", on {self.limited_days} of {self.of_days} days"
        if self.floor:
            # Zero is no floor: it holds at the rates counted, held-back ones at their rate
            # before.
            floor = "" if self.held else "a floor: "
            said += f" ({floor}held-back demand counted at its rate before)"
        if self.bought_s is not None:
            said += f", buying {self.bought_s / 60:,.0f} min on the worst day"
        return said


@dataclass(frozen=True, slots=True)
class Remedy:
    """One way to lift a finding's limit, with the resource's monthly price after it."""

    action: str
    monthly_cost: float | None = None
    monthly_delta: float | None = None
    currency: str = "USD"
    change: Change | None = None
    """The same fix in fields a script can act on; None where it is advice in words only."""
    also: tuple[Change, ...] = ()
    """A joint fix's other changes (the instance, where `change` is the volume)."""
    kind: RemedyKind | None = field(kw_only=True)
    """None only where it was read back from a state file written before fixes kept their
    kind."""
    past: PastFit | None = field(default=None, kw_only=True)
    """The fix replayed over the resource's own past; None where there is no history."""

    @property
    def changes(self) -> tuple[Change, ...]:
        return ((self.change,) if self.change is not None else ()) + self.also

    @property
    def fix_id(self) -> str | None:
        """The fix as `apply` takes it, where it modifies one volume or one RDS instance's
        storage in place; None for another type, a striped set, a joint fix or words only."""
        if self.kind not in APPLIABLE or self.change is None or self.also:
            return None
        return fix_id(self.change)

    def text(self) -> str:
        """`Move to gp3 …: −$1.00/month`: the action and what it costs, or "unpriced"; and
        what it would have done over the past, where that was replayed."""
        past = f"; {self.past.text()}" if self.past is not None else ""
        return f"{self.action}: {self.cost_text()}{past}"

    def cost_text(self) -> str:
        """`+$12.50/month` against today; `$2,439.31/month` where today's price is unknown;
        `unpriced` where the change's price is unknown: never a guess."""
        if self.monthly_delta is not None:
            return delta_text(self.monthly_delta, self.currency)
        symbol = "$" if self.currency == "USD" else f"{self.currency} "
        if self.monthly_cost is not None:
            return f"{symbol}{self.monthly_cost:,.2f}/month"
        return "unpriced"


@dataclass(frozen=True, slots=True)
class Credit:
    """What a credit finding says of its bucket, typed for those who weigh it after its rule:
    the alert book (how long its alert holds, what cleared it), the advice (the demand a fix is
    sized for) and the replay (how far ahead a trend speaks). The rule writes the same values
    into the finding's evidence, for the report."""

    balance: Measure
    """The bucket's balance measure."""
    balance_percent: float | None = None
    """The balance the finding saw."""
    holds_until_percent: float | None = None
    """Its alert holds, condition gone or not, while the balance stays below this (a bucket
    hovering low between bursts is one alert); None where it does not hold."""
    empty: bool = False
    """The bucket is empty: the workload is pinned at its baseline."""
    rate_before_empty: float | None = None
    """An empty bucket's mean rate over the last minutes it had credits (the demand a fix is
    sized for); None where no cycle has seen them."""
    charged_rate: float | None = None
    """A forecast's rate the bucket is charged at."""
    horizon_s: float | None = None
    """A trend's horizon: an exhaustion within it follows the trend."""


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: Severity
    resource: ResourceRef
    bottleneck: Bottleneck
    summary: str
    observed: float
    limit: float
    unit: Unit
    seconds_to_empty: float | None = None
    next_bottleneck: NextBottleneck | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    remedies: tuple[Remedy, ...] = ()
    window_s: float = 0.0
    """The window its rates were read over: the next bottleneck is weighed over the same."""
    credit: Credit | None = None
    """A credit finding's bucket, typed; None for other findings."""
    sized_for: Mapping[str, float] | None = None
    """The rates its fixes were sized for: a firing alert keeps its fixes until these move."""
    held: str | None = None
    """Set by the alert book while the alert holds with its condition gone: the last forecast
    it gave."""
    limits_since: datetime | None = None
    """A modified volume's: the moment from which the limits it was judged against hold
    (`ResourceState.limits_since`); None for the configuration as first described. An alert
    judged under limits a later modification replaced resolves (`Unjudged.reconfigured`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "evidence", _frozen(self.evidence))
        if self.sized_for is not None:
            object.__setattr__(self, "sized_for", _frozen(self.sized_for))

    @property
    def owner(self) -> ResourceType:
        """Whose unit its rates read in: an EC2 instance's are always MB/s; an RDS instance's
        follow the bottleneck (storage MiB/s, class MB/s); a volume's MiB/s."""
        if self.resource.resource_type is ResourceType.DB_INSTANCE:
            return self.bottleneck.owner
        return self.resource.resource_type

    @property
    def is_credits(self) -> bool:
        return self.bottleneck.is_credits

    @property
    def rate_before_empty(self) -> float | None:
        """An empty bucket's rate before it ran out (`Credit.rate_before_empty`)."""
        return self.credit.rate_before_empty if self.credit is not None else None

    @property
    def key(self) -> tuple[str, str, str]:
        """Alerts are keyed by rule and resource."""
        return (self.rule, self.resource.scope, self.resource.resource_id)
