"""A copy of the scheduler's world that a forecast may change: taken from a live ``QueueManager``, and a
fresh ``QueueManager`` rebuilt from it (pure).

The forecast (``forecasting``) drives the core's own cycle on the rebuilt manager, so the live one is
never touched. The copy is shallow where the core is immutable (Workloads, ClusterQueue specs are
frozen or replaced, never changed in place), so taking it costs one pass over the objects.

Left out of the copy: Topologies and nodes (a TAS flavor's queue then decides nothing in the
forecast), Workloads waiting for their LocalQueue or held (stopped queue, deactivated), and the
admitted Workloads being evicted (their quota is counted free at once and they are not requeued).
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.core.kinds import (
    ADMISSION_FAIR_SHARING_OFF,
    FAIR_SHARING_OFF,
    AdmissionFairSharing,
    ClusterQueue,
    Cohort,
    FairSharing,
    LocalQueue,
    Namespace,
    ResourceFlavor,
    WorkloadPriorityClass,
)
from scheduler.core.queues import QueueManager
from scheduler.core.workloads import RequeuingTimestamp, Workload


@dataclass(frozen=True, slots=True)
class World:
    """The objects and the configuration a ``QueueManager`` is built from."""

    flavors: tuple[ResourceFlavor, ...]
    cluster_queues: tuple[ClusterQueue, ...]
    local_queues: tuple[LocalQueue, ...]
    workloads: tuple[Workload, ...]
    """Admitted and pending; admitted ones carry ``admission`` and ``admitted_at``."""
    cohorts: tuple[Cohort, ...] = ()
    namespaces: tuple[Namespace, ...] = ()
    priority_classes: tuple[WorkloadPriorityClass, ...] = ()
    requeuing: RequeuingTimestamp = RequeuingTimestamp.EVICTION
    fair_sharing: FairSharing = FAIR_SHARING_OFF
    admission_fair_sharing: AdmissionFairSharing = ADMISSION_FAIR_SHARING_OFF
    preserve_scan_progress: bool = False
    preemption_ignores_pods: bool = False
    scheduling_equivalence_hashing: bool = False


def world_of(manager: QueueManager) -> World:
    """The live manager's world: its objects, admitted Workloads (not those being evicted) and pending ones."""
    cache = manager.cache
    names = list(cache.quotas.cluster_queues)
    admitted = tuple(r.workload for r in cache.admitted_in(names) if not r.evicted)
    pending = tuple(w for name in manager.pending_lists.cluster_queue_names()
                    for w in manager.pending_lists.pending_in_order(name))
    return World(
        flavors=tuple(cache.flavors.values()),
        cluster_queues=tuple(cache.quotas.cluster_queues.values()),
        local_queues=tuple(manager.local_queues.values()),
        workloads=admitted + pending,
        cohorts=tuple(cache.quotas.cohorts.values()),
        namespaces=tuple(Namespace(name, dict(labels)) for name, labels in manager.namespaces.labels.items()),
        priority_classes=tuple(manager.priority_classes.values()),
        requeuing=manager.requeuing,
        fair_sharing=manager.fair_sharing,
        admission_fair_sharing=cache.admission_fairness.config,
        preserve_scan_progress=manager.preserve_scan_progress,
        preemption_ignores_pods=manager.preemption_ignores_pods,
        scheduling_equivalence_hashing=manager.scheduling_equivalence_hashing,
    )


def manager_from(world: World) -> QueueManager:
    """A fresh manager holding ``world``; parked Workloads return at a change of capacity itself
    (no requeue batch: the forecast has no use for the batching delay)."""
    manager = QueueManager(requeuing=world.requeuing, requeue_batch_seconds=0.0, fair_sharing=world.fair_sharing,
                           admission_fair_sharing=world.admission_fair_sharing,
                           preserve_scan_progress=world.preserve_scan_progress,
                           preemption_ignores_pods=world.preemption_ignores_pods,
                           scheduling_equivalence_hashing=world.scheduling_equivalence_hashing)
    for flavor in world.flavors:
        manager.add_resource_flavor(flavor)
    for priority_class in world.priority_classes:
        manager.add_workload_priority_class(priority_class)
    for namespace in world.namespaces:
        manager.add_namespace(namespace)
    for cohort in world.cohorts:
        manager.add_cohort(cohort)
    for cq in world.cluster_queues:
        manager.add_cluster_queue(cq)
    for lq in world.local_queues:
        manager.add_local_queue(lq)
    # Admitted first, so the pending ones are measured against the quota they hold.
    for workload in sorted(world.workloads, key=lambda w: w.admission is None):
        manager.add_workload(workload)
    return manager
