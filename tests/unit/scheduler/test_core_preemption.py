"""Preemption target choice: policies, candidate order, minimal sets, cohort reclaim."""

import dataclasses

import pytest

from scheduler.core import conversion, kinds
from scheduler.core.flavorassigning import Mode, assign_flavors
from scheduler.core.preempting import PreemptionPossibility, PreemptionReason, find_targets, simulate_preemption
from scheduler.core.scheduling import run_cycle
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, admit, manager_with, q


def _targets(manager, cq_name, preemptor):
    cq = manager.cache.quotas.cluster_queues[cq_name]
    admitted = list(manager.cache.admitted_in(manager.cache.quotas.neighbours(cq_name)))
    assignment = assign_flavors(preemptor, cq, manager.cache.flavors, manager.cache.quotas, admitted)
    assert assignment.mode is Mode.PREEMPT
    targets = find_targets(preemptor, cq, assignment.usage, assignment.needs_preemption, admitted, manager.cache.quotas)
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


def _borrowing_reclaimer(borrow_within_cohort, threshold=None, borrower_priority=0):
    """a (2 cpu) reclaims with a 3-cpu head (priority 5), so it would borrow; b (4 cpu) runs 6 in
    two workloads, borrowing 2 of a's."""
    a = (ClusterQueueBuilder("a").flavors(("default", {"cpu": "2"})).cohort("co")
         .preemption(reclaim="LowerPriority", borrow_within_cohort=borrow_within_cohort,
                     max_priority_threshold=threshold).obj())
    b = ClusterQueueBuilder("b").flavors(("default", {"cpu": "4"})).cohort("co").obj()
    manager = manager_with(a, b)
    admit(manager, WorkloadBuilder("b1").priority(borrower_priority).created(1).request(cpu="3").obj(), "b")
    admit(manager, WorkloadBuilder("b2").priority(borrower_priority).created(2).request(cpu="3").obj(), "b")
    return manager, WorkloadBuilder("preemptor").priority(5).request(cpu="3").obj()


@pytest.mark.parametrize(
    ("case", "policy", "threshold", "borrower_priority", "mode", "expected"),
    [
        # 3 > a's nominal 2: without borrowWithinCohort Kueue does not even simulate (fitsResourceQuota).
        ("Never: no preemption while borrowing", "Never", None, 0, Mode.NO_FIT, None),
        ("LowerPriority: the newest lower-priority borrower goes", "LowerPriority", None, 0, Mode.PREEMPT,
         [("b2", PreemptionReason.IN_COHORT_RECLAIM_WHILE_BORROWING)]),
        ("within the threshold", "LowerPriority", 0, 0, Mode.PREEMPT,
         [("b2", PreemptionReason.IN_COHORT_RECLAIM_WHILE_BORROWING)]),
        # Above maxPriorityThreshold a candidate may only go if a would not borrow: no set works.
        ("above the threshold", "LowerPriority", -1, 0, Mode.PREEMPT, []),
        # Not lower than the preemptor: only without borrowing either (isAboveBorrowingThreshold).
        ("equal priority", "LowerPriority", None, 5, Mode.PREEMPT, []),
    ],
)
def test_borrow_within_cohort(case, policy, threshold, borrower_priority, mode, expected):
    """preemption.borrowWithinCohort (classical/hierarchical_preemption.go classifyPreemptionVariant)."""
    manager, preemptor = _borrowing_reclaimer(policy, threshold, borrower_priority)
    cq = manager.cache.quotas.cluster_queues["a"]
    admitted = list(manager.cache.admitted_in(manager.cache.quotas.neighbours("a")))
    assignment = assign_flavors(preemptor, cq, manager.cache.flavors, manager.cache.quotas, admitted)
    assert assignment.mode is mode, case
    if expected is None:
        return
    assert assignment.borrows, case
    targets = find_targets(preemptor, cq, assignment.usage, assignment.needs_preemption, admitted, manager.cache.quotas)
    assert [(t.workload.name, t.reason) for t in targets] == expected, case


@pytest.mark.parametrize(
    ("case", "within", "reclaim", "own", "borrowers", "cpu", "expected"),
    [
        ("nothing to take", "LowerPriority", "Any", [], [], "4", (PreemptionPossibility.NO_CANDIDATES, 0)),
        # Kueue's oracle reports the borrowing level at current usage when it finds no candidates.
        ("nothing to take, and borrowing", "LowerPriority", "Any", [], [], "6",
         (PreemptionPossibility.NO_CANDIDATES, 1)),
        ("a target in the queue", "LowerPriority", "Never", [("low", 0, "4")], [], "4",
         (PreemptionPossibility.PREEMPT, 0)),
        ("targets only in the cohort", "Never", "Any", [], [("b-big", 0, "8")], "4",
         (PreemptionPossibility.RECLAIM, 0)),
    ],
)
def test_preemption_oracle(case, within, reclaim, own, borrowers, cpu, expected):
    """preemption_oracle.go SimulatePreemption: NoCandidates, Preempt or Reclaim, and borrowing after."""
    a = (ClusterQueueBuilder("a").flavors(("default", {"cpu": "4"})).cohort("co")
         .preemption(within=within, reclaim=reclaim, borrow_within_cohort="LowerPriority").obj())
    b = ClusterQueueBuilder("b").flavors(("default", {"cpu": "4"})).cohort("co").obj()
    manager = manager_with(a, b)
    for queue, workloads in (("a", own), ("b", borrowers)):
        for name, priority, used in workloads:
            admit(manager, WorkloadBuilder(name).priority(priority).request(cpu=used).obj(), queue)
    admitted = list(manager.cache.admitted_in(manager.cache.quotas.neighbours("a")))
    preemptor = WorkloadBuilder("preemptor").priority(10).obj()
    result = simulate_preemption(preemptor, a, ("default", "cpu"), q(cpu), admitted, manager.cache.quotas)
    assert result == expected, case


def test_an_evicted_candidate_goes_first_whoever_evicted_it():
    # CandidatesOrdering puts workloads with Evicted=True first, also one this scheduler did not evict
    # (read back with its Evicted condition, e.g. after a restart).
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).preemption(within="LowerPriority").obj()
    manager = manager_with(cq)
    admit(manager, WorkloadBuilder("older").created(1).request(cpu="2").obj(), "cq")
    admit(manager, dataclasses.replace(WorkloadBuilder("evicted-older").created(0).request(cpu="2").obj(), evicted=True),
          "cq")
    assert _targets(manager, "cq", WorkloadBuilder("p").priority(9).request(cpu="2").obj()) == [
        ("evicted-older", PreemptionReason.IN_CLUSTER_QUEUE)
    ]


def test_borrow_within_cohort_from_the_api():
    def cq(preemption):
        return conversion.cluster_queue_from_dict({"metadata": {"name": "cq"}, "spec": {"preemption": preemption}})

    bwc = cq({"borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100}}).preemption
    assert bwc.borrow_within_cohort == kinds.BorrowWithinCohort(kinds.BorrowWithinCohortPolicy.LOWER_PRIORITY, 100)
    assert cq({}).preemption.borrow_within_cohort.forbidden
    assert cq({"borrowWithinCohort": {}}).preemption.borrow_within_cohort.forbidden


def test_an_evicted_workload_still_admitted_holds_its_quota_until_released():
    # Kueue leaves a preempted bare Workload's quota in place until a job's controller clears its
    # admission; read back that way (or written so with hold_evicted_quota) it is being evicted.
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).preemption(within="LowerPriority").obj()
    manager = manager_with(cq)
    victim = dataclasses.replace(WorkloadBuilder("victim").created(0).request(cpu="4").obj(), evicted=True)
    admit(manager, victim, "cq")
    assert manager.cache.admitted(victim.key).evicting
    assert manager.pending_lists.pending_in_order("cq") == []
    released = manager.cache.admitted(victim.key).workload
    manager.update_workload(dataclasses.replace(released, admission=None, admitted_at=0.0))
    assert manager.cache.admitted(victim.key) is None
    assert [w.name for w in manager.pending_lists.pending_in_order("cq")] == ["victim"]


@pytest.mark.parametrize(("ignores_pods", "reason"), [(False, PreemptionReason.IN_COHORT_RECLAIM_WHILE_BORROWING),
                                                      (True, PreemptionReason.IN_COHORT_RECLAMATION)])
def test_kueue_v0_19_preemption_reads_the_request_without_pods(ignores_pods, reason):
    # Seed 32 of the random cases against Kueue v0.19.2. cq-p (7 CPUs, 3 pods) runs 'own' (3 CPUs, 1 pod);
    # cq-v (2 CPUs, 5 pods) runs 'v' (6 CPUs, 3 pods), borrowing cq-p's 4 unused CPUs. 'p' (3 pods of 1 CPU,
    # priority 100) fits cq-p's CPUs once 'v' gives them back, and borrows one pod. Counting its pods (Kueue
    # v0.17: its flavor assignment wrote them into the request the search reads) the request does not fit
    # cq-p's own quota: no hierarchical advantage, so 'v' goes as a reclaim while borrowing. Without them
    # (v0.19 writes a copy) it does, and 'v' goes as a plain reclamation (classical/hierarchical_preemption.go).
    cq_p = (ClusterQueueBuilder("cq-p").cohort("co").flavors(("f", {"cpu": "7", "pods": "3"}))
            .preemption(reclaim="Any", borrow_within_cohort="LowerPriority", max_priority_threshold=100).obj())
    cq_v = ClusterQueueBuilder("cq-v").cohort("co").flavors(("f", {"cpu": "2", "pods": "5"})).obj()
    manager = manager_with(cq_p, cq_v, flavors=("f",), local_queues={"lq-p": "cq-p", "lq-v": "cq-v"},
                           preemption_ignores_pods=ignores_pods)
    manager.add_workload(WorkloadBuilder("own").queue("lq-p").created(1).request(cpu="3").obj())
    manager.add_workload(WorkloadBuilder("v").queue("lq-v").created(2).request(count=3, cpu="2").obj())
    assert sorted(type(d).__name__ for d in run_cycle(manager, now=10)) == ["Admit", "Admit"]
    manager.add_workload(WorkloadBuilder("p").queue("lq-p").priority(100).created(3).request(count=3, cpu="1").obj())
    (decision,) = run_cycle(manager, now=11)
    assert [(t.workload.name, t.reason) for t in decision.targets] == [("v", reason)]


def test_the_apis_echo_turns_an_exact_admission_time_into_its_second_and_the_uid_decides():
    """Kueue's cache holds an admission's exact time until the API's echo brings the whole second; two
    candidates reserved in one second then go by UID, not by which was admitted a moment later."""
    from scheduler.core.victims import candidate_order

    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
    admit(manager, WorkloadBuilder("first").uid("uid-1").created(100.2).request(cpu="1").obj(), "cq")
    admit(manager, WorkloadBuilder("second").uid("uid-2").created(100.7).request(cpu="1").obj(), "cq")

    def order():
        admitted = manager.cache.admitted_in(["cq"])
        return [r.workload.name for r in sorted(admitted, key=lambda r: candidate_order(r, "cq"))]

    assert order() == ["second", "first"], "before the echo: the most recent exact time first"
    for record in list(manager.cache.admitted_in(["cq"])):
        manager.add_workload(dataclasses.replace(record.workload, admitted_at=100.0))
    assert order() == ["first", "second"], "after it: one second for both, the lower UID first"
    assert manager.cache.quotas.used("cq", ("default", "cpu")) == 2000, "the echo moves no quota"
