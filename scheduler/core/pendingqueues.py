"""The pending workloads of one ClusterQueue: the schedulable heads, the parked and the held ones.

As in Kueue (pkg/queue/cluster_queue.go) a pending workload is either *active* (in the
ordered queue the scheduler pops heads from) or *parked* (BestEffortFIFO's
"inadmissible" set: tried, did not fit, waits for capacity to change). Both count as
pending and both appear in positions. StrictFIFO parks only a head from a namespace its
ClusterQueue does not select: a head that does not fit stays at the head and *blocks* the
queue until capacity changes or a new head arrives.
A *held* workload (``Requeued=False`` after a stop, Kueue's backoff gate) is pending and has a
position, but is never a head until it comes back with ``Requeued=True``.

The queue also keeps two pieces of Kueue's scheduling state: where each workload's last flavor
search stopped (``LastAssignment``, workload.Info in Kueue: kept while it stays queued, dropped when
it leaves or is replaced, outdated for the whole queue when its allocatable quota changes), and the
*sticky* workload of a BestEffortFIFO queue, the preemptor waiting for its evictions, which stays
its queue's head until it leaves the queue (pkg/cache/queue/cluster_queue.go, stickyWorkload).

With Kueue's SchedulingEquivalenceHashing a BestEffortFIFO head parked because it did not fit parks
every active workload of its shape (priority and pod sets) with it, and one of that shape that arrives
later is parked at once, until the queue's next retry (cluster_queue.go, handleInadmissibleHash).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Any

from sortedcontainers import SortedKeyList

from scheduler.core.flavorassigning import LastAssignment
from scheduler.core.kinds import QueueingStrategy
from scheduler.core.workloads import Workload, WorkloadKey, order_key


_CHANGES = itertools.count(1)


class PendingQueue:
    """Pending workloads of one ClusterQueue, with a change counter."""

    __slots__ = (
        "name", "strategy", "_members", "_active", "_parked", "_held", "_blocked_head", "_sticky", "_last",
        "_allocatable", "_parked_shapes", "generation", "reorder",
    )

    def __init__(self, name: str, strategy: QueueingStrategy) -> None:
        self.name = name
        self.strategy = strategy
        self._members: dict[WorkloadKey, Workload] = {}
        self._active: SortedKeyList = SortedKeyList(key=order_key)
        self._parked: set[WorkloadKey] = set()
        self._held: set[WorkloadKey] = set()
        self._blocked_head: WorkloadKey | None = None
        self._sticky: WorkloadKey | None = None
        # Where each search stopped, with the scheduling cycle and the allocatable generation it was made in.
        self._last: dict[WorkloadKey, _Recorded] = {}
        # Kueue's AllocatableResourceGeneration: moves when admitted quota leaves or the queue's quota changes.
        self._allocatable = 0
        # Shapes parked together (park_equivalent) since the last retry: Kueue's hashToBulkMoveReason.
        self._parked_shapes: set[tuple] = set()
        # Renewed whenever the ordered pending list (and so some position) changes; drawn from one
        # process-wide counter so that a deleted and re-created queue never repeats an old value.
        self.generation = next(_CHANGES)
        # Set where the order is not the workloads' own but moves with time (admission fair sharing):
        # given the sticky key, the sort key of the order now. The head is then the least by it.
        self.reorder: Callable[[WorkloadKey | None], Callable[[Workload], Any]] | None = None

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, key: WorkloadKey) -> bool:
        return key in self._members

    def get(self, key: WorkloadKey) -> Workload | None:
        return self._members.get(key)

    def members(self) -> Collection[Workload]:
        """All pending workloads (active and parked), in no particular order."""
        return self._members.values()

    def is_parked(self, key: WorkloadKey) -> bool:
        return key in self._parked

    def add(self, workload: Workload) -> None:
        """Queue a workload as active (held if its requeue is held); it must not be present."""
        self._members[workload.key] = workload
        if workload.requeue_held:
            self._held.add(workload.key)
        elif self._parked_shapes and shape_of(workload) in self._parked_shapes:
            self._parked.add(workload.key)
        else:
            self._active.add(workload)
        self.generation = next(_CHANGES)

    def remove(self, key: WorkloadKey) -> Workload | None:
        """Drop a workload from the queue (active or parked); returns it, or None."""
        workload = self._members.pop(key, None)
        if workload is None:
            return None
        if key in self._parked:
            self._parked.discard(key)
        elif key in self._held:
            self._held.discard(key)
        else:
            self._active.remove(workload)
        if self._blocked_head == key:
            self._blocked_head = None
        if self._sticky == key:
            self._sticky = None
        self._last.pop(key, None)
        self.generation = next(_CHANGES)
        return workload

    def head(self) -> Workload | None:
        """The next workload to try, or None when empty or blocked on its current head."""
        head = self._first()
        if head is None or head.key == self._blocked_head:
            return None
        return head

    def blocked(self) -> Workload | None:
        """The head that blocks the queue until capacity changes (StrictFIFO, or a preemptor
        waiting for its evictions), if any."""
        head = self._first()
        if head is not None and head.key == self._blocked_head:
            return head
        return None

    def _first(self) -> Workload | None:
        """The sticky workload while it is active, else the first in queue order."""
        sticky_active = self._sticky is not None and self._sticky not in self._parked and self._sticky not in self._held
        if self.reorder is not None:
            # usage comes before stickiness in Kueue's queueOrderingFunc
            return min(self._active, key=self.reorder(self._sticky if sticky_active else None), default=None)
        if sticky_active:
            return self._members[self._sticky]  # type: ignore[index]
        return self._active[0] if self._active else None

    def park(self, key: WorkloadKey) -> None:
        """Move an active workload aside until capacity changes (BestEffortFIFO)."""
        workload = self._members.get(key)
        if workload is None or key in self._parked or key in self._held:
            return
        self._active.remove(workload)
        self._parked.add(key)

    def park_equivalent(self, key: WorkloadKey) -> None:
        """Park ``key`` and, in a BestEffortFIFO queue, every active workload of its shape, and remember the
        shape so that one arriving before the next retry is parked too (Kueue's SchedulingEquivalenceHashing)."""
        workload = self._members.get(key)
        self.park(key)
        if workload is None or self.strategy is not QueueingStrategy.BEST_EFFORT_FIFO:
            return
        shape = shape_of(workload)
        self._parked_shapes.add(shape)
        for other in [w for w in self._active if shape_of(w) == shape]:
            self.park(other.key)

    def block(self, key: WorkloadKey) -> None:
        """Stop offering ``key`` as head until capacity changes or the head changes."""
        self._blocked_head = key

    def lift_block(self, key: WorkloadKey) -> None:
        """Offer ``key`` as head again if it is the blocked one (it is to be retried next cycle)."""
        if self._blocked_head == key:
            self._blocked_head = None

    def stick(self, key: WorkloadKey) -> None:
        """BestEffortFIFO: keep ``key`` (a preemptor waiting for its evictions) first until it leaves.
        Kueue sets it on every requeue pending preemption; StrictFIFO queues have none."""
        if self.strategy is QueueingStrategy.BEST_EFFORT_FIFO and key in self._members and self._sticky != key:
            self._sticky = key
            self.generation = next(_CHANGES)  # the visibility API lists it first: cached pages are stale

    @property
    def sticky(self) -> WorkloadKey | None:
        return self._sticky

    def last_assignment(self, key: WorkloadKey, cycle: int, keep_recent: bool) -> LastAssignment | None:
        """Where ``key``'s last flavor search stopped, or None (start over): Kueue's lastAssignmentOutdated.
        A search made before the allocatable quota last changed is outdated, unless ``keep_recent`` (Kueue's
        FlavorFungibilityPreserveScanProgress) and it was made in this ``cycle`` or the one before."""
        recorded = self._last.get(key)
        if recorded is None:
            return None
        if keep_recent and cycle - recorded.cycle <= 1:
            return recorded.last
        return recorded.last if recorded.generation >= self._allocatable else None

    def remember_assignment(self, key: WorkloadKey, last: LastAssignment | None, cycle: int = 0) -> None:
        """Record (or with None, reset) where ``key``'s flavor search stopped in ``cycle``."""
        if last is None or key not in self._members:
            self._last.pop(key, None)
        else:
            self._last[key] = _Recorded(last, cycle, self._allocatable)

    def allocatable_changed(self) -> None:
        """The queue's allocatable quota changed (Kueue's AllocatableResourceGeneration moved): searches
        recorded before now are outdated."""
        self._allocatable += 1

    def unblock(self) -> None:
        """Offer the blocked head again, for a change that concerns it alone (its namespace)."""
        self._blocked_head = None

    def unpark(self, stays_parked: Callable[[Workload], bool] | None = None) -> None:
        """Return parked workloads to the active queue (all but those ``stays_parked`` keeps); shapes parked
        together are forgotten (Kueue's queueInadmissibleWorkloads)."""
        self._parked_shapes.clear()
        kept = set()
        for key in self._parked:
            workload = self._members[key]
            if stays_parked is not None and stays_parked(workload):
                kept.add(key)
            else:
                self._active.add(workload)
        self._parked = kept

    def reordered(self) -> None:
        """The order moved without a member coming or going (a LocalQueue's usage was resampled)."""
        self.generation = next(_CHANGES)

    def has_work(self) -> bool:
        return self.head() is not None

    def active_in_order(self) -> Iterator[Workload]:
        return iter(self._active)


def shape_of(workload: Workload) -> tuple:
    """What Kueue's scheduling hash reads of a workload (workload.computeSchedulingHash): its priority and
    its pod sets (names, counts, requests, node selectors, tolerations, topology requests)."""
    return workload.priority, workload.pod_sets


@dataclass(frozen=True, slots=True)
class _Recorded:
    last: LastAssignment
    cycle: int
    generation: int
