"""``QueueManager``: the one facade the controller and the visibility server talk to.

It holds the in-memory world (Kueue's queue manager + cache, pkg/queue and pkg/cache):
configuration objects, every known workload, the pending queue of each ClusterQueue,
admitted workloads and the quota they use. It does no I/O. The controller feeds it
add/update/delete events and state transitions; ``scheduling.run_cycle`` reads it and
``apply_decisions`` records a cycle's outcome; the visibility server asks for summaries.

Workload life cycle, as the manager sees it::

    add/update ──> waiting for its LocalQueue/ClusterQueue ──> pending (active | parked)
    pending ──admit──> admitted (holds quota) ──finished/delete──> gone
                                   └──evicted──> pending again (queue timestamp per policy)
    spec.active=false ──> neither pending nor holding quota (its admission, if any, is only
                          on record until the controller writes the eviction), as in Kueue's cache

Any release of quota ("capacity changed") unparks the parked workloads and lifts StrictFIFO
blocks in the ClusterQueue and its cohort, as Kueue's QueueInadmissibleWorkloads does; so does a
changed ClusterQueue or Cohort spec, but not an update that leaves the spec as it was.

A ClusterQueue admits only from namespaces its ``namespaceSelector`` selects: the scheduling cycle
parks a head from any other namespace, in either queueing strategy, and unparking leaves it parked
while its namespace is still not selected (pkg/cache/queue/inadmissible_workloads.go). A namespace
whose labels change so that a ClusterQueue newly selects it unparks that queue and its cohort
(pkg/controller/core/clusterqueue_controller.go, cqNamespaceHandler). A namespace not seen yet
counts as one without labels.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence

from scheduler.core.decisions import Admit, Decision, Park, Preempt, Wait
from scheduler.core.kinds import (
    EVERYTHING,
    ClusterQueue,
    Cohort,
    LocalQueue,
    Namespace,
    ResourceFlavor,
    WorkloadPriorityClass,
)
from scheduler.core.flavorassigning import LastAssignment
from scheduler.core.pendingqueues import PendingQueue
from scheduler.core.positions import (
    PageRequest,
    PendingWorkloadItem,
    PositionRegistry,
    QueueNotFoundError,
    default_registry,
)
from scheduler.core.preempting import AdmittedWorkload
from scheduler.core.quotas import QuotaBook
from scheduler.core.workloads import (
    Admission,
    RequeuingTimestamp,
    Workload,
    WorkloadKey,
    order_key,
    queue_timestamp_after_eviction,
)

LocalQueueKey = tuple[str, str]


class QueueManager:
    """In-memory queueing state with Kueue semantics; see the module docstring."""

    def __init__(
        self,
        positions: str = "indexed",
        registry: PositionRegistry | None = None,
        requeuing: RequeuingTimestamp = RequeuingTimestamp.EVICTION,
    ) -> None:
        self.positions = (registry or default_registry()).create(positions)
        self.requeuing = requeuing
        self.quotas = QuotaBook()
        self.flavors: dict[str, ResourceFlavor] = {}
        self.priority_classes: dict[str, WorkloadPriorityClass] = {}
        self.local_queues: dict[LocalQueueKey, LocalQueue] = {}
        self.namespace_labels: dict[str, dict[str, str]] = {}
        # (ClusterQueue, namespace) -> whether its selector selects the namespace; dropped on any change.
        self._selected: dict[tuple[str, str], bool] = {}
        self._pending: dict[str, PendingQueue] = {}
        self._workloads: dict[WorkloadKey, Workload] = {}
        # Workloads that want to be pending (active, unadmitted), by LocalQueue, queue or not.
        self._wanting: dict[LocalQueueKey, set[WorkloadKey]] = {}
        self._admitted: dict[WorkloadKey, AdmittedWorkload] = {}
        self._admitted_by_cq: dict[str, dict[WorkloadKey, AdmittedWorkload]] = {}

    # -- configuration objects -----------------------------------------------------
    def add_resource_flavor(self, flavor: ResourceFlavor) -> None:
        self.flavors[flavor.name] = flavor
        self._capacity_changed(self._pending)

    update_resource_flavor = add_resource_flavor

    def delete_resource_flavor(self, name: str) -> None:
        self.flavors.pop(name, None)

    def add_workload_priority_class(self, priority_class: WorkloadPriorityClass) -> None:
        """Used for workloads added later without spec.priority; queued ones keep theirs."""
        self.priority_classes[priority_class.name] = priority_class

    update_workload_priority_class = add_workload_priority_class

    def delete_workload_priority_class(self, name: str) -> None:
        self.priority_classes.pop(name, None)

    def add_cohort(self, cohort: Cohort) -> None:
        if self.quotas.cohorts.get(cohort.name) == cohort:
            return  # only its status or metadata changed: no capacity moved (Kueue compares the spec)
        self.quotas.set_cohort(cohort)
        self._allocatable_changed(self.quotas.cohort_members(cohort.name))
        self._capacity_changed(self.quotas.cohort_members(cohort.name))

    update_cohort = add_cohort

    def delete_cohort(self, name: str) -> None:
        self.quotas.remove_cohort(name)
        self._allocatable_changed(self.quotas.cohort_members(name))
        self._capacity_changed(self.quotas.cohort_members(name))

    def add_cluster_queue(self, cq: ClusterQueue) -> None:
        """Add or update a ClusterQueue; its LocalQueues' workloads become pending in it."""
        old = self.quotas.cluster_queues.get(cq.name)
        if old == cq:
            # Only status or metadata changed, mostly the counts this scheduler writes itself: as in
            # Kueue (requeue on a spec change only), parked workloads stay parked.
            return
        touched = set(self.quotas.neighbours(cq.name)) if old is not None else set()
        self.quotas.set_cluster_queue(cq)
        self._selected.clear()
        queue = self._pending.get(cq.name)
        if queue is None:
            self._pending[cq.name] = PendingQueue(cq.name, cq.queueing_strategy)
            for lq in self.local_queues.values():
                if lq.cluster_queue == cq.name:
                    self._enqueue_local_queue(lq)
        else:
            queue.strategy = cq.queueing_strategy
        if old is None or (old.resource_groups, old.cohort) != (cq.resource_groups, cq.cohort):
            # Kueue's cache recomputes the quota tree of the queue (and of its cohorts, old and new).
            self._allocatable_changed(touched | self.quotas.neighbours(cq.name))
        self._capacity_changed(touched | self.quotas.neighbours(cq.name))

    update_cluster_queue = add_cluster_queue

    def delete_cluster_queue(self, name: str) -> None:
        touched = self.quotas.neighbours(name)
        self.quotas.remove_cluster_queue(name)
        self._selected.clear()
        if self._pending.pop(name, None) is not None:
            self.positions.cluster_queue_removed(name)
        self._allocatable_changed(touched)
        self._capacity_changed(touched)

    def add_local_queue(self, lq: LocalQueue) -> None:
        """Add or update a LocalQueue; moving it to another ClusterQueue moves its workloads."""
        key = (lq.namespace, lq.name)
        old = self.local_queues.get(key)
        if old == lq:
            return
        if old is not None:
            self._dequeue_local_queue(old)
        self.local_queues[key] = lq
        self._enqueue_local_queue(lq)

    update_local_queue = add_local_queue

    def delete_local_queue(self, namespace: str, name: str) -> None:
        old = self.local_queues.pop((namespace, name), None)
        if old is not None:
            self._dequeue_local_queue(old)

    def add_namespace(self, namespace: Namespace) -> None:
        """Add or update a Namespace's labels; a ClusterQueue that selects it now and did not before
        retries its parked workloads and those of its cohort (Kueue's cqNamespaceHandler.Update)."""
        old = self.namespace_labels.get(namespace.name)
        if old == namespace.labels:
            return
        self.namespace_labels[namespace.name] = dict(namespace.labels)
        self._selected.clear()
        newly: set[str] = set()
        for cq in self.quotas.cluster_queues.values():
            before, now = cq.namespace_selector.matches(old or {}), cq.namespace_selector.matches(namespace.labels)
            if now and not before:
                newly |= self.quotas.neighbours(cq.name)
            elif before and not now and (queue := self._pending.get(cq.name)) is not None:
                # Kueue retries a StrictFIFO head every cycle, so a blocked head from this namespace
                # is turned away at once and the next one tried.
                blocked = queue.blocked()
                if blocked is not None and blocked.namespace == namespace.name:
                    queue.unblock()
        self._capacity_changed(newly)

    update_namespace = add_namespace

    def delete_namespace(self, name: str) -> None:
        """Forget a Namespace's labels (its workloads are deleted with it; Kueue retries nothing)."""
        if self.namespace_labels.pop(name, None) is not None:
            self._selected.clear()

    def namespace_selected(self, cq: ClusterQueue, namespace: str) -> bool:
        """Whether ``cq``'s namespaceSelector selects ``namespace`` (Kueue's nominate checks this)."""
        key = (cq.name, namespace)
        selected = self._selected.get(key)
        if selected is None:
            selected = self._selected[key] = cq.namespace_selector.matches(self.namespace_labels.get(namespace, {}))
        return selected

    # -- workloads --------------------------------------------------------------------
    def add_workload(self, workload: Workload) -> None:
        """Add or update a workload from its API object (status included)."""
        workload = self._resolve_priority(workload)
        old = self._workloads.get(workload.key)
        sticky_in = ""
        if old is not None:
            if _same_for_queueing(old, workload):
                return
            # A pending workload's update keeps it sticky (Kueue's PushOrUpdate); its last flavor
            # search is forgotten (a new workload.Info).
            old_queue = self._pending.get(self._cluster_queue_of(old))
            if old_queue is not None and old_queue.sticky == old.key:
                sticky_in = old_queue.name
            self._forget(old, release_quota=old.admission != workload.admission or old.active != workload.active)
        if workload.finished:
            return
        self._workloads[workload.key] = workload
        if not workload.active:
            return
        if workload.admission is not None:
            self._record_admitted(workload, workload.admission.cluster_queue, evicting=False)
        else:
            self._want(workload)
            queue = self._pending.get(self._cluster_queue_of(workload))
            if queue is not None and queue.name == sticky_in:
                queue.stick(workload.key)

    update_workload = add_workload

    def delete_workload(self, key: WorkloadKey) -> None:
        old = self._workloads.get(key)
        if old is not None:
            self._forget(old, release_quota=True)

    def mark_finished(self, key: WorkloadKey) -> None:
        """The workload completed: its quota is released and it is forgotten."""
        self.delete_workload(key)

    def mark_evicted(self, key: WorkloadKey, reason: str, now: float) -> None:
        """Quota is released and the workload queues again (timestamp per requeuing policy)."""
        old = self._workloads.get(key)
        if old is None or old.admission is None:
            return
        self._forget(old, release_quota=True)
        again = dataclasses.replace(
            old,
            admission=None,
            admitted_at=0.0,
            queue_timestamp=queue_timestamp_after_eviction(old, reason, now, self.requeuing),
        )
        self._workloads[key] = again
        if again.active:
            self._want(again)

    def cancel_admission(self, key: WorkloadKey) -> None:
        """Undo an assumed admission whose API write failed; the workload keeps its place."""
        old = self._workloads.get(key)
        if old is None or old.admission is None:
            return
        self._forget(old, release_quota=True)
        again = dataclasses.replace(old, admission=None, admitted_at=0.0)
        self._workloads[key] = again
        if again.active:
            self._want(again)

    def mark_admitted(self, key: WorkloadKey, admission: Admission, now: float) -> None:
        """Reserve quota for a pending workload (what applying an ``Admit`` does)."""
        workload = self._workloads.get(key)
        if workload is None or workload.admission is not None:
            return
        self._forget(workload, release_quota=False)
        admitted = dataclasses.replace(workload, admission=admission, admitted_at=now)
        self._workloads[key] = admitted
        self._record_admitted(admitted, admission.cluster_queue, evicting=False)

    # -- the scheduler's view --------------------------------------------------------
    def heads(self) -> list[tuple[ClusterQueue, Workload]]:
        """The head of every ClusterQueue that can admit now (active, not stopped, not blocked)."""
        result = []
        for name, queue in self._pending.items():
            cq = self.quotas.cluster_queues[name]
            if cq.stopped or not cq.flavor_names() <= self.flavors.keys():
                continue
            head = queue.head()
            if head is not None:
                result.append((cq, head))
        return result

    def blocked_heads(self) -> list[tuple[ClusterQueue, Workload]]:
        """StrictFIFO heads waiting for capacity; Kueue retries them every cycle, so what they
        wait for stays held back from their cohort (see scheduling)."""
        result = []
        for name, queue in self._pending.items():
            cq = self.quotas.cluster_queues[name]
            if cq.stopped or not cq.flavor_names() <= self.flavors.keys():
                continue
            head = queue.blocked()
            if head is not None:
                result.append((cq, head))
        return result

    def has_work(self) -> bool:
        """Whether a scheduling cycle could decide anything."""
        return bool(self.heads())

    def admitted_in(self, cluster_queues: Iterable[str]) -> Iterator[AdmittedWorkload]:
        for name in cluster_queues:
            yield from self._admitted_by_cq.get(name, {}).values()

    def admitted(self, key: WorkloadKey) -> AdmittedWorkload | None:
        return self._admitted.get(key)

    def workload(self, key: WorkloadKey) -> Workload | None:
        return self._workloads.get(key)

    def last_assignment(self, cluster_queue: str, key: WorkloadKey) -> LastAssignment | None:
        """Where a pending workload's last flavor search in ``cluster_queue`` stopped, or None."""
        queue = self._pending.get(cluster_queue)
        return queue.last_assignment(key) if queue is not None else None

    def apply_decisions(self, decisions: Sequence[Decision], now: float) -> None:
        """Record a cycle's decisions in memory (Kueue's "assume"); stale ones are skipped."""
        for decision in decisions:
            queue = self._pending.get(decision.cluster_queue)
            if queue is None or queue.get(decision.workload.key) is not decision.workload:
                continue  # the workload changed or left since the cycle looked at it
            key = decision.workload.key
            if isinstance(decision, Admit):
                self.mark_admitted(key, decision.admission, now)
            elif isinstance(decision, Preempt):
                for target in decision.targets:
                    self._mark_evicting(target.workload.key)
                queue.block(key)
                # Kueue: the next attempt tries every flavor again, and the preemptor is sticky.
                queue.remember_assignment(key, None)
                queue.stick(key)
            elif isinstance(decision, Park):
                queue.park(key)
                queue.remember_assignment(key, decision.last_assignment)
            elif isinstance(decision, Wait):
                if decision.blocks:
                    queue.block(key)
                else:
                    queue.lift_block(key)
                queue.remember_assignment(key, decision.last_assignment)

    # -- pending lists and positions -------------------------------------------------
    def cluster_queue_names(self) -> list[str]:
        return list(self._pending)

    def pending_count(self, cluster_queue: str) -> int:
        return len(self._pending_queue(cluster_queue))

    def generation(self, cluster_queue: str) -> int:
        """Changes (to a value unique in this process) whenever the queue's ordered pending list changes."""
        return self._pending_queue(cluster_queue).generation

    def local_queue_generation(self, namespace: str, local_queue: str) -> tuple[str, int] | None:
        """(ClusterQueue, its generation): what a LocalQueue's page depends on; None if either is unknown."""
        lq = self.local_queues.get((namespace, local_queue))
        queue = self._pending.get(lq.cluster_queue) if lq else None
        return (lq.cluster_queue, queue.generation) if queue is not None else None

    def is_parked(self, key: WorkloadKey) -> bool:
        workload = self._workloads.get(key)
        queue = self._pending.get(self._cluster_queue_of(workload)) if workload else None
        return queue is not None and queue.is_parked(key)

    def pending_in_order(self, cluster_queue: str) -> list[Workload]:
        """Every pending workload of the queue (parked included), in queue order."""
        return sorted(self._pending_queue(cluster_queue).members(), key=order_key)

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
        return self.positions.page_cluster_queue(cluster_queue, queue.members(), page)

    def summary_for_local_queue(
        self, namespace: str, local_queue: str, offset: object = 0, limit: object = 1000
    ) -> list[PendingWorkloadItem]:
        """A page of one LocalQueue's pending workloads, positions in both queues."""
        page = PageRequest.of(offset, limit)
        lq = self.local_queues.get((namespace, local_queue))
        if lq is None:
            raise QueueNotFoundError(f"localqueue {namespace}/{local_queue} not found")
        queue = self._pending.get(lq.cluster_queue)
        if queue is None:
            return []
        return self.positions.page_local_queue(lq.cluster_queue, (namespace, local_queue), queue.members(), page)

    def position_of(self, key: WorkloadKey) -> tuple[int, int] | None:
        """(positionInClusterQueue, positionInLocalQueue) of a pending workload, else None."""
        workload = self._workloads.get(key)
        cq_name = self._cluster_queue_of(workload) if workload else None
        queue = self._pending.get(cq_name) if cq_name else None
        if queue is None or queue.get(key) is not workload:
            return None
        return self.positions.position_of(cq_name, workload, queue.members())  # type: ignore[arg-type]

    # -- internals -----------------------------------------------------------------------
    def _pending_queue(self, name: str) -> PendingQueue:
        queue = self._pending.get(name)
        if queue is None:
            raise QueueNotFoundError(f"clusterqueue {name} not found")
        return queue

    def _resolve_priority(self, workload: Workload) -> Workload:
        if not workload.priority_class:
            return workload
        priority_class = self.priority_classes.get(workload.priority_class)
        if priority_class is None or priority_class.value == workload.priority:
            return workload
        return dataclasses.replace(workload, priority=priority_class.value)

    def _cluster_queue_of(self, workload: Workload) -> str:
        """The ClusterQueue a workload queues in; "" while its LocalQueue is unknown or stopped."""
        lq = self.local_queues.get(workload.local_queue)
        return lq.cluster_queue if lq is not None and not lq.stopped else ""

    def _want(self, workload: Workload) -> None:
        self._wanting.setdefault(workload.local_queue, set()).add(workload.key)
        queue = self._pending.get(self._cluster_queue_of(workload))
        if queue is not None:
            queue.add(workload)
            self.positions.workload_added(queue.name, workload)

    def _forget(self, workload: Workload, release_quota: bool) -> None:
        """Drop a workload from wherever it is (pending or admitted)."""
        self._workloads.pop(workload.key, None)
        wanting = self._wanting.get(workload.local_queue)
        if wanting is not None:
            wanting.discard(workload.key)
            if not wanting:
                del self._wanting[workload.local_queue]
        queue = self._pending.get(self._cluster_queue_of(workload))
        if queue is not None:
            removed = queue.remove(workload.key)
            if removed is not None:
                self.positions.workload_removed(queue.name, removed)
        admitted = self._admitted.pop(workload.key, None)
        if admitted is not None:
            self._admitted_by_cq[admitted.cluster_queue].pop(workload.key, None)
            self.quotas.remove_usage(admitted.cluster_queue, admitted.usage)
            # Kueue's cache bumps the queue's AllocatableResourceGeneration whenever an admitted
            # workload leaves or is replaced (clusterQueue.deleteWorkload).
            self._allocatable_changed((admitted.cluster_queue,))
            if release_quota:
                self._capacity_changed(self.quotas.neighbours(admitted.cluster_queue))

    def _record_admitted(self, workload: Workload, cluster_queue: str, evicting: bool) -> None:
        assert workload.admission is not None
        record = AdmittedWorkload(workload, cluster_queue, workload.admission.usage(), evicting)
        self._admitted[workload.key] = record
        self._admitted_by_cq.setdefault(cluster_queue, {})[workload.key] = record
        self.quotas.add_usage(cluster_queue, record.usage)

    def _mark_evicting(self, key: WorkloadKey) -> None:
        record = self._admitted.get(key)
        if record is None or record.evicting:
            return
        record = dataclasses.replace(record, evicting=True)
        self._admitted[key] = record
        self._admitted_by_cq[record.cluster_queue][key] = record

    def _enqueue_local_queue(self, lq: LocalQueue) -> None:
        queue = self._pending.get(lq.cluster_queue)
        if queue is None or lq.stopped:
            return
        for key in self._wanting.get((lq.namespace, lq.name), ()):
            workload = self._workloads[key]
            queue.add(workload)
            self.positions.workload_added(queue.name, workload)

    def _dequeue_local_queue(self, lq: LocalQueue) -> None:
        queue = self._pending.get(lq.cluster_queue)
        if queue is None or lq.stopped:
            return
        for key in self._wanting.get((lq.namespace, lq.name), ()):
            removed = queue.remove(key)
            if removed is not None:
                self.positions.workload_removed(queue.name, removed)

    def _allocatable_changed(self, cluster_queues: Iterable[str]) -> None:
        """The queues' AllocatableResourceGeneration moved: every pending workload's next flavor
        search starts over (flavorassigner.lastAssignmentOutdated)."""
        for name in cluster_queues:
            queue = self._pending.get(name)
            if queue is not None:
                queue.forget_assignments()

    def _capacity_changed(self, cluster_queues: Iterable[str]) -> None:
        for name in cluster_queues:
            queue = self._pending.get(name)
            if queue is None:
                continue
            cq = self.quotas.cluster_queues[name]
            if cq.namespace_selector == EVERYTHING:
                queue.capacity_changed()
            else:
                # Kueue's queueInadmissibleWorkloads leaves a workload parked while its namespace is not selected.
                queue.capacity_changed(lambda workload, cq=cq: not self.namespace_selected(cq, workload.namespace))


def _same_for_queueing(old: Workload, new: Workload) -> bool:
    """Nothing the queues care about changed (status echoes of our own writes)."""
    return (
        old.order_key == new.order_key
        and old.queue_name == new.queue_name
        and old.active == new.active
        and old.requeue_held == new.requeue_held
        and old.finished == new.finished
        and old.admission == new.admission
        and old.pod_sets == new.pod_sets
    )
