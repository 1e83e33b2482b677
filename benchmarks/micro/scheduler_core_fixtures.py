"""Deterministic worlds for the scheduler-core benchmarks (shared by the pyperf and memory scripts).

Workloads get random priorities (0-9) and shuffled creation times from a seeded RNG, so
the pending set is not already sorted in insertion order (as it would not be in Kueue's
heap) and every run builds the same world.
"""

from __future__ import annotations

import random
from dataclasses import replace

from scheduler.core import kinds, quantities
from scheduler.core.queues import QueueManager
from scheduler.core.workloads import Admission, PodSet, PodSetAssignment, Workload

SEED = 20240601
LOCAL_QUEUES_PER_CLUSTER_QUEUE = 10
_POD_SETS = {
    cpu: (PodSet("main", 1, (("cpu", quantities.parse_quantity(cpu)), ("memory", quantities.parse_quantity("1Gi")))),)
    for cpu in ("500m", "1", "2", "4")
}


def cluster_queue(name: str, cohort: str = "", cpu: str = "100", memory: str = "400Gi") -> kinds.ClusterQueue:
    quotas = (
        kinds.ResourceQuota("cpu", quantities.parse_quantity(cpu)),
        kinds.ResourceQuota("memory", quantities.parse_quantity(memory)),
    )
    group = kinds.ResourceGroup(("cpu", "memory"), (kinds.FlavorQuotas("default", quotas),))
    return kinds.ClusterQueue(
        name,
        (group,),
        cohort=cohort,
        preemption=kinds.Preemption(kinds.PreemptionPolicy.LOWER_PRIORITY, kinds.PreemptionPolicy.ANY),
    )


def make_workloads(count: int, cluster_queue_index: int = 0, rng: random.Random | None = None) -> list[Workload]:
    """``count`` pending workloads spread over the queue's LocalQueues."""
    rng = rng or random.Random(SEED + cluster_queue_index)
    created = list(range(count))
    rng.shuffle(created)
    namespace = f"team-{cluster_queue_index}"
    return [
        Workload(
            namespace=namespace,
            name=f"job-{cluster_queue_index}-{i}",
            uid=f"{cluster_queue_index:04d}-{i:08d}-7d3c-4c1e-9a0b-5f7e8d9c0b1a",
            queue_name=f"lq-{i % LOCAL_QUEUES_PER_CLUSTER_QUEUE}",
            priority=rng.randrange(10),
            creation_timestamp=1_700_000_000.0 + created[i],
            pod_sets=_POD_SETS[rng.choice(tuple(_POD_SETS))],
        )
        for i in range(count)
    ]


def single_queue_world(pending: int, positions: str) -> QueueManager:
    """One ClusterQueue, 10 LocalQueues, ``pending`` workloads."""
    manager = QueueManager(positions=positions)
    manager.add_resource_flavor(kinds.ResourceFlavor("default"))
    manager.add_cluster_queue(cluster_queue("cq-0"))
    _add_local_queues(manager, 0, "cq-0")
    for workload in make_workloads(pending):
        manager.add_workload(workload)
    return manager


def cohort_world(pending: int, cluster_queues: int = 100, cohorts: int = 10, positions: str = "indexed") -> QueueManager:
    """``cluster_queues`` queues in ``cohorts`` cohorts sharing ``pending`` workloads.

    Every other queue is already full with admitted work, so a cycle exercises both the
    admit path and the preemption search.
    """
    manager = QueueManager(positions=positions)
    manager.add_resource_flavor(kinds.ResourceFlavor("default"))
    per_queue = pending // cluster_queues
    for index in range(cluster_queues):
        name = f"cq-{index}"
        manager.add_cluster_queue(cluster_queue(name, cohort=f"cohort-{index % cohorts}", cpu="16", memory="64Gi"))
        _add_local_queues(manager, index, name)
        if index % 2:
            for workload in make_workloads(4, cluster_queue_index=10_000 + index):
                _admit_as_running(manager, workload, name, f"team-{index}")
        for workload in make_workloads(per_queue, cluster_queue_index=index):
            manager.add_workload(workload)
    return manager


def _add_local_queues(manager: QueueManager, index: int, cq_name: str) -> None:
    for lq in range(LOCAL_QUEUES_PER_CLUSTER_QUEUE):
        manager.add_local_queue(kinds.LocalQueue(f"team-{index}", f"lq-{lq}", cq_name))


def _admit_as_running(manager: QueueManager, workload: Workload, cq_name: str, namespace: str) -> None:
    """Admit a 4-cpu, 16Gi 'running' job that fills a quarter of the queue."""
    usage = {"cpu": quantities.parse_quantity("4"), "memory": quantities.parse_quantity("16Gi")}
    admission = Admission(cq_name, (PodSetAssignment("main", {"cpu": "default", "memory": "default"}, usage, 1),))
    manager.add_workload(
        replace(workload, namespace=namespace, name=f"running-{workload.name}", admission=admission, admitted_at=1.0)
    )
