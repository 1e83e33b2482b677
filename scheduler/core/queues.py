"""``QueueManager``: the one door through which the controller changes the in-memory world.

It composes the parts that hold that world (Kueue's queue manager and cache, pkg/cache/queue and
pkg/cache/scheduler) and tells each about every change, as Kueue's controllers tell its cache and
its queue manager:

- ``pendinglists.PendingLists``: the pending queue of each ClusterQueue (``pendingqueues``) and where
  each pending workload waits, kept in step with the positions index; it answers the visibility
  server and the publishers through ``pendingreading.PendingReader`` (``pending_lists``);
- ``parkedretries.ParkedRetries``: when a change of capacity returns parked workloads (``retries``);
- ``clusterqueuecache.ClusterQueueCache``: flavors, topologies, ClusterQueues and Cohorts with their
  quota tree (``quotas``), and the admitted workloads with the usage they hold (``cache``);
- ``namespaces.NamespaceSelection``: namespace labels and which ClusterQueue selects which.

What stays here is the event entry per kind (add/update/delete) and the workload life cycle, which
needs every part::

    add/update ──> waiting for its LocalQueue/ClusterQueue ──> pending (active | parked)
    pending ──admit──> admitted (holds quota) ──finished/delete──> gone
                                   └──evicted──> pending again (queue timestamp per policy)
    spec.active=false ──> neither pending nor holding quota (its admission, if any, is only
                          on record until the controller writes the eviction), as in Kueue's cache

Any release of quota, and a changed ClusterQueue or Cohort spec (not an update that leaves the spec
as it was), is a change of capacity for the queue and its cohort tree (``parkedretries``). The
manager keeps no clock: ``retry_parked(now)`` times the retries asked for and carries out those that
are due; the cycle calls it first. It does no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence, Set as AbstractSet

from scheduler.core.admissionchecks import AdmissionCheck
from scheduler.core.clusterqueuecache import ClusterQueueCache
from scheduler.core.decisions import Admit, Decision, Park, Preempt, Wait
from scheduler.core.kinds import (
    ADMISSION_FAIR_SHARING_OFF,
    FAIR_SHARING_OFF,
    AdmissionFairSharing,
    ClusterQueue,
    Cohort,
    FairSharing,
    LocalQueue,
    LocalQueueKey,
    Namespace,
    ResourceFlavor,
    WorkloadPriorityClass,
)
from scheduler.core.namespaces import NamespaceSelection
from scheduler.core.parkedretries import REQUEUE_BATCH_SECONDS, ParkedRetries
from scheduler.core.pendinglists import PendingLists
from scheduler.core.pendingqueues import PendingQueue
from scheduler.core.positions import PendingWorkloadItem, PositionRegistry, default_registry
from scheduler.core.preempting import AdmittedWorkload
from scheduler.core.workloads import (
    Admission,
    RequeuingTimestamp,
    Workload,
    WorkloadKey,
    queue_timestamp_after_eviction,
)


class QueueManager:
    """The parts of the in-memory world and the changes that reach them; see the module docstring."""

    def __init__(
        self,
        positions: str = "indexed",
        registry: PositionRegistry | None = None,
        requeuing: RequeuingTimestamp = RequeuingTimestamp.EVICTION,
        fair_sharing: FairSharing = FAIR_SHARING_OFF,
        requeue_batch_seconds: float = REQUEUE_BATCH_SECONDS,
        admission_fair_sharing: AdmissionFairSharing = ADMISSION_FAIR_SHARING_OFF,
        preserve_scan_progress: bool = False,
        preemption_ignores_pods: bool = False,
        scheduling_equivalence_hashing: bool = False,
        tas_recompute_in_cycle: bool = False,
        tas_hostname_prefix_encoding: bool = False,
    ) -> None:
        self.requeuing = requeuing
        # Kueue's Configuration fairSharing: how a cycle orders its entries and preempts.
        self.fair_sharing = fair_sharing
        # Kueue's FlavorFungibilityPreserveScanProgress (on from v0.19): a head skipped for contention
        # keeps its flavor search, and a search one cycle old outlives a change of allocatable quota.
        self.preserve_scan_progress = preserve_scan_progress
        # Kueue v0.19's preemption search reads the request without `pods` (scheduling._nominate).
        self.preemption_ignores_pods = preemption_ignores_pods
        # Kueue's SchedulingEquivalenceHashing (on from v0.18): a parked head parks its equals (apply_decisions).
        self.scheduling_equivalence_hashing = scheduling_equivalence_hashing
        # Kueue's TASRecomputeAssignmentWithinSchedulingCycle (on from v0.19): nodes taken, placed again (scheduling).
        self.tas_recompute_in_cycle = tas_recompute_in_cycle
        # Kueue's TASAssignmentsEncodingByHostnamePrefix (on from v0.19): how an admission's assignment is written.
        self.tas_hostname_prefix_encoding = tas_hostname_prefix_encoding
        # Kueue's schedulingCycle: counts the cycles that had heads (run_cycle), for the age of a search.
        self.cycle = 0
        # A cycle started evictions: the next one tries its preemptors again although nothing else changed.
        self.preemptor_retry = False
        self.priority_classes: dict[str, WorkloadPriorityClass] = {}
        self.local_queues: dict[LocalQueueKey, LocalQueue] = {}
        self.namespaces = NamespaceSelection()
        self._workloads: dict[WorkloadKey, Workload] = {}
        self.cache = ClusterQueueCache(self.local_queues, admission_fair_sharing)
        self.pending_lists = PendingLists(self.local_queues, self._workloads,
                                          (registry or default_registry()).create(positions))
        self.retries = ParkedRetries(self.pending_lists.queues, self._stays_parked, requeue_batch_seconds)

    @property
    def requeue_batch_seconds(self) -> float:
        """Kueue's requeueBatchPeriod (``parkedretries``); 0 returns parked workloads at the change itself."""
        return self.retries.batch_seconds

    @requeue_batch_seconds.setter
    def requeue_batch_seconds(self, seconds: float) -> None:
        self.retries.batch_seconds = seconds

    # -- configuration objects -----------------------------------------------------
    def add_resource_flavor(self, flavor: ResourceFlavor) -> None:
        self.cache.set_flavor(flavor)
        self.retries.capacity_changed(self.pending_lists.queues)

    update_resource_flavor = add_resource_flavor

    def delete_resource_flavor(self, name: str) -> None:
        users = self.cache.remove_flavor(name)
        # Kueue's ResourceFlavor controller retries the parked Workloads of the queues the deletion makes
        # inactive, and of their cohort trees (NotifyRetryInadmissible): they are back in order, ahead of
        # later heads, when the flavor returns.
        quotas = self.cache.quotas
        self.retries.capacity_changed(set().union(*(quotas.neighbours(cq) for cq in users)) if users else ())

    def add_admission_check(self, check: AdmissionCheck) -> None:
        """Add or update an AdmissionCheck; the queues naming it may admit (or stop admitting) now."""
        if self.cache.admission_checks.get(check.name) == check:
            return
        self._checks_changed(self.cache.set_admission_check(check))

    update_admission_check = add_admission_check

    def delete_admission_check(self, name: str) -> None:
        self._checks_changed(self.cache.remove_admission_check(name))

    def _checks_changed(self, users: list[str]) -> None:
        # Kueue's AdmissionCheck controller requeues the inadmissible Workloads of the queues naming it.
        quotas = self.cache.quotas
        self.retries.capacity_changed(set().union(*(quotas.neighbours(cq) for cq in users)) if users else ())

    def topology_changed(self) -> None:
        """A Topology or a node changed (``cache.topologies`` was told): parked workloads may fit now."""
        self.retries.capacity_changed(self.pending_lists.queues)

    def add_workload_priority_class(self, priority_class: WorkloadPriorityClass) -> None:
        """Used for workloads added later without spec.priority; queued ones keep theirs."""
        self.priority_classes[priority_class.name] = priority_class

    update_workload_priority_class = add_workload_priority_class

    def delete_workload_priority_class(self, name: str) -> None:
        self.priority_classes.pop(name, None)

    def add_cohort(self, cohort: Cohort) -> None:
        """Add or update a Cohort; every queue of its tree, before and after (a new parent joins two
        trees, a broken loop frees its queues), retries its parked workloads."""
        quotas = self.cache.quotas
        if quotas.cohorts.get(cohort.name) == cohort:
            return  # only its status or metadata changed: no capacity moved (Kueue compares the spec)
        touched = quotas.tree_queues(cohort.name)
        quotas.set_cohort(cohort)
        touched |= quotas.tree_queues(cohort.name)
        self._quota_changed(touched)

    update_cohort = add_cohort

    def delete_cohort(self, name: str) -> None:
        quotas = self.cache.quotas
        touched = quotas.tree_queues(name)
        quotas.remove_cohort(name)
        touched |= quotas.tree_queues(name)
        self._quota_changed(touched)

    def add_cluster_queue(self, cq: ClusterQueue) -> None:
        """Add or update a ClusterQueue; its LocalQueues' workloads become pending in it."""
        quotas = self.cache.quotas
        old = quotas.cluster_queues.get(cq.name)
        if old == cq:
            # Only status or metadata changed, mostly the counts this scheduler writes itself: as in
            # Kueue (requeue on a spec change only), parked workloads stay parked.
            return
        touched = set(quotas.neighbours(cq.name)) if old is not None else set()
        quotas.set_cluster_queue(cq)
        self.namespaces.cluster_queues_changed()
        self.pending_lists.cluster_queue_added(cq)
        ordered_by_usage = self.cache.ordered_by_usage(cq.name)
        self.pending_lists.queues[cq.name].reorder = self.cache.usage_order if ordered_by_usage else None
        if old is None or (old.resource_groups, old.cohort) != (cq.resource_groups, cq.cohort):
            # Kueue's cache recomputes the quota tree of the queue (and of its cohorts, old and new).
            self.pending_lists.allocatable_changed(touched | quotas.neighbours(cq.name))
        self.retries.capacity_changed(touched | quotas.neighbours(cq.name))

    update_cluster_queue = add_cluster_queue

    def delete_cluster_queue(self, name: str) -> None:
        quotas = self.cache.quotas
        touched = quotas.neighbours(name)
        quotas.remove_cluster_queue(name)
        self.namespaces.cluster_queues_changed()
        self.pending_lists.cluster_queue_removed(name)
        self._quota_changed(touched)

    def add_local_queue(self, lq: LocalQueue) -> None:
        """Add or update a LocalQueue; moving it to another ClusterQueue moves its workloads."""
        key = (lq.namespace, lq.name)
        old = self.local_queues.get(key)
        if old == lq:
            return
        if old is not None:
            self.pending_lists.local_queue_removed(old)
        self.local_queues[key] = lq
        self.pending_lists.local_queue_added(lq)

    update_local_queue = add_local_queue

    def delete_local_queue(self, namespace: str, name: str) -> None:
        old = self.local_queues.pop((namespace, name), None)
        if old is not None:
            self.pending_lists.local_queue_removed(old)
            self.cache.admission_fairness.local_queue_removed((namespace, name))

    def add_namespace(self, namespace: Namespace) -> None:
        """Add or update a Namespace's labels; a ClusterQueue that selects it now and did not before
        retries its parked workloads and those of its cohort (Kueue's cqNamespaceHandler.Update)."""
        quotas = self.cache.quotas
        change = self.namespaces.relabel(namespace, quotas.cluster_queues.values())
        if change is None:
            return
        for cq in change.no_longer_selecting:
            queue = self.pending_lists.queues.get(cq.name)
            if queue is None:
                continue
            # Kueue retries a StrictFIFO head every cycle, so a blocked head from this namespace
            # is turned away at once and the next one tried.
            blocked = queue.blocked()
            if blocked is not None and blocked.namespace == namespace.name:
                queue.unblock()
        newly: set[str] = set()
        for cq in change.now_selecting:
            newly |= quotas.neighbours(cq.name)
        self.retries.capacity_changed(newly)

    update_namespace = add_namespace

    def delete_namespace(self, name: str) -> None:
        """Forget a Namespace's labels (its workloads are deleted with it; Kueue retries nothing)."""
        self.namespaces.remove(name)

    # -- workloads --------------------------------------------------------------------
    def add_workload(self, workload: Workload) -> None:
        """Add or update a workload from its API object (status included)."""
        workload = self._resolve_priority(workload)
        old = self._workloads.get(workload.key)
        sticky_in = ""
        if old is not None:
            if _same_for_queueing(old, workload):
                if old.admission is not None and _echo_differs(old, workload):
                    self._take_echo(old, workload)
                return
            # A pending workload's update keeps it sticky (Kueue's PushOrUpdate); its last flavor
            # search is forgotten (a new workload.Info).
            old_queue = self.pending_lists.queue_of(old)
            if old_queue is not None and old_queue.sticky == old.key:
                sticky_in = old_queue.name
            self._forget(old, release_quota=old.admission != workload.admission or old.active != workload.active)
        if workload.finished:
            return
        self._workloads[workload.key] = workload
        if not workload.active:
            return
        if workload.admission is not None:
            # Evicted yet still admitted: its quota is held until someone releases it (Kueue's bare Workload)
            self.cache.record(workload, workload.admission.cluster_queue, evicting=workload.evicted)
        else:
            self.pending_lists.want(workload)
            queue = self.pending_lists.queue_of(workload)
            if queue is not None and queue.name == sticky_in:
                queue.stick(workload.key)

    update_workload = add_workload

    def _take_echo(self, old: Workload, new: Workload) -> None:
        """The API's echo of an admission replaces the exact time it was decided at with the whole
        second the API keeps, as Kueue's cache replaces the assumed Workload with the informer's object:
        from then on, preemption candidates reserved in one second are ordered by UID
        (pkg/scheduler/preemption/common/ordering.go, CandidatesOrdering). Its execution time fields are
        taken too (an eviction writes the accumulated time on from them)."""
        updated = dataclasses.replace(
            old, admitted_at=new.admitted_at or old.admitted_at, max_execution_seconds=new.max_execution_seconds,
            accumulated_execution_seconds=new.accumulated_execution_seconds,
            deactivation_target=new.deactivation_target, admission_checks=new.admission_checks,
            admitted_condition=new.admitted_condition)
        self._workloads[old.key] = updated
        self.cache.replace_workload(updated)

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
            self.pending_lists.want(again)

    def cancel_admission(self, key: WorkloadKey) -> None:
        """Undo an assumed admission whose API write failed; the workload keeps its place."""
        old = self._workloads.get(key)
        if old is None or old.admission is None:
            return
        self._forget(old, release_quota=True)
        again = dataclasses.replace(old, admission=None, admitted_at=0.0)
        self._workloads[key] = again
        if again.active:
            self.pending_lists.want(again)

    def mark_admitted(self, key: WorkloadKey, admission: Admission, now: float) -> None:
        """Reserve quota for a pending workload (what applying an ``Admit`` does)."""
        workload = self._workloads.get(key)
        if workload is None or workload.admission is not None:
            return
        self._forget(workload, release_quota=False)
        # The exact time until the API's echo brings the whole second (_take_echo): Kueue
        # orders preemption candidates by its cache's QuotaReserved time, so a preemption before the echo
        # picks the most recent of one second's admissions (tests/integration/test_agreement_cases.py,
        # seed 102) and one after it falls to the UID.
        admitted = dataclasses.replace(workload, admission=admission, admitted_at=now)
        self._workloads[key] = admitted
        self.cache.record(admitted, admission.cluster_queue, evicting=False)

    def workload(self, key: WorkloadKey) -> Workload | None:
        return self._workloads.get(key)

    # -- the scheduling cycle --------------------------------------------------------
    def heads(self) -> list[tuple[ClusterQueue, Workload]]:
        """The head of every ClusterQueue that can admit now (active, not stopped, not blocked)."""
        return [(cq, head) for cq, queue in self._admitting_queues() if (head := queue.head()) is not None]

    def blocked_heads(self) -> list[tuple[ClusterQueue, Workload]]:
        """StrictFIFO heads waiting for capacity; Kueue retries them every cycle, so what they
        wait for stays held back from their cohort (see scheduling)."""
        return [(cq, head) for cq, queue in self._admitting_queues() if (head := queue.blocked()) is not None]

    def has_work(self) -> bool:
        """Whether a scheduling cycle could decide anything."""
        return bool(self.heads()) or (self.preemptor_retry and bool(self.blocked_heads()))

    def apply_decisions(self, decisions: Sequence[Decision], now: float) -> None:
        """Record a cycle's decisions in memory (Kueue's "assume"); stale ones are skipped."""
        for decision in decisions:
            queue = self.pending_lists.queues.get(decision.cluster_queue)
            if queue is None or queue.get(decision.workload.key) is not decision.workload:
                continue  # the workload changed or left since the cycle looked at it
            key = decision.workload.key
            if isinstance(decision, Admit):
                self.mark_admitted(key, decision.admission, now)
                if self.cache.ordered_by_usage(decision.cluster_queue):
                    self.cache.admission_fairness.workload_assumed(decision.workload, now)
            elif isinstance(decision, Preempt):
                for target in decision.targets:
                    self.cache.mark_evicting(target.workload.key)
                # Kueue requeues a preemptor at once (RequeueReasonPendingPreemption): the next cycle
                # tries it again, and may choose targets once the first ones show as evicted.
                self.preemptor_retry = self.preemptor_retry or bool(decision.to_evict())
                queue.block(key)
                # Kueue: the next attempt tries every flavor again, and the preemptor is sticky.
                queue.remember_assignment(key, None)
                queue.stick(key)
            elif isinstance(decision, Park):
                if self.scheduling_equivalence_hashing and not decision.reason:
                    queue.park_equivalent(key)  # Kueue's requeue reasons NoFit and PreemptionNoCandidates
                else:
                    queue.park(key)
                queue.remember_assignment(key, decision.last_assignment, self.cycle)
            elif isinstance(decision, Wait):
                if decision.blocks:
                    queue.block(key)
                else:
                    queue.lift_block(key)
                queue.remember_assignment(key, decision.last_assignment, self.cycle)

    def retry_parked(self, now: float) -> None:
        """Resample the LocalQueue usage that is due (admission fair sharing, whose clock this is too),
        then time the retries asked for and return the parked workloads whose retry is due."""
        if self.cache.admission_fairness.config.enabled:
            self.sample_local_queues(now)
        self.retries.retry_due(now)

    def next_retry_at(self) -> float | None:
        """When the next parked workloads come back (``ParkedRetries.next_retry_at``)."""
        return self.retries.next_retry_at()

    def sample_local_queues(self, now: float) -> dict[LocalQueueKey, dict[str, int]]:
        """Admission fair sharing's LocalQueue reconciler at ``now``: the usage samples that are due,
        returned as each resampled LocalQueue's consumed resources (milli-units)."""
        fairness = self.cache.admission_fairness
        ordered_by_usage = [lq for lq in self.local_queues.values() if self.cache.ordered_by_usage(lq.cluster_queue)]
        written = fairness.tick(now, [(lq.namespace, lq.name) for lq in ordered_by_usage])
        queues = self.pending_lists.queues
        for lq in ordered_by_usage:
            if (lq.namespace, lq.name) in written and (queue := queues.get(lq.cluster_queue)) is not None:
                queue.reordered()
        return written

    # -- reads kept here for harness/ and benchmarks/ (the rest read the parts) ------------
    def admitted(self, key: WorkloadKey) -> AdmittedWorkload | None:
        return self.cache.admitted(key)

    def admitted_in(self, cluster_queues: Iterable[str]) -> Iterator[AdmittedWorkload]:
        return self.cache.admitted_in(cluster_queues)

    def cluster_queue_names(self) -> list[str]:
        return self.pending_lists.cluster_queue_names()

    def summary_for_cluster_queue(
        self, cluster_queue: str, offset: object = 0, limit: object = 1000
    ) -> list[PendingWorkloadItem]:
        return self.pending_lists.summary_for_cluster_queue(cluster_queue, offset, limit)

    def summary_for_local_queue(
        self, namespace: str, local_queue: str, offset: object = 0, limit: object = 1000
    ) -> list[PendingWorkloadItem]:
        return self.pending_lists.summary_for_local_queue(namespace, local_queue, offset, limit)

    def position_of(self, key: WorkloadKey) -> tuple[int, int] | None:
        return self.pending_lists.position_of(key)

    # -- internals -----------------------------------------------------------------------
    def _admitting_queues(self) -> Iterator[tuple[ClusterQueue, PendingQueue]]:
        """ClusterQueues that can admit now (not stopped, every flavor known), with their pending queue."""
        for name, queue in self.pending_lists.queues.items():
            cq = self.cache.admitting(name)
            if cq is not None:
                yield cq, queue

    def _stays_parked(self, cluster_queue: str) -> Callable[[Workload], bool] | None:
        return self.namespaces.stays_parked(self.cache.quotas.cluster_queues[cluster_queue])

    def _resolve_priority(self, workload: Workload) -> Workload:
        if not workload.priority_class:
            return workload
        priority_class = self.priority_classes.get(workload.priority_class)
        if priority_class is None or priority_class.value == workload.priority:
            return workload
        return dataclasses.replace(workload, priority=priority_class.value)

    def _forget(self, workload: Workload, release_quota: bool) -> None:
        """Drop a workload from wherever it is (pending or admitted)."""
        self._workloads.pop(workload.key, None)
        self.pending_lists.forget(workload)
        admitted = self.cache.release(workload)
        if admitted is not None:
            # Kueue's cache bumps the queue's AllocatableResourceGeneration whenever an admitted
            # workload leaves or is replaced (clusterQueue.deleteWorkload).
            self.pending_lists.allocatable_changed((admitted.cluster_queue,))
            if release_quota:
                self.retries.capacity_changed(self.cache.quotas.neighbours(admitted.cluster_queue))

    def _quota_changed(self, cluster_queues: AbstractSet[str]) -> None:
        """The quota tree of these queues changed: their flavor searches start over and their parked
        workloads are retried."""
        self.pending_lists.allocatable_changed(cluster_queues)
        self.retries.capacity_changed(cluster_queues)


def _echo_differs(old: Workload, new: Workload) -> bool:
    """An admitted workload's object changed in what no queue reads but evictions and timers do."""
    return (
        (bool(new.admitted_at) and new.admitted_at != old.admitted_at)
        or old.max_execution_seconds != new.max_execution_seconds
        or old.accumulated_execution_seconds != new.accumulated_execution_seconds
        or old.deactivation_target != new.deactivation_target
        or old.admission_checks != new.admission_checks
        or old.admitted_condition != new.admitted_condition
    )


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
        # a pending head's check states decide whether the scheduler refuses it (failed checks)
        and (old.admission is not None or old.admission_checks == new.admission_checks)
    )
