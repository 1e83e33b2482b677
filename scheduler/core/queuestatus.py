"""ClusterQueue and LocalQueue status as Kueue reports it: counts and the Active condition.

A ClusterQueue's status also carries ``flavorsUsage`` and ``flavorsReservation`` (equal here: no
admission checks), one entry per flavor of its resource groups in spec order with every covered
resource, zeros included, as Kueue writes them: Kueue's own performance recorder reads the first
flavor's first resource, so the order is part of the contract.
``kubectl kueue list clusterqueue`` prints ``status.pendingWorkloads``, ``admittedWorkloads`` and
whether the ``Active`` condition is True; ``list localqueue`` the counts. Reasons and messages are
Kueue's (pkg/cache/scheduler ``inactiveReason``, the LocalQueue reconciler), so a reader of either
scheduler's objects sees the same text. Pure: reads a ``QueueManager``, changes nothing.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass

from scheduler.core import admissionchecks
from scheduler.core.kinds import ClusterQueue, LocalQueue, LocalQueueKey
from scheduler.core.queues import QueueManager

CQ_READY = "Can admit new workloads"
LQ_READY = "Can submit new workloads to localQueue"
LQ_STOPPED = "LocalQueue is stopped"
LQ_CQ_INACTIVE = "Can't submit new workloads to clusterQueue"


@dataclass(frozen=True, slots=True)
class Active:
    """The Active condition: True when the queue can take (admit or accept) new workloads."""

    status: bool
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class ResourceUsage:
    flavor: str
    resource: str
    total: int
    """Quota held by admitted workloads (milli-units)."""
    borrowed: int
    """The part of `total` above the queue's nominal quota (borrowed from its cohort)."""


@dataclass(frozen=True, slots=True)
class QueueStatus:
    pending: int
    admitted: int
    """Admitted and quota-reserving are the same here: there are no admission checks."""
    active: Active
    usage: tuple[ResourceUsage, ...] = ()
    """ClusterQueues only: per flavor and resource, in spec order."""
    consumed: ConsumedResources | None = None
    """LocalQueues of a ClusterQueue that orders by usage (admission fair sharing) only."""


@dataclass(frozen=True, slots=True)
class ConsumedResources:
    """A LocalQueue's status.fairSharing.admissionFairSharingStatus: its decayed usage at its last sample."""

    resources: tuple[tuple[str, int], ...]
    """(resource, milli-units), sorted by resource."""
    last_update: float
    """POSIX seconds of the sample."""


def cluster_queue_usage(cq: ClusterQueue, used: Mapping[tuple[str, str], int]) -> tuple[ResourceUsage, ...]:
    """Usage per flavor and covered resource of `cq`, in its spec's order, zeros included."""
    out = []
    for group in cq.resource_groups:
        for flavor in group.flavors:
            nominal = {r.name: r.nominal for r in flavor.resources}
            for resource in group.covered_resources:
                total = used.get((flavor.name, resource), 0)
                out.append(ResourceUsage(flavor.name, resource, total, max(0, total - nominal.get(resource, 0))))
    return tuple(out)


def cluster_queue_active(cq: ClusterQueue, known_flavors: Container[str],
                         known_checks: Mapping[str, admissionchecks.AdmissionCheck] | None = None) -> Active:
    """Kueue's verdict: stopped, referencing a missing ResourceFlavor, or a missing or inactive AdmissionCheck
    (``admissionchecks.cluster_queue_problems``) makes a queue inactive, in inactiveReason's order."""
    reasons: list[str] = []
    messages: list[str] = []
    if cq.stopped:
        reasons.append("Stopped")
        messages.append("is stopped")
    missing: list[str] = []
    for group in cq.resource_groups:
        for flavor in group.flavors:
            if flavor.name not in known_flavors and flavor.name not in missing:
                missing.append(flavor.name)
    if missing:
        reasons.append("FlavorNotFound")
        messages.append(f"references missing ResourceFlavor(s): {','.join(missing)}")
    for problem in admissionchecks.cluster_queue_problems(cq, known_checks or {}) if cq.admission_checks else ():
        reasons.append(problem.reason)
        messages.append(problem.message)
    if not reasons:
        return Active(True, "Ready", CQ_READY)
    return Active(False, reasons[0],
                  admissionchecks.truncate_condition_message(f"Can't admit new workloads: {', '.join(messages)}."))


def local_queue_active(lq: LocalQueue, cluster_queue: Active | None) -> Active:
    """A LocalQueue is active when it is not stopped and its ClusterQueue exists and is active."""
    if lq.stopped:
        return Active(False, "Stopped", LQ_STOPPED)
    if cluster_queue is None:
        return Active(False, "ClusterQueueDoesNotExist", LQ_CQ_INACTIVE)
    if not cluster_queue.status:
        return Active(False, "ClusterQueueIsInactive", LQ_CQ_INACTIVE)
    return Active(True, "Ready", LQ_READY)


def queue_statuses(manager: QueueManager) -> tuple[dict[str, QueueStatus], dict[LocalQueueKey, QueueStatus]]:
    """Status of every ClusterQueue and LocalQueue the manager knows (O(workloads), no sort)."""
    cluster_queues: dict[str, QueueStatus] = {}
    lq_counts: dict[LocalQueueKey, list[int]] = {key: [0, 0] for key in manager.local_queues}
    for name in manager.pending_lists.cluster_queue_names():
        admitted = list(manager.cache.admitted_in([name]))
        cq = manager.cache.quotas.cluster_queues[name]
        cluster_queues[name] = QueueStatus(manager.pending_lists.pending_count(name), len(admitted),
                                           cluster_queue_active(cq, manager.cache.flavors,
                                                                manager.cache.admission_checks),
                                           cluster_queue_usage(cq, manager.cache.quotas.usage.get(name, {})))
        for key, count in manager.pending_lists.pending_by_local_queue(name).items():
            lq_counts.setdefault(key, [0, 0])[0] += count
        for entry in admitted:
            lq_counts.setdefault(entry.workload.local_queue, [0, 0])[1] += 1
    local_queues: dict[LocalQueueKey, QueueStatus] = {}
    for key, (pending, admitted) in lq_counts.items():
        lq = manager.local_queues.get(key)
        if lq is None:
            continue  # admitted through a LocalQueue since deleted: counted in its ClusterQueue only
        cq_status = cluster_queues.get(lq.cluster_queue)
        local_queues[key] = QueueStatus(0 if lq.stopped else pending, admitted,
                                        local_queue_active(lq, cq_status.active if cq_status else None),
                                        consumed=_consumed(manager, lq))
    return cluster_queues, local_queues


def _consumed(manager: QueueManager, lq: LocalQueue) -> ConsumedResources | None:
    """What Kueue's LocalQueue reconciler writes at each sample, once the LocalQueue has been sampled."""
    fairness = manager.cache.admission_fairness
    if not fairness.applies(manager.cache.quotas.cluster_queues.get(lq.cluster_queue)):
        return None
    consumed = fairness.usages.consumed((lq.namespace, lq.name))
    if consumed is None:
        return None
    return ConsumedResources(tuple(sorted(consumed.resources.items())), consumed.last_update)
