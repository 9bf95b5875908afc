"""The daemon's garbage collection: its long-lived data is not traversed again every cycle.

Reference counting frees almost everything a cycle discards; the collector is there for
reference cycles. A full collection traverses every live container, and at 10,000 volumes the
history and the states are about a million of them: one ran nearly every cycle and took a
quarter of a steady cycle's CPU. So after each cycle what is alive is frozen (moved where the
collector does not look; reference counting still frees it), and once an hour everything is
unfrozen and collected in full, so a reference cycle alive at a freeze and dropped later is
freed within the hour.

The C allocator is told two things where it is glibc's (Linux; the container image): answers
of a megabyte or more, parsed on the fetch threads, go back to the system when freed (a fixed
mmap threshold; glibc's own rises after the first such free, and the rest then stays in the
heap as holes), and those threads share two arenas, not one each, so the holes are few. After
each cycle the free pages within the heap go back too (`malloc_trim`): what a cycle parsed and
dropped (a weighed fortnight, a backfill) leaves holes the next cycles reuse only in part, and
at 10,000 volumes they grew the resident set by a few megabytes an hour. Giving them back
takes well under a millisecond.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

FULL_COLLECTION_EVERY_S = 3600.0
M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8
"""mallopt's parameters (glibc's malloc.h)."""
MMAP_THRESHOLD = 128 * 1024
"""glibc's starting threshold, kept: larger blocks are mapped, and unmapped when freed."""
ARENAS = 2


@cache
def _glibc() -> ctypes.CDLL | None:
    """The C library where it is glibc; None elsewhere (musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    if libc is None or not getattr(libc, "gnu_get_libc_version", None):
        return None
    return libc


@cache
def settle_allocator() -> bool:
    """Set glibc's mmap threshold and arena count, once; False where the C library is not
    glibc (nothing to set)."""
    libc = _glibc()
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) and mallopt(M_ARENA_MAX, ARENAS))


def give_back() -> bool:
    """Return the heap's free pages to the system (glibc's `malloc_trim`); False where there
    is nothing to call or nothing was returned."""
    trim = getattr(_glibc(), "malloc_trim", None)
    return bool(trim(0)) if trim is not None else False


@dataclass
class Heap:
    full_every_s: float = FULL_COLLECTION_EVERY_S
    clock: Callable[[], float] = time.monotonic
    _last_full: float | None = None

    def __post_init__(self) -> None:
        settle_allocator()

    def after_cycle(self) -> None:
        now = self.clock()
        if self._last_full is None or now - self._last_full >= self.full_every_s:
            gc.unfreeze()
            gc.collect()
            self._last_full = now
        gc.freeze()
        give_back()
