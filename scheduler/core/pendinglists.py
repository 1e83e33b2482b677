"""Every ClusterQueue's pending list, kept in step with the positions index, and what is read of it.

Keeping: a workload that wants to be pending waits for its LocalQueue (by LocalQueue, known or
not); it is in a ClusterQueue's ``PendingQueue`` while that LocalQueue is known, not stopped, and
points to a known ClusterQueue. Every workload that enters or leaves a pending queue is told to the
positions strategy in the same step, which is why both live here and only here.

Reading: what the visibility server and the publishers ask (``pendingreading.PendingReader``, which
this answers: which ClusterQueues and LocalQueues there are, the generation a cached page depends on,
the pending list in queue order, a page of a ClusterQueue's or a LocalQueue's PendingWorkloadsSummary
and one workload's positions, as Kueue's visibility API, pkg/visibility), and for the queue statuses
and the cycle: how many workloads each queue holds (in all, per LocalQueue), whether a workload is
parked, where its last flavor search stopped.

Apart from ``queues`` because ``QueueManager`` decides *when* a workload is pending (admission,
eviction, ``spec.active``) and what happens to a queue (parking, blocking, sticky heads, capacity);
this keeps *where* it waits and answers the questions about it. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from scheduler.core.flavorassigning import LastAssignment
from scheduler.core.kinds import ClusterQueue, LocalQueue, LocalQueueKey
from scheduler.core.pendingqueues import PendingQueue
from scheduler.core import positions, stickypages
from scheduler.core.positions import PageRequest, PendingWorkloadItem, PositionStrategy, QueueNotFoundError
from scheduler.core.workloads import Workload, WorkloadKey, order_key


class PendingLists:
    """The pending queue of every ClusterQueue, the workloads waiting for one, and their positions.

    LocalQueues and workloads are the ``QueueManager``'s own mappings, read here, not copies: the
    manager changes them in place and never replaces them.
    """

    def __init__(
        self,
        local_queues: Mapping[LocalQueueKey, LocalQueue],
        workloads: Mapping[WorkloadKey, Workload],
        positions: PositionStrategy,
    ) -> None:
        self.queues: dict[str, PendingQueue] = {}
        # Workloads that want to be pending (active, unadmitted), by LocalQueue, queue or not.
        self._wanting: dict[LocalQueueKey, set[WorkloadKey]] = {}
        self._local_queues = local_queues
        self._workloads = workloads
        self._positions = positions

    def cluster_queue_of(self, workload: Workload) -> str:
        """The ClusterQueue a workload queues in; "" while its LocalQueue is unknown or stopped."""
        lq = self._local_queues.get(workload.local_queue)
        return lq.cluster_queue if lq is not None and not lq.stopped else ""

    def queue_of(self, workload: Workload) -> PendingQueue | None:
        """The pending queue a workload is or would be in, or None while it has none."""
        return self.queues.get(self.cluster_queue_of(workload))

    # -- keeping (the QueueManager's calls) ---------------------------------------------
    def cluster_queue_added(self, cq: ClusterQueue) -> None:
        """A ClusterQueue was added (its LocalQueues' waiting workloads join it) or changed (its strategy)."""
        queue = self.queues.get(cq.name)
        if queue is not None:
            queue.strategy = cq.queueing_strategy
            return
        self.queues[cq.name] = PendingQueue(cq.name, cq.queueing_strategy)
        for lq in self._local_queues.values():
            if lq.cluster_queue == cq.name:
                self.local_queue_added(lq)

    def cluster_queue_removed(self, name: str) -> None:
        """A ClusterQueue was deleted: its pending queue goes (its workloads keep waiting for it)."""
        if self.queues.pop(name, None) is not None:
            self._positions.cluster_queue_removed(name)

    def want(self, workload: Workload) -> None:
        """The workload wants to be pending: it waits for its LocalQueue, and queues if it can."""
        self._wanting.setdefault(workload.local_queue, set()).add(workload.key)
        queue = self.queue_of(workload)
        if queue is not None:
            queue.add(workload)
            self._positions.workload_added(queue.name, workload)

    def forget(self, workload: Workload) -> None:
        """The workload no longer wants to be pending: it leaves its pending queue, if it is in one."""
        wanting = self._wanting.get(workload.local_queue)
        if wanting is not None:
            wanting.discard(workload.key)
            if not wanting:
                del self._wanting[workload.local_queue]
        queue = self.queue_of(workload)
        if queue is not None:
            removed = queue.remove(workload.key)
            if removed is not None:
                self._positions.workload_removed(queue.name, removed)

    def local_queue_added(self, lq: LocalQueue) -> None:
        """A LocalQueue was added (or is the new one of an update): its waiting workloads join its
        ClusterQueue's pending queue, if that queue exists and the LocalQueue is not stopped."""
        queue = self.queues.get(lq.cluster_queue)
        if queue is None or lq.stopped:
            return
        for key in self._wanting.get((lq.namespace, lq.name), ()):
            workload = self._workloads[key]
            queue.add(workload)
            self._positions.workload_added(queue.name, workload)

    def local_queue_removed(self, lq: LocalQueue) -> None:
        """A LocalQueue was deleted (or is the old one of an update): its workloads leave its
        ClusterQueue's pending queue and wait again."""
        queue = self.queues.get(lq.cluster_queue)
        if queue is None or lq.stopped:
            return
        for key in self._wanting.get((lq.namespace, lq.name), ()):
            removed = queue.remove(key)
            if removed is not None:
                self._positions.workload_removed(queue.name, removed)

    def allocatable_changed(self, cluster_queues: Iterable[str]) -> None:
        """The queues' AllocatableResourceGeneration moved: every pending workload's next flavor
        search starts over (flavorassigner.lastAssignmentOutdated)."""
        for name in cluster_queues:
            queue = self.queues.get(name)
            if queue is not None:
                queue.allocatable_changed()

    # -- reading (pendingreading.PendingReader, and the queue statuses' and the cycle's questions) --
    def cluster_queue_names(self) -> list[str]:
        return list(self.queues)

    def has_local_queue(self, namespace: str, local_queue: str) -> bool:
        return (namespace, local_queue) in self._local_queues

    def pending_count(self, cluster_queue: str) -> int:
        return len(self._pending_queue(cluster_queue))

    def generation(self, cluster_queue: str) -> int:
        """Changes (to a value unique in this process) whenever the queue's ordered pending list changes."""
        return self._pending_queue(cluster_queue).generation

    def local_queue_generation(self, namespace: str, local_queue: str) -> tuple[str, int] | None:
        """(ClusterQueue, its generation): what a LocalQueue's page depends on; None if either is unknown."""
        lq = self._local_queues.get((namespace, local_queue))
        queue = self.queues.get(lq.cluster_queue) if lq else None
        return (lq.cluster_queue, queue.generation) if queue is not None else None

    def is_parked(self, key: WorkloadKey) -> bool:
        workload = self._workloads.get(key)
        queue = self.queue_of(workload) if workload else None
        return queue is not None and queue.is_parked(key)

    def pending_in_order(self, cluster_queue: str) -> list[Workload]:
        """Every pending workload of the queue (parked included), in queue order."""
        queue = self._pending_queue(cluster_queue)
        if queue.reorder is not None:
            return sorted(queue.members(), key=queue.reorder(queue.sticky))
        sticky = queue.sticky
        if sticky is None:  # the common case, and the publishers sort every pending workload per publish
            return sorted(queue.members(), key=order_key)
        return sorted(queue.members(), key=lambda workload: (workload.key != sticky, order_key(workload)))

    def pending_by_local_queue(self, cluster_queue: str) -> dict[LocalQueueKey, int]:
        """Pending workloads of the queue per LocalQueue (no ordering needed: O(n), no sort)."""
        counts: dict[LocalQueueKey, int] = {}
        for workload in self._pending_queue(cluster_queue).members():
            key = (workload.namespace, workload.queue_name)
            counts[key] = counts.get(key, 0) + 1
        return counts

    def summary_for_cluster_queue(
        self, cluster_queue: str, offset: object = 0, limit: object = 1000
    ) -> list[PendingWorkloadItem]:
        """A page of the queue's pending workloads; raises InvalidPageError/QueueNotFoundError."""
        page = PageRequest.of(offset, limit)
        queue = self._pending_queue(cluster_queue)
        if queue.reorder is not None:  # an order that moves with time: sorted per request, whatever the strategy
            return positions.sorted_page(queue.members(), page, queue.reorder(queue.sticky))

        def natural(request: PageRequest) -> list[PendingWorkloadItem]:
            return self._positions.page_cluster_queue(cluster_queue, queue.members(), request)

        sticky = self._sticky_item(cluster_queue, queue)
        return natural(page) if sticky is None else stickypages.page(natural, sticky, page)

    def summary_for_local_queue(
        self, namespace: str, local_queue: str, offset: object = 0, limit: object = 1000
    ) -> list[PendingWorkloadItem]:
        """A page of one LocalQueue's pending workloads, positions in both queues."""
        page = PageRequest.of(offset, limit)
        lq = self._local_queues.get((namespace, local_queue))
        if lq is None:
            raise QueueNotFoundError(f"localqueue {namespace}/{local_queue} not found")
        queue = self.queues.get(lq.cluster_queue)
        if queue is None:
            return []
        if queue.reorder is not None:
            return positions.sorted_local_page(queue.members(), (namespace, local_queue), page,
                                               queue.reorder(queue.sticky))

        def natural(request: PageRequest) -> list[PendingWorkloadItem]:
            return self._positions.page_local_queue(lq.cluster_queue, (namespace, local_queue), queue.members(), request)

        sticky = self._sticky_item(lq.cluster_queue, queue)
        return natural(page) if sticky is None else stickypages.page(natural, sticky, page, (namespace, local_queue))

    def position_of(self, key: WorkloadKey) -> tuple[int, int] | None:
        """(positionInClusterQueue, positionInLocalQueue) of a pending workload, else None."""
        workload = self._workloads.get(key)
        cq_name = self.cluster_queue_of(workload) if workload else None
        queue = self.queues.get(cq_name) if cq_name else None
        if queue is None or queue.get(key) is not workload:
            return None
        if queue.reorder is not None:
            return positions.sorted_position(queue.members(), workload,  # type: ignore[arg-type]
                                             queue.reorder(queue.sticky))
        in_cluster_queue, in_local_queue = self._positions.position_of(cq_name, workload, queue.members())  # type: ignore[arg-type]
        sticky = self._sticky_item(cq_name, queue)  # type: ignore[arg-type]
        if sticky is None:
            return in_cluster_queue, in_local_queue
        item = stickypages.moved(positions.make_item(workload, in_cluster_queue, in_local_queue), sticky)
        return item.position_in_cluster_queue, item.position_in_local_queue

    def last_assignment(self, cluster_queue: str, key: WorkloadKey, cycle: int,
                        keep_recent: bool) -> LastAssignment | None:
        """Where a pending workload's last flavor search in ``cluster_queue`` stopped, or None
        (``PendingQueue.last_assignment``)."""
        queue = self.queues.get(cluster_queue)
        if queue is None:
            return None
        return queue.last_assignment(key, cycle, keep_recent=keep_recent)

    def _sticky_item(self, cluster_queue: str, queue: PendingQueue) -> PendingWorkloadItem | None:
        """The queue's sticky workload with its positions in the order without it first, or None."""
        key = queue.sticky
        workload = self._workloads.get(key) if key is not None else None
        if workload is None or queue.get(key) is not workload:
            return None
        return positions.make_item(workload, *self._positions.position_of(cluster_queue, workload, queue.members()))

    def _pending_queue(self, name: str) -> PendingQueue:
        queue = self.queues.get(name)
        if queue is None:
            raise QueueNotFoundError(f"clusterqueue {name} not found")
        return queue
