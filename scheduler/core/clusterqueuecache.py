"""``ClusterQueueCache``: what the scheduler measures a head against (Kueue's pkg/cache/scheduler).

It holds the ResourceFlavors, the Topologies and nodes of TAS flavors, the ClusterQueues and Cohorts
with the tree they form and the quota each node uses (``quotas.QuotaBook``, whose cohort tree is
Kueue's pkg/cache/hierarchy), and every admitted workload with the usage it holds. Admission fair
sharing's LocalQueue usage moves with the admitted usage, so it is kept here too.

The pending side (``pendinglists``, ``pendingqueues``, ``parkedretries``) knows nothing of this; the
``QueueManager`` tells both sides about each change, as Kueue's controllers tell its cache and its
queue manager. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping

from scheduler.core import admissionchecks, admissionfairsharing
from scheduler.core.kinds import AdmissionFairSharing, ClusterQueue, LocalQueue, LocalQueueKey, ResourceFlavor
from scheduler.core.preempting import AdmittedWorkload
from scheduler.core.quotas import QuotaBook
from scheduler.core.topologystate import TopologyState
from scheduler.core.workloads import Workload, WorkloadKey


class ClusterQueueCache:
    """Flavors, topologies, quota and the admitted workloads that use it.

    ``local_queues`` is the ``QueueManager``'s own mapping, read here (for admission fair sharing's
    weights), never changed.
    """

    def __init__(self, local_queues: Mapping[LocalQueueKey, LocalQueue],
                 admission_fair_sharing: AdmissionFairSharing) -> None:
        self.quotas = QuotaBook()
        self.flavors: dict[str, ResourceFlavor] = {}
        # AdmissionChecks by name: one a queue names that is missing or not Active keeps it from admitting.
        self.admission_checks: dict[str, admissionchecks.AdmissionCheck] = {}
        # Topologies, nodes and where admitted pods are, for TAS flavors.
        self.topologies = TopologyState()
        # Kueue's Configuration admissionFairSharing: LocalQueue usage orders some ClusterQueues.
        self.admission_fairness = admissionfairsharing.AdmissionFairness(admission_fair_sharing)
        self._local_queues = local_queues
        self._admitted: dict[WorkloadKey, AdmittedWorkload] = {}
        self._admitted_by_cq: dict[str, dict[WorkloadKey, AdmittedWorkload]] = {}

    # -- flavors ----------------------------------------------------------------------------
    def set_flavor(self, flavor: ResourceFlavor) -> None:
        self.flavors[flavor.name] = flavor
        self.topologies.set_flavor(flavor)

    def remove_flavor(self, name: str) -> list[str]:
        """Forget a ResourceFlavor; returns the ClusterQueues that name it (inactive until it returns)."""
        self.flavors.pop(name, None)
        self.topologies.delete_flavor(name)
        return [cq.name for cq in self.quotas.cluster_queues.values() if name in cq.flavor_names()]

    def admitting(self, name: str) -> ClusterQueue | None:
        """The ClusterQueue if it can admit now (not stopped, every flavor it names known, its admission checks
        all there and Active), else None."""
        cq = self.quotas.cluster_queues[name]
        if cq.stopped or not cq.flavor_names() <= self.flavors.keys():
            return None
        if cq.admission_checks and admissionchecks.cluster_queue_problems(cq, self.admission_checks):
            return None
        return cq

    # -- admission checks -------------------------------------------------------------------
    def set_admission_check(self, check: admissionchecks.AdmissionCheck) -> list[str]:
        """Add or update an AdmissionCheck; returns the ClusterQueues that name it."""
        self.admission_checks[check.name] = check
        return self._naming(check.name)

    def remove_admission_check(self, name: str) -> list[str]:
        """Forget an AdmissionCheck; returns the ClusterQueues that name it (inactive until it returns)."""
        self.admission_checks.pop(name, None)
        return self._naming(name)

    def _naming(self, check: str) -> list[str]:
        return [cq.name for cq in self.quotas.cluster_queues.values()
                if any(rule.name == check for rule in cq.admission_checks)]

    # -- admitted workloads ---------------------------------------------------------------
    def admitted(self, key: WorkloadKey) -> AdmittedWorkload | None:
        return self._admitted.get(key)

    def admitted_in(self, cluster_queues: Iterable[str]) -> Iterator[AdmittedWorkload]:
        """The admitted workloads of these queues, with their LocalQueue's usage where it orders them."""
        fairness = self.admission_fairness
        for name in cluster_queues:
            records = self._admitted_by_cq.get(name, {}).values()
            if not fairness.applies(self.quotas.cluster_queues.get(name)):
                yield from records
                continue
            usage = self._usage_now()
            for record in records:
                yield dataclasses.replace(record, local_queue_usage=usage(record.workload.local_queue))

    def record(self, workload: Workload, cluster_queue: str, evicting: bool) -> None:
        """An admitted workload now holds its admission's usage in ``cluster_queue``."""
        assert workload.admission is not None
        record = AdmittedWorkload(workload, cluster_queue, workload.admission.usage(), evicting)
        self._admitted[workload.key] = record
        self._admitted_by_cq.setdefault(cluster_queue, {})[workload.key] = record
        self.quotas.add_usage(cluster_queue, record.usage)
        self.topologies.add_workload(workload.key, workload.admission)
        if self.admission_fairness.config.enabled:
            self.admission_fairness.usage_added(workload.local_queue, record.usage)

    def release(self, workload: Workload) -> AdmittedWorkload | None:
        """The workload no longer holds quota: its record, if it had one, is dropped and returned."""
        admitted = self._admitted.pop(workload.key, None)
        if admitted is None:
            return None
        self._admitted_by_cq[admitted.cluster_queue].pop(workload.key, None)
        self.quotas.remove_usage(admitted.cluster_queue, admitted.usage)
        if self.admission_fairness.config.enabled:
            self.admission_fairness.usage_removed(workload.local_queue, admitted.usage)
        self.topologies.remove_workload(workload.key)
        return admitted

    def mark_evicting(self, key: WorkloadKey) -> None:
        """A preemption chose the workload: it still holds its quota until its eviction is written."""
        record = self._admitted.get(key)
        if record is None or record.evicting:
            return
        self._replace(dataclasses.replace(record, evicting=True))

    def replace_workload(self, workload: Workload) -> None:
        """The admitted workload's object changed in what preemption reads, not in the quota it holds."""
        record = self._admitted.get(workload.key)
        if record is not None:
            self._replace(dataclasses.replace(record, workload=workload))

    def _replace(self, record: AdmittedWorkload) -> None:
        key = record.workload.key
        self._admitted[key] = record
        self._admitted_by_cq[record.cluster_queue][key] = record

    # -- admission fair sharing --------------------------------------------------------------
    def ordered_by_usage(self, cluster_queue: str) -> bool:
        """Whether the ClusterQueue orders its pending workloads by LocalQueue usage."""
        return self.admission_fairness.applies(self.quotas.cluster_queues.get(cluster_queue))

    def usage_order(self, sticky: WorkloadKey | None) -> admissionfairsharing.SortKey:
        """The pending order by LocalQueue usage now (a ``PendingQueue.reorder``)."""
        return admissionfairsharing.sort_key(self.admission_fairness.usage_of(self._local_queues), sticky)

    def _usage_now(self) -> Callable[[LocalQueueKey], float]:
        """Each LocalQueue's usage now, read once per LocalQueue (as Kueue's snapshot reads it per cycle)."""
        usage = self.admission_fairness.usage_of(self._local_queues)
        return functools.cache(usage)
