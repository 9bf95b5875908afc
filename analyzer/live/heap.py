"""The daemon's garbage collection: its long-lived data is not traversed again every cycle.

Reference counting frees almost everything a cycle discards; the collector is there for
reference cycles. A full collection traverses every live container, and at 10,000 volumes the
history and the states are about a million of them: one ran nearly every cycle and took a
quarter of a steady cycle's CPU. So after each cycle what is alive is frozen (moved where the
collector does not look; reference counting still frees it), and once an hour everything is
unfrozen and collected in full, so a reference cycle alive at a freeze and dropped later is
freed within the hour.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass

FULL_COLLECTION_EVERY_S = 3600.0


@dataclass
class Heap:
    full_every_s: float = FULL_COLLECTION_EVERY_S
    clock: Callable[[], float] = time.monotonic
    _last_full: float | None = None

    def after_cycle(self) -> None:
        now = self.clock()
        if self._last_full is None or now - self._last_full >= self.full_every_s:
            gc.unfreeze()
            gc.collect()
            self._last_full = now
        gc.freeze()
