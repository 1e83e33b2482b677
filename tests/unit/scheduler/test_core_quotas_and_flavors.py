"""Quota arithmetic with cohorts (borrowing and lending limits) and flavor assignment."""

import pytest

from scheduler.core import kinds
from scheduler.core.flavorassigning import Mode, assign_flavors
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
    result = assign_flavors(workload, manager.quotas.cluster_queues["cq"], manager.flavors, manager.quotas)
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
    result = assign_flavors(workload, cq, manager.flavors, manager.quotas)
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
    result = assign_flavors(workload, cq, manager.flavors, manager.quotas)
    assert result.admission.pod_set_assignments[0].flavors == {"cpu": "y"}


def test_pods_resource_counts_pods_and_pod_sets_share_a_flavor():
    cq = ClusterQueueBuilder("cq").flavors(("small", {"cpu": "3", "pods": "10"}), ("big", {"cpu": "8", "pods": "10"})).obj()
    manager = manager_with(cq, flavors=("small", "big"))
    # 2 pods x 1 cpu fit small; the second pod set (2 cpu) no longer fits small with them.
    workload = WorkloadBuilder("w").request(count=2, name="driver", cpu="1").request(count=1, name="worker", cpu="2").obj()
    result = assign_flavors(workload, cq, manager.flavors, manager.quotas)
    driver, worker = result.admission.pod_set_assignments
    assert driver.flavors == {"cpu": "small", "pods": "small"}
    assert driver.usage == {"cpu": q("2"), "pods": q("2")}
    assert worker.flavors == {"cpu": "big", "pods": "big"}
    assert result.usage == {("small", "cpu"): q("2"), ("small", "pods"): q("2"), ("big", "cpu"): q("2"), ("big", "pods"): q("1")}


def test_uncovered_resource_does_not_fit():
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "3"})).obj()
    manager = manager_with(cq)
    workload = WorkloadBuilder("w").request(cpu="1", memory="1Gi").obj()
    result = assign_flavors(workload, cq, manager.flavors, manager.quotas)
    assert result.mode is Mode.NO_FIT
    assert "memory is not covered" in result.message
