"""One immutable snapshot per cycle: every resource with its envelope and normalized measures.

Rules, reports and the exporter read snapshots; nothing in a snapshot calls AWS.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from types import MappingProxyType

from analyzer.model.findings import Bottleneck
from analyzer.model.kubernetes import own_name
from analyzer.model.layers import Bucket, Layer, buckets_of, layers_of
from analyzer.model.limits import Envelope
from analyzer.model.metrics import Measure
from analyzer.model.outlook import ForecastWindows, Outlook
from analyzer.model.past import NO_PAST, Grid, Past
from analyzer.model.resources import DbInstance, Instance, ResourceRef, ResourceType, Volume
from analyzer.model.series import STALE_PERIODS, Series, Status, is_recent, latest_balance
from analyzer.model.units import Unit


@dataclass
class FetchStats:
    """What a poll cost: requests by outcome, metrics requested (billed), datapoints received."""

    requests: Counter[str] = field(default_factory=Counter)
    metrics_requested: int = 0
    datapoints: int = 0
    errors: list[str] = field(default_factory=list)
    by_tier: Counter[str] = field(default_factory=Counter)
    """Metrics requested by the polling tier of their resource (`full`: every metric)."""
    metrics_failed: int = 0
    """Metrics whose answer failed: their call failed, or its answer left them failed or out."""
    codes: list[str] = field(default_factory=list)
    """AWS's error codes of the calls that failed whole (`AccessDenied`, `Throttling`), in the
    order of `errors`' call failures."""
    free: int = 0
    """Of `metrics_requested`, those answered by a source that bills nothing (a node's NVMe
    statistics): not CloudWatch's, and not on its bill."""
    past_requested: int = 0
    """Metrics asked to weigh fixes on their resources' past (`live/proofs.py`): billed, but
    apart from `metrics_requested`, the polls', whose outcome they do not change."""

    @property
    def billed(self) -> int:
        """Metrics CloudWatch bills: those requested of it."""
        return self.metrics_requested - self.free + self.past_requested

    def merge(self, other: FetchStats) -> None:
        self.requests.update(other.requests)
        self.by_tier.update(other.by_tier)
        self.metrics_requested += other.metrics_requested
        self.datapoints += other.datapoints
        self.errors.extend(other.errors)
        self.codes.extend(other.codes)
        self.metrics_failed += other.metrics_failed
        self.free += other.free
        self.past_requested += other.past_requested

    @property
    def outcome(self) -> str:
        """`success`, `partial` (some metrics failed) or `failed` (every metric failed)."""
        if self.metrics_failed == 0:
            return "success"
        return "failed" if self.metrics_failed >= self.metrics_requested else "partial"

    @property
    def failed_share(self) -> float:
        return self.metrics_failed / self.metrics_requested if self.metrics_requested else 0.0


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A modelled limit that what CloudWatch shows stays clearly above: the model is wrong for
    this resource, so nothing is built on that limit."""

    bottleneck: Bottleneck
    limit: float
    observed: float
    """The mean rate over the window, counted as the limit counts."""
    window_s: float

    def text(self) -> str:
        what = self.bottleneck.value.replace("_", " ")
        return (
            f"the {what} limit model disagrees with what CloudWatch shows: "
            f"{self.observed / self.limit:.0%} of it on average over {self.window_s / 60:.0f} min"
        )


NOTHING = Series()
"""A measure the resource does not have."""
EMPTY_BALANCE_PERCENT = 1.0
"""At or below this BurstBalance the bucket is treated as empty: I/O runs at baseline."""

Resource = Volume | Instance | DbInstance


@dataclass(frozen=True, slots=True)
class ResourceState:
    ref: ResourceRef
    resource: Resource
    envelope: Envelope | None
    measures: Mapping[Measure, Series]
    status: Status
    error: str | None = None
    related: tuple[str, ...] = ()
    """Volume: the instance it is attached to. Instance: its volumes."""
    notes: tuple[str, ...] = ()
    class_envelope: Envelope | None = None
    """DB instances: the EBS limits of the instance class (`envelope` is their storage)."""
    windows: ForecastWindows = field(default_factory=ForecastWindows)
    """The windows its rates and its credit outlook are read over."""
    past: Past = NO_PAST
    """Its balances' past days (daily minima, and the day profile), where fetched."""
    mismatches: tuple[Mismatch, ...] = ()
    """Limits the data contradicts; set by the analysis stage."""
    log_envelope: Envelope | None = None
    """DB instances with a Dedicated Log Volume: its limits, apart from the storage's."""
    outlook: Outlook | None = None
    """The bucket that empties first and when, at the snapshot's data end; set by the analysis
    stage. None while no bucket is draining, when a balance is missing, or once empty."""
    node_agent: bool = False
    """Its rates are read by a node agent, not asked of CloudWatch (a covered volume, an
    instance whose every volume is covered): this daemon has only what CloudWatch alone has."""
    balance_note: str | None = None
    """What qualifies its balance, said beside its credit findings (a node's balance carried
    from a reading before its first page, and how far off it may be)."""
    limits_since: datetime | None = None
    """A volume modified: the moment from which `envelope` holds (`Volume.limits_since`).
    Its datapoints from before were made under other limits, and are not judged by these.
    None where the modification left its limits as they were (a size-only growth of an io2):
    nothing it was judged on has changed."""
    envelope_before: Envelope | None = None
    """A modified volume's envelope before the change `limits_since` dates: what a replay of
    the moments before the change judges against."""

    def contradicts(self, bottleneck: Bottleneck) -> bool:
        """Whether its data contradicts the modelled limit of this bottleneck."""
        return any(m.bottleneck is bottleneck for m in self.mismatches)

    def measure(self, measure: Measure) -> Series:
        """The whole series, whatever the limits were: what the resource did."""
        return self.measures.get(measure, NOTHING)

    def in_force(self, measure: Measure) -> Series:
        """The series since its limits have been what `envelope` says: what is judged against
        them. A period that starts before the volume's latest modification took effect was
        made under the limits before (its exceeded checks flagged those, its rates were held
        by those, its balance was the old bucket's), so a window reaching back past it holds
        fewer datapoints, and a rule short of its datapoints says nothing yet."""
        series = self.measures.get(measure, NOTHING)
        if self.limits_since is None:
            return series
        return series.since(self.limits_since)

    def minima(self, measure: Measure) -> Series | None:
        """A balance's past daily minima since its limits have been these (a day that began
        before has the bucket of before in it)."""
        series = self.past.minima.get(measure)
        if series is None or self.limits_since is None:
            return series
        return series.since(self.limits_since)

    def days(self, measure: Measure) -> Grid | None:
        """A balance's past days (`Past.days`), unless its limits changed within them: the
        days of another configuration are no record or profile of this one."""
        grid = self.past.days.get(measure)
        if grid is None or self.limits_since is None or self.limits_since <= grid.start:
            return grid
        return None

    def balance(self, measure: Measure, at: datetime) -> float | None:
        reading = latest_balance(self.in_force(measure), at)
        return reading[1] if reading else None

    def balance_at_most(self, measure: Measure, at: datetime) -> float | None:
        """The most the balance can be at `at`: its latest reading where that is recent, else
        (AWS publishes no BurstBalance while a volume is idle) that reading plus what the
        bucket earns at its baseline since, which is all an idle bucket can earn. None without
        a reading, or where an old reading cannot be carried forward (a bucket without a
        model)."""
        series = self.in_force(measure)
        reading = latest_balance(series, at)
        if reading is None:
            return None
        stamp, value = reading
        if is_recent(series, at):
            return value
        bucket = next((b for b in self.buckets() if b.balance is measure), None)
        if bucket is None or bucket.model is None:
            return None
        earned = 100.0 * bucket.model.baseline / bucket.model.capacity
        return min(value + earned * max((at - stamp).total_seconds(), 0.0), 100.0)

    def credits_left(self, measure: Measure, at: datetime) -> bool:
        """False only when a balance is reported and empty; missing is never "empty"."""
        value = self.balance(measure, at)
        return value is None or value > EMPTY_BALANCE_PERCENT

    def iops_limit(self, at: datetime) -> float | None:
        """The IOPS limit in force: a volume's or a DB's storage, or an instance's EBS."""
        if self.envelope is None:
            return None
        balance = Measure.BURST_BALANCE if self.has_storage else Measure.IO_BALANCE
        return self.envelope.iops_limit(self.credits_left(balance, at))

    def throughput_limit(self, at: datetime) -> float | None:
        if self.envelope is None:
            return None
        balance = Measure.BURST_BALANCE if self.has_storage else Measure.BYTE_BALANCE
        return self.envelope.throughput_limit(self.credits_left(balance, at))

    def class_iops_limit(self, at: datetime) -> float | None:
        """DB instances: the EBS IOPS limit of the instance class."""
        if self.class_envelope is None:
            return None
        return self.class_envelope.iops_limit(self.credits_left(Measure.IO_BALANCE, at))

    def class_throughput_limit(self, at: datetime) -> float | None:
        if self.class_envelope is None:
            return None
        return self.class_envelope.throughput_limit(self.credits_left(Measure.BYTE_BALANCE, at))

    @property
    def impairment_check(self) -> Measure:
        """The check that says its I/O has stopped: an instance's attached-EBS status check,
        a volume's stalled-I/O check (a DB instance has neither)."""
        if self.ref.resource_type is ResourceType.INSTANCE:
            return Measure.ATTACHED_EBS_FAILED
        return Measure.STALLED_IO

    def impaired_since(self, at: datetime) -> datetime | None:
        """The start of the unbroken run of failed checks that its latest recent check by `at`
        ends; None when that check passed, or there is none recent."""
        series = self.measure(self.impairment_check).until(at)
        if not series.values or series.values[-1] < 1 or not is_recent(series, at):
            return None
        since = series.timestamps[-1]
        for stamp, value in zip(reversed(series.timestamps), reversed(series.values), strict=True):
            if value < 1:
                break
            since = stamp
        return since

    def has_recent_data(self, at: datetime) -> bool:
        """Whether any of its rates is recent at `at`. Every rule reads its rates through
        `recent`, so a resource without one makes no finding and has no outlook: a resource
        polled minutes ago, on the cadence of a quiet tier, is not analyzed again meanwhile."""
        return any(is_recent(series, at) for series in self.measures.values())

    def recent_until(self, at: datetime) -> datetime | None:
        """The last data end at which every series of it that is recent at `at` still is:
        until then its rules read the same windows without a new poll. None where none is."""
        ends = [
            series.timestamps[-1] + timedelta(seconds=series.period_s * (1 + STALE_PERIODS))
            for series in self.measures.values()
            if is_recent(series, at)
        ]
        return min(ends, default=None)

    def newest_end(self) -> datetime | None:
        """The end of the newest period of its rates."""
        rates = self.measure(Measure.IOPS)
        if not rates.timestamps:
            return None
        return rates.timestamps[-1] + timedelta(seconds=rates.period_s)

    def known_at(self, at: datetime) -> bool:
        """Whether what the rules say of it at `at` rests on data: its rates are recent, none
        of its series failed, and its limits are modelled. Where not, a condition it had is
        unknown, not gone (CloudWatch's `TreatMissingData: missing`)."""
        if not self.has_recent_data(at) or self.envelope is None:
            return False
        return all(s.status is not Status.ERROR for s in self.measures.values())

    def layers(self) -> list[Layer]:
        """The layers the resource's own I/O (its IOPS and throughput) passes."""
        return layers_of(self.envelope, self.class_envelope, self.has_storage)

    def log_layers(self) -> list[Layer]:
        """A DB instance's Dedicated Log Volume, read through its own measures."""
        if self.log_envelope is None:
            return []
        return [Layer(self.log_envelope, storage=True, log=True)]

    def buckets(self) -> list[Bucket]:
        return buckets_of(self.ref.resource_type, self.envelope, self.class_envelope)

    def limit(self, layer: Layer, unit: Unit, at: datetime) -> float:
        """A layer's `unit` limit in force at `at`: its baseline once its credits are gone."""
        return layer.limit(unit, self.credits_left(layer.balance(unit), at))

    @property
    def is_volume(self) -> bool:
        return self.ref.resource_type is ResourceType.VOLUME

    @property
    def is_db(self) -> bool:
        return self.ref.resource_type is ResourceType.DB_INSTANCE

    @property
    def has_storage(self) -> bool:
        """Volumes and DB instances have storage limits (and a BurstBalance)."""
        return self.ref.resource_type is not ResourceType.INSTANCE

    @property
    def label(self) -> str:
        """`vol-0abc "shop-data" (gp2 50 GiB on i-0123)`: the resource as an operator knows it;
        a claim's volume as its cluster knows it first."""
        name = own_name(self.resource.tags.get("Name"), self.ref.claim)
        named = f' "{name}"' if name and name != self.ref.resource_id else ""
        if self.ref.claim is not None:
            # `PVC db/data-postgres-0 (vol-0abc, gp2 50 GiB on i-0123)`: the claim first.
            claim = self.ref.claim.text()
            return f"{claim} ({self.ref.resource_id}{named}, {self.resource.describe()})"
        return f"{self.ref.resource_id}{named} ({self.resource.describe()})"


@dataclass(frozen=True)
class Snapshot:
    generated_at: datetime
    """The report time: forecasts count from here."""
    data_end: datetime
    """All data in the snapshot covers periods complete by this moment."""
    resources: tuple[ResourceState, ...]
    stats: FetchStats = field(default_factory=FetchStats)
    asked_until: Mapping[str, Mapping[str, datetime]] = field(default_factory=dict)
    """By scope (`scope_of`), then resource id: the end of the latest window CloudWatch
    answered for the resource. Each scope's poller's own mapping, not a copy of the fleet's:
    read while the cycle's report and series are built, before the next cycle's fetch moves
    it."""

    @cached_property
    def _index(self) -> Mapping[tuple[str, str], ResourceState]:
        """Built on first use: most snapshots of a cycle are never looked up."""
        return MappingProxyType({(r.ref.scope, r.ref.resource_id): r for r in self.resources})

    def get(self, scope: str, resource_id: str) -> ResourceState | None:
        return self._index.get((scope, resource_id))

    def data_age_s(self, state: ResourceState) -> float | None:
        """How old its newest rate is at the data end (the end of that period); None
        without data."""
        newest = state.newest_end()
        return None if newest is None else max((self.data_end - newest).total_seconds(), 0.0)

    def stale(self, state: ResourceState) -> bool:
        """Asked for, yet its newest rate ends more than `STALE_PERIODS` periods before what
        was asked: CloudWatch did not have its data (late, left out, or a clock ahead). A
        resource on a quiet tier, not asked since, is as old as its cadence, not stale."""
        newest = state.newest_end()
        asked = self.asked_until.get(state.ref.scope, {}).get(state.ref.resource_id)
        if newest is None or asked is None:
            return False
        period = state.measure(Measure.IOPS).period_s
        return (asked - newest).total_seconds() > STALE_PERIODS * period

    def related(self, state: ResourceState) -> list[ResourceState]:
        found = (self.get(state.ref.scope, rid) for rid in state.related)
        return [r for r in found if r is not None]
