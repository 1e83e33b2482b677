"""The pending workloads of one ClusterQueue: the schedulable heads, the parked and the held ones.

As in Kueue (pkg/queue/cluster_queue.go) a pending workload is either *active* (in the
ordered queue the scheduler pops heads from) or *parked* (BestEffortFIFO's
"inadmissible" set: tried, did not fit, waits for capacity to change). Both count as
pending and both appear in positions. StrictFIFO parks only a head from a namespace its
ClusterQueue does not select: a head that does not fit stays at the head and *blocks* the
queue until capacity changes or a new head arrives.
A *held* workload (``Requeued=False`` after a stop, Kueue's backoff gate) is pending and has a
position, but is never a head until it comes back with ``Requeued=True``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Iterator

from sortedcontainers import SortedKeyList

from scheduler.core.kinds import QueueingStrategy
from scheduler.core.workloads import Workload, WorkloadKey, order_key


_CHANGES = itertools.count(1)


class PendingQueue:
    """Pending workloads of one ClusterQueue, with a change counter."""

    __slots__ = ("name", "strategy", "_members", "_active", "_parked", "_held", "_blocked_head", "generation")

    def __init__(self, name: str, strategy: QueueingStrategy) -> None:
        self.name = name
        self.strategy = strategy
        self._members: dict[WorkloadKey, Workload] = {}
        self._active: SortedKeyList = SortedKeyList(key=order_key)
        self._parked: set[WorkloadKey] = set()
        self._held: set[WorkloadKey] = set()
        self._blocked_head: WorkloadKey | None = None
        # Renewed whenever the ordered pending list (and so some position) changes; drawn from one
        # process-wide counter so that a deleted and re-created queue never repeats an old value.
        self.generation = next(_CHANGES)

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
        self.generation = next(_CHANGES)
        return workload

    def head(self) -> Workload | None:
        """The next workload to try, or None when empty or blocked on its current head."""
        if not self._active:
            return None
        head: Workload = self._active[0]
        if head.key == self._blocked_head:
            return None
        return head

    def blocked(self) -> Workload | None:
        """The head that blocks the queue (StrictFIFO) until capacity changes, if any."""
        if self._active and self._active[0].key == self._blocked_head:
            return self._active[0]
        return None

    def park(self, key: WorkloadKey) -> None:
        """Move an active workload aside until capacity changes (BestEffortFIFO)."""
        workload = self._members.get(key)
        if workload is None or key in self._parked or key in self._held:
            return
        self._active.remove(workload)
        self._parked.add(key)

    def block(self, key: WorkloadKey) -> None:
        """Stop offering ``key`` as head until capacity changes or the head changes."""
        self._blocked_head = key

    def unblock(self) -> None:
        """Offer the blocked head again, for a change that concerns it alone (its namespace)."""
        self._blocked_head = None

    def capacity_changed(self, stays_parked: Callable[[Workload], bool] | None = None) -> None:
        """Return parked workloads to the active queue (all but those ``stays_parked`` keeps) and lift a block."""
        self._blocked_head = None
        kept = set()
        for key in self._parked:
            workload = self._members[key]
            if stays_parked is not None and stays_parked(workload):
                kept.add(key)
            else:
                self._active.add(workload)
        self._parked = kept

    def has_work(self) -> bool:
        return self.head() is not None

    def active_in_order(self) -> Iterator[Workload]:
        return iter(self._active)
