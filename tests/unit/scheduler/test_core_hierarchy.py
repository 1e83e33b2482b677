"""Hierarchical cohorts: quota through the tree, cycles, reclaim through the tree, scheduling.

Cases named after a Kueue v0.17.0 test case are ported from it (the file is named with the test), with
its numbers; the others are worked out by hand from pkg/cache/scheduler/resource_node.go.
"""

import dataclasses

import pytest

from scheduler.core import conversion, decisions, kinds, scheduling
from scheduler.core.preempting import PreemptionReason, find_targets
from scheduler.core.quotas import QuotaBook
from scheduler.core.workloads import Admission, PodSetAssignment
from scheduler_builders import ClusterQueueBuilder, CohortBuilder, WorkloadBuilder, manager_with, q

CPU = ("default", "cpu")
WITHIN_AND_ANY = {"within": "LowerPriority", "reclaim": "Any"}
WHILE_BORROWING = {"within": "LowerPriority", "reclaim": "Any", "borrow_within_cohort": "LowerPriority",
                   "max_priority_threshold": 0}
LOWER_WHILE_BORROWING = {**WHILE_BORROWING, "reclaim": "LowerPriority"}


def _cohort(name, parent="", cpu=None):
    builder = CohortBuilder(name).parent(parent)
    if cpu is not None:
        builder.flavors(("default", {"cpu": cpu}))
    return builder.obj()


def _queue(name, cohort, cpu="0", preemption=None):
    builder = ClusterQueueBuilder(name).flavors(("default", {"cpu": cpu})).cohort(cohort)
    if preemption:
        builder.preemption(**preemption)
    return builder.obj()


def _admit(manager, name, cq, priority, cpu, at=1.0, evicted=False):
    """An admitted workload whose usage is ``cpu`` of the default flavor (Kueue's ReserveQuotaAt)."""
    workload = WorkloadBuilder(name).priority(priority).created(at).request(cpu=cpu).obj()
    assignment = PodSetAssignment("main", {"cpu": "default"}, {"cpu": q(cpu)}, 1)
    manager.add_workload(dataclasses.replace(workload, admission=Admission(cq, (assignment,)), admitted_at=at,
                                             evicted=evicted))


# -- quota through the tree (resource_node.go) --------------------------------------------------


def _tree_book(usage_a="0", usage_b="0"):
    """root(2) <- mid(4; lends 3, borrows <= 1) <- a(2), b(0; borrows <= 3); and c(1) under root."""
    book = QuotaBook()
    book.set_cohort(_cohort("root", cpu="2"))
    book.set_cohort(CohortBuilder("mid").parent("root").flavors(("default", {"cpu": ("4", "1", "3")})).obj())
    book.set_cluster_queue(_queue("a", "mid", "2"))
    book.set_cluster_queue(ClusterQueueBuilder("b").flavors(("default", {"cpu": ("0", "3", None)})).cohort("mid").obj())
    book.set_cluster_queue(_queue("c", "root", "1"))
    book.add_usage("a", {CPU: q(usage_a)})
    book.add_usage("b", {CPU: q(usage_b)})
    return book


@pytest.mark.parametrize(
    ("case", "usage_a", "usage_b", "available_a", "available_b", "available_c"),
    [
        # mid's subtree holds 2 + 0 + 4 = 6, keeps 6 - 3 = 3 for itself; root holds 2 + 3 + 1 = 6.
        # a: local 0 + mid's 3 + min(borrowing limit 1 + 3 stored, root's 6) = 7.
        ("idle tree", "0", "0", "7", "3", "6"),
        # b is capped by its borrowing limit 3; c sees root's 6 minus what mid stores there.
        ("a uses 5", "5", "0", "2", "2", "4"),
        ("a uses 4, b 3: mid's borrowing limit binds", "4", "3", "0", "0", "2"),
    ],
)
def test_available_through_the_tree(case, usage_a, usage_b, available_a, available_b, available_c):
    book = _tree_book(usage_a, usage_b)
    assert book.available("a", CPU) == q(available_a), case
    assert book.available("b", CPU) == q(available_b), case
    assert book.available("c", CPU) == q(available_c), case


def test_potential_available_and_usage_bubbling():
    book = _tree_book("5", "0")
    # a: local 0 + potential(mid) = 3 + min(6 + 1 limit... ) -> mid: local 3 + root's 6 capped at 6 + 1 = 7.
    assert book.potential_available("a", CPU) == q("7")
    assert book.potential_available("b", CPU) == q("3")
    mid = book.cohort_node("mid")
    # a's 5 past its own (unkept) quota counts in mid; mid stores 5 - 3 = 2 of them in root.
    assert book.node_usage(mid, CPU) == q("5")
    assert book.node_usage(book.cohort_node("root"), CPU) == q("2")
    book.remove_usage("a", {CPU: q("5")})
    assert book.node_usage(mid, CPU) == 0
    assert book.node_usage(book.cohort_node("root"), CPU) == 0


def test_a_copy_keeps_its_own_usage_and_a_spec_change_rebuilds():
    book = _tree_book("5", "0")
    copy = book.copy()
    copy.remove_usage("a", {CPU: q("5")})
    assert book.available("a", CPU) == q("2") and copy.available("a", CPU) == q("7")
    book.set_cohort(_cohort("root", cpu="10"))
    assert book.available("c", CPU) == q("12")  # 10 + 3 + 1 - 2 stored by mid
    assert copy.available("c", CPU) == q("6")  # the copy keeps the tree it was made with


@pytest.mark.parametrize(
    ("case", "usage_a", "value", "height", "may_reclaim"),
    [
        ("within nominal", "0", "2", 0, True),
        ("fits in mid's subtree", "0", "5", 1, True),
        ("needs the root's subtree", "0", "7", 2, False),
    ],
)
def test_lowest_subtree_that_fits(case, usage_a, value, height, may_reclaim):
    # classical.FindHeightOfLowestSubtreeThatFits: mid (only queues below) has height 1, root 2.
    book = _tree_book(usage_a)
    assert book.lowest_subtree_that_fits("a", CPU, q(value)) == (height, may_reclaim), case


def test_a_parent_that_does_not_exist_is_an_implicit_cohort():
    book = QuotaBook()
    book.set_cohort(_cohort("child", parent="nowhere", cpu="4"))
    book.set_cluster_queue(_queue("a", "child", "0"))
    book.set_cluster_queue(_queue("b", "nowhere", "3"))
    assert book.available("a", CPU) == q("7")
    assert book.neighbours("a") == {"a", "b"}


# -- cycles -------------------------------------------------------------------------------------


def _cyclic_manager():
    manager = manager_with(
        _queue("a", "x", "4"), _queue("b", "y", "4"), _queue("c", "free", "4"),
        cohorts=(_cohort("x", parent="y"), _cohort("y", parent="x"), _cohort("z", parent="x")),
        local_queues={"lq-a": "a", "lq-b": "b", "lq-c": "c"},
    )
    for name, lq in (("wa", "lq-a"), ("wb", "lq-b"), ("wc", "lq-c")):
        manager.add_workload(WorkloadBuilder(name).queue(lq).request(cpu="1").obj())
    return manager


def test_a_cohort_cycle_parks_its_queues_heads_as_kueue_marks_them():
    manager = _cyclic_manager()
    assert manager.cache.quotas.cohort_in_cycle("x") and manager.cache.quotas.cohort_in_cycle("y")
    assert manager.cache.quotas.cohort_in_cycle("z")  # its chain reaches the loop
    assert not manager.cache.quotas.cohort_in_cycle("free")
    decided = scheduling.run_cycle(manager, now=10.0)
    parked = {d.workload.name: d for d in decided if isinstance(d, decisions.Park)}
    assert set(parked) == {"wa", "wb"}
    assert parked["wa"].message == "ClusterQueue a is inactive"
    assert parked["wa"].reason == decisions.CLUSTER_QUEUE_INACTIVE
    assert [d.workload.name for d in decided if isinstance(d, decisions.Admit)] == ["wc"]
    assert scheduling.run_cycle(manager, now=11.0) == []  # nothing to retry until the tree changes


def test_breaking_the_cycle_lets_its_queues_admit():
    manager = _cyclic_manager()
    scheduling.run_cycle(manager, now=10.0)
    manager.update_cohort(_cohort("y"))
    decided = scheduling.run_cycle(manager, now=11.0)
    assert sorted(d.workload.name for d in decided if isinstance(d, decisions.Admit)) == ["wa", "wb"]


def test_a_cohort_that_is_its_own_parent_is_a_cycle_from_the_api():
    cohort = conversion.cohort_from_dict({"metadata": {"name": "self"}, "spec": {"parentName": "self"}})
    book = QuotaBook()
    book.set_cohort(cohort)
    book.set_cluster_queue(_queue("a", "self", "1"))
    assert book.in_cycle("a")
    assert book.neighbours("a") == {"a"}


# -- reclaim through the tree (TestHierarchicalPreemptions, preemption_hierarchical_test.go) ----


HIERARCHICAL = [
    pytest.param(
        {"r": ("", None), "c": ("r", "2")},
        {"q": ("c", "0", WITHIN_AND_ANY), "q_borrowing": ("r", "0", WITHIN_AND_ANY)},
        [("admitted2", "q_borrowing", 0, "2")],
        ("q", 0, "2"),
        {"admitted2": "InCohortReclamation"},
        id="preempt with hierarchical advantage"),
    pytest.param(
        {"r": ("", None), "c": ("r", "2")},
        {"q_nominal": ("r", "2", WITHIN_AND_ANY), "q": ("c", "0", WITHIN_AND_ANY),
         "q_borrowing": ("r", "0", WITHIN_AND_ANY)},
        [("admitted1", "q_nominal", -10, "2"), ("admitted2", "q_borrowing", 0, "2")],
        ("q", 0, "2"),
        {"admitted2": "InCohortReclamation"},
        id="avoid queues within nominal quota"),
    pytest.param(
        {"r": ("", None), "c": ("r", "2")},
        {"q": ("c", "0", WITHIN_AND_ANY), "q_borrowing": ("r", "0", WITHIN_AND_ANY)},
        [("admitted1", "q_borrowing", 1, "1"), ("admitted2", "q_borrowing", 2, "1")],
        ("q", 0, "2"),
        {"admitted1": "InCohortReclamation", "admitted2": "InCohortReclamation"},
        id="preempt multiple with hierarchical advantage"),
    pytest.param(
        {"r": ("", None), "c": ("r", "3")},
        {"q": ("c", "0", WHILE_BORROWING), "q_same_cohort": ("c", "0", WITHIN_AND_ANY)},
        [("admitted_not_preemptible", "q_same_cohort", 1, "1"), ("admitted_preemptible", "q_same_cohort", 0, "2"),
         ("admitted_own_queue", "q", -1, "1")],
        ("q", 1, "2"),
        {"admitted_own_queue": "InClusterQueue", "admitted_preemptible": "InCohortReclaimWhileBorrowing"},
        id="preempt in cohort and own CQ"),
    pytest.param(
        {"r": ("", None), "c": ("r", "2")},
        {"q": ("c", "0", WITHIN_AND_ANY), "q_borrowing": ("r", "0", WITHIN_AND_ANY)},
        [("admitted_borrowing", "q_borrowing", 1, "1"), ("admitted_same_queue", "q", -2, "1")],
        ("q", 0, "1"),
        {"admitted_borrowing": "InCohortReclamation"},
        id="prefer to preempt hierarchical candidate"),
    pytest.param(
        {"r": ("", None), "c": ("r", "2")},
        {"q": ("c", "0", WHILE_BORROWING), "q_nominal": ("r", "2", WITHIN_AND_ANY),
         "q_same_cohort": ("c", "0", WITHIN_AND_ANY)},
        [("admitted_nominal", "q_nominal", -10, "2"), ("admitted_same_cohort", "q_same_cohort", -1, "2")],
        ("q", 0, "2"),
        {"admitted_same_cohort": "InCohortReclaimWhileBorrowing"},
        id="forced to preempt priority candidate"),
    pytest.param(
        {"r": ("", "1"), "c": ("r", "4")},
        {"q": ("c", "0", LOWER_WHILE_BORROWING), "q_borrowing": ("r", "0", WITHIN_AND_ANY),
         "q_same_cohort": ("c", "0", WITHIN_AND_ANY)},
        [("admitted_borrowing", "q_borrowing", -1, "2"), ("admitted_same_cohort_preemptible", "q_same_cohort", -1, "1"),
         ("admitted_borrowing_not_preemptible", "q_borrowing", 1, "2")],
        ("q", 0, "3"),
        {"admitted_borrowing": "InCohortReclamation", "admitted_same_cohort_preemptible": "InCohortReclaimWhileBorrowing"},
        id="preempt hierarchical and priority candidates"),
    pytest.param(
        {"r": ("", "1"), "c": ("r", "4")},
        {"q": ("c", "0", LOWER_WHILE_BORROWING), "q_borrowing": ("r", "0", WITHIN_AND_ANY),
         "q_same_cohort": ("c", "0", WITHIN_AND_ANY)},
        [("admitted_borrowing", "q_borrowing", -1, "2"), ("admitted_same_queue_preemptible", "q", -1, "1"),
         ("admitted_borrowing_not_preemptible", "q_borrowing", 1, "2")],
        ("q", 0, "3"),
        {"admitted_borrowing": "InCohortReclamation", "admitted_same_queue_preemptible": "InClusterQueue"},
        id="preempt hierarchical candidates and inside CQ"),
    pytest.param(
        {"r": ("", None), "c": ("r", "3")},
        {"q": ("c", "0", WITHIN_AND_ANY), "q_borrowing": ("r", "0", WITHIN_AND_ANY),
         "q_nominal": ("r", "2", WITHIN_AND_ANY)},
        [("admitted_borrowing_prio_8", "q_borrowing", 8, "1"), ("admitted_borrowing_prio_9", "q_borrowing", 9, "1"),
         ("admitted_borrowing_prio_10", "q_borrowing", 9, "1"), ("admitted_nominal", "q_nominal", -2, "2")],
        ("q", 0, "1"),
        {"admitted_borrowing_prio_8": "InCohortReclamation"},
        id="reclaim nominal quota from lowest priority workload, excluding non-borrowing"),
    pytest.param(
        {"r": ("", None), "c": ("r", "2"), "c_other": ("r", "2")},
        {"q_other": ("c_other", "0", WITHIN_AND_ANY), "q": ("c", "0", WITHIN_AND_ANY),
         "q_same_cohort": ("c", "0", WITHIN_AND_ANY)},
        [("admitted_other_1", "q_other", -10, "1"), ("admitted_other_2", "q_other", -10, "1"),
         ("admitted_same_cohort", "q_same_cohort", 0, "2")],
        ("q", 0, "2"),
        {},
        id="infeasible preemption all available workloads in pruned subtrees"),
    pytest.param(
        {"r": ("", None), "c": ("r", "2")},
        {"q": ("c", ("3", None, "2"), WITHIN_AND_ANY), "q_borrowing": ("r", "0", WITHIN_AND_ANY)},
        [("admitted_borrowing", "q_borrowing", 0, "4")],
        ("q", -2, "5"),
        {"admitted_borrowing": "InCohortReclamation"},
        id="respect lending limits"),
    pytest.param(
        {"r": ("", None), "c11": ("r", "4"), "c12": ("r", "4"), "c21": ("c11", "4"), "c22": ("c11", "4"),
         "c23": ("c11", "4"), "c31": ("c21", "4"), "c32": ("c21", "4")},
        {"q1": ("c12", "0", WITHIN_AND_ANY), "q2": ("c23", "0", WITHIN_AND_ANY), "q3": ("c22", "0", WITHIN_AND_ANY),
         "q4": ("c32", "0", WITHIN_AND_ANY), "q5": ("c31", "0", WITHIN_AND_ANY)},
        [("admitted_borrowing_1", "q1", -6, "4"), ("admitted_borrowing_2", "q1", -5, "4"),
         ("admitted_borrowing_3", "q2", -9, "4"), ("admitted_borrowing_4", "q2", -10, "4"),
         ("admitted_borrowing_5", "q3", -4, "4"), ("admitted_borrowing_6", "q3", -3, "3"),
         ("admitted_borrowing_7", "q4", 4, "2"), ("admitted_borrowing_8", "q4", 2, "3")],
        ("q5", -2, "7"),
        {"admitted_borrowing_1": "InCohortReclamation", "admitted_borrowing_4": "InCohortReclamation"},
        id="reclaim in complex hierarchy"),
]


@pytest.mark.parametrize(("cohorts", "queues", "admitted", "incoming", "want"), HIERARCHICAL)
def test_hierarchical_preemption(cohorts, queues, admitted, incoming, want):
    manager = manager_with(
        *[_queue(name, cohort, cpu, preemption) for name, (cohort, cpu, preemption) in queues.items()],
        cohorts=tuple(_cohort(name, parent, cpu) for name, (parent, cpu) in cohorts.items()),
    )
    for name, cq, priority, cpu in admitted:
        _admit(manager, name, cq, priority, cpu)
    target, priority, cpu = incoming
    preemptor = WorkloadBuilder("in").priority(priority).created(5).request(cpu=cpu).obj()
    cq = manager.cache.quotas.cluster_queues[target]
    candidates = list(manager.cache.admitted_in(manager.cache.quotas.neighbours(target)))
    targets = find_targets(preemptor, cq, {CPU: q(cpu)}, {CPU}, candidates, manager.cache.quotas)
    assert {t.workload.name: t.reason.value for t in targets} == want


def test_prefer_to_preempt_evicted_workloads():
    # TestHierarchicalPreemptions "prefer to preempt evicted workloads": the evicted one goes first,
    # though the other candidate has the hierarchical advantage and a lower priority.
    manager = manager_with(
        _queue("q", "c", "0", WHILE_BORROWING), _queue("q_borrowing", "r", "0", WITHIN_AND_ANY),
        _queue("q_same_cohort", "c", "0", WITHIN_AND_ANY),
        cohorts=(_cohort("r"), _cohort("c", "r", "2")),
    )
    _admit(manager, "admitted_borrowing", "q_borrowing", -10, "1")
    _admit(manager, "evicted_same_cohort", "q_same_cohort", -1, "1", evicted=True)
    preemptor = WorkloadBuilder("in").priority(0).request(cpu="1").obj()
    targets = find_targets(preemptor, manager.cache.quotas.cluster_queues["q"], {CPU: q("1")}, {CPU},
                           list(manager.cache.admitted_in(manager.cache.quotas.neighbours("q"))), manager.cache.quotas)
    assert [(t.workload.name, t.reason) for t in targets] == [
        ("evicted_same_cohort", PreemptionReason.IN_COHORT_RECLAIM_WHILE_BORROWING)]


# -- scheduling through the tree (TestSchedule, scheduler_test.go) -------------------------------


def _lending_case(lending_limit: str, request: str):
    lender = ClusterQueueBuilder("cq-lender").flavors(("on-demand", {"cpu": ("10", None, lending_limit)})) \
        .cohort("child").obj()
    borrower = ClusterQueueBuilder("cq-borrower").flavors(("on-demand", {"cpu": ("5", "10", None)})) \
        .cohort("child").obj()
    manager = manager_with(lender, borrower, flavors=("on-demand",), cohorts=(_cohort("root"), _cohort("child", "root")),
                           local_queues={"lq-borrower": "cq-borrower"})
    existing = WorkloadBuilder("wl-existing").request(cpu="5").obj()
    assignment = PodSetAssignment("main", {"cpu": "on-demand"}, {"cpu": q("5")}, 1)
    manager.add_workload(dataclasses.replace(existing, admission=Admission("cq-borrower", (assignment,))))
    manager.add_workload(WorkloadBuilder("wl-pending").queue("lq-borrower").request(cpu=request).obj())
    return scheduling.run_cycle(manager, now=10.0)


def test_hierarchical_cohort_respects_lending_limit_when_borrowing():
    # "hierarchical cohort respects lending limit when borrowing": 5 used of 5 + 3 lent; 4 more is 1 too many.
    decided = _lending_case("3", "4")
    assert [(type(d), d.workload.name) for d in decided] == [(decisions.Park, "wl-pending")]


def test_hierarchical_cohort_allows_borrowing_up_to_lending_limit():
    # "hierarchical cohort allows borrowing up to lending limit": 5 used of 5 + 5 lent; 5 more fits.
    decided = _lending_case("5", "5")
    assert [(type(d), d.workload.name) for d in decided] == [(decisions.Admit, "wl-pending")]
    assert decided[0].borrows


def test_in_a_hierarchical_cohort_the_workload_borrowing_less_goes_first():
    # Classical order by borrowing level: a head that fits in its own cohort's subtree (level 1)
    # goes before an older one that needs the root's quota (level 2), and takes the last of it.
    manager = manager_with(
        _queue("near", "left", "0"), _queue("far", "right", "0"),
        cohorts=(_cohort("root", cpu="4"), _cohort("left", "root", "2"), _cohort("right", "root")),
        local_queues={"lq-near": "near", "lq-far": "far"},
    )
    manager.add_workload(WorkloadBuilder("old-far").queue("lq-far").created(1).request(cpu="5").obj())
    manager.add_workload(WorkloadBuilder("new-near").queue("lq-near").created(2).request(cpu="2").obj())
    decided = scheduling.run_cycle(manager, now=10.0)
    admitted = [d.workload.name for d in decided if isinstance(d, decisions.Admit)]
    assert admitted == ["new-near"]
    assert manager.cache.quotas.available("far", CPU) == q("4")


def test_reclaim_through_the_tree_in_a_cycle():
    # A queue whose cohort lends to a sibling subtree reclaims its quota there: the borrower is
    # evicted with InCohortReclamation and the preemptor waits at its head.
    manager = manager_with(
        _queue("owner", "team", "4", WITHIN_AND_ANY), _queue("guest", "other", "0"),
        cohorts=(_cohort("org"), _cohort("team", "org"), _cohort("other", "org")),
        local_queues={"lq-owner": "owner"},
    )
    _admit(manager, "borrower", "guest", 0, "4")
    manager.add_workload(WorkloadBuilder("claim").queue("lq-owner").created(5).request(cpu="3").obj())
    decided = scheduling.run_cycle(manager, now=10.0)
    assert len(decided) == 1 and isinstance(decided[0], decisions.Preempt)
    assert [(t.workload.name, t.reason) for t in decided[0].targets] == [
        ("borrower", PreemptionReason.IN_COHORT_RECLAMATION)]


def test_cohort_objects_read_from_the_api():
    obj = {"metadata": {"name": "team"}, "spec": {
        "parentName": "org", "fairSharing": {"weight": "0.5"},
        "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [
            {"name": "cpu", "nominalQuota": "4", "borrowingLimit": "1", "lendingLimit": "2"}]}]}]}}
    cohort = conversion.cohort_from_dict(obj)
    assert (cohort.parent, cohort.fair_weight) == ("org", 0.5)
    assert cohort.resource_groups[0].flavors[0].resources[0] == kinds.ResourceQuota("cpu", q("4"), q("1"), q("2"))
    negative = conversion.cluster_queue_from_dict({"metadata": {"name": "cq"}, "spec": {"fairSharing": {"weight": "-1"}}})
    assert negative.fair_weight == 1.0
