"""The volumes node agents read, as the Prometheus that scrapes them last said.

Asked again each cycle (`node_coverage_url`): a covered volume's rates are left to its node,
which alerts on them, and cost nothing; where Prometheus fails to answer, no volume is covered
and every rate comes from CloudWatch. The set is new only when the answer changes, so that what
is worked out from it (each poller's plan, the bill) is worked out again only then.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from analyzer.collect.coverage import NodeCoverage
from analyzer.model.resources import Inventory
from analyzer.settings import Settings


@dataclass
class Coverage:
    prometheus: NodeCoverage | None = None
    """Which volumes node agents read, asked of Prometheus; None: every volume's rates from
    CloudWatch."""
    covered: frozenset[str] = frozenset()
    """The volumes node agents read, as Prometheus last said: their rates are left to them."""

    @classmethod
    def of(cls, settings: Settings) -> Coverage:
        url = settings.node_coverage_url
        return cls(NodeCoverage(url) if url else None)

    def refresh(self) -> frozenset[str]:
        """Ask Prometheus again which volumes node agents read (none where it fails)."""
        if self.prometheus is not None:
            self.covered = self.prometheus.refresh()
        return self.covered

    def volumes(self, inventories: Iterable[Inventory]) -> int:
        """How many volumes of these inventories node agents read, as last asked."""
        return sum(1 for inv in inventories for v in inv.volumes if v.volume_id in self.covered)
