"""Stopped queues: which admitted workloads a ``HoldAndDrain`` stop evicts, and when their requeue resumes.

``kubectl kueue stop clusterqueue|localqueue`` sets ``spec.stopPolicy`` (``HoldAndDrain`` unless
``--keep-already-running``, which is ``Hold``). Kueue (pkg/controller/core/workload_controller.go):

- ``Hold``: the queue admits nothing new; ``HoldAndDrain`` also evicts its admitted workloads, with
  reason ``LocalQueueStopped`` (checked first) or ``ClusterQueueStopped``; the eviction leaves them
  ``Requeued=False`` with that reason;
- once the queue's stopPolicy is back to None, such a workload is marked ``Requeued=True`` with
  reason ``LocalQueueRestarted`` / ``ClusterQueueRestarted``.

Pure: reads the ``QueueManager``; the controller writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.core.queues import QueueManager
from scheduler.core.workloads import Workload

CQ_STOPPED = "ClusterQueueStopped"
LQ_STOPPED = "LocalQueueStopped"
STOPPED_MESSAGES = {CQ_STOPPED: "The ClusterQueue is stopped", LQ_STOPPED: "The LocalQueue is stopped"}
RESTARTS = {
    CQ_STOPPED: ("ClusterQueueRestarted", "The ClusterQueue was restarted after being stopped"),
    LQ_STOPPED: ("LocalQueueRestarted", "The LocalQueue was restarted after being stopped"),
}


@dataclass(frozen=True, slots=True)
class Drain:
    """Evict an admitted workload because its LocalQueue or ClusterQueue is stopped with HoldAndDrain."""

    workload: Workload
    cluster_queue: str
    reason: str

    @property
    def message(self) -> str:
        return STOPPED_MESSAGES[self.reason]


def drain_targets(manager: QueueManager) -> list[Drain]:
    """Admitted workloads (not already being evicted) that a HoldAndDrain stop evicts."""
    draining_lqs = {key for key, lq in manager.local_queues.items() if lq.drain}
    cluster_queues = manager.cache.quotas.cluster_queues
    names = {lq.cluster_queue for key, lq in manager.local_queues.items() if key in draining_lqs}
    names |= {name for name, cq in cluster_queues.items() if cq.drain}
    targets = []
    for name in sorted(names):
        for entry in manager.cache.admitted_in([name]):
            if entry.evicting:
                continue
            if entry.workload.local_queue in draining_lqs:
                targets.append(Drain(entry.workload, name, LQ_STOPPED))
            elif name in cluster_queues and cluster_queues[name].drain:
                targets.append(Drain(entry.workload, name, CQ_STOPPED))
    return targets


def is_held_by_stop(workload: Workload) -> bool:
    """Its requeue waits for a stopped queue to resume (watch it for ``restart_for``)."""
    return workload.requeue_held_by in RESTARTS


def restart_for(workload: Workload, manager: QueueManager) -> tuple[str, str] | None:
    """(reason, message) of the Requeued=True condition due now that the stopped queue resumed, else None."""
    if not is_held_by_stop(workload):
        return None
    lq = manager.local_queues.get(workload.local_queue)
    if lq is None or lq.stopped:
        return None
    if workload.requeue_held_by == CQ_STOPPED:
        cq = manager.cache.quotas.cluster_queues.get(lq.cluster_queue)
        if cq is None or cq.stopped:
            return None
    return RESTARTS[workload.requeue_held_by]
