"""Scheduling cycles: admit, park (BestEffortFIFO), block (StrictFIFO), preempt, cohorts."""

import dataclasses

from scheduler.core import conversion, kinds
from scheduler.core.decisions import Admit, Preempt, Wait
from scheduler.core.scheduling import decide_cycle, run_cycle
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, admit, manager_with, q


def _summary(decisions):
    return [(type(d).__name__, d.workload.name) for d in decisions]


def _queue_with_running_job(strict=False):
    """cq has 4 cpu; 'running' holds 2; 'big' (3 cpu) is older than 'small' (1 cpu)."""
    builder = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"}))
    manager = manager_with(builder.strict_fifo().obj() if strict else builder.obj())
    admit(manager, WorkloadBuilder("running").request(cpu="2").obj(), "cq")
    manager.add_workload(WorkloadBuilder("big").created(1).request(cpu="3").obj())
    manager.add_workload(WorkloadBuilder("small").created(2).request(cpu="1").obj())
    return manager


def test_best_effort_parks_head_that_does_not_fit_and_admits_the_next():
    manager = _queue_with_running_job()
    assert _summary(run_cycle(manager, now=10)) == [("Park", "big")]
    # Parked workloads keep their place in positions.
    assert [i.name for i in manager.pending_lists.summary_for_cluster_queue("cq")] == ["big", "small"]
    assert manager.pending_lists.is_parked(("ns", "big"))
    assert _summary(run_cycle(manager, now=11)) == [("Admit", "small")]
    assert not manager.has_work()
    # Finishing 'running' frees 2 cpu: 'big' comes back and fits (3 <= 4 - 1).
    manager.mark_finished(("ns", "running"))
    assert _summary(run_cycle(manager, now=12)) == [("Admit", "big")]
    assert manager.pending_lists.summary_for_cluster_queue("cq") == []


def test_strict_fifo_head_blocks_until_capacity_changes():
    manager = _queue_with_running_job(strict=True)
    (decision,) = run_cycle(manager, now=10)
    assert isinstance(decision, Wait) and decision.blocks and decision.workload.name == "big"
    # 'small' would fit but may not pass the blocked head.
    assert not manager.has_work()
    assert decide_cycle(manager) == []
    manager.mark_finished(("ns", "running"))
    assert _summary(run_cycle(manager, now=11)) == [("Admit", "big")]
    assert _summary(run_cycle(manager, now=12)) == [("Admit", "small")]


def test_strict_fifo_new_head_unblocks():
    manager = _queue_with_running_job(strict=True)
    run_cycle(manager, now=10)
    manager.add_workload(WorkloadBuilder("urgent").priority(5).request(cpu="1").obj())
    assert _summary(run_cycle(manager, now=11)) == [("Admit", "urgent")]


def test_admit_carries_assignment_and_reserves_quota():
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4", "pods": "10"})).obj()
    manager = manager_with(cq)
    manager.add_workload(WorkloadBuilder("w").request(count=2, cpu="1500m").obj())
    (decision,) = run_cycle(manager, now=10)
    assert isinstance(decision, Admit) and not decision.borrows
    (assignment,) = decision.admission.pod_set_assignments
    assert (assignment.flavors, assignment.usage, assignment.count) == (
        {"cpu": "default", "pods": "default"},
        {"cpu": q("3"), "pods": q("2")},
        2,
    )
    assert manager.cache.quotas.used("cq", ("default", "cpu")) == q("3")
    assert manager.cache.admitted(("ns", "w")).workload.admitted_at == 10


def test_cohort_neighbours_compete_within_a_cycle():
    # Shared pool of 4. b's head fits without borrowing and goes first; a's head needs
    # to borrow 1, which the pool no longer has: it waits (not parked) for the next cycle.
    a = ClusterQueueBuilder("a").flavors(("default", {"cpu": "2"})).cohort("co").obj()
    b = ClusterQueueBuilder("b").flavors(("default", {"cpu": "2"})).cohort("co").obj()
    manager = manager_with(a, b, local_queues={"la": "a", "lb": "b"})
    manager.add_workload(WorkloadBuilder("borrower").queue("la").priority(9).request(cpu="3").obj())
    manager.add_workload(WorkloadBuilder("owner").queue("lb").request(cpu="2").obj())
    decisions = run_cycle(manager, now=10)
    assert _summary(decisions) == [("Admit", "owner"), ("Wait", "borrower")]
    assert decisions[1].blocks is False
    assert manager.has_work()


def test_preemption_evicts_then_admits():
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).preemption(within="LowerPriority").obj()
    manager = manager_with(cq)
    admit(manager, WorkloadBuilder("low").created(1).request(cpu="4").obj(), "cq")
    manager.add_workload(WorkloadBuilder("high").priority(10).created(5).request(cpu="2").obj())
    (decision,) = run_cycle(manager, now=10)
    assert isinstance(decision, Preempt)
    assert [t.workload.name for t in decision.targets] == ["low"]
    assert manager.cache.admitted(("ns", "low")).evicting
    # Kueue tries a preemptor again in the next cycle (it may need more targets by then); this one
    # still needs only the one under way, so that cycle decides nothing and it waits at the head.
    assert manager.has_work()
    assert run_cycle(manager, now=10.5) == []
    assert not manager.has_work()
    manager.mark_evicted(("ns", "low"), reason="Preempted", now=11)
    # A preempted workload keeps its creation time in the queue (Kueue's default).
    assert manager.workload(("ns", "low")).queue_timestamp == 1
    assert _summary(run_cycle(manager, now=12)) == [("Admit", "high")]
    assert _summary(run_cycle(manager, now=13)) == [("Park", "low")]


def test_pods_ready_timeout_requeues_at_eviction_time():
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj()
    manager = manager_with(cq)
    admit(manager, WorkloadBuilder("flaky").created(1).request(cpu="1").obj(), "cq")
    manager.add_workload(WorkloadBuilder("later").created(5).request(cpu="9").obj())
    manager.mark_evicted(("ns", "flaky"), reason="PodsReadyTimeout", now=7)
    assert [i.name for i in manager.pending_lists.summary_for_cluster_queue("cq")] == ["later", "flaky"]


def test_stale_decisions_are_skipped():
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj()
    manager = manager_with(cq)
    manager.add_workload(WorkloadBuilder("w").request(cpu="1").obj())
    decisions = decide_cycle(manager)
    manager.delete_workload(("ns", "w"))
    manager.apply_decisions(decisions, now=1)
    assert manager.cache.admitted(("ns", "w")) is None
    assert manager.cache.quotas.used("cq", ("default", "cpu")) == 0


def test_stopped_queue_and_missing_flavor_admit_nothing():
    stopped = ClusterQueueBuilder("stopped").flavors(("default", {"cpu": "4"})).obj()
    manager = manager_with(stopped)
    manager.update_cluster_queue(dataclasses.replace(stopped, stopped=True))
    manager.add_workload(WorkloadBuilder("w").request(cpu="1").obj())
    assert decide_cycle(manager) == []
    missing = ClusterQueueBuilder("missing").flavors(("gone", {"cpu": "4"})).obj()
    manager2 = manager_with(missing)
    manager2.add_workload(WorkloadBuilder("w").request(cpu="1").obj())
    assert decide_cycle(manager2) == []
    # Parked and blocked workloads are still pending, even on a stopped queue.
    assert manager.pending_lists.pending_count("stopped") == 1


def test_cancel_admission_returns_workload_to_its_place():
    manager = _queue_with_running_job()
    run_cycle(manager, now=10)  # parks big
    run_cycle(manager, now=11)  # admits small
    manager.cancel_admission(("ns", "small"))
    assert [i.name for i in manager.pending_lists.summary_for_cluster_queue("cq")] == ["big", "small"]
    assert manager.cache.quotas.used("cq", ("default", "cpu")) == q("2")
    # Releasing quota unparked 'big', which still does not fit (3 > 4 - 2).
    assert _summary(decide_cycle(manager)) == [("Park", "big")]


def test_quota_increase_returns_parked_workloads():
    manager = _queue_with_running_job()
    run_cycle(manager, now=10)  # parks big (3 > 4 - 2)
    run_cycle(manager, now=11)  # admits small; 1 cpu left
    bigger = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "6"})).obj()
    manager.update_cluster_queue(bigger)
    assert not manager.pending_lists.is_parked(("ns", "big"))
    assert _summary(run_cycle(manager, now=12)) == [("Admit", "big")]


def test_cohort_neighbour_finishing_returns_parked_workloads():
    a = ClusterQueueBuilder("a").flavors(("default", {"cpu": "2"})).cohort("co").obj()
    b = ClusterQueueBuilder("b").flavors(("default", {"cpu": "2"})).cohort("co").obj()
    manager = manager_with(a, b, local_queues={"la": "a", "lb": "b"})
    admit(manager, WorkloadBuilder("b-runner").request(cpu="3").obj(), "b")
    manager.add_workload(WorkloadBuilder("waiting").queue("la").request(cpu="2").obj())
    assert _summary(run_cycle(manager, now=10)) == [("Park", "waiting")]
    manager.mark_finished(("ns", "b-runner"))
    assert _summary(run_cycle(manager, now=11)) == [("Admit", "waiting")]


def _head_waiting_for_its_own_quota(reclaim: str):
    """a (6 cpu, lends 1) runs 3 and waits with a 6-cpu head; b is full and has a 1-cpu head that must borrow."""
    a = ClusterQueueBuilder("a").flavors(("default", {"cpu": ("6", None, "1")})).cohort("co").preemption(reclaim=reclaim).obj()
    b = ClusterQueueBuilder("b").flavors(("default", {"cpu": "4"})).cohort("co").obj()
    manager = manager_with(a, b, local_queues={"la": "a", "lb": "b"})
    admit(manager, WorkloadBuilder("a-running").queue("la").request(cpu="3").obj(), "a")
    admit(manager, WorkloadBuilder("b-running").queue("lb").request(cpu="4").obj(), "b")
    manager.add_workload(WorkloadBuilder("big").queue("la").priority(9).created(1).request(cpu="6").obj())
    manager.add_workload(WorkloadBuilder("borrower").queue("lb").created(2).request(cpu="1").obj())
    return manager


def test_a_head_that_cannot_reclaim_holds_back_what_it_waits_for():
    # Kueue reserves a's unused nominal quota for 'big', so b may not borrow a's lendable cpu.
    decisions = run_cycle(_head_waiting_for_its_own_quota(reclaim="Never"), now=10)
    assert _summary(decisions) == [("Park", "big"), ("Wait", "borrower")]


def test_a_head_that_can_always_reclaim_lets_neighbours_borrow():
    decisions = run_cycle(_head_waiting_for_its_own_quota(reclaim="Any"), now=10)
    assert ("Admit", "borrower") in _summary(decisions)


def _parked_beside_a_neighbour():
    """a parks 'waiting' (2 cpu) because b borrows a's quota; b is a cohort neighbour."""
    a = ClusterQueueBuilder("a").flavors(("default", {"cpu": "2"})).cohort("co").obj()
    b = ClusterQueueBuilder("b").flavors(("default", {"cpu": "2"})).cohort("co").obj()
    manager = manager_with(a, b, local_queues={"la": "a", "lb": "b"})
    admit(manager, WorkloadBuilder("b-runner").queue("lb").request(cpu="3").obj(), "b")
    manager.add_workload(WorkloadBuilder("waiting").queue("la").request(cpu="2").obj())
    assert _summary(run_cycle(manager, now=10)) == [("Park", "waiting")]
    return manager


def _cluster_queue_object(name, status):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": name, "resourceVersion": str(len(status) + 7)},
            "spec": {"cohortName": "co", "queueingStrategy": "BestEffortFIFO", "namespaceSelector": {}, "resourceGroups": [{
                "coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [
                    {"name": "cpu", "nominalQuota": "2"}]}]}]},
            "status": status}


def test_a_status_only_update_of_a_cluster_queue_leaves_parked_workloads_parked():
    # The scheduler's own count writes come back as watch events; Kueue requeues only on a spec change.
    manager = _parked_beside_a_neighbour()
    for name in ("a", "b"):
        status = {"pendingWorkloads": 1, "admittedWorkloads": 1,
                  "conditions": [{"type": "Active", "status": "True", "reason": "Ready"}]}
        manager.update_cluster_queue(conversion.cluster_queue_from_dict(_cluster_queue_object(name, status)))
    assert manager.pending_lists.is_parked(("ns", "waiting"))
    assert decide_cycle(manager) == []


def test_a_spec_change_of_a_neighbour_returns_parked_workloads():
    manager = _parked_beside_a_neighbour()
    obj = _cluster_queue_object("b", {})
    obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "3"
    manager.update_cluster_queue(conversion.cluster_queue_from_dict(obj))
    assert not manager.pending_lists.is_parked(("ns", "waiting"))
    assert _summary(decide_cycle(manager)) == [("Admit", "waiting")]  # the cohort grew to 5 cpu, b uses 3


def test_an_unchanged_cohort_leaves_parked_workloads_parked_and_a_changed_one_returns_them():
    manager = _parked_beside_a_neighbour()
    manager.add_cohort(kinds.Cohort("co"))
    assert not manager.pending_lists.is_parked(("ns", "waiting"))  # a new Cohort object: capacity may have changed
    run_cycle(manager, now=11)
    assert manager.pending_lists.is_parked(("ns", "waiting"))
    manager.update_cohort(kinds.Cohort("co"))
    assert manager.pending_lists.is_parked(("ns", "waiting"))
    manager.update_cohort(kinds.Cohort("co", parent="root"))
    assert not manager.pending_lists.is_parked(("ns", "waiting"))


def _cohort_of_two_with_a_borrowing_preemptor():
    """a (4 cpu) runs 6 of the cohort's 8, so it borrows 2; b (4 cpu) runs nothing.
    a's head 'urgent' (4 cpu, priority 10) must preempt a's own low-priority work and still
    borrows afterwards; b's head 'owner' (2 cpu) fits within b's nominal quota."""
    a = (ClusterQueueBuilder("a").flavors(("default", {"cpu": "4"})).cohort("co")
         .preemption(within="LowerPriority", reclaim="Any").obj())
    b = ClusterQueueBuilder("b").flavors(("default", {"cpu": "4"})).cohort("co").obj()
    manager = manager_with(a, b, local_queues={"la": "a", "lb": "b"})
    admit(manager, WorkloadBuilder("a-big").queue("la").created(0).request(cpu="4").obj(), "a")
    admit(manager, WorkloadBuilder("a-low1").queue("la").created(1).request(cpu="1").obj(), "a")
    admit(manager, WorkloadBuilder("a-low2").queue("la").created(2).request(cpu="1").obj(), "a")
    manager.add_workload(WorkloadBuilder("urgent").queue("la").priority(10).created(5).request(cpu="4").obj())
    manager.add_workload(WorkloadBuilder("owner").queue("lb").created(6).request(cpu="2").obj())
    return manager


def test_a_preemptor_that_still_borrows_comes_after_a_head_within_nominal_and_is_skipped():
    # Kueue orders a preempting head by whether it borrows once its targets are gone
    # (borrowAfterPreemptions), so 'owner' goes first; then, with its targets (chosen at the
    # start of the cycle) gone, 'urgent' no longer fits and Kueue skips it without preempting.
    manager = _cohort_of_two_with_a_borrowing_preemptor()
    decisions = run_cycle(manager, now=10)
    assert _summary(decisions) == [("Admit", "owner"), ("Wait", "urgent")]
    assert decisions[1].message == "Workload no longer fits after processing another workload"
    assert not any(r.evicting for r in manager.cache.admitted_in(["a"]))


def _cohort_with_a_borrower_and_two_reclaimers():
    """a, b, c have 4 cpu each; b borrows 4 (b-old 6 cpu, b-new 2 cpu); a and c run 2 each.
    Heads that fit within their own nominal quota may reclaim from b."""
    queues = [
        ClusterQueueBuilder(name).flavors(("default", {"cpu": "4"})).cohort("co")
        .preemption(within="LowerPriority", reclaim="Any").obj()
        for name in ("a", "b", "c")
    ]
    manager = manager_with(*queues, local_queues={"la": "a", "lb": "b", "lc": "c"})
    admit(manager, WorkloadBuilder("a-run").queue("la").created(0).request(cpu="2").obj(), "a")
    admit(manager, WorkloadBuilder("c-run").queue("lc").created(0).request(cpu="2").obj(), "c")
    admit(manager, WorkloadBuilder("b-old").queue("lb").created(1).request(cpu="6").obj(), "b")
    admit(manager, WorkloadBuilder("b-new").queue("lb").created(2).request(cpu="2").obj(), "b")
    return manager


def test_a_preemptor_waiting_for_its_evictions_keeps_its_targets_and_its_quota():
    # Kueue retries a preemptor every cycle until its targets are gone; the targets already
    # evicted come first, so it claims them again and holds its request back: a later head
    # wanting the same quota is skipped instead of taking over the targets or preempting more.
    manager = _cohort_with_a_borrower_and_two_reclaimers()
    manager.add_workload(WorkloadBuilder("a-want").queue("la").created(5).request(cpu="2").obj())
    (first,) = run_cycle(manager, now=10)
    assert isinstance(first, Preempt) and [t.workload.name for t in first.targets] == ["b-new"]
    manager.add_workload(WorkloadBuilder("c-want").queue("lc").created(6).request(cpu="2").obj())
    decisions = run_cycle(manager, now=11)
    assert _summary(decisions) == [("Wait", "c-want")]
    assert decisions[0].message == "Workload has overlapping preemption targets with another workload"
    assert not manager.cache.admitted(("ns", "b-old")).evicting
    # Once b-new is gone the waiting preemptor is admitted first.
    manager.mark_evicted(("ns", "b-new"), reason="Preempted", now=12)
    assert _summary(run_cycle(manager, now=12))[0] == ("Admit", "a-want")


def test_a_waiting_preemptor_decides_nothing_while_its_targets_are_evicting():
    # Kueue's IssuePreemptions skips targets already evicted: no second eviction is issued.
    manager = _cohort_with_a_borrower_and_two_reclaimers()
    manager.add_workload(WorkloadBuilder("a-want").queue("la").created(5).request(cpu="2").obj())
    run_cycle(manager, now=10)
    manager.add_workload(WorkloadBuilder("b-more").queue("lb").created(6).request(cpu="1").obj())
    decisions = run_cycle(manager, now=11)
    assert not any(isinstance(d, Preempt) for d in decisions)


def test_parked_workloads_come_back_one_batch_period_after_the_first_release():
    # Kueue's inadmissible Workloads return through a delaying queue, requeueBatchPeriod (1 s) after the
    # first change; later changes in that second ride along (pkg/cache/queue/inadmissible_workloads.go).
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "2"})).obj()
    manager = manager_with(cq, requeue_batch_seconds=1.0)
    admit(manager, WorkloadBuilder("a").request(cpu="1").obj(), "cq")
    admit(manager, WorkloadBuilder("b").request(cpu="1").obj(), "cq")
    manager.add_workload(WorkloadBuilder("big").created(1).request(cpu="2").obj())
    assert _summary(run_cycle(manager, now=100.0)) == [("Park", "big")]
    # setting the queue up asked for a retry too: it comes at 101 and finds nothing free
    assert _summary(run_cycle(manager, now=101.0)) == [("Park", "big")] and manager.next_retry_at() is None
    manager.mark_finished(("ns", "a"))
    assert run_cycle(manager, now=101.5) == [] and manager.next_retry_at() == 102.5
    manager.mark_finished(("ns", "b"))  # a second release inside the batch moves nothing
    assert run_cycle(manager, now=102.0) == [] and manager.next_retry_at() == 102.5
    assert _summary(run_cycle(manager, now=102.5)) == [("Admit", "big")]
    assert manager.next_retry_at() is None and not manager.retries.waiting()


def test_a_strict_fifo_head_blocked_by_quota_is_retried_at_the_release_itself():
    # StrictFIFO heads never go to Kueue's inadmissible set: they are tried again at once.
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "2"})).strict_fifo().obj()
    manager = manager_with(cq, requeue_batch_seconds=1.0)
    admit(manager, WorkloadBuilder("a").request(cpu="2").obj(), "cq")
    manager.add_workload(WorkloadBuilder("big").created(1).request(cpu="2").obj())
    (decision,) = run_cycle(manager, now=100.0)
    assert isinstance(decision, Wait) and decision.blocks
    manager.mark_finished(("ns", "a"))
    assert _summary(run_cycle(manager, now=100.1)) == [("Admit", "big")]
