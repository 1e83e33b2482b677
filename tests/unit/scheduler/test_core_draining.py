"""HoldAndDrain stops (kubectl kueue stop clusterqueue|localqueue): what is evicted, and when requeue resumes."""

import dataclasses

from scheduler.core import draining, kinds
from scheduler.core.scheduling import run_cycle
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, manager_with


def _manager():
    """cq (4 cpu) fed by lq-a and lq-b; two workloads admitted from each."""
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj()
    manager = manager_with(cq, local_queues={"lq-a": "cq", "lq-b": "cq"})
    for i, lq in enumerate(["lq-a", "lq-a", "lq-b", "lq-b"]):
        manager.add_workload(WorkloadBuilder(f"w{i}").queue(lq).created(i).obj())
    for _ in range(4):
        run_cycle(manager, now=10)
    assert len(list(manager.cache.admitted_in(["cq"]))) == 4
    return manager


def _targets(manager):
    return sorted((d.workload.name, d.reason) for d in draining.drain_targets(manager))


def test_hold_evicts_nothing():
    manager = _manager()
    cq = manager.cache.quotas.cluster_queues["cq"]
    manager.update_cluster_queue(dataclasses.replace(cq, stopped=True))
    manager.update_local_queue(kinds.LocalQueue("ns", "lq-a", "cq", stopped=True))
    assert _targets(manager) == []


def test_hold_and_drain_of_a_cluster_queue_evicts_all_its_admitted():
    manager = _manager()
    cq = manager.cache.quotas.cluster_queues["cq"]
    manager.update_cluster_queue(dataclasses.replace(cq, stopped=True, drain=True))
    assert _targets(manager) == [(f"w{i}", "ClusterQueueStopped") for i in range(4)]


def test_a_draining_local_queue_evicts_only_its_own_and_names_itself_first():
    manager = _manager()
    manager.update_local_queue(kinds.LocalQueue("ns", "lq-b", "cq", stopped=True, drain=True))
    assert _targets(manager) == [("w2", "LocalQueueStopped"), ("w3", "LocalQueueStopped")]
    cq = manager.cache.quotas.cluster_queues["cq"]
    manager.update_cluster_queue(dataclasses.replace(cq, stopped=True, drain=True))
    assert dict(_targets(manager))["w2"] == "LocalQueueStopped", "the LocalQueue is checked first"
    assert dict(_targets(manager))["w0"] == "ClusterQueueStopped"


def test_requeue_resumes_only_once_the_stopped_queue_is_running_again():
    manager = _manager()
    held = dataclasses.replace(manager.workload(("ns", "w0")), admission=None, requeue_held_by="ClusterQueueStopped")
    cq = manager.cache.quotas.cluster_queues["cq"]
    manager.update_cluster_queue(dataclasses.replace(cq, stopped=True, drain=True))
    assert draining.restart_for(held, manager) is None
    manager.update_cluster_queue(cq)
    assert draining.restart_for(held, manager) == (
        "ClusterQueueRestarted", "The ClusterQueue was restarted after being stopped")
    by_lq = dataclasses.replace(held, requeue_held_by="LocalQueueStopped")
    manager.update_local_queue(kinds.LocalQueue("ns", "lq-a", "cq", stopped=True))
    assert draining.restart_for(by_lq, manager) is None
    manager.update_local_queue(kinds.LocalQueue("ns", "lq-a", "cq"))
    assert draining.restart_for(by_lq, manager)[0] == "LocalQueueRestarted"
    deactivated = dataclasses.replace(held, requeue_held_by="Deactivated")
    assert draining.restart_for(deactivated, manager) is None, "a deactivation waits for resume workload"


def test_stop_policies_decode_into_hold_and_drain():
    from scheduler.core import conversion

    def cq(policy):
        return conversion.cluster_queue_from_dict({"metadata": {"name": "cq"}, "spec": {"stopPolicy": policy}})

    def lq(policy):
        return conversion.local_queue_from_dict({"metadata": {"name": "lq", "namespace": "ns"},
                                                 "spec": {"clusterQueue": "cq", "stopPolicy": policy}})
    for decode in (cq, lq):
        assert (decode(None).stopped, decode(None).drain) == (False, False)
        assert (decode("None").stopped, decode("None").drain) == (False, False)
        assert (decode("Hold").stopped, decode("Hold").drain) == (True, False)
        assert (decode("HoldAndDrain").stopped, decode("HoldAndDrain").drain) == (True, True)


def test_a_held_requeue_keeps_the_workload_pending_and_positioned_but_never_admitted():
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj()
    manager = manager_with(cq)
    held = dataclasses.replace(WorkloadBuilder("held").created(1).obj(), requeue_held_by="ClusterQueueStopped")
    manager.add_workload(held)
    manager.add_workload(WorkloadBuilder("other").created(2).obj())
    assert [i.name for i in manager.pending_lists.summary_for_cluster_queue("cq")] == ["held", "other"]
    assert [d.workload.name for d in run_cycle(manager, now=1)] == ["other"]
    manager.mark_finished(("ns", "other"))  # capacity changes: parked ones return, held ones do not
    assert run_cycle(manager, now=2) == []
    assert manager.pending_lists.pending_count("cq") == 1
    manager.update_workload(dataclasses.replace(held, requeue_held_by=""))  # Requeued=True written
    assert [d.workload.name for d in run_cycle(manager, now=3)] == ["held"]


def test_only_the_reasons_this_scheduler_releases_hold_a_workload():
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj()
    manager = manager_with(cq)
    # A reason nothing here would release (a DRA error's Inadmissible): it must not hold.
    manager.add_workload(dataclasses.replace(WorkloadBuilder("w").obj(), requeue_held_by="Inadmissible"))
    assert [d.workload.name for d in run_cycle(manager, now=1)] == ["w"]
    # A PodsReady timeout's or an admission check's backoff: the controller writes Requeued=True (BackoffFinished)
    # when it ends, so it holds until then.
    for at, (name, reason) in enumerate((("p", "PodsReadyTimeout"), ("a", "AdmissionCheck"))):
        backing_off = dataclasses.replace(WorkloadBuilder(name).obj(), requeue_held_by=reason)
        manager.add_workload(backing_off)
        assert run_cycle(manager, now=2 + 2 * at) == []
        manager.update_workload(dataclasses.replace(backing_off, requeue_held_by=""))  # BackoffFinished written
        assert [d.workload.name for d in run_cycle(manager, now=3 + 2 * at)] == [name]
