"""Quota arithmetic with cohorts (borrowing and lending limits) and flavor assignment."""

import pytest

from scheduler.core import kinds
from scheduler.core.flavorassigning import LastAssignment, Mode, assign_flavors
from scheduler.core.quotas import QuotaBook
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, admit, manager_with, q

CPU = ("default", "cpu")


def _book(a_spec, b_spec, a_used="0", b_used="0", cohort="co"):
    book = QuotaBook()
    book.set_cluster_queue(ClusterQueueBuilder("a").flavors(("default", {"cpu": a_spec})).cohort(cohort).obj())
    book.set_cluster_queue(ClusterQueueBuilder("b").flavors(("default", {"cpu": b_spec})).cohort(cohort).obj())
    book.add_usage("a", {CPU: q(a_used)})
    book.add_usage("b", {CPU: q(b_used)})
    return book


@pytest.mark.parametrize(
    ("case", "a_spec", "b_spec", "a_used", "b_used", "cohort", "available_a", "available_b"),
    [
        # Both lend everything: each sees the whole pool of 20.
        ("idle cohort", "10", "10", "0", "0", "co", "20", "20"),
        # b borrows 5: pool 20 - 15 = 5 left for a; b has 5 more too.
        ("neighbour borrows", "10", "10", "0", "15", "co", "5", "5"),
        # a may borrow at most 2 beyond its 10.
        ("borrowing limit", ("10", "2", None), "10", "0", "0", "co", "12", "20"),
        # b lends only 4: a sees 10 + 4; b keeps 6 for itself and sees 6 + 14.
        ("lending limit", "10", ("10", None, "4"), "0", "0", "co", "14", "20"),
        # b uses 8 = its 6 guaranteed + 2 from the pool: a sees 14 - 2.
        ("lending limit in use", "10", ("10", None, "4"), "0", "8", "co", "12", "12"),
        # No cohort: nominal minus usage.
        ("no cohort", "10", "10", "3", "0", "", "7", "10"),
        # The pool (a lends 2, b 10) is overdrawn by 1: Kueue adds the negative parent availability to
        # a's guaranteed 2 (pkg/cache/scheduler/resource_node.go available), leaving 1.
        ("cohort in debt", ("4", None, "2"), "10", "0", "13", "co", "1", "0"),
    ],
)
def test_available(case, a_spec, b_spec, a_used, b_used, cohort, available_a, available_b):
    book = _book(a_spec, b_spec, a_used, b_used, cohort)
    assert book.available("a", CPU) == q(available_a), case
    assert book.available("b", CPU) == q(available_b), case


def test_cohort_own_quota_joins_the_pool():
    book = _book("1", "1")
    group = kinds.ResourceGroup(("cpu",), (kinds.FlavorQuotas("default", (kinds.ResourceQuota("cpu", q("5")),)),))
    book.set_cohort(kinds.Cohort("co", resource_groups=(group,)))
    assert book.available("a", CPU) == q("7")


def _assign(manager, workload, cq_name="cq"):
    cq = manager.cache.quotas.cluster_queues[cq_name]
    admitted = manager.cache.admitted_in(manager.cache.quotas.neighbours(cq_name))
    return assign_flavors(workload, cq, manager.cache.flavors, manager.cache.quotas, admitted)


def _two_flavor_queue(**fungibility):
    return (
        ClusterQueueBuilder("cq")
        .flavors(("on-demand", {"cpu": "4"}), ("spot", {"cpu": "10"}))
        .cohort("co")
        .preemption(within="LowerPriority")
        .fungibility(**fungibility)
        .obj()
    )


def _lender():
    return ClusterQueueBuilder("lender").flavors(("on-demand", {"cpu": "10"}), ("spot", {"cpu": "0"})).cohort("co").obj()


@pytest.mark.parametrize(
    ("case", "cpu", "fungibility", "flavor", "mode", "borrows"),
    [
        ("fits without borrowing: first flavor", "2", {}, "on-demand", Mode.FIT, False),
        # 6 > 4 nominal; borrowing from the lender is enough and MayStopSearch stops there.
        ("borrow and stop", "6", {}, "on-demand", Mode.FIT, True),
        # TryNextFlavor looks on and prefers spot, which fits without borrowing.
        ("try next instead of borrowing", "6", {"when_can_borrow": "TryNextFlavor"}, "spot", Mode.FIT, False),
        # 12 exceeds spot's 10; on-demand holds it by borrowing 8 of the lender's 10.
        ("only on-demand can hold it", "12", {"when_can_borrow": "TryNextFlavor"}, "on-demand", Mode.FIT, True),
        ("nothing can hold it", "30", {}, None, Mode.NO_FIT, False),
    ],
)
def test_flavor_fungibility_when_borrowing(case, cpu, fungibility, flavor, mode, borrows):
    manager = manager_with(_two_flavor_queue(**fungibility), _lender(), flavors=("on-demand", "spot"))
    workload = WorkloadBuilder("w").request(cpu=cpu).obj()
    result = _assign(manager, workload)
    assert (result.mode, result.borrows) == (mode, borrows), case
    if flavor is not None:
        assert result.admission.pod_set_assignments[0].flavors == {"cpu": flavor}, case


@pytest.mark.parametrize(
    ("when_can_preempt", "flavor", "mode"),
    [
        # Default TryNextFlavor: flavor a needs preemption, b fits, so b.
        ("TryNextFlavor", "b", Mode.FIT),
        ("MayStopSearch", "a", Mode.PREEMPT),
    ],
)
def test_flavor_fungibility_when_preempting(when_can_preempt, flavor, mode):
    cq = (
        ClusterQueueBuilder("cq")
        .flavors(("a", {"cpu": "4"}), ("b", {"cpu": "4"}))
        .preemption(within="LowerPriority")
        .fungibility(when_can_preempt=when_can_preempt)
        .obj()
    )
    manager = manager_with(cq, flavors=("a", "b"))
    admit(manager, WorkloadBuilder("low").request(cpu="4").obj(), "cq", flavor="a")
    workload = WorkloadBuilder("high").priority(10).request(cpu="2").obj()
    result = _assign(manager, workload)
    assert result.mode == mode
    assert result.admission.pod_set_assignments[0].flavors == {"cpu": flavor}
    assert result.needs_preemption == (frozenset({("a", "cpu")}) if mode is Mode.PREEMPT else frozenset())


def test_node_selector_and_taints_skip_flavors():
    cq = ClusterQueueBuilder("cq").flavors(("x", {"cpu": "4"}), ("tainted", {"cpu": "4"}), ("y", {"cpu": "4"})).obj()
    manager = manager_with(cq, flavors=())
    manager.add_resource_flavor(kinds.ResourceFlavor("x", {"zone": "x"}))
    manager.add_resource_flavor(kinds.ResourceFlavor("tainted", {}, (kinds.Taint("gpu", "true", "NoSchedule"),)))
    manager.add_resource_flavor(kinds.ResourceFlavor("y", {"zone": "y"}))
    workload = WorkloadBuilder("w").request(cpu="1").selector(zone="y").obj()
    result = _assign(manager, workload)
    assert result.admission.pod_set_assignments[0].flavors == {"cpu": "y"}


def test_pods_resource_counts_pods_and_pod_sets_share_a_flavor():
    cq = ClusterQueueBuilder("cq").flavors(("small", {"cpu": "3", "pods": "10"}), ("big", {"cpu": "8", "pods": "10"})).obj()
    manager = manager_with(cq, flavors=("small", "big"))
    # 2 pods x 1 cpu fit small; the second pod set (2 cpu) no longer fits small with them.
    workload = WorkloadBuilder("w").request(count=2, name="driver", cpu="1").request(count=1, name="worker", cpu="2").obj()
    result = _assign(manager, workload)
    driver, worker = result.admission.pod_set_assignments
    assert driver.flavors == {"cpu": "small", "pods": "small"}
    assert driver.usage == {"cpu": q("2"), "pods": q("2")}
    assert worker.flavors == {"cpu": "big", "pods": "big"}
    assert result.usage == {("small", "cpu"): q("2"), ("small", "pods"): q("2"), ("big", "cpu"): q("2"), ("big", "pods"): q("1")}


def test_uncovered_resource_does_not_fit():
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "3"})).obj()
    manager = manager_with(cq)
    workload = WorkloadBuilder("w").request(cpu="1", memory="1Gi").obj()
    result = _assign(manager, workload)
    assert result.mode is Mode.NO_FIT
    assert result.message == "couldn't assign flavors to pod set main: resource memory unavailable in ClusterQueue"


def test_the_pending_message_says_how_much_more_is_needed_in_kueues_words():
    # Kueue v0.17.0 flavorassigner_test.go: "insufficient unused quota for cpu in flavor default, 1 more needed".
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "2"})).obj()
    manager = manager_with(cq)
    admit(manager, WorkloadBuilder("running").request(cpu="1").obj(), "cq")
    result = _assign(manager, WorkloadBuilder("w").request(cpu="2").obj())
    assert result.message == ("couldn't assign flavors to pod set main: "
                              "insufficient unused quota for cpu in flavor default, 1 more needed")


def test_the_pending_message_names_the_maximum_capacity_when_no_preemption_can_help():
    # flavorassigner_test.go: "... previously considered podsets requests (0) + current podset request (3)
    # > maximum capacity (2)"; every flavor tried gives its reason, sorted.
    cq = ClusterQueueBuilder("cq").flavors(("one", {"cpu": "2"}), ("two", {"cpu": "1500m"})).obj()
    manager = manager_with(cq, flavors=("one", "two"))
    result = _assign(manager, WorkloadBuilder("w").request(cpu="3").obj())
    assert result.mode is Mode.NO_FIT
    assert result.message == (
        "couldn't assign flavors to pod set main: "
        "insufficient quota for cpu in flavor one, previously considered podsets requests (0) + current podset "
        "request (3) > maximum capacity (2), "
        "insufficient quota for cpu in flavor two, previously considered podsets requests (0) + current podset "
        "request (3) > maximum capacity (1500m)")


def test_a_head_that_fits_has_no_pending_message():
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "2"})).obj()
    assert _assign(manager_with(cq), WorkloadBuilder("w").request(cpu="2").obj()).message == ""


def test_borrowing_level_is_one_only_past_nominal_in_a_cohort():
    # classical.FindHeightOfLowestSubtreeThatFits in a flat cohort: 0 within nominal, else the cohort's height 1.
    book = _book("4", "4", a_used="3")
    assert (book.borrowing_level("a", CPU, q("1")), book.borrowing_level("a", CPU, q("2"))) == (0, 1)
    alone = _book("4", "4", a_used="3", cohort="")
    assert alone.borrowing_level("a", CPU, q("2")) == 0


def _search(flavor_quotas, admitted, preemptor_priority, cpu, neighbour=None, **settings):
    """``cq`` (in cohort co when a ``neighbour`` quota map is given) with one group over ``flavor_quotas``;
    ``admitted``: (name, queue, flavor, priority, cpu); returns the preemptor's assignment."""
    builder = ClusterQueueBuilder("cq").flavors(*flavor_quotas.items())
    builder.preemption(**settings.get("preemption", {"within": "LowerPriority"}))
    builder.fungibility(**settings.get("fungibility", {}))
    queues = [builder.cohort("co").obj() if neighbour else builder.obj()]
    if neighbour:
        queues.append(ClusterQueueBuilder("n").flavors(*neighbour.items()).cohort("co").obj())
    manager = manager_with(*queues, flavors=tuple(flavor_quotas))
    for at, (name, queue, flavor, priority, used) in enumerate(admitted):
        admit(manager, WorkloadBuilder(name).priority(priority).created(at).request(cpu=used).obj(), queue, flavor)
    return _assign(manager, WorkloadBuilder("preemptor").priority(preemptor_priority).created(99).request(cpu=cpu).obj())


TWO = {"a": {"cpu": "4"}, "b": {"cpu": "4"}}


@pytest.mark.parametrize(
    ("case", "flavor_quotas", "neighbour", "admitted", "priority", "cpu", "settings", "flavor", "mode", "borrows"),
    [
        # a would need preemption but its only workload is not lower priority: Kueue's oracle finds no
        # candidates (NoCandidates), and shouldTryNextFlavor passes such a flavor even under MayStopSearch.
        ("no candidates is passed where preemption may stop the search", TWO, None,
         [("peer", "cq", "a", 10, "4")], 10, "2", {"fungibility": {"when_can_preempt": "MayStopSearch"}},
         "b", Mode.FIT, False),
        # TryNextFlavor keeps the best flavor seen: Preempt (targets found) ranks above NoCandidates.
        ("targets beat no candidates", TWO, None,
         [("peer", "cq", "a", 10, "4"), ("low", "cq", "b", 0, "4")], 5, "2", {},
         "b", Mode.PREEMPT, False),
        # Reclaim (every target in another queue of the cohort) ranks above Preempt (one in the queue).
        ("reclaiming from the cohort beats preempting in the queue", TWO, {"a": {"cpu": "0"}, "b": {"cpu": "0"}},
         [("own", "cq", "a", 0, "4"), ("borrower", "n", "b", 0, "4")], 10, "4",
         {"preemption": {"within": "LowerPriority", "reclaim": "Any"}},
         "b", Mode.PREEMPT, False),
        # a fits by borrowing (level 1); b fits once 'low' goes but still borrows from the lender
        # (borrowAfterPreemptions 1). With equal borrowing the mode decides: the fit.
        ("PreemptionOverBorrowing: equal borrowing, the fit wins",
         {"a": {"cpu": "2"}, "b": {"cpu": "4"}}, {"a": {"cpu": "10"}, "b": {"cpu": "6"}},
         [("high", "cq", "b", 20, "2"), ("low", "cq", "b", 0, "2"), ("lender-own", "n", "b", 0, "4")], 10, "4",
         {"fungibility": {"when_can_borrow": "TryNextFlavor", "preference": "PreemptionOverBorrowing"}},
         "a", Mode.FIT, True),
        ("BorrowingOverPreemption: the fit wins",
         {"a": {"cpu": "2"}, "b": {"cpu": "4"}}, {"a": {"cpu": "10"}, "b": {"cpu": "6"}},
         [("high", "cq", "b", 20, "2"), ("low", "cq", "b", 0, "2"), ("lender-own", "n", "b", 0, "4")], 10, "4",
         {"fungibility": {"when_can_borrow": "TryNextFlavor"}},
         "a", Mode.FIT, True),
        # Same queue without the lender's own workload: b needs no borrowing after preemption, so under
        # PreemptionOverBorrowing it beats a's borrowing fit.
        ("PreemptionOverBorrowing: preemption without borrowing wins",
         {"a": {"cpu": "2"}, "b": {"cpu": "4"}}, {"a": {"cpu": "10"}, "b": {"cpu": "0"}},
         [("high", "cq", "b", 20, "1"), ("low", "cq", "b", 0, "3")], 10, "3",
         {"fungibility": {"when_can_borrow": "TryNextFlavor", "preference": "PreemptionOverBorrowing"}},
         "b", Mode.PREEMPT, False),
    ],
)
def test_flavor_search_ranks_granular_modes(case, flavor_quotas, neighbour, admitted, priority, cpu, settings,
                                            flavor, mode, borrows):
    """Kueue's granular modes NoFit < NoCandidates < Preempt < Reclaim < Fit, with borrowing levels,
    ranked by isPreferred and cut short by shouldTryNextFlavor (pkg/scheduler/flavorassigner)."""
    result = _search(flavor_quotas, admitted, priority, cpu, neighbour, **settings)
    assert result.admission.pod_set_assignments[0].flavors == {"cpu": flavor}, case
    assert (result.mode, result.borrows) == (mode, borrows), case


def test_only_resources_short_of_quota_need_preemption():
    # Each resource keeps its own mode (flavorassigner FlavorAssignment.Mode); Kueue's GetTargets
    # looks for targets only where it is Preempt.
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4", "memory": "4Gi"})).preemption(within="LowerPriority").obj()
    manager = manager_with(cq)
    admit(manager, WorkloadBuilder("low").request(cpu="4", memory="1Gi").obj(), "cq")
    result = _assign(manager, WorkloadBuilder("high").priority(10).request(cpu="2", memory="1Gi").obj())
    assert result.mode is Mode.PREEMPT
    assert result.needs_preemption == frozenset({("default", "cpu")})


def test_a_node_selector_key_excludes_a_flavor_without_that_label():
    # Kueue matches the nodeSelector, cut down to the label keys of the group's flavors, against the
    # flavor's labels (flavorSelector): a flavor lacking a key another flavor has does not match.
    cq = ClusterQueueBuilder("cq").flavors(("x", {"cpu": "4"}), ("plain", {"cpu": "4"})).obj()
    manager = manager_with(cq, flavors=())
    manager.add_resource_flavor(kinds.ResourceFlavor("x", {"zone": "x"}))
    manager.add_resource_flavor(kinds.ResourceFlavor("plain"))
    assert _assign(manager, WorkloadBuilder("w").request(cpu="1").selector(zone="y").obj()).mode is Mode.NO_FIT
    unlabelled = _assign(manager, WorkloadBuilder("w").request(cpu="1").selector(disk="ssd").obj())
    assert unlabelled.admission.pod_set_assignments[0].flavors == {"cpu": "x"}


@pytest.mark.parametrize(
    ("last", "flavor", "tried"),
    [
        (None, "a", {"cpu": 0}),
        ({"cpu": 0}, "b", {"cpu": 1}),
        # The group's last flavor: -1, so the next search starts over.
        ({"cpu": 1}, "c", {"cpu": -1}),
        ({"cpu": -1}, "a", {"cpu": 0}),
    ],
)
def test_a_flavor_search_resumes_after_the_last_flavor_tried(last, flavor, tried):
    """Kueue's LastAssignment (flavor_assigner_attempts.go, workload.AssignmentClusterQueueState)."""
    cq = ClusterQueueBuilder("cq").flavors(("a", {"cpu": "4"}), ("b", {"cpu": "4"}), ("c", {"cpu": "4"})).obj()
    manager = manager_with(cq, flavors=("a", "b", "c"))
    resume = None if last is None else LastAssignment((last,))
    result = assign_flavors(WorkloadBuilder("w").obj(), cq, manager.cache.flavors, manager.cache.quotas, (), resume)
    assert result.admission.pod_set_assignments[0].flavors == {"cpu": flavor}
    assert result.last_assignment == LastAssignment((tried,))
    assert result.last_assignment.pending_flavors() is (tried["cpu"] != -1)
