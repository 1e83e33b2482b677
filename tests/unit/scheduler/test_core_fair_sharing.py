"""Fair sharing: dominant resource shares, fair-sharing preemption with both strategies, and the
tournament order of a cycle's entries.

Cases named after a Kueue v0.17.0 test case are ported from it with its numbers: TestDominantResourceShare
(pkg/cache/scheduler/fair_sharing_test.go), TestFairPreemptions (pkg/scheduler/preemption/
preemption_fair_test.go), TestSchedule (pkg/scheduler/scheduler_test.go).
"""

import dataclasses
import math

import pytest

from scheduler.core import decisions, fairsharing, kinds, scheduling
from scheduler.core.preempting import find_targets
from scheduler.core.quotas import QuotaBook
from scheduler.core.workloads import Admission, PodSetAssignment
from scheduler_builders import ClusterQueueBuilder, CohortBuilder, WorkloadBuilder, manager_with, q

CPU = ("default", "cpu")
ON = kinds.FairSharing(enabled=True)
LTIS = kinds.FairSharingStrategy.LESS_THAN_INITIAL_SHARE
LTOEFS = kinds.FairSharingStrategy.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE


# -- dominant resource share (TestDominantResourceShare) ------------------------------------------


def _drs_book(cq_quota, lending_quota, usage, cq_weight=1.0, cohorts=(), cq_cohort="test-cohort"):
    book = QuotaBook()
    for cohort in cohorts:
        book.set_cohort(cohort)
    book.set_cluster_queue(ClusterQueueBuilder("cq").flavors(*cq_quota).cohort(cq_cohort).weight(cq_weight).obj())
    if lending_quota:
        book.set_cluster_queue(ClusterQueueBuilder("lending-cq").flavors(*lending_quota).cohort(cq_cohort).obj())
    book.add_usage("cq", usage)
    return book


def _rounded(drs: fairsharing.DRS) -> int:
    """roundedWeightedShare."""
    return math.ceil(drs.share) if not drs.zero_weight_borrows else 2**63 - 1


GPU = "example.com/gpu"
DRS_CASES = [
    pytest.param(
        [("default", {"cpu": "2", GPU: "5"})], [("default", {"cpu": "8", GPU: "5"})],
        {("default", "cpu"): q("3"), ("default", GPU): q("7")}, 1.0, (), GPU, 200, id="usage above nominal"),
    pytest.param(
        [("default", {GPU: "500"})], [("default", {GPU: "1000"})],
        {("default", GPU): q("501")}, 1.0, (), GPU, 1,
        id="usage slightly above nominal in a cohort with large quotas"),
    pytest.param(
        [("default", {"cpu": "2", GPU: "5"})], [("default", {"cpu": "8", GPU: "5"})],
        {("default", "cpu"): q("3"), ("default", GPU): q("3")}, 1.0, (), "cpu", 100, id="one resource above nominal"),
    pytest.param(
        [("on-demand", {"cpu": "20"}), ("spot", {"cpu": "80"})], [("on-demand", {"cpu": "100"})],
        {("on-demand", "cpu"): q("25"), ("spot", "cpu"): q("5")}, 1.0, (), "cpu", 25, id="multiple flavors"),
    pytest.param(
        [("default", {GPU: "5"})], [("default", {GPU: "5"})],
        {("default", GPU): q("7")}, 2.0, (), GPU, 100, id="above nominal with integer weight"),
    pytest.param(
        [("default", {GPU: "5"})], [("default", {GPU: "5"})],
        {("default", GPU): q("7")}, 0.5, (), GPU, 400, id="above nominal with decimal weight"),
    pytest.param(
        [("default", {GPU: "5"})], [("default", {GPU: "5"})],
        {("default", GPU): q("7")}, 0.0, (), GPU, 2**63 - 1, id="above nominal with zero weight"),
]


@pytest.mark.parametrize(("cq_quota", "lending_quota", "usage", "weight", "cohorts", "resource", "value"), DRS_CASES)
def test_dominant_resource_share(cq_quota, lending_quota, usage, weight, cohorts, resource, value):
    book = _drs_book(cq_quota, lending_quota, usage, weight, cohorts)
    drs = fairsharing.dominant_resource_share(book, book.cq_node("cq"))
    assert (drs.dominant_resource, _rounded(drs), drs.borrowing) == (resource, value, True)
    lender = fairsharing.dominant_resource_share(book, book.cq_node("lending-cq"))
    assert (_rounded(lender), lender.borrowing) == (0, False)
    assert fairsharing.dominant_resource_share(book, book.cohort_node("test-cohort")).share == 0  # a root


@pytest.mark.parametrize(
    ("case", "cq_nominal", "child", "usage", "cq_value", "child_value"),
    [
        ("cohort has resource share", "5", CohortBuilder("child-cohort").weight(2).parent("root"), "10", 100, 50),
        ("resource share defined for resources only available at the root cohort", "0",
         CohortBuilder("child-cohort").weight(2).parent("root"), "10", 200, 100),
        ("resource share affected by borrowing limit", "0",
         CohortBuilder("child-cohort").parent("root").flavors(("default", {GPU: ("0", "10", None)})), "10", 1000, 200),
    ],
)
def test_dominant_resource_share_in_a_tree(case, cq_nominal, child, usage, cq_value, child_value):
    root_quota = "45" if case == "cohort has resource share" else "50"
    root = CohortBuilder("root").flavors(("default", {GPU: root_quota})).obj()
    book = _drs_book([("default", {GPU: cq_nominal})], None, {("default", GPU): q(usage)},
                     cohorts=(root, child.obj()), cq_cohort="child-cohort")
    assert _rounded(fairsharing.dominant_resource_share(book, book.cq_node("cq"))) == cq_value, case
    assert _rounded(fairsharing.dominant_resource_share(book, book.cohort_node("child-cohort"))) == child_value, case


def test_compare_puts_zero_weight_borrowers_last():
    weighted = fairsharing.DRS(1.0, 900.0, "cpu", True)
    zero_small = fairsharing.DRS(0.0, 10.0, "cpu", True)
    zero_large = fairsharing.DRS(0.0, 20.0, "cpu", True)
    assert fairsharing.compare(weighted, zero_small) == -1
    assert fairsharing.compare(zero_small, zero_large) == -1
    assert fairsharing.compare(fairsharing.DRS(0.0, 0.0), fairsharing.DRS(1.0, 0.0)) == 0
    assert fairsharing.compare(fairsharing.NEGATIVE, fairsharing.DRS(1.0, 0.0)) == -1


# -- fair-sharing preemption (TestFairPreemptions) -----------------------------------------------

ANY = {"within": "LowerPriority", "reclaim": "Any"}
BASE = {
    "a": ("all", "3", 1.0, {**ANY, "borrow_within_cohort": "LowerPriority", "max_priority_threshold": -3}),
    "b": ("all", "3", 1.0, {**ANY, "borrow_within_cohort": "LowerPriority", "max_priority_threshold": -3}),
    "c": ("all", "3", 1.0, {**ANY, "borrow_within_cohort": "LowerPriority", "max_priority_threshold": -3}),
    "preemptible": ("all", "0", 1.0, None),
}


def _units(cq, *names, priority=0):
    return [(name, cq, "1", priority) for name in names]


FAIR = [
    pytest.param(BASE, {}, _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3", "b4", "b5") + _units("c", "c1"),
                 ("c", "1"), None, {"b1": "InCohortReclamation"}, id="reclaim nominal from user using the most"),
    pytest.param(BASE, {}, [("a1", "a", "3", 0), ("a2", "a", "1", 0), ("b1", "b", "2", 0), ("b2", "b", "3", 0)],
                 ("c", "3"), None, {"a1": "InCohortReclamation"},
                 id="can reclaim from queue using less, if taking the latest workload from user using the most "
                    "isn't enough"),
    pytest.param(BASE, {}, _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3", "b4", "b5") + _units("c", "c1"),
                 ("a", "1"), None, {"b1": "InCohortFairSharing"}, id="reclaim borrowable quota from user using the most"),
    pytest.param(BASE, {}, [("a1", "a", "0.5", 0), ("a2", "a", "0.5", 0), ("a3", "a", "3", 0), ("b1", "b", "0.5", 0),
                            ("b2", "b", "0.5", 0), ("b3", "b", "3", 0)],
                 ("c", "2"), None, {"a1": "InCohortReclamation", "b1": "InCohortReclamation"},
                 id="preempt one from each CQ borrowing"),
    pytest.param(BASE, {}, _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3") + _units("c", "c1", "c2", "c3"),
                 ("c", "1"), None, {}, id="can't preempt when everyone under nominal"),
    pytest.param(BASE, {}, _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3", "b4", "b5"),
                 ("a", "2"), None, {}, id="can't preempt when it would switch the imbalance"),
    pytest.param(BASE, {}, _units("a", "a1_low", "a2_low", priority=-1) + _units("a", "a3", "a4")
                 + _units("b", "b1", "b2", "b3", "b4", "b5"),
                 ("a", "2"), None, {"a1_low": "InClusterQueue", "a2_low": "InClusterQueue"},
                 id="can preempt lower priority workloads from same CQ"),
    pytest.param(BASE, {}, _units("a", "a_low", priority=-1) + _units("a", "a2", "a3")
                 + _units("b", "b1", "b2", "b3", "b4", "b5", "b6"),
                 ("a", "2"), None, {"a_low": "InClusterQueue", "b1": "InCohortFairSharing"},
                 id="can preempt a combination of same CQ and highest user"),
    pytest.param(BASE, {}, [("b1", "b", "9", 0)], ("a", "2"), None, {"b1": "InCohortReclamation"},
                 id="preempt huge workload if there is no other option, as long as the target CQ gets a lower share"),
    pytest.param(BASE, {}, [("a1", "a", "2", 0), ("b1", "b", "7", 0)], ("a", "5"), None, {},
                 id="can't preempt huge workload if the incoming is also huge"),
    pytest.param(BASE, {}, [("b1", "b", "2", 0), ("b2", "b", "2", 0), ("b3", "b", "3", 0)], ("a", "6"), None, {},
                 id="can't preempt 2 smaller workloads if the incoming is huge"),
    pytest.param(BASE, {}, [("a1_low", "a", "2", -1), ("a2_low", "a", "1", -1), ("b1", "b", "3", 0), ("b2", "b", "3", 0)],
                 ("a", "4"), None, {"a1_low": "InClusterQueue", "b1": "InCohortFairSharing"},
                 id="preempt from target and others even if over nominal"),
    pytest.param(BASE, {}, [("b1", "b", "2", 0), ("b2", "b", "1", 0), ("b3", "b", "2", 0), ("c1", "c", "1", 0)],
                 ("a", "3.5"), None, {"b2": "InCohortFairSharing"},
                 id="prefer to preempt workloads that don't make the target CQ have the biggest share"),
    pytest.param(BASE, {}, [("b1", "b", "2", 0), ("b2", "b", "2.5", 0), ("c1", "c", "2", 0), ("c2", "c", "2.5", 0)],
                 ("a", "3.5"), None, {"b1": "InCohortFairSharing", "c1": "InCohortFairSharing"},
                 id="preempt from different cluster queues if the end result has a smaller max share"),
    pytest.param(BASE, {}, [("a1", "a", "3.5", 0), ("b2", "b", "2.5", 0), ("c2", "c", "2.5", 0)], ("b", "2"), None, {},
                 id="scenario above does not flap"),
    pytest.param(BASE, {}, [("b1", "b", "3", 0), ("b2", "b", "3", 0), ("c1", "c", "3", 0)], ("a", "4"), None, {},
                 id="cannot preempt if it would make the candidate CQ go under nominal after preempting one element"),
    pytest.param(BASE, {}, _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3")
                 + _units("preemptible", "preemptible1", "preemptible2", "preemptible3", priority=-3),
                 ("a", "2"), None, {}, id="workloads under priority threshold not capriciously preempted"),
    pytest.param(BASE, {}, [("a1", "a", "3", 0), ("b_low", "b", "5", 0), ("b_high", "b", "1", 1)], ("a", "1"), (LTIS,),
                 {"b_low": "InCohortFairSharing"}, id="preempt lower priority first, even if big"),
    pytest.param(BASE, {}, [("a1", "a", "3", 0), ("b_low", "b", "5", 0), ("b_high", "b", "1", 1)], ("a", "1"), (LTOEFS,),
                 {"b_high": "InCohortFairSharing"}, id="preempt workload that doesn't transfer the imbalance, even if high priority"),
    pytest.param({"a": ("all", "3", 2.0, ANY), "b": ("all", "3", 1.0, ANY), "c": ("all", "3", 1.0, ANY)}, {},
                 _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3", "b4", "b5", "b6"), ("a", "2"), None,
                 {"b1": "InCohortFairSharing", "b2": "InCohortFairSharing"}, id="CQ with higher weight can preempt more"),
    pytest.param({"a": ("all", "3", 1.0, ANY), "b": ("all", "3", 0.0, ANY), "c": ("all", "3", 1.0, ANY)}, {},
                 _units("a", "a1", "a2", "a3") + _units("b", "b1", "b2", "b3", "b4", "b5", "b6"), ("a", "3"), None,
                 {"b1": "InCohortFairSharing", "b2": "InCohortFairSharing", "b3": "InCohortFairSharing"},
                 id="can preempt anything borrowing from CQ with 0 weight"),
    pytest.param({"a": ("LEFT", "1", 2.0, {"reclaim": "Any"}), "b": ("LEFT", "1", 1.0, None),
                  "c": ("ROOT", "1", 1.0, None), "d": ("RIGHT", "1", 1.0, None), "e": ("RIGHT", "1", 0.99, None)},
                 {"ROOT": ("", "5", 1.0), "LEFT": ("ROOT", "5", 2.0), "RIGHT": ("ROOT", "5", 1.0)},
                 [(f"{cq}{p}", cq, "1", p) for cq in "bcde" for p in range(1, 6)], ("a", "5"), None,
                 {n: "InCohortFairSharing" for n in ("b1", "b2", "c1", "c2", "e1")}, id="hierarchical preemption"),
    pytest.param({"a": ("ROOT", "5", 10.0, ANY), "b": ("RIGHT", None, 0.1, None)},
                 {"ROOT": ("", None, 1.0), "RIGHT": ("ROOT", "1", 0.1)},
                 _units("a", "a1", "a2", "a3", priority=-1) + _units("b", "b1", priority=-1), ("a", "5"), None,
                 {"a1": "InClusterQueue", "a2": "InClusterQueue", "a3": "InClusterQueue"},
                 id="borrowing cq in non-borrowing cohort is protected"),
    pytest.param({"a": ("ROOT", "5", 10.0, {"within": "LowerPriority", "reclaim": "LowerPriority"}),
                  "b": ("RIGHT", None, 0.1, None)},
                 {"ROOT": ("", None, 1.0), "RIGHT": ("ROOT", "3", 0.1)},
                 _units("a", "a1", "a2", "a3", priority=-1) + [("b1", "b", "4", 100)], ("a", "4"), None,
                 {"a1": "InClusterQueue", "a2": "InClusterQueue", "a3": "InClusterQueue"},
                 id="forced to preempt within clusterqueue because borrowing workload too important"),
    pytest.param({"a": ("AAA", "0", 1.0, {"reclaim": "Any"}), "b": ("BBB", "0", 1.0, None)},
                 {"ROOT": ("", None, 1.0), "A": ("ROOT", None, 1.01), "AA": ("A", None, 1.0),
                  "AAA": ("AA", None, 1.0), "B": ("ROOT", None, 0.99), "BB": ("B", None, 1.0),
                  "BBB": ("BB", None, 1.0), "C": ("ROOT", None, 1.0), "CC": ("C", None, 1.0),
                  "CCC": ("CC", None, 1.0), "CCCC": ("CCC", "1", 1.0)},
                 _units("b", "b1"), ("a", "1"), None, {"b1": "InCohortFairSharing"}, id="deep preemption"),
]


@pytest.mark.parametrize(("queues", "cohorts", "admitted", "incoming", "strategies", "want"), FAIR)
def test_fair_preemption(queues, cohorts, admitted, incoming, strategies, want):
    built = []
    for name, (cohort, cpu, weight, preemption) in queues.items():
        builder = ClusterQueueBuilder(name).cohort(cohort).weight(weight)
        if cpu is not None:
            builder.flavors(("default", {"cpu": cpu}))
        if preemption:
            builder.preemption(**preemption)
        built.append(builder.obj())
    cohort_objects = []
    for name, (parent, cpu, weight) in cohorts.items():
        builder = CohortBuilder(name).parent(parent).weight(weight)
        if cpu is not None:
            builder.flavors(("default", {"cpu": cpu}))
        cohort_objects.append(builder.obj())
    fair = kinds.FairSharing(True, strategies) if strategies else ON
    manager = manager_with(*built, cohorts=tuple(cohort_objects), fair_sharing=fair)
    for name, cq, cpu, priority in admitted:
        workload = WorkloadBuilder(name).priority(priority).request(cpu=cpu).obj()
        assignment = PodSetAssignment("main", {"cpu": "default"}, {"cpu": q(cpu)}, 1)
        manager.add_workload(dataclasses.replace(workload, admission=Admission(cq, (assignment,)), admitted_at=1.0))
    target, cpu = incoming
    preemptor = WorkloadBuilder("incoming").request(cpu=cpu).obj()
    candidates = list(manager.cache.admitted_in(manager.cache.quotas.neighbours(target)))
    targets = find_targets(preemptor, manager.cache.quotas.cluster_queues[target], {CPU: q(cpu)}, {CPU}, candidates,
                           manager.cache.quotas, fair)
    assert {t.workload.name: t.reason.value for t in targets} == want


# -- admission order (TestSchedule, fair sharing) ---------------------------------------------------


def _admitted(manager, name, cq, cpu, flavor="default"):
    workload = WorkloadBuilder(name).request(cpu=cpu).obj()
    assignment = PodSetAssignment("main", {"cpu": flavor}, {"cpu": q(cpu)}, 1)
    manager.add_workload(dataclasses.replace(workload, admission=Admission(cq, (assignment,)), admitted_at=1.0))


def _cycle(manager):
    decided = scheduling.run_cycle(manager, now=100.0)
    return sorted(d.workload.name for d in decided if isinstance(d, decisions.Admit))


def test_hierarchical_fair_sharing_schedule_workload_which_wins_tournament():
    # A(200) with B{d, e} and C{f, g}: d0 10, e0 20, g0 100 admitted. B's subtree with d1 (70) has the
    # lower share at A's level; within B, d1 makes d's share smaller than e1 (61) makes e's.
    queues = [ClusterQueueBuilder(name).flavors(("on-demand", {"cpu": "0"})).cohort(cohort).obj()
              for name, cohort in (("d", "B"), ("e", "B"), ("f", "C"), ("g", "C"))]
    manager = manager_with(
        *queues, flavors=("on-demand",), fair_sharing=ON,
        cohorts=(CohortBuilder("A").flavors(("on-demand", {"cpu": "200"})).obj(), CohortBuilder("B").parent("A").obj(),
                 CohortBuilder("C").parent("A").obj()),
        local_queues={f"lq-{n}": n for n in "defg"},
    )
    for name, cq, cpu in (("d0", "d", "10"), ("e0", "e", "20"), ("g0", "g", "100")):
        _admitted(manager, name, cq, cpu, "on-demand")
    for name, cpu in (("d1", "70"), ("e1", "61"), ("f1", "1"), ("g1", "1")):
        manager.add_workload(WorkloadBuilder(name).queue(f"lq-{name[0]}").request(cpu=cpu).obj())
    assert _cycle(manager) == ["d1"]


def test_fair_sharing_two_queues_with_weight_0_schedules_workload_which_borrows_less():
    queues = [ClusterQueueBuilder(n).flavors(("on-demand", {"cpu": "0"})).cohort("A").weight(0)
              .preemption(within="Never", reclaim="Any").obj() for n in "bc"]
    manager = manager_with(*queues, flavors=("on-demand",), fair_sharing=ON,
                           cohorts=(CohortBuilder("A").flavors(("on-demand", {"cpu": "8"})).obj(),),
                           local_queues={"lq-b": "b", "lq-c": "c"})
    _admitted(manager, "b0", "b", "4", "on-demand")
    manager.add_workload(WorkloadBuilder("b1").queue("lq-b").priority(9001).request(cpu="4").obj())
    manager.add_workload(WorkloadBuilder("c1").queue("lq-c").priority(0).request(cpu="4").obj())
    assert _cycle(manager) == ["c1"]


def test_with_fair_sharing_hierarchical_nominal_first_prefers_non_borrowing_subtree():
    # FairSharingPrioritizeNonBorrowing: at the root, Cohort-A does not borrow with wl-a, Cohort-B does
    # with wl-b (though wl-b fits cq-b's own nominal quota).
    manager = manager_with(
        ClusterQueueBuilder("cq-a").flavors(("on-demand", {"cpu": "0"})).cohort("Cohort-A").obj(),
        ClusterQueueBuilder("cq-b").flavors(("on-demand", {"cpu": "5"})).cohort("Cohort-B").obj(),
        ClusterQueueBuilder("cq-c").flavors(("on-demand", {"cpu": "0"})).cohort("Cohort-B").obj(),
        flavors=("on-demand",), fair_sharing=ON,
        cohorts=(CohortBuilder("root").obj(),
                 CohortBuilder("Cohort-A").parent("root").flavors(("on-demand", {"cpu": "10"})).obj(),
                 CohortBuilder("Cohort-B").parent("root").obj()),
        local_queues={"lq-a": "cq-a", "lq-b": "cq-b"},
    )
    _admitted(manager, "c0", "cq-c", "10", "on-demand")
    manager.add_workload(WorkloadBuilder("wl-a").queue("lq-a").created(2).request(cpu="5").obj())
    manager.add_workload(WorkloadBuilder("wl-b").queue("lq-b").created(1).request(cpu="5").obj())
    assert _cycle(manager) == ["wl-a"]


def test_fair_sharing_schedule_highest_priority_first():
    # Same shares: the higher priority goes first (PrioritySortingWithinCohort), then the older.
    queues = [ClusterQueueBuilder(n).flavors(("default", {"cpu": "0"})).cohort("all").obj() for n in "xy"]
    manager = manager_with(*queues, fair_sharing=ON, cohorts=(CohortBuilder("all").flavors(("default", {"cpu": "2"})).obj(),),
                           local_queues={"lq-x": "x", "lq-y": "y"})
    manager.add_workload(WorkloadBuilder("old-low").queue("lq-x").created(1).priority(0).request(cpu="2").obj())
    manager.add_workload(WorkloadBuilder("new-high").queue("lq-y").created(2).priority(10).request(cpu="2").obj())
    assert _cycle(manager) == ["new-high"]


def test_fair_sharing_off_keeps_the_classical_order():
    queues = [ClusterQueueBuilder(n).flavors(("default", {"cpu": "0"})).cohort("all").obj() for n in "xy"]
    manager = manager_with(*queues, cohorts=(CohortBuilder("all").flavors(("default", {"cpu": "2"})).obj(),),
                           local_queues={"lq-x": "x", "lq-y": "y"})
    _admitted(manager, "x0", "x", "0.5")
    manager.add_workload(WorkloadBuilder("x1").queue("lq-x").created(1).request(cpu="1").obj())
    manager.add_workload(WorkloadBuilder("y1").queue("lq-y").created(2).request(cpu="1").obj())
    assert _cycle(manager) == ["x1"]  # the older first; with fair sharing the smaller share (y) wins


def test_fair_sharing_admits_the_lower_share_first():
    queues = [ClusterQueueBuilder(n).flavors(("default", {"cpu": "0"})).cohort("all").obj() for n in "xy"]
    manager = manager_with(*queues, fair_sharing=ON, cohorts=(CohortBuilder("all").flavors(("default", {"cpu": "2"})).obj(),),
                           local_queues={"lq-x": "x", "lq-y": "y"})
    _admitted(manager, "x0", "x", "0.5")
    manager.add_workload(WorkloadBuilder("x1").queue("lq-x").created(1).request(cpu="1").obj())
    manager.add_workload(WorkloadBuilder("y1").queue("lq-y").created(2).request(cpu="1").obj())
    assert _cycle(manager) == ["y1"]


def test_with_fair_sharing_preempt_workload_from_cq_with_the_highest_share():
    # TestSchedule's case on its eng cohort: alpha borrows 30 on-demand, gamma 20; beta's preemptor (30,
    # within beta's nominal) takes one from alpha, then one from gamma, the queue with the highest share
    # at each step, as reclamation.
    alpha = ClusterQueueBuilder("eng-alpha").cohort("eng").flavors(
        ("on-demand", {"cpu": ("50", "50", None)}), ("spot", {"cpu": ("100", "0", None)})).obj()
    beta = ClusterQueueBuilder("eng-beta").cohort("eng").preemption(within="LowerPriority", reclaim="Any").flavors(
        ("on-demand", {"cpu": ("50", "10", None)}), ("spot", {"cpu": ("0", "100", None)})).obj()
    gamma = ClusterQueueBuilder("eng-gamma").cohort("eng").flavors(("on-demand", {"cpu": ("50", "0", None)})).obj()
    manager = manager_with(alpha, beta, gamma, flavors=("on-demand", "spot"), fair_sharing=ON,
                           local_queues={"main": "eng-beta"})
    _admitted(manager, "all_spot", "eng-alpha", "100", "spot")
    for name, cq, cpu in (("alpha1", "eng-alpha", "20"), ("alpha2", "eng-alpha", "20"), ("alpha3", "eng-alpha", "20"),
                          ("alpha4", "eng-alpha", "20"), ("gamma1", "eng-gamma", "10"), ("gamma2", "eng-gamma", "20"),
                          ("gamma3", "eng-gamma", "20"), ("gamma4", "eng-gamma", "20")):
        _admitted(manager, name, cq, cpu, "on-demand")
    manager.add_workload(WorkloadBuilder("preemptor").queue("main").request(cpu="30").obj())
    (decided,) = scheduling.run_cycle(manager, now=100.0)
    assert isinstance(decided, decisions.Preempt)
    assert {t.workload.name: t.reason.value for t in decided.targets} == {
        "alpha1": "InCohortReclamation", "gamma1": "InCohortReclamation"}


# -- the incremental tournament against Kueue's full recompute ------------------------------------


def _kueue_order(entries, quotas):
    """fairSharingIterator as Kueue writes it: every pop recomputes every entry's share at every level
    (computeDRS) and runs the whole tournament; the walk admits what fits between pops."""
    remaining = list(entries)
    out = []
    while remaining:
        values = {}
        for cq, request, order in remaining:
            quotas.add_usage(cq, request)
            node = quotas.cq_node(cq)
            drs = fairsharing.dominant_resource_share(quotas, node)
            for ancestor in node.path_to_root():
                values[(ancestor.name, cq)] = drs
                drs = fairsharing.dominant_resource_share(quotas, ancestor)
            quotas.remove_usage(cq, request)
        by_queue = {e[0]: e for e in remaining}

        def tournament(cohort):
            candidates = [w for child in cohort.child_cohorts if (w := tournament(child)) is not None]
            candidates += [by_queue[q.name] for q in cohort.child_cqs if q.name in by_queue]
            best = None
            for current in candidates:
                if best is None:
                    best = current
                    continue
                a, b = values[(cohort.name, current[0])], values[(cohort.name, best[0])]
                a_b, b_b = a.borrowing_on(current[1]), b.borrowing_on(best[1])
                if a_b != b_b:
                    better = not a_b
                elif fairsharing.compare(a, b) != 0:
                    better = fairsharing.compare(a, b) < 0
                else:
                    better = current[2] < best[2]
                if better:
                    best = current
            return best

        winner = tournament(quotas.cq_node(remaining[0][0]).root())
        remaining.remove(winner)
        out.append(winner[0])
        if quotas.fits(winner[0], winner[1], allow_borrowing=True):
            quotas.add_usage(winner[0], winner[1])
    return out


@pytest.mark.parametrize("seed", range(40))
def test_the_incremental_tournament_picks_what_kueues_full_recompute_picks(seed):
    import random

    from scheduler.core.fairordering import fair_sharing_order

    rng = random.Random(seed)
    cohorts = [CohortBuilder("root").flavors(("default", {"cpu": str(rng.randint(0, 6))}))
               .weight(rng.choice([1, 2])).obj()]
    names = ["root"]
    for i in range(rng.randint(1, 5)):
        builder = CohortBuilder(f"c{i}").parent(rng.choice(names)).weight(rng.choice([0, 0.5, 1, 2]))
        if rng.random() < 0.5:
            builder.flavors(("default", {"cpu": (str(rng.randint(0, 4)), None, str(rng.randint(0, 4)))}))
        cohorts.append(builder.obj())
        names.append(f"c{i}")
    queues = [ClusterQueueBuilder(f"q{i}").cohort(rng.choice(names)).weight(rng.choice([0, 0.5, 1, 3]))
              .flavors(("default", {"cpu": str(rng.randint(0, 3))})).obj() for i in range(rng.randint(2, 12))]
    manager = manager_with(*queues, cohorts=tuple(cohorts), fair_sharing=ON)
    for i, q_ in enumerate(queues):
        if rng.random() < 0.5:
            _admitted(manager, f"a{i}", q_.name, str(rng.randint(1, 3)))
    entries = [(q_.name, {CPU: q(str(rng.randint(1, 4)))}, (-rng.randint(0, 1), float(rng.randint(0, 3)), q_.name))
               for q_ in queues]
    want = _kueue_order(entries, manager.cache.quotas.copy())
    work = manager.cache.quotas.copy()
    got = []
    for cq, request, _ in fair_sharing_order(entries, work, lambda e: e):
        got.append(cq)
        if work.fits(cq, request, allow_borrowing=True):
            work.add_usage(cq, request)
    assert got == want
