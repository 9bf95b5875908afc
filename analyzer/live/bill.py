"""The month's GetMetricData bill of watching the inventory, and the budgets that bound it.

Each cycle the bill is projected from what the pollers ask in today's tiers (CloudWatch bills
no query a node's NVMe statistics answer), and worked out again only when the inventory, a tier,
the set of hot resources read at the steady cadence, or the coverage changed. Under a budget
(`budget`, or an account's own) the quiet tiers' cadences are stretched until the bill, every
hot resource counted at the interval, keeps to it, for the next cycles: the total budget
stretches every scope alike, an account's budget that account's scopes, and each poller takes
the longer of the two. A budget that starts or stops binding is said once, when it does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import structlog

from analyzer.analyze import billing
from analyzer.analyze.prices import PriceList
from analyzer.analyze.tiers import alarm_times
from analyzer.collect import queries
from analyzer.collect.queries import MetricQuery
from analyzer.live.polling import RegionPoller, paying_guards, roles_of
from analyzer.model.costs import Cadence, Projection
from analyzer.model.metrics import Tier
from analyzer.model.resources import Inventory
from analyzer.settings import Settings

log = structlog.get_logger(__name__)


@dataclass
class Bill:
    """The projected bill, by scope and in all, and the cadence each budget last set."""

    settings: Settings
    projections: dict[str, Projection] = field(default_factory=dict)
    """The last projection, by scope."""
    _projected: (
        tuple[dict[str, Inventory], tuple[tuple[int, int], ...], frozenset[str], Projection] | None
    ) = field(default=None, repr=False)
    """The last projection, with the inventories, the tier and steady moves and the coverage
    it was worked out from."""
    _budget_cadences: dict[str, Cadence] = field(default_factory=dict, repr=False)
    """The cadence each budget (the total one under "") last set."""

    @property
    def by_scope(self) -> dict[str, float]:
        """The last projection's dollars a month, by scope."""
        return {where: p.dollars() for where, p in self.projections.items()}

    def cadence(self) -> Cadence:
        """The settings' cadences: what each tier is polled on where no budget binds."""
        s = self.settings
        return Cadence(s.interval, s.active_cadence, s.idle_cadence)

    def costs(
        self, price_list: PriceList, found: dict[str, Inventory], covered: frozenset[str]
    ) -> dict[str, dict[str, Projection]]:
        """Per scope, from the inventory alone: the month's bill with every resource idle
        (its instances standing guard where they can: `queries.guards_of`), active or hot,
        and under `polling: full` (every metric every interval); the rates of the volumes node
        agents read (`covered`) cost nothing."""
        price = price_list.cloudwatch_per_1000_metrics / 1000
        cadence = self.cadence()
        out: dict[str, dict[str, Projection]] = {}
        for region, inv in found.items():
            full = queries.for_inventory(inv, None, covered=covered)
            alarms = alarm_times(inv)
            row = {}
            for tier in Tier:
                tiers = dict.fromkeys(full, tier)
                # All idle, the instances whose volumes their counts bound stand guard.
                guards = dict(paying_guards(inv, tiers, covered, cadence, alarms))
                wanted = queries.for_inventory(inv, tiers, covered=covered, guards=guards)
                row[tier.value] = billing.project(
                    wanted, tiers, cadence, price, alarms, roles=roles_of(guards)
                )
            row["full"] = billing.project(full, dict.fromkeys(full, Tier.HOT), cadence, price)
            out[region] = row
        return out

    def project(
        self,
        inventories: dict[str, Inventory],
        pollers: Mapping[str, RegionPoller],
        covered: frozenset[str],
        price_list: PriceList | None,
        *,
        adaptive: bool,
        billed: Callable[[MetricQuery], bool],
    ) -> Projection:
        """The month's bill in today's tiers; under a budget, the cadences that keep to it
        (for the next cycles). Worked out again only when the inventory, a tier, the steady
        resources or the coverage changed. `pollers`: by scope, one for each of the
        inventories at least."""
        moves = tuple((p.tier_moves, p.steady_moves) for p in pollers.values())
        known = self._projected
        if (
            known is not None
            and known[0] is inventories
            and known[1] == moves
            and known[2] is covered
        ):
            return known[3]
        projection = self._afresh(inventories, pollers, price_list, adaptive, billed)
        self._projected = (inventories, moves, covered, projection)
        return projection

    def _afresh(
        self,
        inventories: dict[str, Inventory],
        pollers: Mapping[str, RegionPoller],
        price_list: PriceList | None,
        adaptive: bool,
        billed: Callable[[MetricQuery], bool],
    ) -> Projection:
        """Each scope's bill in today's tiers; under the budgets, the cadences that keep to
        them: the total budget stretches every scope alike, an account's own budget that
        account's scopes, and each poller takes the longer of the two."""
        price = price_list.cloudwatch_per_1000_metrics / 1000 if price_list else 1e-5
        base = self.cadence()
        asked: dict[str, tuple[dict[str, list[MetricQuery]], dict[str, Tier]]] = {}
        for where, inv in inventories.items():
            poller = pollers[where]
            wanted = {
                rid: [q for q in found if billed(q)] for rid, found in poller.wanted(inv).items()
            }
            asked[where] = (wanted, {rid: poller.tiers.get(rid, Tier.IDLE) for rid in wanted})
        alarms = {where: pollers[where].alarms(inv) for where, inv in inventories.items()}
        # The budgets weigh every hot resource at the interval: what they stretch the quiet
        # tiers by does not move each time an alert starts or stops firing steadily.
        roles = {where: pollers[where].roles() for where in inventories}
        unbounded = {
            w: billing.project(q, t, base, price, alarms[w], roles=roles[w])
            for w, (q, t) in asked.items()
        }
        cadences = dict.fromkeys(asked, base)
        if adaptive:
            budget = self.settings.budget
            if budget is not None:
                whole = billing.within(budget, _summed(unbounded.values(), price), base)
                self._say_budget("", budget, _summed(unbounded.values(), price), whole)
                cadences = dict.fromkeys(asked, whole)
            for account_id, own in self._account_budgets().items():
                mine = [w for w, inv in inventories.items() if inv.account_id == account_id]
                bill = _summed((unbounded[w] for w in mine), price)
                cadence = billing.within(own, bill, base)
                self._say_budget(account_id, own, bill, cadence)
                for w in mine:
                    cadences[w] = _longer(cadences[w], cadence)
            for where in asked:
                pollers[where].cadence = cadences[where]
        steady = {where: pollers[where].steady for where in inventories}
        final = {
            w: billing.project(q, t, cadences[w], price, alarms[w], steady[w], roles[w])
            for w, (q, t) in asked.items()
        }
        self.projections = final
        return _summed(final.values(), price)

    def _account_budgets(self) -> dict[str, float]:
        return {a.id: a.budget for a in self.settings.accounts if a.budget is not None}

    def _say_budget(self, account_id: str, budget: float, bill: Projection, now: Cadence) -> None:
        """Log a budget that starts or stops binding, once, when it does."""

        def said(cadence: Cadence) -> tuple[float, float, bool]:
            """What the line says: the cadences, and whether the budget binds."""
            return cadence.active_s, cadence.idle_s, cadence != self.cadence()

        before = self._budget_cadences.get(account_id, self.cadence())
        self._budget_cadences[account_id] = now
        if said(before) == said(now):
            return  # the stretch moved, and with it no cadence said
        log.warning(
            "budget.binding" if now != self.cadence() else "budget.released",
            account_id=account_id or None,
            budget_dollars_per_month=budget,
            unbounded_dollars_per_month=round(bill.dollars(), 2),
            active_cadence_s=round(now.active_s),
            idle_cadence_s=round(now.idle_s),
        )


def _summed(bills: Iterable[Projection], price: float) -> Projection:
    metrics = dict.fromkeys(Tier, 0.0)
    for bill in bills:
        for tier, count in bill.metrics.items():
            metrics[tier] += count
    return Projection(metrics, price)


def _longer(one: Cadence, other: Cadence) -> Cadence:
    """The slower of two cadences, tier by tier (the hot one is the interval in both)."""
    return Cadence(
        one.interval_s,
        max(one.active_s, other.active_s),
        max(one.idle_s, other.idle_s),
        max(one.stretch, other.stretch),
    )
