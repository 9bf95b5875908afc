"""What each volume's longest past showed, kept between cycles and read a stretch a day.

The daemon reads a volume's past for savings (`collect/peaks.py`) one stretch at a time, at
most one a volume a day: the minute stretch first (four metrics), the 5-minute one the next
day and the hour one the day after (five each; off Nitro the minute stretch alone, since AWS
gives no `Maximum` there), then, each day, whichever was read longest ago. A coarse stretch
is read up to the newest whole period, so that stretches read on different days overlap and
leave no gap. At most one stretch a volume a day is never more metrics than one full read of
the volume (`once`'s nine or more), and the reads are spread over the day: a few volumes a
cycle, for at most `budget_s`.

Of each stretch only what a cut is weighed on is kept (`savings.summarized`: its busiest
periods by IOPS and by throughput), a few figures a volume, kept beside the state file
(`statefile.long_pasts_path`) and written when they change: a restart reads nothing again.
A volume is weighed once every stretch it has is read, and again each time one is read anew
or the volume changes; until then it is `reading`. Weighing, and the reads, each stop for
the cycle after `budget_s`. A modification sets its stretches aside (the past before it says
nothing of the new limits), and a volume whose read failed is `unread` until its next day.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Annotated, Any, Literal

import numpy as np
import structlog
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from analyzer.analyze import savings
from analyzer.analyze.catalog import NO_OFFERS, Catalog, Offers
from analyzer.analyze.prices import PriceList
from analyzer.analyze.savings import Saving
from analyzer.collect import peaks
from analyzer.collect.boundaries import MetricData
from analyzer.errors import AnalyzerError
from analyzer.live.fleet_savings import (
    db_labels,
    db_price,
    offered,
    priced,
    provisioned,
    volumes,
)
from analyzer.model.demand import Demand, LongPast
from analyzer.model.resources import DbInstance, InstanceType, Inventory, Volume
from analyzer.model.state import FetchStats
from analyzer.settings import Settings

log = structlog.get_logger(__name__)

Key = tuple[str, str]
"""(scope, volume id or RDS instance id)."""
Weighed = Volume | DbInstance
"""What a long past is read of: a volume, or an RDS instance's storage."""

DAY_S = 86_400.0
PERIODS = tuple(period for period, _ in peaks.STRETCHES)
BUDGET_S = 2.0
"""At most this long a cycle is spent reading long pasts, whatever the count (at least one
volume is read)."""
SPREAD = 2.0
"""A cycle reads this many times its share of a day's reads: the whole fleet's day's reads
end within half a day, and a cycle that could not read its share leaves room for it."""
KEPT_MAX = 100_000
"""Volumes a state file may give back: more is not a state file this daemon wrote."""


@dataclass(frozen=True, slots=True)
class Kept:
    """One stretch as kept: when it was read, the modification its past is in force from,
    and its busiest periods (`savings.busiest`) as (epoch seconds, IOPS, bytes a second,
    floor)."""

    period_s: int
    read_at: datetime
    since: datetime | None
    busiest: tuple[tuple[float, float, float, bool], ...]
    first_seen: datetime | None
    last_active: datetime | None
    per_minute: bool = True

    def demands(self) -> Iterator[Demand]:
        for at, iops, bps, floor in self.busiest:
            yield Demand(
                datetime.fromtimestamp(at, self.read_at.tzinfo),
                self.period_s,
                np.array([iops]),
                np.array([bps]),
                np.array([floor]),
            )


def _shape(resource: Weighed, instance_type: InstanceType | None) -> tuple[Any, ...]:
    """What a saving depends on besides its past: weighed again when it changes."""
    if isinstance(resource, DbInstance):
        db = resource
        return (
            db.storage_type,
            db.allocated_gib,
            db.iops,
            db.throughput_mibps,
            db.active,
            db.multi_az,
            db.engine,
        )
    volume = resource
    return (
        volume.volume_type,
        volume.size_gib,
        volume.iops,
        volume.throughput_mibps,
        volume.state,
        volume.attached_to,
        volume.claim,
        instance_type.name if instance_type is not None else None,
        _since(volume),
    )


def _since(resource: Weighed) -> datetime | None:
    """The start of a volume's latest modification that did not fail; None for an RDS
    instance, whose storage's modifications DescribeDBInstances does not date."""
    return None if isinstance(resource, DbInstance) else savings.last_modified(resource)


def in_force(kept: Mapping[int, Kept], since: datetime | None) -> dict[int, Kept]:
    """The stretches read since the volume's latest modification (`since`): one read before
    it says nothing of the new limits. Where no modification is known now (none, or
    DescribeVolumesModifications did not answer), every stretch kept stands."""
    if since is None:
        return dict(kept)
    return {p: k for p, k in kept.items() if k.since is not None and k.since >= since}


def wanted(instance_type: InstanceType | None, kept: Mapping[int, Kept]) -> tuple[int, ...]:
    """The stretches a volume's past is read in: the minute one alone off Nitro, and none
    coarser than one whose maxima were found not to be a minute's counts."""
    if instance_type is not None and instance_type.nitro is False:
        return PERIODS[:1]
    out: list[int] = []
    for period in PERIODS:
        out.append(period)
        one = kept.get(period)
        if one is not None and not one.per_minute:
            break
    return tuple(out)


@dataclass
class LongPasts:
    budget_s: float = BUDGET_S
    kept: dict[Key, dict[int, Kept]] = field(default_factory=dict)
    weighed: dict[Key, tuple[tuple[Any, ...], Saving | None]] = field(default_factory=dict)
    """By volume read whole, its shape when weighed and the saving it offers (None: none)."""
    failed: dict[Key, datetime] = field(default_factory=dict)
    """Volumes whose last read failed, and when: read again a day later."""
    reads: int = 0
    """Stretches read since the start."""
    at_once: bool = False
    """Read every stretch of a volume due in one visit: the demo's simulated accounts, whose
    reads cost nothing and whose days pass in minutes."""
    _encoded: str | None = field(default=None, repr=False)
    _fragments: dict[Key, str] = field(default_factory=dict, repr=False)
    _dbs: set[Key] = field(default_factory=set, repr=False)
    """The RDS instances weighed at the last step: io1 or io2, and priced."""
    """Each volume's entry of `encoded`, as JSON: worked out again only when it changes."""

    # --- what is shown ---------------------------------------------------------------------

    def savings(self) -> list[Saving]:
        """Every saving offered, most first."""
        found = [s for _, s in self.weighed.values() if s is not None]
        return sorted(found, key=lambda s: (-s.monthly_saving, s.resource_id))

    def counts(self, inventories: Mapping[str, Inventory]) -> dict[str, int]:
        """Volumes (and RDS instances with provisioned IOPS, priced) `weighed` (read whole),
        `reading` (a stretch or more to go) and `unread` (the last read failed)."""
        out = {"weighed": 0, "reading": 0, "unread": 0}
        for where, inventory in inventories.items():
            ids = [v.volume_id for v in inventory.volumes]
            ids += [
                db.db_instance_id
                for db in inventory.db_instances
                if (where, db.db_instance_id) in self._dbs
            ]
            for rid in ids:
                key = (where, rid)
                state = (
                    "unread"
                    if key in self.failed
                    else "weighed"
                    if key in self.weighed
                    else "reading"
                )
                out[state] += 1
        return out

    # --- reading ---------------------------------------------------------------------------

    def step(
        self,
        inventories: Mapping[str, Inventory],
        metrics_of: Callable[[str], MetricData],
        settings: Settings,
        price_list: PriceList,
        floor: float,
        now: datetime,
        interval_s: float,
        reading: bool = True,
        offers: Offers = NO_OFFERS,
    ) -> FetchStats:
        """Read the stretches due, a cycle's share of the day's (none where not `reading`:
        a backfill's cycle), and weigh what changed.
        `metrics_of(scope)`: where a scope's metrics are read. What the reads cost, in the
        stats returned; a read that fails is logged, and that volume read a day later."""
        stats = FetchStats()
        catalog = Catalog(price_list, offers)
        resources = dict(self._resources(inventories, catalog))
        self._dbs = {k for k, (r, _) in resources.items() if isinstance(r, DbInstance)}
        self._forget(inventories, resources)
        due = sorted(
            (newest, key)
            for key in resources
            if (newest := self._newest_read(key, now)) is not None
        )
        share = math.ceil(SPREAD * len(resources) * interval_s / DAY_S) if resources else 0
        started = time.monotonic()
        for tried, (_, key) in enumerate(due[: max(share, 1)] if reading else ()):
            if tried and time.monotonic() - started > self.budget_s:
                break
            volume, instance_type = resources[key]
            for _ in range(len(PERIODS) if self.at_once else 1):
                read = self._read(
                    key, volume, instance_type, metrics_of(key[0]), settings, now, stats
                )
                if not read or self._whole_at(key, volume, instance_type, now):
                    break
        # Weighed where changed, for as long again at most: after a restart, every volume.
        started = time.monotonic()
        for key, (volume, instance_type) in resources.items():
            weighed = self._weigh(key, volume, instance_type, settings, catalog, floor, now)
            if weighed and time.monotonic() - started > self.budget_s:
                break
        return stats

    @staticmethod
    def _resources(
        inventories: Mapping[str, Inventory], catalog: Catalog
    ) -> Iterator[tuple[Key, tuple[Weighed, InstanceType | None]]]:
        """Every volume, with its instance's type; every RDS instance whose storage has
        performance provisioned, and priced (`fleet_savings.provisioned`, `priced`)."""
        for where, inventory in inventories.items():
            for volume, instance_type in volumes(inventory):
                yield (where, volume.volume_id), (volume, instance_type)
            for db in inventory.db_instances:
                if provisioned(db) and priced(db, db_price(db, catalog)):
                    yield (where, db.db_instance_id), (db, None)

    def _forget(
        self, inventories: Mapping[str, Inventory], resources: Mapping[Key, object]
    ) -> None:
        """Let go of the volumes and RDS instances gone from a scope described now (a scope
        not described now keeps its own)."""
        for book in (self.kept, self.weighed, self.failed, self._fragments):
            for key in [k for k in book if k[0] in inventories and k not in resources]:
                del book[key]
                self._encoded = None

    def _newest_read(self, key: Key, now: datetime) -> float | None:
        """Where a volume's read is due, when its newest read was (epoch seconds, 0 for none:
        never read first); None where it was read, or failed, within the day."""
        failed = self.failed.get(key)
        if failed is not None and (now - failed).total_seconds() < DAY_S:
            return None
        kept = self.kept.get(key, {})
        newest = max((k.read_at for k in kept.values()), default=None)
        if newest is not None and (now - newest).total_seconds() < DAY_S:
            return None
        return newest.timestamp() if newest is not None else 0.0

    def _whole_at(
        self, key: Key, volume: Weighed, instance_type: InstanceType | None, now: datetime
    ) -> bool:
        """Whether every stretch wanted of the volume was read at `now`."""
        kept = in_force(self.kept.get(key, {}), _since(volume))
        return all(p in kept and kept[p].read_at == now for p in wanted(instance_type, kept))

    def _next(self, kept: Mapping[int, Kept], instance_type: InstanceType | None) -> int:
        """The stretch to read: the first not yet read, else the one read longest ago."""
        periods = wanted(instance_type, kept)
        missing = [p for p in periods if p not in kept]
        if missing:
            return missing[0]
        return min(periods, key=lambda p: kept[p].read_at)

    def _read(
        self,
        key: Key,
        volume: Weighed,
        instance_type: InstanceType | None,
        metrics_: MetricData,
        settings: Settings,
        now: datetime,
        stats: FetchStats,
    ) -> bool:
        """One stretch of a volume read and kept; whether it was."""
        since = _since(volume)
        kept = in_force(self.kept.get(key, {}), since)
        period = self._next(kept, instance_type)
        try:
            read = peaks.read_stretch(metrics_, volume, period, now, settings.settle_delay, stats)
        except AnalyzerError as exc:
            read, why = None, str(exc)
        else:
            why = stats.errors[-1] if stats.errors else "no metric of its operations"
        self.reads += 1
        self._encoded = None
        self._fragments.pop(key, None)
        if read is None:
            self.failed[key] = now
            log.info("savings.unread", resource_id=key[1], period_s=period, error=why)
            return False
        self.failed.pop(key, None)
        stretches = (read.demand,) if read.demand is not None else ()
        past = LongPast(now, stretches, peaks.first(stretches), peaks.last_active(stretches))
        summary = (
            savings.summarized_db(volume, past)
            if isinstance(volume, DbInstance)
            else savings.summarized(volume, instance_type, past)
        )
        kept[period] = Kept(
            period,
            now,
            since,
            tuple(
                (d.start.timestamp(), float(d.iops[0]), float(d.bps[0]), bool(d.floor[0]))
                for d in summary.stretches
            ),
            summary.first_seen,
            summary.last_active,
            read.per_minute,
        )
        self.kept[key] = kept
        self.weighed.pop(key, None)
        return True

    def _weigh(
        self,
        key: Key,
        volume: Weighed,
        instance_type: InstanceType | None,
        settings: Settings,
        catalog: Catalog,
        floor: float,
        now: datetime,
    ) -> bool:
        """Weigh a volume read whole whose past or shape changed since it was last weighed;
        one with a stretch still to read, or set aside by a modification, offers nothing.
        Whether it was weighed. The change of type offered beside a cut is not kept: neither
        the metric nor the digest shows it (`ebs-analyzer savings` does)."""
        if key in self.failed:
            self.weighed.pop(key, None)  # its last read failed: nothing offered meanwhile
            return False
        shape = _shape(volume, instance_type)
        done = self.weighed.get(key)
        if done is not None and done[0] == shape:
            return False
        kept = in_force(self.kept.get(key, {}), _since(volume))
        periods = wanted(instance_type, kept)
        if any(p not in kept for p in periods):
            self.weighed.pop(key, None)
            return False
        # Only the stretches wanted now: coarse ones read on Nitro say nothing off it.
        past = combined(kept[p] for p in periods)
        if isinstance(volume, DbInstance):
            cut = savings.weigh_db(
                volume, past, db_price(volume, catalog), settings.savings_headroom, floor
            )
            one = replace(cut, labels=db_labels(volume)) if cut is not None else None
        else:
            one = offered(volume, past, settings, catalog.prices, floor, now)
        self.weighed[key] = (shape, replace(one, alternative=None) if one is not None else None)
        return True

    # --- the state file --------------------------------------------------------------------

    @property
    def changed(self) -> bool:
        """Whether what is kept changed since it was last `encoded`."""
        return self._encoded is None

    def encoded(self) -> str:
        """The kept stretches as the file beside the state file keeps them: compact JSON,
        each volume's worked out again only when it changed."""
        if self._encoded is None:
            keys = sorted(self.kept.keys() | self.failed.keys())
            for key in keys:
                if key not in self._fragments:
                    self._fragments[key] = json.dumps(self._record(key), separators=(",", ":"))
            self._encoded = "[" + ",".join(self._fragments[k] for k in keys) + "]"
        return self._encoded

    def records(self) -> Iterator[dict[str, Any]]:
        for key in sorted(self.kept.keys() | self.failed.keys()):
            yield self._record(key)

    def _record(self, key: Key) -> dict[str, Any]:
        scope, rid = key
        kept = self.kept.get(key, {})
        return {
            "scope": scope,
            "volume_id": rid,
            "failed_at": _iso(self.failed.get(key)),
            "stretches": [
                {
                    "period_s": k.period_s,
                    "read_at": k.read_at.isoformat(),
                    "since": _iso(k.since),
                    "first_seen": _iso(k.first_seen),
                    "last_active": _iso(k.last_active),
                    "per_minute": k.per_minute,
                    "busiest": [list(b) for b in k.busiest],
                }
                for _, k in sorted(kept.items())
            ],
        }

    @classmethod
    def from_records(cls, records: Any, now: datetime) -> LongPasts:
        """What the state file kept; an entry that cannot be read is left out and said (that
        volume's past is read again), never a reason to lose the rest."""
        out = cls()
        if records is None:
            return out
        if not isinstance(records, list) or len(records) > KEPT_MAX:
            log.warning("state.long_pasts_unreadable", error="not a list of volumes' pasts")
            return out
        skipped: list[str] = []
        for index, entry in enumerate(records):
            try:
                record = _Record.model_validate(entry)
            except ValidationError as exc:
                skipped.append(f"long_pasts.{index}: {exc.errors()[0]['msg']}")
                continue
            kept: dict[int, Kept] = {}
            for s in record.stretches:
                if s.read_at > now:
                    continue  # a time to come (a clock gone wrong): read again
                kept[s.period_s] = Kept(
                    s.period_s,
                    s.read_at,
                    s.since,
                    tuple(tuple(b) for b in s.busiest),  # type: ignore[misc]
                    s.first_seen,
                    s.last_active,
                    s.per_minute,
                )
            key = (record.scope, record.volume_id)
            if kept:
                out.kept[key] = kept
            if record.failed_at is not None and record.failed_at <= now:
                out.failed[key] = record.failed_at
        if skipped:
            log.warning("state.long_pasts_skipped", count=len(skipped), first=skipped[0])
        return out


def combined(kept: Iterable[Kept]) -> LongPast:
    """A volume's summarized past from its kept stretches."""
    stretches = list(kept)
    firsts = [k.first_seen for k in stretches if k.first_seen is not None]
    lasts = [k.last_active for k in stretches if k.last_active is not None]
    return LongPast(
        max(k.read_at for k in stretches),
        tuple(d for k in stretches for d in k.demands()),
        min(firsts, default=None),
        max(lasts, default=None),
    )


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


_Point = tuple[
    Annotated[float, Field(ge=0)],
    Annotated[float, Field(ge=0)],
    Annotated[float, Field(ge=0)],
    bool,
]


class _Stretch(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    period_s: Literal[60, 300, 3600]
    read_at: AwareDatetime
    since: AwareDatetime | None = None
    first_seen: AwareDatetime | None = None
    last_active: AwareDatetime | None = None
    per_minute: bool = True
    busiest: list[_Point] = Field(max_length=4)


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    scope: Annotated[str, Field(min_length=1, max_length=200)]
    volume_id: Annotated[str, Field(min_length=1, max_length=64)]
    stretches: list[_Stretch] = Field(max_length=len(PERIODS))
    failed_at: AwareDatetime | None = None
