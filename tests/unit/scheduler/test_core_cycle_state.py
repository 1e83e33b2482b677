"""What a cycle leaves for the next: where a flavor search stopped (Kueue's LastAssignment), the
sticky preemptor of a BestEffortFIFO queue, and the targets claimed within one cycle."""

import pytest

from scheduler.core.decisions import NO_LONGER_FITS, Admit, Preempt, Wait, describe
from scheduler.core.flavorassigning import LastAssignment
from scheduler.core.scheduling import decide_cycle, run_cycle
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, admit, manager_with


def _summary(decisions):
    return [(type(d).__name__, d.workload.name) for d in decisions]


def _two_pod_sets_in_two_flavors(strict=False):
    """cq has flavors small and big (4 cpu each); 'running' (priority 9) holds 1 cpu of big.
    'job' has a 1-cpu driver and a 4-cpu worker. The driver fits small and the search stops there;
    the worker then fits neither: small is short by the driver's cpu, big needs 'running' to go,
    which it may not (no candidates)."""
    builder = ClusterQueueBuilder("cq").flavors(("small", {"cpu": "4"}), ("big", {"cpu": "4"}))
    manager = manager_with((builder.strict_fifo() if strict else builder).obj(), flavors=("small", "big"))
    admit(manager, WorkloadBuilder("running").priority(9).request(cpu="1").obj(), "cq", flavor="big")
    job = WorkloadBuilder("job").created(5).request(name="driver", cpu="1").request(name="worker", cpu="4").obj()
    manager.add_workload(job)
    return manager


@pytest.mark.parametrize("strict", [False, True])
def test_the_next_cycle_resumes_the_flavor_search_where_it_stopped(strict):
    # Kueue keeps the driver's last tried flavor (LastTriedFlavorIdx 0, not the group's last) and, with
    # flavors left to try, requeues the head into the active queue (cluster_queue.go requeueIfNotPresent,
    # PendingFlavors) instead of parking or blocking it. The next search puts the driver in big, so
    # the worker fits small.
    manager = _two_pod_sets_in_two_flavors(strict)
    (first,) = run_cycle(manager, now=10)
    assert isinstance(first, Wait) and not first.blocks
    assert first.last_assignment == LastAssignment(({"cpu": 0}, {"cpu": -1}))
    assert _last_search(manager) == first.last_assignment
    (second,) = run_cycle(manager, now=11)
    assert isinstance(second, Admit)
    assert [a.flavors for a in second.admission.pod_set_assignments] == [{"cpu": "big"}, {"cpu": "small"}]
    # the one line a cycle log (--log-cycles) and the in-process trace write per decision
    assert describe(second) == "Admit job -> cq driver{cpu=big} worker{cpu=small}"
    assert describe(first) == f"Wait job in cq: {first.message}"


def test_an_admitted_workload_leaving_the_queue_restarts_the_search():
    # The queue's AllocatableResourceGeneration moves when an admitted workload leaves it (pkg/cache/
    # scheduler clusterQueue.deleteWorkload), outdating every LastAssignment: the driver goes back
    # to small, and the worker now fits big.
    manager = _two_pod_sets_in_two_flavors()
    run_cycle(manager, now=10)
    manager.mark_finished(("ns", "running"))
    assert _last_search(manager) is None
    (decision,) = run_cycle(manager, now=11)
    assert [a.flavors for a in decision.admission.pod_set_assignments] == [{"cpu": "small"}, {"cpu": "big"}]


def _held_back_by_a_head_that_cannot_reclaim(preserve_scan_progress):
    """Cohort co: cq-a (StrictFIFO, f1 4 cpu, reclaims nothing) and cq-b (f1 0, f2 4 cpu). 'x' of cq-b
    borrows 1 cpu of f1, so cq-a's head 'a' (4 cpu) needs preemption and has no candidates: each cycle
    Kueue holds back what it waits for (reserveCapacityForUnreclaimablePreempt). cq-b's head 'b' (2 cpu)
    is nominated to f1, which fits at the start of the cycle, and no longer fits once 'a' held it back."""
    cq_a = ClusterQueueBuilder("cq-a").cohort("co").strict_fifo().flavors(("f1", {"cpu": "4"})).obj()
    cq_b = ClusterQueueBuilder("cq-b").cohort("co").flavors(("f1", {"cpu": "0"}), ("f2", {"cpu": "4"})).obj()
    manager = manager_with(cq_a, cq_b, flavors=("f1", "f2"), local_queues={"lq-a": "cq-a", "lq-b": "cq-b"},
                           preserve_scan_progress=preserve_scan_progress)
    admit(manager, WorkloadBuilder("x").queue("lq-b").request(cpu="1").obj(), "cq-b", flavor="f1")
    manager.add_workload(WorkloadBuilder("a").queue("lq-a").priority(5).created(1).request(cpu="4").obj())
    manager.add_workload(WorkloadBuilder("b").queue("lq-b").created(2).request(cpu="2").obj())
    return manager


def test_a_head_skipped_for_contention_starts_its_search_over():
    # Kueue v0.17 (setSkipped): the next cycle tries f1 first again, and loses it again the same way.
    manager = _held_back_by_a_head_that_cannot_reclaim(preserve_scan_progress=False)
    for now in (10, 11, 12):
        skipped = [d for d in run_cycle(manager, now=now) if d.workload.name == "b"]
        assert [(type(d).__name__, d.message, d.last_assignment) for d in skipped] == [
            ("Wait", NO_LONGER_FITS, None)]


def test_with_preserve_scan_progress_a_skipped_head_goes_on_with_its_next_flavor():
    # Kueue v0.19 (FlavorFungibilityPreserveScanProgress, markSkipped keeps LastAssignment): the next
    # cycle resumes after f1 and admits 'b' in f2 (seed 287 of the random cases, w10, against v0.19.2).
    manager = _held_back_by_a_head_that_cannot_reclaim(preserve_scan_progress=True)
    (skipped,) = [d for d in run_cycle(manager, now=10) if d.workload.name == "b"]
    assert isinstance(skipped, Wait) and skipped.last_assignment == LastAssignment(({"cpu": 0},))
    (admitted,) = [d for d in run_cycle(manager, now=11) if d.workload.name == "b"]
    assert isinstance(admitted, Admit)
    assert [a.flavors for a in admitted.admission.pod_set_assignments] == [{"cpu": "f2"}]


def test_with_preserve_scan_progress_a_search_one_cycle_old_outlives_a_quota_change():
    # lastAssignmentOutdated with the gate: a search of this cycle or the one before is kept when the
    # queue's AllocatableResourceGeneration moved; older ones are dropped as before.
    manager = _two_pod_sets_in_two_flavors()
    manager.preserve_scan_progress = True
    (first,) = run_cycle(manager, now=10)
    manager.mark_finished(("ns", "running"))
    manager.cycle += 1  # the next cycle
    assert _last_search(manager) == first.last_assignment
    manager.cycle += 1  # two cycles on
    assert _last_search(manager) is None


def test_a_search_with_no_flavor_left_parks_the_head():
    # 'hog' (ahead of 'job') fits no flavor: its pod set records no flavor tried, nothing is pending.
    manager = _two_pod_sets_in_two_flavors()
    manager.add_workload(WorkloadBuilder("hog").priority(9).request(cpu="5").obj())
    decisions = run_cycle(manager, now=10)
    assert _summary(decisions) == [("Park", "hog")]
    assert decisions[0].last_assignment == LastAssignment(({},))
    assert manager.pending_lists.is_parked(("ns", "hog"))


def _preemptor_waiting_for_its_eviction(strict=False, positions="indexed"):
    """cq (4 cpu) runs 'low'; 'mid' (priority 5) preempts it and waits for the eviction."""
    builder = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).preemption(within="LowerPriority")
    manager = manager_with((builder.strict_fifo() if strict else builder).obj(), positions=positions)
    admit(manager, WorkloadBuilder("low").created(1).request(cpu="4").obj(), "cq")
    manager.add_workload(WorkloadBuilder("mid").priority(5).created(5).request(cpu="4").obj())
    (decision,) = run_cycle(manager, now=10)
    assert isinstance(decision, Preempt)
    manager.add_workload(WorkloadBuilder("high").priority(10).created(6).request(cpu="4").obj())
    return manager


def test_a_preemptor_stays_first_in_a_best_effort_queue():
    # Kueue's stickyWorkload (pkg/cache/queue/cluster_queue.go): a BestEffortFIFO head requeued pending
    # its preemptions is ordered first until it leaves the queue, so a later higher-priority workload
    # neither preempts the same target nor takes the freed quota.
    manager = _preemptor_waiting_for_its_eviction()
    assert decide_cycle(manager) == []
    manager.mark_evicted(("ns", "low"), reason="Preempted", now=11)
    assert _summary(run_cycle(manager, now=12)) == [("Admit", "mid")]
    assert _summary(run_cycle(manager, now=13)) == [("Preempt", "high")]


def test_a_strict_fifo_queue_has_no_sticky_preemptor():
    manager = _preemptor_waiting_for_its_eviction(strict=True)
    # 'high' heads the queue and claims the target already being evicted (Kueue sees it evicted and
    # issues nothing new for it, but the decision is 'high's).
    assert _summary(decide_cycle(manager)) == [("Preempt", "high")]
    manager.mark_evicted(("ns", "low"), reason="Preempted", now=11)
    assert _summary(run_cycle(manager, now=12)) == [("Admit", "high")]


def test_a_head_that_fits_counts_the_targets_claimed_before_it_as_gone():
    # Kueue's fits (scheduler.go) checks every nominated entry with the cycle's claimed targets
    # removed: 'fitter' (c, borrowing 2) is admitted while 'reclaimer' waits for 'taker' to go.
    a = ClusterQueueBuilder("a").flavors(("default", {"cpu": "4"})).cohort("co").preemption(reclaim="Any").obj()
    b = ClusterQueueBuilder("b").flavors(("default", {"cpu": "0"})).cohort("co").obj()
    c = ClusterQueueBuilder("c").flavors(("default", {"cpu": "0"})).cohort("co").obj()
    lender = ClusterQueueBuilder("lender").flavors(("default", {"cpu": "2"})).cohort("co").obj()
    manager = manager_with(a, b, c, lender, local_queues={"la": "a", "lc": "c"})
    admit(manager, WorkloadBuilder("taker").request(cpu="4").obj(), "b")
    manager.add_workload(WorkloadBuilder("reclaimer").queue("la").created(5).request(cpu="4").obj())
    manager.add_workload(WorkloadBuilder("fitter").queue("lc").created(1).request(cpu="2").obj())
    assert _summary(decide_cycle(manager)) == [("Preempt", "reclaimer"), ("Admit", "fitter")]


@pytest.mark.parametrize("positions", ["snapshot", "indexed"])
def test_the_sticky_preemptor_is_listed_first(positions):
    # Kueue's visibility API sorts by the queue order, sticky first (cluster_queue.go, baseCompareFunc):
    # 'mid' waits for its eviction ahead of 'high', whose priority alone would put it first.
    manager = _preemptor_waiting_for_its_eviction(positions=positions)
    assert [item.name for item in manager.pending_lists.summary_for_cluster_queue("cq")] == ["mid", "high"]
    assert [item.name for item in manager.pending_lists.summary_for_cluster_queue("cq", offset=1, limit=1)] == ["high"]
    assert [item.name for item in manager.pending_lists.summary_for_local_queue("ns", "lq")] == ["mid", "high"]
    assert manager.pending_lists.position_of(("ns", "mid")) == (0, 0)
    assert manager.pending_lists.position_of(("ns", "high")) == (1, 1)


def test_a_strict_fifo_queue_lists_by_priority():
    manager = _preemptor_waiting_for_its_eviction(strict=True)
    assert [item.name for item in manager.pending_lists.summary_for_cluster_queue("cq")] == ["high", "mid"]


def test_deleting_a_flavor_retries_the_parked_workloads_of_the_queues_that_use_it():
    # Kueue's ResourceFlavor controller, on delete: NotifyRetryInadmissible for the queues it made
    # inactive. A parked Workload is then back in its queue's order when the flavor returns, ahead of a
    # later head that stayed active (the agreement runner's gate, closed and opened between epochs).
    manager = _two_pod_sets_in_two_flavors()
    manager.add_workload(WorkloadBuilder("hog").priority(9).request(cpu="5").obj())
    run_cycle(manager, now=10)
    assert manager.pending_lists.is_parked(("ns", "hog"))
    manager.delete_resource_flavor("unused")
    assert manager.pending_lists.is_parked(("ns", "hog")), "a flavor no queue uses retries nothing"
    manager.delete_resource_flavor("big")
    assert not manager.pending_lists.is_parked(("ns", "hog"))


def _last_search(manager):
    """Where job's last flavor search in cq stopped, as the next cycle would read it."""
    return manager.pending_lists.last_assignment("cq", ("ns", "job"), manager.cycle, manager.preserve_scan_progress)
