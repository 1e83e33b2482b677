"""Preemption target choice: policies, candidate order, minimal sets, cohort reclaim."""

import pytest

from scheduler.core.flavorassigning import Mode, assign_flavors
from scheduler.core.preempting import PreemptionReason, find_targets
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, admit, manager_with


def _targets(manager, cq_name, preemptor):
    cq = manager.quotas.cluster_queues[cq_name]
    assignment = assign_flavors(preemptor, cq, manager.flavors, manager.quotas)
    assert assignment.mode is Mode.PREEMPT
    admitted = manager.admitted_in(manager.quotas.neighbours(cq_name))
    targets = find_targets(preemptor, cq, assignment.usage, assignment.needs_preemption, admitted, manager.quotas)
    return [(t.workload.name, t.reason) for t in targets]


# Admitted workloads: (name, priority, cpu, admitted/created at).
@pytest.mark.parametrize(
    ("case", "within", "admitted", "preemptor", "expected"),
    [
        (
            "most recently admitted of the lowest priority goes first",
            "LowerPriority",
            [("old", 1, "2", 1), ("new", 1, "2", 2)],
            (10, "2", 5),
            ["new"],
        ),
        (
            "LowerPriority spares equal priority",
            "LowerPriority",
            [("peer", 10, "4", 1)],
            (10, "2", 5),
            [],
        ),
        (
            "LowerOrNewerEqualPriority takes a newer equal",
            "LowerOrNewerEqualPriority",
            [("older-peer", 10, "2", 1), ("newer-peer", 10, "2", 9)],
            (10, "2", 5),
            ["newer-peer"],
        ),
        (
            # a (prio 1, 1 cpu) is removed first but 1 cpu is not enough; b (prio 2, 3 cpu)
            # is needed; adding a back still fits (1 + 3 <= 4), so only b goes.
            "minimal set adds back what is not needed",
            "LowerPriority",
            [("a", 1, "1", 3), ("b", 2, "3", 1)],
            (10, "3", 5),
            ["b"],
        ),
        (
            "several targets when one is not enough",
            "LowerPriority",
            [("a", 1, "2", 3), ("b", 2, "2", 1)],
            (10, "4", 5),
            ["a", "b"],
        ),
    ],
)
def test_within_cluster_queue(case, within, admitted, preemptor, expected):
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).preemption(within=within).obj()
    manager = manager_with(cq)
    for name, priority, cpu, at in admitted:
        admit(manager, WorkloadBuilder(name).priority(priority).created(at).request(cpu=cpu).obj(), "cq")
    priority, cpu, created = preemptor
    workload = WorkloadBuilder("preemptor").priority(priority).created(created).request(cpu=cpu).obj()
    targets = _targets(manager, "cq", workload)
    assert sorted(name for name, _ in targets) == sorted(expected), case
    assert all(reason is PreemptionReason.IN_CLUSTER_QUEUE for _, reason in targets)


@pytest.mark.parametrize(
    ("case", "reclaim", "borrower_priority", "expected"),
    [
        # b uses 6 of a shared 8 (borrowing 2); a needs its nominal 4: one of b's goes.
        ("reclaim any", "Any", 5, ["b2"]),
        ("reclaim lower priority", "LowerPriority", 0, ["b2"]),
        ("lower priority spares a higher borrower", "LowerPriority", 5, []),
    ],
)
def test_reclaim_within_cohort(case, reclaim, borrower_priority, expected):
    a = ClusterQueueBuilder("a").flavors(("default", {"cpu": "4"})).cohort("co").preemption(reclaim=reclaim).obj()
    b = ClusterQueueBuilder("b").flavors(("default", {"cpu": "4"})).cohort("co").obj()
    manager = manager_with(a, b)
    admit(manager, WorkloadBuilder("b1").priority(borrower_priority).created(1).request(cpu="3").obj(), "b")
    admit(manager, WorkloadBuilder("b2").priority(borrower_priority).created(2).request(cpu="3").obj(), "b")
    workload = WorkloadBuilder("preemptor").priority(1).request(cpu="4").obj()
    targets = _targets(manager, "a", workload)
    assert [name for name, _ in targets] == expected, case
    assert all(reason is PreemptionReason.IN_COHORT_RECLAMATION for _, reason in targets)


def test_no_reclaim_from_queue_within_nominal():
    a = ClusterQueueBuilder("a").flavors(("default", {"cpu": "4"})).cohort("co").preemption(reclaim="Any").obj()
    b = ClusterQueueBuilder("b").flavors(("default", {"cpu": "4"})).cohort("co").obj()
    manager = manager_with(a, b)
    admit(manager, WorkloadBuilder("a1").request(cpu="3").obj(), "a")
    admit(manager, WorkloadBuilder("b1").request(cpu="4").obj(), "b")
    # a has 1 left and wants 2; b is within its nominal, so nothing can be reclaimed.
    workload = WorkloadBuilder("preemptor").priority(1).request(cpu="2").obj()
    assert _targets(manager, "a", workload) == []
