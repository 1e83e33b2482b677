"""A pending queue keeps workloads parked with their shape in groups that a retry returns whole; it must
offer the same heads, positions and parked sets as the plain model of Kueue's queue it replaces: every
workload either active (in queue order), parked or held, a parked shape parking one that arrives, a
retry returning every parked workload but those a selector keeps (pkg/cache/queue/cluster_queue.go)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings, strategies as st

from scheduler.core.kinds import QueueingStrategy
from scheduler.core.pendingqueues import PendingQueue, shape_of
from scheduler.core.workloads import Workload, order_key
from scheduler_builders import WorkloadBuilder


class PlainQueue:
    """Every workload in one of three sets, the head the least active one by queue order."""

    def __init__(self, strategy: QueueingStrategy) -> None:
        self.strategy = strategy
        self.members: dict = {}
        self.parked: set = set()
        self.held: set = set()
        self.parked_shapes: set = set()
        self.sticky = None

    def add(self, workload: Workload) -> None:
        self.members[workload.key] = workload
        if workload.requeue_held:
            self.held.add(workload.key)
        elif shape_of(workload) in self.parked_shapes:
            self.parked.add(workload.key)

    def remove(self, key) -> None:
        self.members.pop(key, None)
        self.parked.discard(key)
        self.held.discard(key)
        if self.sticky == key:
            self.sticky = None

    def active(self) -> list[Workload]:
        return sorted((w for k, w in self.members.items() if k not in self.parked and k not in self.held),
                      key=order_key)

    def head(self) -> Workload | None:
        active = self.active()
        if self.sticky is not None and self.sticky in self.members and self.sticky not in self.parked \
                and self.sticky not in self.held:
            return self.members[self.sticky]
        return active[0] if active else None

    def park(self, key) -> None:
        if key in self.members and key not in self.held:
            self.parked.add(key)

    def park_equivalent(self, key) -> None:
        self.park(key)
        if self.strategy is not QueueingStrategy.BEST_EFFORT_FIFO:
            return
        shape = shape_of(self.members[key])
        self.parked_shapes.add(shape)
        for workload in self.active():
            if shape_of(workload) == shape:
                self.parked.add(workload.key)

    def unpark(self, stays_parked) -> None:
        self.parked_shapes.clear()
        self.parked = {k for k in self.parked if stays_parked is not None and stays_parked(self.members[k])}


SHAPES = ("1", "2", "4")


def _workload(index: int, cpu: str, priority: int, namespace: str, held: bool) -> Workload:
    workload = WorkloadBuilder(f"w{index}", namespace).priority(priority).created(float(index % 7)).request(
        cpu=cpu).obj()
    return dataclasses.replace(workload, requeue_held_by="PodsReadyTimeout") if held else workload


_ADD = st.tuples(st.just("add"), st.sampled_from(SHAPES), st.integers(0, 1), st.sampled_from(["a", "b"]),
                 st.booleans())
_OTHER = st.tuples(st.sampled_from(["park_head", "park_head_alone", "unpark", "unpark_keeping_b", "remove",
                                    "stick"]), st.integers(0, 40))


@settings(max_examples=300, deadline=None)
@given(strategy=st.sampled_from(list(QueueingStrategy)), steps=st.lists(st.one_of(_ADD, _ADD, _OTHER),
                                                                           max_size=60))
def test_grouped_parking_offers_the_heads_and_order_of_the_plain_queue(strategy, steps):
    queue, plain = PendingQueue("cq", strategy), PlainQueue(strategy)
    added = 0
    keeping_b = lambda workload: workload.namespace == "b"  # noqa: E731 - a selector that leaves out "b"
    for step in steps:
        kind = step[0]
        if kind == "add":
            workload = _workload(added, *step[1:])
            added += 1
            queue.add(workload)
            plain.add(workload)
        elif kind in ("park_head", "park_head_alone") and (head := plain.head()) is not None:
            assert queue.head() is not None and queue.head().key == head.key
            (queue.park_equivalent if kind == "park_head" else queue.park)(head.key)
            (plain.park_equivalent if kind == "park_head" else plain.park)(head.key)
        elif kind in ("unpark", "unpark_keeping_b"):
            queue.unpark(keeping_b if kind == "unpark_keeping_b" else None)
            plain.unpark(keeping_b if kind == "unpark_keeping_b" else None)
        elif kind in ("remove", "stick") and plain.members:
            key = sorted(plain.members)[step[1] % len(plain.members)]
            if kind == "remove":
                queue.remove(key)
                plain.remove(key)
            elif strategy is QueueingStrategy.BEST_EFFORT_FIFO:
                queue.stick(key)
                plain.sticky = key
        expected_head = plain.head()
        assert (queue.head() and queue.head().key) == (expected_head and expected_head.key)
        assert [w.key for w in queue.active_in_order()] == [w.key for w in plain.active()]
        assert {k for k in plain.members if queue.is_parked(k)} == plain.parked
        assert len(queue) == len(plain.members)


def test_a_retry_returns_a_deep_queue_of_one_shape_in_one_step():
    queue = PendingQueue("cq", QueueingStrategy.BEST_EFFORT_FIFO)
    workloads = [_workload(i, "1", 0, "a", False) for i in range(1000)]
    for workload in workloads:
        queue.add(workload)
    queue.park_equivalent(queue.head().key)
    assert queue.head() is None and all(queue.is_parked(w.key) for w in workloads)
    queue.unpark()
    # the group came back whole: its members are no longer in a list of their own outside it
    assert queue.head().key == min(workloads, key=order_key).key
    assert not queue._active and len(queue._groups) == 1
