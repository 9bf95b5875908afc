import gc
import platform
import weakref

import pytest

from analyzer.live.heap import Heap, give_back, settle_allocator


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture(autouse=True)
def _thawed():
    yield
    gc.unfreeze()


def test_what_lives_through_a_cycle_is_frozen_and_freed_within_the_hour():
    now = [0.0]
    heap = Heap(clock=lambda: now[0])
    a, b = Node(), Node()
    a.other, b.other = b, a  # a reference cycle: only the collector frees it
    gone = weakref.ref(a)
    heap.after_cycle()
    assert gc.get_freeze_count() > 0
    del a, b
    now[0] = 3599.0
    heap.after_cycle()
    gc.collect()
    assert gone() is not None  # frozen: the collector does not look at it
    now[0] = 3600.0
    heap.after_cycle()  # the hourly full collection
    assert gone() is None


def test_what_is_dropped_is_freed_at_once_even_when_frozen():
    heap = Heap(clock=lambda: 0.0)
    plain = Node()
    gone = weakref.ref(plain)
    heap.after_cycle()
    del plain
    assert gone() is None  # reference counting still frees it


@pytest.mark.skipif(
    not platform.libc_ver()[0].startswith("glibc"), reason="the C allocator is not glibc"
)
def test_glibcs_allocator_is_told_its_threshold_and_arenas() -> None:
    assert settle_allocator()
    Heap()  # and again, as each daemon does: once is enough
    assert settle_allocator.cache_info().currsize == 1


def resident_pages() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1])


@pytest.mark.skipif(
    not platform.libc_ver()[0].startswith("glibc"), reason="the C allocator is not glibc"
)
def test_the_holes_a_cycle_leaves_in_the_heap_go_back_to_the_system() -> None:
    settle_allocator()
    # Blocks under the mmap threshold live in the heap; one kept last holds its top, so
    # what is freed below it is a hole only a trim returns.
    blocks = [bytearray(64 * 1024) for _ in range(400)]
    for block in blocks:
        block[::4096] = b"x" * len(block[::4096])  # touched: resident
    kept = blocks[-1]
    del blocks
    holes = resident_pages()
    assert give_back()
    assert resident_pages() < holes - 1000  # of the 6,400 pages freed, most are returned
    assert kept[0] == ord("x")
