"""ClusterQueue/LocalQueue status: counts and Kueue's Active condition (what kubectl kueue list prints)."""

import dataclasses

import pytest

from scheduler.core import kinds, queuestatus
from scheduler.core.queuestatus import Active
from scheduler.core.scheduling import run_cycle
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, manager_with

READY = Active(True, "Ready", "Can admit new workloads")


@pytest.mark.parametrize("stopped, flavors, expected", [
    (False, ("default",), READY),
    (True, ("default",), Active(False, "Stopped", "Can't admit new workloads: is stopped.")),
    (False, (), Active(False, "FlavorNotFound",
                       "Can't admit new workloads: references missing ResourceFlavor(s): default,spot.")),
    (True, (), Active(False, "Stopped", "Can't admit new workloads: is stopped, "
                                        "references missing ResourceFlavor(s): default,spot.")),
])
def test_cluster_queue_active(stopped, flavors, expected):
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "1"}), ("spot", {"cpu": "1"})).obj()
    cq = dataclasses.replace(cq, stopped=stopped)
    if flavors:
        flavors = ("default", "spot")
    assert queuestatus.cluster_queue_active(cq, set(flavors)) == expected


@pytest.mark.parametrize("stopped, cq_active, expected", [
    (False, READY, Active(True, "Ready", "Can submit new workloads to localQueue")),
    (True, READY, Active(False, "Stopped", "LocalQueue is stopped")),
    (False, None, Active(False, "ClusterQueueDoesNotExist", "Can't submit new workloads to clusterQueue")),
    (False, Active(False, "Stopped", "x"),
     Active(False, "ClusterQueueIsInactive", "Can't submit new workloads to clusterQueue")),
])
def test_local_queue_active(stopped, cq_active, expected):
    lq = kinds.LocalQueue("ns", "lq", "cq", stopped=stopped)
    assert queuestatus.local_queue_active(lq, cq_active) == expected


def _two_local_queues():
    """cq (3 cpu) fed by lq-a and lq-b; lq-orphan points to a ClusterQueue that does not exist."""
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "3"})).obj()
    manager = manager_with(cq, local_queues={"lq-a": "cq", "lq-b": "cq", "lq-orphan": "nope"})
    for i in range(4):
        manager.add_workload(WorkloadBuilder(f"a{i}").queue("lq-a").created(i).obj())
    for i in range(2):
        manager.add_workload(WorkloadBuilder(f"b{i}").queue("lq-b").created(10 + i).obj())
    for _ in range(3):
        run_cycle(manager, now=100)
    return manager


def test_counts_per_queue_follow_admissions():
    cqs, lqs = queuestatus.queue_statuses(_two_local_queues())
    assert cqs == {"cq": queuestatus.QueueStatus(pending=3, admitted=3, active=READY,
                                                 usage=(queuestatus.ResourceUsage("default", "cpu", 3000, 0),))}
    assert (lqs[("ns", "lq-a")].pending, lqs[("ns", "lq-a")].admitted) == (1, 3)
    assert (lqs[("ns", "lq-b")].pending, lqs[("ns", "lq-b")].admitted) == (2, 0)
    assert lqs[("ns", "lq-orphan")] == queuestatus.QueueStatus(
        0, 0, Active(False, "ClusterQueueDoesNotExist", "Can't submit new workloads to clusterQueue"))


def test_a_stopped_local_queue_holds_its_workloads_out_of_the_cluster_queue():
    manager = _two_local_queues()
    manager.update_local_queue(kinds.LocalQueue("ns", "lq-b", "cq", stopped=True))
    manager.add_workload(WorkloadBuilder("b2").queue("lq-b").created(12).obj())
    assert [i.name for i in manager.pending_lists.summary_for_cluster_queue("cq")] == ["a3"]
    assert manager.pending_lists.position_of(("ns", "b2")) is None
    cqs, lqs = queuestatus.queue_statuses(manager)
    assert cqs["cq"].pending == 1
    assert lqs[("ns", "lq-b")].pending == 0 and not lqs[("ns", "lq-b")].active.status
    manager.update_local_queue(kinds.LocalQueue("ns", "lq-b", "cq"))
    assert [i.name for i in manager.pending_lists.summary_for_cluster_queue("cq")] == ["a3", "b0", "b1", "b2"]


def test_a_stopped_cluster_queue_makes_its_local_queues_inactive_and_keeps_its_pending():
    manager = _two_local_queues()
    cq = manager.cache.quotas.cluster_queues["cq"]
    manager.update_cluster_queue(dataclasses.replace(cq, stopped=True))
    cqs, lqs = queuestatus.queue_statuses(manager)
    assert cqs["cq"].pending == 3 and cqs["cq"].active.reason == "Stopped"
    assert lqs[("ns", "lq-a")].active.reason == "ClusterQueueIsInactive"


def test_usage_lists_every_flavor_and_covered_resource_in_spec_order_with_what_is_borrowed():
    cq = ClusterQueueBuilder("cq").flavors(("on-demand", {"cpu": "2", "memory": "1Gi"}), ("spot", {"cpu": "4"})).obj()
    used = {("on-demand", "cpu"): 3500, ("spot", "cpu"): 1000}
    assert queuestatus.cluster_queue_usage(cq, used) == (
        queuestatus.ResourceUsage("on-demand", "cpu", 3500, 1500),
        queuestatus.ResourceUsage("on-demand", "memory", 0, 0),
        queuestatus.ResourceUsage("spot", "cpu", 1000, 0),
        queuestatus.ResourceUsage("spot", "memory", 0, 0),
    )
