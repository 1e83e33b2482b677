"""The visibility page cache and the queue generations its keys rely on (pure)."""

import pytest

from scheduler.core.kinds import QueueingStrategy
from scheduler.core.pendingqueues import PendingQueue
from scheduler.visibility.pagecache import NoPageCache, PageCache

from scheduler_builders import WorkloadBuilder


def make_workload(name):
    return WorkloadBuilder(name).obj()


def test_least_recently_used_page_goes_first():
    cache = PageCache(max_entries=2)
    cache.put("a", b"1")
    cache.put("b", b"2")
    assert cache.get("a") == b"1"  # a is now the most recent
    cache.put("c", b"3")
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (b"1", None, b"3")
    assert len(cache) == 2


def test_bytes_are_bounded_too_and_a_huge_page_is_not_kept():
    cache = PageCache(max_entries=100, max_bytes=40)
    cache.put("a", b"x" * 10)
    cache.put("b", b"y" * 10)
    cache.put("c", b"z" * 10)
    cache.put("d", b"w" * 10)
    cache.put("e", b"v" * 10)  # 50 bytes > 40: the oldest goes
    assert cache.get("a") is None and cache.bytes == 40 and len(cache) == 4
    cache.put("huge", b"h" * 11)  # more than a quarter of the budget
    assert cache.get("huge") is None and cache.bytes == 40
    cache.put("e", b"v")  # replacing an entry counts its new size only
    assert cache.bytes == 31


@pytest.mark.parametrize("bounds", [dict(max_entries=0), dict(max_bytes=0)])
def test_a_cache_without_room_is_refused(bounds):
    with pytest.raises(ValueError, match="at least 1"):
        PageCache(**bounds)


def test_generation_changes_with_membership_and_never_repeats_for_a_new_queue():
    old = PendingQueue("cq", QueueingStrategy.BEST_EFFORT_FIFO)
    seen = {old.generation}
    old.add(make_workload("a"))
    seen.add(old.generation)
    old.remove(make_workload("a").key)
    seen.add(old.generation)
    assert len(seen) == 3
    # the same queue deleted and created again, with the same content as before: a fresh generation
    again = PendingQueue("cq", QueueingStrategy.BEST_EFFORT_FIFO)
    again.add(make_workload("a"))
    assert again.generation not in seen


def test_the_cache_turned_off_keeps_nothing():
    off = NoPageCache()
    off.put(("cq", 0), b"page")
    assert off.get(("cq", 0)) is None and len(off) == 0
