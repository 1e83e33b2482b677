"""pyperf: one scheduling cycle of the reference core as the number of ClusterQueues grows, in a cohort
tree, classical and with fair sharing.

Run (modest, the machine is shared):

    .venv/bin/python benchmarks/micro/bench_cohort_trees.py --fast \
        -o results/benchmarks/cohort-trees/bench_cohort_trees.json

The world is Kueue's large-scale shape, scaled: a root Cohort with quota of its own above 10 Cohorts
(one for 10 queues), the ClusterQueues shared among them, every other queue full with admitted work,
20 pending Workloads per queue; so a cycle admits, borrows through the tree and searches for
preemption targets. Fair sharing adds the tournament (every entry's share recomputed per pop) and
fair-sharing preemption; admission fair sharing (classical otherwise) orders every queue's pending
Workloads by their LocalQueue's usage (the admitted ones give 4 of the 10 LocalQueues some), so each
head is the least of its queue by that key. ``decide_cycle`` is pure, so the same world is decided
again each loop.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pyperf

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scheduler_core_fixtures as fixtures  # noqa: E402

from scheduler.core import kinds, quantities  # noqa: E402
from scheduler.core.queues import QueueManager  # noqa: E402
from scheduler.core.scheduling import decide_cycle  # noqa: E402
from dataclasses import replace  # noqa: E402

from scheduler.core.workloads import Admission, PodSetAssignment  # noqa: E402

SIZES = (10, 100, 1000)
MODES = ("classical", "fair", "admission")
"""Kueue's classical order and preemption, fairSharing, admissionFairSharing (with classical)."""
PENDING_PER_QUEUE = 20
_worlds: dict[tuple[int, str], QueueManager] = {}
_AFS = kinds.AdmissionFairSharing(True, usage_half_life_seconds=600.0, usage_sampling_interval_seconds=60.0)


def tree_world(cluster_queues: int, mode: str) -> QueueManager:
    """``cluster_queues`` queues under 10 Cohorts (1 for 10 queues) under a root with 64 cpu of its own."""
    usage_based = mode == "admission"
    manager = QueueManager(fair_sharing=kinds.FairSharing(enabled=mode == "fair"),
                           admission_fair_sharing=_AFS if usage_based else kinds.ADMISSION_FAIR_SHARING_OFF)
    manager.add_resource_flavor(kinds.ResourceFlavor("default"))
    cohorts = 1 if cluster_queues <= 10 else 10
    root_quota = kinds.ResourceGroup(("cpu", "memory"), (kinds.FlavorQuotas("default", (
        kinds.ResourceQuota("cpu", quantities.parse_quantity("64")),
        kinds.ResourceQuota("memory", quantities.parse_quantity("256Gi")))),))
    manager.add_cohort(kinds.Cohort("org", resource_groups=(root_quota,)))
    for c in range(cohorts):
        manager.add_cohort(kinds.Cohort(f"team-{c}", parent="org", fair_weight=1.0 + c % 3))
    usage = {"cpu": quantities.parse_quantity("4"), "memory": quantities.parse_quantity("16Gi")}
    for index in range(cluster_queues):
        name = f"cq-{index}"
        manager.add_cluster_queue(replace(fixtures.cluster_queue(name, cohort=f"team-{index % cohorts}", cpu="16",
                                                                 memory="64Gi"), usage_based_admission=usage_based))
        for lq in range(fixtures.LOCAL_QUEUES_PER_CLUSTER_QUEUE):
            manager.add_local_queue(kinds.LocalQueue(f"team-{index}", f"lq-{lq}", name))
        if index % 2:
            for workload in fixtures.make_workloads(4, cluster_queue_index=10_000 + index):
                admission = Admission(name, (PodSetAssignment("main", {"cpu": "default", "memory": "default"},
                                                              usage, 1),))
                manager.add_workload(replace(workload, namespace=f"team-{index}", admission=admission,
                                                      admitted_at=workload.creation_timestamp))
        for workload in fixtures.make_workloads(PENDING_PER_QUEUE, cluster_queue_index=index):
            manager.add_workload(workload)
    if usage_based:
        manager.sample_local_queues(1_700_000_000.0)  # every LocalQueue's usage starts at its admitted usage
    return manager


def bench_cycle(loops: int, cluster_queues: int, mode: str) -> float:
    key = (cluster_queues, mode)
    if key not in _worlds:
        _worlds[key] = tree_world(cluster_queues, mode)
    manager = _worlds[key]
    start = time.perf_counter()
    for _ in range(loops):
        decide_cycle(manager)
    return time.perf_counter() - start


def main() -> None:
    runner = pyperf.Runner()
    runner.metadata["description"] = "scheduler.core: one cycle in a cohort tree, by number of ClusterQueues"
    for size in SIZES:
        for mode in MODES:
            runner.bench_time_func(f"cycle-tree-{size}cq-{mode}", bench_cycle, size, mode)


if __name__ == "__main__":
    main()
