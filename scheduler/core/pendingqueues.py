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

import heapq
import itertools
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Any

from sortedcontainers import SortedKeyList

from scheduler.core.flavorassigning import LastAssignment
from scheduler.core.kinds import QueueingStrategy
from scheduler.core.workloads import Workload, WorkloadKey, order_key


_CHANGES = itertools.count(1)


class _ShapeGroup:
    """The pending workloads of one shape parked together (park_equivalent), in queue order: parked until
    the queue's next retry, then *returned*, when they are active again without being moved one by one."""

    __slots__ = ("members", "returned")

    def __init__(self, members: list[Workload]) -> None:
        self.members: SortedKeyList = SortedKeyList(members, key=order_key)
        self.returned = False


class PendingQueue:
    """Pending workloads of one ClusterQueue, with a change counter.

    Workloads parked with their shape stay in their shape's group (``_ShapeGroup``) for as long as they
    are pending: a retry returns a group in one step and a head that does not fit parks it again in one,
    so a deep queue of few shapes costs its shapes, not its length, per retry (a forecast runs one at
    every end). A returned group is active: its first member competes for head with the active list.
    """

    __slots__ = (
        "name", "strategy", "_members", "_active", "_parked", "_groups", "_held", "_blocked_head", "_sticky",
        "_last", "_allocatable", "generation", "reorder",
    )

    def __init__(self, name: str, strategy: QueueingStrategy) -> None:
        self.name = name
        self.strategy = strategy
        self._members: dict[WorkloadKey, Workload] = {}
        # Active workloads not in a shape group.
        self._active: SortedKeyList = SortedKeyList(key=order_key)
        # Workloads parked one by one (park), not with their shape.
        self._parked: set[WorkloadKey] = set()
        # Shapes parked together since they were first parked; while one is, none of its shape is in _active.
        # A parked group is Kueue's hashToBulkMoveReason: one of its shape that arrives is parked at once.
        self._groups: dict[tuple, _ShapeGroup] = {}
        self._held: set[WorkloadKey] = set()
        self._blocked_head: WorkloadKey | None = None
        self._sticky: WorkloadKey | None = None
        # Where each search stopped, with the scheduling cycle and the allocatable generation it was made in.
        self._last: dict[WorkloadKey, _Recorded] = {}
        # Kueue's AllocatableResourceGeneration: moves when admitted quota leaves or the queue's quota changes.
        self._allocatable = 0
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
        if key in self._parked:
            return True
        group = self._group_holding(key)
        return group is not None and not group.returned

    def _group_holding(self, key: WorkloadKey) -> _ShapeGroup | None:
        """The shape group ``key`` is in, or None."""
        workload = self._members.get(key)
        if workload is None or not self._groups or key in self._held or key in self._parked:
            return None
        group = self._groups.get(shape_of(workload))
        return group if group is not None and workload in group.members else None

    def add(self, workload: Workload) -> None:
        """Queue a workload as active (held if its requeue is held); it must not be present."""
        self._members[workload.key] = workload
        group = self._groups.get(shape_of(workload)) if self._groups else None
        if workload.requeue_held:
            self._held.add(workload.key)
        elif group is not None:
            group.members.add(workload)  # parked at once while its shape is, active once returned
        else:
            self._active.add(workload)
        self.generation = next(_CHANGES)

    def remove(self, key: WorkloadKey) -> Workload | None:
        """Drop a workload from the queue (active or parked); returns it, or None."""
        group = self._group_holding(key)
        workload = self._members.pop(key, None)
        if workload is None:
            return None
        if key in self._parked:
            self._parked.discard(key)
        elif key in self._held:
            self._held.discard(key)
        elif group is not None:
            self._leave_group(group, workload)
        else:
            self._active.remove(workload)
        if self._blocked_head == key:
            self._blocked_head = None
        if self._sticky == key:
            self._sticky = None
        self._last.pop(key, None)
        self.generation = next(_CHANGES)
        return workload

    def _leave_group(self, group: _ShapeGroup, workload: Workload) -> None:
        group.members.remove(workload)
        if not group.members and group.returned:  # a parked shape stays parked, empty, until the next retry
            del self._groups[shape_of(workload)]

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
        sticky_active = (self._sticky is not None and self._sticky not in self._held
                         and not self.is_parked(self._sticky))
        if self.reorder is not None:
            # usage comes before stickiness in Kueue's queueOrderingFunc
            return min(self.active_in_order(), key=self.reorder(self._sticky if sticky_active else None),
                       default=None)
        if sticky_active:
            return self._members[self._sticky]  # type: ignore[index]
        first = self._active[0] if self._active else None
        for group in self._groups.values():
            if group.returned and (first is None or order_key(group.members[0]) < order_key(first)):
                first = group.members[0]
        return first

    def park(self, key: WorkloadKey) -> None:
        """Move an active workload aside until capacity changes (BestEffortFIFO)."""
        workload = self._members.get(key)
        if workload is None or key in self._parked or key in self._held:
            return
        group = self._group_holding(key)
        if group is not None:
            if not group.returned:
                return
            self._leave_group(group, workload)
        else:
            self._active.remove(workload)
        self._parked.add(key)

    def park_equivalent(self, key: WorkloadKey) -> None:
        """Park ``key`` and, in a BestEffortFIFO queue, every active workload of its shape, and park the
        shape so that one arriving before the next retry is parked too (Kueue's SchedulingEquivalenceHashing)."""
        workload = self._members.get(key)
        if workload is None or self.strategy is not QueueingStrategy.BEST_EFFORT_FIFO:
            self.park(key)
            return
        if key in self._parked or key in self._held:
            return
        shape = shape_of(workload)
        group = self._groups.get(shape)
        if group is None:
            # The shape's first park: its active workloads leave the active list once, into its group.
            same = [w for w in self._active if shape_of(w) == shape]
            if len(same) * 8 < len(self._active):
                for other in same:
                    self._active.remove(other)
            else:  # most of the queue: one rebuild of the rest, in order, costs less than removing one by one
                self._active = SortedKeyList((w for w in self._active if shape_of(w) != shape), key=order_key)
            self._groups[shape] = _ShapeGroup(same)
        else:
            group.returned = False

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
        together are forgotten (Kueue's queueInadmissibleWorkloads): their groups return whole."""
        for shape, group in list(self._groups.items()):
            if group.returned:
                continue
            if not group.members:
                del self._groups[shape]
                continue
            group.returned = True
            if stays_parked is not None:
                for workload in [w for w in group.members if stays_parked(w)]:
                    self._leave_group(group, workload)
                    self._parked.add(workload.key)
        kept = set()
        returning = []
        for key in self._parked:
            workload = self._members[key]
            if stays_parked is not None and stays_parked(workload):
                kept.add(key)
            elif self._groups and (group := self._groups.get(shape_of(workload))) is not None:
                group.members.add(workload)
            else:
                returning.append(workload)
        self._active.update(returning)  # in bulk: a large return re-sorts once instead of inserting one by one
        self._parked = kept

    def reordered(self) -> None:
        """The order moved without a member coming or going (a LocalQueue's usage was resampled)."""
        self.generation = next(_CHANGES)

    def has_work(self) -> bool:
        return self.head() is not None

    def active_in_order(self) -> Iterator[Workload]:
        returned = [group.members for group in self._groups.values() if group.returned]
        if not returned:
            return iter(self._active)
        return heapq.merge(self._active, *returned, key=order_key)


def shape_of(workload: Workload) -> tuple:
    """What Kueue's scheduling hash reads of a workload (workload.computeSchedulingHash): its priority and
    its pod sets (names, counts, requests, node selectors, tolerations, topology requests)."""
    return workload.priority, workload.pod_sets


@dataclass(frozen=True, slots=True)
class _Recorded:
    last: LastAssignment
    cycle: int
    generation: int
