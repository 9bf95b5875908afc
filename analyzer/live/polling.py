"""Polling one region: each resource on the cadence of its tier, with the metrics of its tier.

CloudWatch bills a metric per request, not per datapoint, so a resource polled every ten
minutes costs a tenth of one polled every minute and loses nothing: each poll fetches every
one-minute period since the last. A resource is due when its tier's cadence has passed; hot
ones are due every cycle. After each fetch the tiers are decided again from the new data, and
a resource that moved up is fetched again at once, in the same cycle, for the metrics its new
tier reads (backfilled over the lookback), so a quiet volume that starts draining is judged on
full data the cycle its operations show it.

An instance's EBS counters are its volumes' I/O, which sets two cadences by physics:
- an idle instance stands guard over its idle volumes (`queries.guards_of`): its two
  operation counts bound their load. Where every volume is idle, they are read at the
  active cadence (at least twice as often as any of them would be read idle); beside volumes
  read on their own, at the idle volumes' own idle cadence, with those volumes, whose counts
  are taken off theirs minute by minute. While what is left stays under what would leave the
  least of the idle volumes idle (`tiers.idle_ceiling`), they are read only every
  `GUARDED_S`; once it does not, or the counts cannot be read, every volume is read in the
  same cycle, backfilled;
- an instance whose bucket can change from one minute to the next (below full, or its
  volumes' sum near its baseline: `tiers.near_baseline`) has its balances read every minute;
  its rates are summed from its volumes' (`queries._left_to_volumes`).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from analyzer.analyze import states
from analyzer.analyze.outlook import with_outlook
from analyzer.analyze.tiers import TierPolicy, alarm_times, falling, idle_ceiling, place
from analyzer.collect import queries
from analyzer.collect.agent_metrics import Silence
from analyzer.collect.fetch import fetch
from analyzer.collect.history import History
from analyzer.collect.past import PastDays
from analyzer.collect.queries import MetricQuery
from analyzer.collect.regions import Region
from analyzer.collect.window import MINUTE_S, data_end
from analyzer.model import metrics
from analyzer.model.costs import Cadence, Role
from analyzer.model.findings import Bottleneck
from analyzer.model.metrics import Measure, Namespace, Tier
from analyzer.model.outlook import ForecastWindows
from analyzer.model.resources import Instance, Inventory
from analyzer.model.series import Series, Status, recent
from analyzer.model.state import EMPTY_BALANCE_PERCENT, FetchStats, ResourceState

EMPTIED_MARGIN_S = 2 * 60.0
"""A bucket that emptied within the window of the rule on an empty bucket that applies to it
(`RuleSet.empty_window`: 10 minutes a volume's, 15 an instance's), and this margin, is read
every cycle: the rule fires once it has read its window, and a bucket empty for longer has
had its say. The margin: a balance is read a minute ahead of the sums the rule reads with
it, and the newest of those may be held a minute more."""
MAX_ROUNDS = 3
"""idle → active → hot: at most two moves up in a cycle, each a fetch of its own."""
FULL = "full"


@dataclass
class RegionPoller:
    region: Region
    history: History
    settle_s: float
    adaptive: bool = False
    """False: every metric of every resource, every cycle (`once`, and `polling: full`)."""
    policy: TierPolicy = field(default_factory=TierPolicy)
    cadence: Cadence = field(default_factory=lambda: Cadence(60.0, 300.0, 600.0))
    tiers: dict[str, Tier] = field(default_factory=dict)
    polled: dict[str, datetime] = field(default_factory=dict)
    cache: states.StateCache = field(default_factory=states.StateCache)
    known: queries.Known = field(default_factory=dict)
    hot_for: dict[str, frozenset[Bottleneck] | None] = field(default_factory=dict)
    """By resource id, the limits that made it hot at its last poll (`tiers.Placement`)."""
    _emptying: set[str] = field(default_factory=set)
    """The resources a bucket of which empties, by its outlook at their last poll, before a
    steady poll would come round again."""
    _recent_until: dict[str, datetime] = field(default_factory=dict)
    """By resource id, the last data end at which its series are all still recent, as of its
    last poll (`ResourceState.recent_until`)."""
    steady: frozenset[str] = frozenset()
    """The hot resources read only as their data goes stale this cycle: every limit that
    makes them hot has an alert firing about it, none pending or clearing."""
    steady_moves: int = 0
    """How many times `steady` has changed: what the projected bill follows."""
    tier_moves: int = 0
    """How many times a resource has changed tier: what is asked for changes only then."""
    span_s: float | None = None
    """Measures are worked out over this last stretch of the history (what the analysis
    reads); None: over all of it."""
    past: PastDays | None = None
    """The balances' daily minima, fetched a few times a day beside the polls."""
    windows: Callable[[ResourceState], ForecastWindows] = lambda _: ForecastWindows()
    """The windows a resource's outlook is worked out over: its forecast rule's."""
    empty_window: Callable[[ResourceState], float] = lambda _: 15 * 60.0
    """The window of the rule on an empty bucket that applies to a resource (0: none)."""
    billed: Callable[[MetricQuery], bool] = lambda _: True
    """Whether CloudWatch bills this query: not where a node's NVMe statistics answer it."""
    resolution_s: int = MINUTE_S
    """The finest period asked for, which the data of a cycle ends on: CloudWatch's minute,
    or a few seconds where the region's metrics come from a node's NVMe statistics."""
    _dated: dict[str, tuple[ResourceState, int, ResourceState]] = field(default_factory=dict)
    """By resource id: the state as polled, the past's version, and the state with its past."""
    _inventory: Inventory | None = None
    _ids: set[str] = field(default_factory=set)
    _alarms: dict[str, float] = field(default_factory=dict)
    """By resource id, how soon a full bucket it drains can reach 20 % (`tiers.alarm_times`)."""
    covered: frozenset[str] = frozenset()
    """The volumes node agents read (`collect/coverage.py`): their rates are left to the nodes.
    A new set only when coverage changes, so that the plan is worked out again only then."""
    _plan: (
        tuple[Inventory, int, frozenset[str], frozenset[str], dict[str, list[MetricQuery]]] | None
    ) = None
    """The inventory, tier moves, coverage and silent agents the last `wanted` was worked out
    for, and it."""
    _marked: dict[str, tuple[ResourceState, ResourceState]] = field(default_factory=dict)
    """By resource id: a covered resource's state as polled, and marked as the node's."""
    silence: Silence = field(default_factory=Silence)
    """The volumes whose CloudWatch agent fell silent: read from AWS/EBS for a while."""
    guards: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """By instance id, the idle volumes its operation counts stand guard over, as the last
    plan had them (`queries.guards_of`)."""
    _guarded: dict[str, str] = field(default_factory=dict)
    """By volume id, the instance that stands guard over it."""
    beside: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """By guard, its volumes read on their own (none where all are idle): read with it, and
    their counts taken off its own."""
    _guard_alarms: dict[str, float | None] = field(default_factory=dict)
    """By guard beside other volumes, the soonest alarm of the volumes it guards: what its
    cadence follows (`Cadence.of_resource`, `guard_beside`)."""
    _unnamed: set[str] = field(default_factory=set)
    """The hot resources a bucket of which is not among the limits that make them hot: what
    falls there is news, and their balances are read every cycle while they are steady."""
    _checked: dict[str, tuple[datetime, int, datetime]] = field(default_factory=dict)
    """By guard beside other volumes: the end of the last stretch of its counts checked
    against theirs, the period of its counts, and where those were asked up to when last
    read."""
    minute: set[str] = field(default_factory=set)
    """The resources below the hot tier read every minute (`tiers.Placement.minute`): an
    instance near its baseline, for its balances; a resource whose bucket falls."""
    full: set[str] = field(default_factory=set)
    """The resources active by their load alone, read at their idle cadence
    (`tiers.Placement.full`)."""

    def poll(
        self,
        inv: Inventory,
        now: datetime,
        alerted: Collection[str],
        stats: FetchStats,
        steady: Mapping[str, frozenset[Bottleneck]] | None = None,
    ) -> list[ResourceState]:
        """The state of every resource of the inventory after this cycle's fetches.
        `alerted`: the ids of resources with an alert pending or firing (always hot).
        `steady`: of those, the ones none of whose alerts is pending or clearing, with the
        limits their firing alerts name (`AlertBook.steady`)."""
        ids = self._ids_of(inv)
        settled = frozenset(
            rid for rid, named in (steady or {}).items() if rid in ids and self._settled(rid, named)
        )
        if settled != self.steady:
            self.steady, self.steady_moves = settled, self.steady_moves + 1
        due = {rid for rid in ids if self._due(rid, rid in alerted, now)}
        due |= self._summed_volumes(inv, due)
        due |= self._beside_due(due)
        new = {rid for rid in due if rid not in self.polled}
        found: list[ResourceState] = []
        self.silence.expire(now)
        watched = self._watched(inv, due)
        for _ in range(MAX_ROUNDS):
            wanted = self.wanted(inv)
            asked = [q for rid in sorted(due) for q in wanted[rid]]
            asked += [q for rid in sorted(watched) for q in watched[rid]]
            self._fetch(asked, now, stats)
            self.polled.update(dict.fromkeys(due, now))
            current, found = self._states(inv, wanted, now)
            decided = due | self._summing_over(inv, due)
            raised = self._decide(found, decided, alerted, now) | self._tripped(found, due, now)
            raised |= self._fell(found, watched, now)
            watched = {}
            # A volume whose CloudWatch agent fell silent: read from AWS/EBS in the next round.
            end = self.end(now)
            silent = self.silence.check(inv, current, due, end, now)
            due = (raised if self.adaptive else set()) | silent
            if not due:
                break
        moved = self.wanted(inv) if self.adaptive else wanted
        if moved is not wanted:
            # A resource moved down in the last round: the series its new tier does not read
            # go now, not a cycle later (a first cycle reads every bucket's balance once before
            # its resource may go idle), and its state is built without them, as the next
            # cycles' will be.
            _, found = self._states(inv, moved, now)
        if self.adaptive:
            self._stagger(new, now)
        if self.past is not None:
            self.past.refresh(self.region.metrics, inv, now, stats, self.covered)
            found = [self._with_past(state, self.past) for state in found]
            if len(self._dated) > len(found):  # resources gone from the inventory
                ids = {state.ref.resource_id for state in found}
                self._dated = {rid: kept for rid, kept in self._dated.items() if rid in ids}
        return found

    def _states(
        self, inv: Inventory, wanted: dict[str, list[MetricQuery]], now: datetime
    ) -> tuple[dict[str, dict[str, Series]], list[ResourceState]]:
        """The history of what `wanted` asks (the rest forgotten), and every resource's state
        built from it."""
        current = self.history.current(wanted)
        touched = self.history.take_touched()
        found = states.states_for(
            inv, current, self.cache, self._since(now), touched, self._complete_until(inv)
        )
        return current, self._mark_covered(inv, found)

    def _summing(self, inv: Inventory) -> list[Instance]:
        """The instances whose rates are summed from their volumes' though they are not idle
        (`queries._left_to_volumes`): their own operation counts are not asked. (An instance
        none of whose limits can bind is not asked them either, but its volumes keep their
        own cadences: its sum decides nothing.)"""
        if not self.adaptive:
            return []
        wanted = self.wanted(inv)
        return [
            instance
            for instance in inv.instances
            if self.tiers.get(instance.instance_id, Tier.IDLE) is not Tier.IDLE
            and instance.volume_ids
            and not any(q.metric in _EC2_COUNTS for q in wanted.get(instance.instance_id, ()))
        ]

    def _summed(self, inv: Inventory) -> list[Instance]:
        """Of those, the hot ones every volume of which is read at least as often: polled with
        them, so that the sum covers the same minutes of each. (An active instance is read for
        its balances; its sum ends where its volumes' reads do.)"""
        return [
            instance
            for instance in self._summing(inv)
            if self.tiers.get(instance.instance_id) is Tier.HOT
            and all(
                self.tiers.get(vid, Tier.IDLE).rank
                >= self.tiers.get(instance.instance_id, Tier.IDLE).rank
                for vid in instance.volume_ids
            )
        ]

    def _summing_over(self, inv: Inventory, due: set[str]) -> set[str]:
        """The instances a volume of which was read now: their sums moved, and with them the
        tier their bucket puts them in (a sum that nears the baseline puts an instance's
        balances on the minute the cycle its volumes show it)."""
        if not self.adaptive:
            return set()
        return {
            i.instance_id
            for i in inv.instances
            if i.instance_id not in due and any(v in due for v in i.volume_ids)
        }

    def _watched(self, inv: Inventory, due: set[str]) -> dict[str, list[MetricQuery]]:
        """The balance queries of the resources not due now whose buckets can start to fall
        unseen: active ones below full or drained (not `full`, not read every minute
        already), and hot ones read only as their data goes stale (`steady`) whose bucket no
        alert names. Read every cycle, so that a burst between two reads shows the minute it
        starts."""
        if not self.adaptive:
            return {}
        wanted = self.wanted(inv)
        out = {}
        for rid, tier in self.tiers.items():
            if rid in due or rid in self.minute or rid in self.full:
                continue
            if tier is not Tier.ACTIVE and (rid not in self.steady or rid not in self._unnamed):
                continue
            balances = [q for q in wanted.get(rid, ()) if q.metric in metrics.BALANCES]
            if balances:
                out[rid] = balances
        return out

    def _fell(
        self, found: list[ResourceState], watched: Mapping[str, object], now: datetime
    ) -> set[str]:
        """Of the resources whose balances alone were read, those a bucket of which is
        falling (`tiers.falling`), and not already hot for it: read in full from this
        cycle's next round, and every minute from now on (an active one on the minute, a
        steady one no longer steady once its next placement names the bucket)."""
        if not watched:
            return set()
        at = self.end(now)
        out = set()
        for state in found:
            rid = state.ref.resource_id
            if rid not in watched:
                continue
            named = self.hot_for.get(rid) or frozenset()
            if any(falling(state, b, at) and b.bottleneck not in named for b in state.buckets()):
                out.add(rid)
        active = {rid for rid in out if self.tiers.get(rid) is Tier.ACTIVE}
        if active:
            self.minute |= active
            self.steady_moves += 1  # what the projected bill follows
        return out

    def _beside_due(self, due: set[str]) -> set[str]:
        """The volumes beside the guards due now that are not read every cycle: read with
        them, so that their counts cover the minutes the guard's do. A guard not read yet is
        read the first time one of them is due, so that from then on they share a phase."""
        slow = {
            iid: [v for v in vids if self.tiers.get(v) is not Tier.HOT]
            for iid, vids in self.beside.items()
        }
        due = due | {
            iid
            for iid, vids in slow.items()
            if iid not in self._checked and any(v in due for v in vids)
        }
        return {iid for iid in slow if iid in due} | {
            v for iid, vids in slow.items() if iid in due for v in vids
        }

    def _summed_volumes(self, inv: Inventory, due: set[str]) -> set[str]:
        """The volumes of the summed instances due now: polled with them, so that the sum
        covers the same minutes of each."""
        return {vid for i in self._summed(inv) if i.instance_id in due for vid in i.volume_ids}

    def _complete_until(self, inv: Inventory) -> dict[str, datetime]:
        """By instance, the end of the minutes every one of its volumes was asked for: where
        its rates are summed from theirs (its own counts not asked, whatever its tier), the
        sum stops there."""
        if not self.adaptive:
            return {}
        asked = self.history.asked_until()
        out = {}
        for instance in inv.instances:
            ends = [asked.get(vid) for vid in instance.volume_ids]
            if all(end is not None for end in ends):
                out[instance.instance_id] = min(e for e in ends if e is not None)
        return out

    def _with_past(self, state: ResourceState, past: PastDays) -> ResourceState:
        """The state with its past, the very object of last cycle where neither changed (the
        analysis skips a quiet resource whose state is the same object)."""
        rid = state.ref.resource_id
        kept = self._dated.get(rid)
        if kept is not None and kept[0] is state and kept[1] == past.version:
            return kept[2]
        mine = past.of(rid)
        dated = replace(state, past=mine) if mine else state
        self._dated[rid] = (state, past.version, dated)
        return dated

    def cover(self, covered: frozenset[str]) -> None:
        """Take in the volumes node agents read now. A resource whose coverage moved is due at
        once: one a node stopped reading is read from CloudWatch again this cycle (its history
        backfilled), not a quiet tier's cadence later."""
        if covered is self.covered:
            return
        moved = covered ^ self.covered
        self.covered = covered
        if self._inventory is None:
            return
        for volume in self._inventory.volumes:
            if volume.volume_id in moved:
                self.polled.pop(volume.volume_id, None)
                for iid in volume.instance_ids:
                    self.polled.pop(iid, None)

    def _mark_covered(self, inv: Inventory, found: list[ResourceState]) -> list[ResourceState]:
        """The states of the resources whose rates a node agent reads, marked so (the very
        object of last cycle where the state is unchanged)."""
        if not self.covered and not self._marked:
            return found
        mine = queries.covered_ids(inv, self.covered)
        out = []
        for state in found:
            rid = state.ref.resource_id
            if rid not in mine:
                out.append(state)
                continue
            kept = self._marked.get(rid)
            if kept is None or kept[0] is not state:
                note = "rates read by the node agent on its node: see its /metrics"
                kept = (state, replace(state, node_agent=True, notes=(*state.notes, note)))
                self._marked[rid] = kept
            out.append(kept[1])
        self._marked = {rid: kept for rid, kept in self._marked.items() if rid in mine}
        return out

    def asked_until(self) -> Mapping[str, datetime]:
        """By resource id, the end of the latest window CloudWatch answered for it."""
        return self.history.asked_until()

    def _expected_end(self, now: datetime) -> datetime:
        if self.resolution_s != MINUTE_S:
            return self.end(now)
        return self.history.expected_end(now)

    def end(self, now: datetime) -> datetime:
        """The end of the data a cycle at `now` reads: the newest minute CloudWatch has
        published (`History.data_end`), or the node's newest period."""
        if self.resolution_s != MINUTE_S:
            return data_end(now, self.settle_s, self.resolution_s)
        return self.history.data_end(now)

    def _since(self, now: datetime) -> datetime | None:
        if self.span_s is None:
            return None
        return self.end(now) - timedelta(seconds=self.span_s)

    def _stagger(self, new: set[str], now: datetime) -> None:
        """Spread the next polls of resources seen for the first time over their cadence, so
        that a fleet backfilled in one cycle is not polled again all in one cycle."""
        for rid in new:
            tier = self.tiers.get(rid, Tier.IDLE)
            if tier is Tier.HOT or rid in self.minute:
                continue
            every = self.every(rid, tier)
            offset = zlib.crc32(rid.encode()) % int(every)
            self.polled[rid] = now - timedelta(seconds=offset)

    def _ids_of(self, inv: Inventory) -> set[str]:
        """The inventory's resource ids; a new inventory drops the tiers of those gone."""
        if inv is not self._inventory:
            self._ids = _ids(inv)
            self._alarms = alarm_times(inv)
            self.tiers = {rid: t for rid, t in self.tiers.items() if rid in self._ids}
            self.minute &= self._ids
            self.full &= self._ids
            self.hot_for = {rid: h for rid, h in self.hot_for.items() if rid in self._ids}
            self._recent_until = {
                rid: t for rid, t in self._recent_until.items() if rid in self._ids
            }
            self._emptying &= self._ids
            self._unnamed &= self._ids
            self._inventory = inv
        return self._ids

    def wanted(self, inv: Inventory) -> dict[str, list[MetricQuery]]:
        """What each resource of the inventory is asked for at its tier (every metric, not
        adaptive), when it is due: worked out again only when a tier or the inventory moved."""
        agentless = self.silence.volumes
        if not self.adaptive:
            return queries.for_inventory(
                inv, period_s=self._period(), covered=self.covered, agentless=agentless
            )
        plan = self._plan
        if (
            plan is not None
            and plan[0] is inv
            and plan[1] == self.tier_moves
            and plan[2] is self.covered
            and plan[3] is agentless
        ):
            return plan[4]
        tiers = self._query_tiers(self._ids_of(inv))
        # Only over volumes read once already: a first cycle reads every one of them anyway.
        attached = {i.instance_id: i.volume_ids for i in inv.instances}
        self.guards = {
            iid: vids
            for iid, vids in paying_guards(inv, tiers, self.covered, self.cadence, self._alarms)
            if iid in self.tiers and all(v in self.tiers for v in attached[iid])
        }
        self._guarded = {vid: iid for iid, vids in self.guards.items() for vid in vids}
        self.beside = {
            iid: others
            for iid, vids in self.guards.items()
            if (others := tuple(v for v in attached[iid] if v not in vids))
        }
        self._guard_alarms = {
            iid: min((a for v in self.guards[iid] if (a := self._alarms.get(v))), default=None)
            for iid in self.beside
        }
        self._checked = {iid: c for iid, c in self._checked.items() if iid in self.guards}
        wanted = queries.for_inventory(
            inv, tiers, self.known, self._period(), self.covered, agentless, self.guards
        )
        self._plan = (inv, self.tier_moves, self.covered, agentless, wanted)
        return wanted

    def alarms(self, inv: Inventory) -> Mapping[str, float]:
        """By resource id of the inventory, how soon a full bucket it drains can reach 20 %:
        what its idle cadence follows from (a guard beside other volumes: the soonest of the
        volumes it guards)."""
        self._ids_of(inv)
        if not self._guard_alarms:
            return self._alarms
        mine = {iid: a for iid, a in self._guard_alarms.items() if a is not None}
        return {**self._alarms, **mine}

    def every(self, rid: str, tier: Tier) -> float:
        """Seconds between polls of a resource below the hot tier (`Cadence.of_resource`)."""
        role = self.role(rid)
        alarm = self._guard_alarms.get(rid) if role == "guard_beside" else self._alarms.get(rid)
        return self.cadence.of_resource(tier, alarm, role=role)

    def role(self, rid: str) -> Role:
        """What its instance's physics makes of its cadence (`Cadence.of_resource`)."""
        if rid in self.minute:
            return "minute"
        if rid in self.guards:
            return "guard_beside" if rid in self.beside else "guard"
        if rid in self._guarded:
            return "guarded"
        if rid in self.full:
            return "full"
        return None

    def roles(self) -> dict[str, Role]:
        """By resource id, every role in force (what the projected bill counts)."""
        return roles_of(self.guards, self.minute, self.full, self.beside)

    def _period(self) -> int | None:
        return None if self.resolution_s == MINUTE_S else self.resolution_s

    def _query_tiers(self, ids: Collection[str]) -> dict[str, Tier]:
        return {rid: self.tiers.get(rid, Tier.IDLE) for rid in ids}

    def _settled(self, rid: str, named: frozenset[Bottleneck]) -> bool:
        """Whether every limit that made it hot at its last poll has an alert firing about it
        (`named`: none pending or clearing), its data did not fail, and no bucket of it
        empties before a steady poll would come round again."""
        hot_for = self.hot_for.get(rid)
        return hot_for is not None and hot_for <= named and rid not in self._emptying

    def _due(self, rid: str, alerted: bool, now: datetime) -> bool:
        last = self.polled.get(rid)
        if last is None or not self.adaptive:
            return True
        if rid in self.steady:
            # Read in the cycle its data would otherwise go stale in: its rules and alerts are
            # judged on data every cycle, however late CloudWatch's newest minute comes.
            until = self._recent_until.get(rid)
            # On the end the cycle will read once this cycle's answers are in.
            return until is None or self._expected_end(now) > until
        tier = Tier.HOT if alerted else self.tiers.get(rid, Tier.IDLE)
        every = self.cadence.interval_s if tier is Tier.HOT else self.every(rid, tier)
        checked = self._checked.get(rid) if rid in self.beside else None
        if checked is not None and tier is Tier.IDLE:
            # A guard beside other volumes is read the cycle its counts have moved on by its
            # cadence since its last check: with five-minute counts, as the period that ends
            # it lands, so that a load is seen as soon as reading its volumes would see it.
            landed = self.history.asked_end(now, checked[1])
            moved = (landed - checked[2]).total_seconds() >= every
            return moved and (now - last).total_seconds() >= every / 2
        # Half an interval of slack, so that a cycle a few seconds early is not a whole
        # interval late.
        wait = every - self.cadence.interval_s / 2
        return (now - last).total_seconds() >= wait

    def _decide(
        self, found: list[ResourceState], polled: set[str], alerted: Collection[str], now: datetime
    ) -> set[str]:
        """Decide the tiers of the resources polled now; those that moved up, to fetch again."""
        at = self.end(now)
        raised = set()
        volumes = {s.ref.resource_id: s for s in found if s.is_volume}
        for state in found:
            rid = state.ref.resource_id
            if rid not in polled:
                continue
            previous = self.tiers.get(rid)
            judged = with_outlook(state, self.windows(state), at, at)
            mine = [volumes[v] for v in state.related if v in volumes] if self.adaptive else []
            placed = place(judged, previous, rid in alerted, self.policy, at, mine)
            tier = placed.tier
            self.hot_for[rid] = placed.hot_for
            named = placed.hot_for or frozenset()
            if tier is Tier.HOT and any(b.bottleneck not in named for b in state.buckets()):
                self._unnamed.add(rid)
            else:
                self._unnamed.discard(rid)
            if placed.minute is not (rid in self.minute):
                self.minute ^= {rid}
                self.steady_moves += 1  # what the projected bill follows
            if placed.full is not (rid in self.full):
                self.full ^= {rid}
                self.steady_moves += 1
            empties = _to_empty(judged)
            soon = empties is not None and empties <= self.cadence.of(Tier.HOT, steady=True)
            if soon or _emptied(judged, at, self.empty_window(state)):
                self._emptying.add(rid)
            else:
                self._emptying.discard(rid)
            until = state.recent_until(at)
            if until is not None:
                self._recent_until[rid] = until
            else:
                self._recent_until.pop(rid, None)
            if tier.rank > (previous or Tier.IDLE).rank:
                raised.add(rid)
            if tier is not previous:
                self.tier_moves += 1
            self.tiers[rid] = tier
        return raised

    def _tripped(self, found: list[ResourceState], polled: set[str], now: datetime) -> set[str]:
        """The volumes of the guards read now whose operation counts, over the stretch since
        their last read, came up to what would leave the least of their volumes idle, or
        could not be read: read at once, in the next round."""
        if not self.guards or not self.adaptive:
            return set()
        at = self.end(now)
        states = {s.ref.resource_id: s for s in found}
        out: set[str] = set()
        for iid, vids in self.guards.items():
            guard = states.get(iid)
            if iid not in polled or guard is None:
                continue
            ceiling = min(
                (idle_ceiling(states[v], self.policy, at) for v in vids if v in states),
                default=0.0,
            )
            since = recent(guard.measure(Measure.IOPS), at, self.every(iid, Tier.IDLE) + 60)
            unread = since.status is not Status.OK or not len(since.values)
            if unread:
                out.update(vids)
                continue
            others = self.beside.get(iid, ())
            if not others:
                if max(since.values) >= ceiling:
                    out.update(vids)
                continue
            theirs = [states[o].measure(Measure.IOPS) for o in others if o in states]
            left = self._left_over(iid, guard.measure(Measure.IOPS), others, theirs, at, now)
            if left is None or (left and max(left) >= ceiling):
                out.update(vids)
        return out

    def _left_over(
        self,
        iid: str,
        counts: Series,
        others: tuple[str, ...],
        theirs: list[Series],
        at: datetime,
        now: datetime,
    ) -> list[float] | None:
        """A guard's rates less those of the volumes beside it, period by period, over the
        stretch since its last check that their reads cover (a minute of theirs without a
        datapoint counts as none: AWS publishes none while a volume is idle); the end of it
        is the next check's start. None where one of them has not been read."""
        asked = self.history.asked_until()
        ends = [asked.get(o) for o in others]
        if len(theirs) < len(others) or any(end is None for end in ends):
            return None
        covered = min(e for e in ends if e is not None)
        period = timedelta(seconds=counts.period_s)
        checked = self._checked.get(iid)
        start = checked[0] if checked else at - timedelta(seconds=self.every(iid, Tier.IDLE) + 60)
        end = start
        left = []
        for stamp, rate in counts.until(at).points():
            if stamp < start:
                continue
            if stamp + period > covered:
                break
            read = sum(
                sum(series.between(stamp, stamp + period).values) * series.period_s
                for series in theirs
            )
            left.append(rate - read / counts.period_s)
            end = stamp + period
        landed = self.history.asked_end(now, counts.period_s)
        self._checked[iid] = (end, counts.period_s, landed)
        return left

    def _fetch(self, wanted: list[MetricQuery], now: datetime, stats: FetchStats) -> None:
        """Fetch what the history lacks of `wanted`, and take the answers in as planned."""
        plan = self.history.plan(wanted, now)
        for _, group in plan:
            stats.by_tier.update(self._tier_label(q.resource_id) for q in group if self.billed(q))
        for window, fetched in fetch(self.region.metrics, plan, stats):
            self.history.merge(window, fetched)

    def _tier_label(self, rid: str) -> str:
        return self.tiers.get(rid, Tier.IDLE).value if self.adaptive else FULL


def _to_empty(state: ResourceState) -> float | None:
    """Seconds until its outlook's bucket falls to where it counts as empty
    (`EMPTY_BALANCE_PERCENT`, where the rule on an empty bucket speaks), at the outlook's
    drain; None without an outlook."""
    found = state.outlook
    if found is None:
        return None
    if found.balance_percent <= 0:
        return 0.0
    left = max(found.balance_percent - EMPTY_BALANCE_PERCENT, 0.0) / found.balance_percent
    return found.seconds_to_empty * left


def _emptied(state: ResourceState, at: datetime, window_s: float) -> bool:
    """Whether a bucket of it is empty and was not `window_s` (the window of the rule on an
    empty bucket) and `EMPTIED_MARGIN_S` ago: the outlook has no time to empty left to give,
    and that rule is about to speak. Read every cycle meanwhile, however steadily its alerts
    fire."""
    if window_s <= 0:
        return False
    for bucket in state.buckets():
        balance = recent(state.in_force(bucket.balance), at, window_s + EMPTIED_MARGIN_S)
        empty = len(balance) and balance.values[-1] <= EMPTY_BALANCE_PERCENT
        if empty and max(balance.values) > EMPTY_BALANCE_PERCENT:
            return True
    return False


def paying_guards(
    inv: Inventory,
    tiers: Mapping[str, Tier],
    covered: Collection[str],
    cadence: Cadence,
    alarms: Mapping[str, float],
) -> list[tuple[str, tuple[str, ...]]]:
    """The instances that can stand guard over their volumes (`queries.guards_of`) where
    that costs less than reading them at this cadence (`Cadence.guard_pays`), with them."""
    attached = {i.instance_id: len(i.volume_ids) for i in inv.instances}
    return [
        (iid, vids)
        for iid, vids in queries.guards_of(inv, tiers, covered).items()
        if cadence.guard_pays([alarms.get(v) for v in vids], beside=len(vids) < attached[iid])
    ]


def roles_of(
    guards: Mapping[str, tuple[str, ...]],
    minute: Collection[str] = (),
    full: Collection[str] = (),
    beside: Collection[str] = (),
) -> dict[str, Role]:
    """By resource id, what its physics or its instance's makes of its cadence
    (`Cadence.of_resource`)."""
    out: dict[str, Role] = dict.fromkeys(full, "full")
    out.update(dict.fromkeys(minute, "minute"))
    out.update({vid: "guarded" for vids in guards.values() for vid in vids})
    out.update({iid: "guard_beside" if iid in beside else "guard" for iid in guards})
    return out


_EC2_COUNTS = frozenset(m.name for m in metrics.of(Namespace.EC2) if m.feeds in queries.RATES)


def _ids(inv: Inventory) -> set[str]:
    return (
        {v.volume_id for v in inv.volumes}
        | {i.instance_id for i in inv.instances}
        | {d.db_instance_id for d in inv.db_instances}
    )
