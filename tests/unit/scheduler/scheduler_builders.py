"""Builders for scheduler-core fixtures, in the spirit of Kueue's MakeWorkload(...).Obj().

Quantities are written as Kubernetes text ("2", "500m", "1Gi") and parsed, so tests read
like the YAML they stand for.
"""

from __future__ import annotations

import dataclasses

from scheduler.core import conversion, kinds, quantities, topologies, workloads
from scheduler.core.queues import QueueManager


def q(text: str) -> int:
    return quantities.parse_quantity(text)


class WorkloadBuilder:
    def __init__(self, name: str, namespace: str = "ns") -> None:
        self._fields: dict = {
            "namespace": namespace,
            "name": name,
            "uid": f"uid-{name}",
            "queue_name": "lq",
            "priority": 0,
            "creation_timestamp": 1000.0,
            "pod_sets": (),
        }

    def queue(self, name: str) -> WorkloadBuilder:
        self._fields["queue_name"] = name
        return self

    def priority(self, value: int) -> WorkloadBuilder:
        self._fields["priority"] = value
        return self

    def created(self, seconds: float) -> WorkloadBuilder:
        self._fields["creation_timestamp"] = seconds
        return self

    def uid(self, uid: str) -> WorkloadBuilder:
        self._fields["uid"] = uid
        return self

    def request(self, count: int = 1, name: str = "main", **per_pod: str) -> WorkloadBuilder:
        """Add a pod set; resource names use ``_`` for ``/`` (``example_com_gpu``)."""
        requests = tuple(sorted((r.replace("_", "/"), q(v)) for r, v in per_pod.items()))
        pod_set = workloads.PodSet(name, count, requests)
        self._fields["pod_sets"] = (*self._fields["pod_sets"], pod_set)
        return self

    def selector(self, **labels: str) -> WorkloadBuilder:
        last = self._fields["pod_sets"][-1]
        updated = dataclasses.replace(last, node_selector=tuple(sorted(labels.items())))
        self._fields["pod_sets"] = (*self._fields["pod_sets"][:-1], updated)
        return self

    def topology(self, **request) -> WorkloadBuilder:
        """The last pod set's topologyRequest (``required=``, ``preferred=``, ``unconstrained=``, ...)."""
        last = self._fields["pod_sets"][-1]
        updated = dataclasses.replace(last, topology_request=topologies.TopologyRequest(**request))
        self._fields["pod_sets"] = (*self._fields["pod_sets"][:-1], updated)
        return self

    def obj(self) -> workloads.Workload:
        if not self._fields["pod_sets"]:
            self.request(cpu="1")
        return workloads.Workload(**self._fields)


class ClusterQueueBuilder:
    def __init__(self, name: str) -> None:
        self._name = name
        self._groups: list[kinds.ResourceGroup] = []
        self._fields: dict = {}

    def flavors(self, *flavors: tuple[str, dict[str, str | tuple]]) -> ClusterQueueBuilder:
        """One resource group: (flavor, {resource: nominal | (nominal, borrowing, lending)})."""
        covered: list[str] = []
        flavor_quotas = []
        for flavor, resources in flavors:
            quotas = []
            for resource, spec in resources.items():
                nominal, borrowing, lending = spec if isinstance(spec, tuple) else (spec, None, None)
                quotas.append(
                    kinds.ResourceQuota(
                        resource,
                        q(nominal),
                        None if borrowing is None else q(borrowing),
                        None if lending is None else q(lending),
                    )
                )
                if resource not in covered:
                    covered.append(resource)
            flavor_quotas.append(kinds.FlavorQuotas(flavor, tuple(quotas)))
        self._groups.append(kinds.ResourceGroup(tuple(covered), tuple(flavor_quotas)))
        return self

    def cohort(self, name: str) -> ClusterQueueBuilder:
        self._fields["cohort"] = name
        return self

    def strict_fifo(self) -> ClusterQueueBuilder:
        self._fields["queueing_strategy"] = kinds.QueueingStrategy.STRICT_FIFO
        return self

    def preemption(
        self, within: str = "Never", reclaim: str = "Never", borrow_within_cohort: str = "Never",
        max_priority_threshold: int | None = None,
    ) -> ClusterQueueBuilder:
        self._fields["preemption"] = kinds.Preemption(
            kinds.PreemptionPolicy(within),
            kinds.PreemptionPolicy(reclaim),
            kinds.BorrowWithinCohort(kinds.BorrowWithinCohortPolicy(borrow_within_cohort), max_priority_threshold),
        )
        return self

    def fungibility(
        self, when_can_borrow: str = "MayStopSearch", when_can_preempt: str = "TryNextFlavor",
        preference: str = "BorrowingOverPreemption",
    ) -> ClusterQueueBuilder:
        self._fields["flavor_fungibility"] = kinds.FlavorFungibility(
            kinds.FungibilityPolicy(when_can_borrow), kinds.FungibilityPolicy(when_can_preempt),
            kinds.FungibilityPreference(preference),
        )
        return self

    def weight(self, value: float) -> ClusterQueueBuilder:
        """spec.fairSharing.weight."""
        self._fields["fair_weight"] = value
        return self

    def namespaces(self, selector: dict | None) -> ClusterQueueBuilder:
        """spec.namespaceSelector as written in YAML (None: absent, which selects no namespace)."""
        self._fields["namespace_selector"] = conversion.label_selector_from_dict(selector)
        return self

    def obj(self) -> kinds.ClusterQueue:
        return kinds.ClusterQueue(self._name, tuple(self._groups), **self._fields)


class CohortBuilder:
    """A Cohort object: ``MakeCohort("c").Parent("r").ResourceGroup(...)`` in Kueue's test wrappers."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._parent = ""
        self._groups: tuple[kinds.ResourceGroup, ...] = ()
        self._weight = 1.0

    def parent(self, name: str) -> CohortBuilder:
        self._parent = name
        return self

    def flavors(self, *flavors: tuple[str, dict[str, str | tuple]]) -> CohortBuilder:
        """One resource group, written as for ``ClusterQueueBuilder.flavors``."""
        self._groups += ClusterQueueBuilder("").flavors(*flavors).obj().resource_groups
        return self

    def weight(self, value: float) -> CohortBuilder:
        self._weight = value
        return self

    def obj(self) -> kinds.Cohort:
        return kinds.Cohort(self._name, self._parent, self._groups, self._weight)


def manager_with(
    *cluster_queues: kinds.ClusterQueue,
    flavors: tuple[str, ...] = ("default",),
    local_queues: dict[str, str] | None = None,
    positions: str = "indexed",
    cohorts: tuple[kinds.Cohort, ...] = (),
    fair_sharing: kinds.FairSharing = kinds.FAIR_SHARING_OFF,
    requeue_batch_seconds: float = 0.0,
    preserve_scan_progress: bool = False,
    preemption_ignores_pods: bool = False,
    scheduling_equivalence_hashing: bool = False,
    tas_recompute_in_cycle: bool = False,
) -> QueueManager:
    """A manager with flavors, Cohorts, queues, and LocalQueues ``{lq name: cq name}`` in namespace ns.
    Parked workloads return at the change itself unless ``requeue_batch_seconds`` says otherwise
    (the batch has tests of its own; the others are about which workloads return, not when)."""
    manager = QueueManager(positions=positions, fair_sharing=fair_sharing, requeue_batch_seconds=requeue_batch_seconds,
                           preserve_scan_progress=preserve_scan_progress,
                           preemption_ignores_pods=preemption_ignores_pods,
                           scheduling_equivalence_hashing=scheduling_equivalence_hashing,
                           tas_recompute_in_cycle=tas_recompute_in_cycle)
    for flavor in flavors:
        manager.add_resource_flavor(kinds.ResourceFlavor(flavor))
    for cohort in cohorts:
        manager.add_cohort(cohort)
    for cq in cluster_queues:
        manager.add_cluster_queue(cq)
    for lq, cq_name in (local_queues or {"lq": cluster_queues[0].name}).items():
        manager.add_local_queue(kinds.LocalQueue("ns", lq, cq_name))
    return manager


def admit(manager: QueueManager, workload: workloads.Workload, cq: str, flavor: str = "default") -> None:
    """Add ``workload`` as already admitted in ``cq``, every resource in ``flavor``."""
    assignments = tuple(
        workloads.PodSetAssignment(
            ps.name,
            {r: flavor for r in ps.total_requests(with_pods=False)},
            ps.total_requests(with_pods=False),
            ps.count,
        )
        for ps in workload.pod_sets
    )
    manager.add_workload(
        dataclasses.replace(
            workload,
            admission=workloads.Admission(cq, assignments),
            admitted_at=workload.creation_timestamp,
        )
    )
