"""spec.active (kubectl kueue stop/resume workload): queueing, quota, and the status change called for."""

import dataclasses

import pytest

from scheduler.core import activation, conversion
from scheduler.core.activation import Change
from scheduler.core.scheduling import run_cycle
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, admit, manager_with


def _manager():
    """cq has 2 cpu; 'running' (2 cpu) holds all of it; 'next' (2 cpu) waits behind it."""
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "2"})).obj())
    admit(manager, WorkloadBuilder("running").request(cpu="2").obj(), "cq")
    manager.add_workload(WorkloadBuilder("next").created(2).request(cpu="2").obj())
    manager.add_workload(WorkloadBuilder("last").created(3).request(cpu="2").obj())
    return manager


def _names(manager):
    return [i.name for i in manager.pending_lists.summary_for_cluster_queue("cq")]


def test_stopping_a_pending_workload_takes_it_out_of_the_queue_and_resume_puts_it_back():
    manager = _manager()
    nxt = manager.workload(("ns", "next"))
    manager.update_workload(dataclasses.replace(nxt, active=False))
    assert _names(manager) == ["last"]
    assert manager.pending_lists.position_of(("ns", "next")) is None
    assert manager.pending_lists.pending_count("cq") == 1
    manager.update_workload(dataclasses.replace(nxt, active=True))
    assert _names(manager) == ["next", "last"], "it keeps its place by creation time"


def test_stopping_an_admitted_workload_releases_its_quota_at_once():
    manager = _manager()
    assert [d.workload.name for d in run_cycle(manager, now=10)] == ["next"]  # parked: no room
    running = manager.workload(("ns", "running"))
    manager.update_workload(dataclasses.replace(running, active=False))
    assert manager.cache.admitted(("ns", "running")) is None
    assert list(manager.cache.admitted_in(["cq"])) == []
    decisions = run_cycle(manager, now=11)
    assert [(type(d).__name__, d.workload.name) for d in decisions] == [("Admit", "next")]


def test_an_inactive_workload_is_never_admitted():
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
    manager.add_workload(dataclasses.replace(WorkloadBuilder("w").obj(), active=False))
    assert run_cycle(manager, now=1) == []
    assert manager.pending_lists.pending_count("cq") == 0


def test_cancelled_admission_of_a_workload_stopped_meanwhile_does_not_requeue_it():
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
    manager.add_workload(WorkloadBuilder("w").obj())
    run_cycle(manager, now=1)
    admitted = manager.workload(("ns", "w"))
    manager.update_workload(dataclasses.replace(admitted, active=False))
    manager.cancel_admission(("ns", "w"))
    assert manager.pending_lists.pending_count("cq") == 0


_ADMITTED = WorkloadBuilder("w").obj()


@pytest.mark.parametrize("fields, expected", [
    ({"active": False}, Change.MARK_EVICTED),
    ({"active": False, "evicted": True}, None),
    ({"active": False, "admission": "yes"}, Change.EVICT_ADMITTED),
    ({"active": False, "admission": "yes", "evicted": True}, Change.EVICT_ADMITTED),
    ({"active": False, "finished": True}, None),
    ({"active": True}, None),
    ({"active": True, "requeue_held_by": "Deactivated"}, Change.REACTIVATE),
    ({"active": True, "requeue_held_by": "Deactivated", "admission": "yes"}, None),
    ({"active": True, "requeue_held_by": "ClusterQueueStopped"}, None),
    ({"active": True, "evicted": True}, None),
])
def test_change_called_for(fields, expected):
    if fields.get("admission") == "yes":
        fields = {**fields, "admission": _admission()}
    assert activation.change_for(dataclasses.replace(_ADMITTED, **fields)) is expected


def _admission():
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
    admit(manager, WorkloadBuilder("w").obj(), "cq")
    return manager.workload(("ns", "w")).admission


def _workload_dict(active=None, conditions=()):
    spec = {"queueName": "lq", "priority": 0, "podSets": []}
    if active is not None:
        spec["active"] = active
    return {"metadata": {"name": "w", "namespace": "ns", "uid": "u", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": spec, "status": {"conditions": list(conditions)}}


def test_decoding_reads_active_evicted_and_a_deactivation_requeue():
    plain = conversion.workload_from_dict(_workload_dict())
    assert plain.active and not plain.evicted and plain.requeue_held_by == ""
    stopped = conversion.workload_from_dict(_workload_dict(active=False, conditions=[
        {"type": "Evicted", "status": "True", "reason": "Deactivated"},
        {"type": "Requeued", "status": "False", "reason": "Deactivated"}]))
    assert not stopped.active and stopped.evicted and stopped.requeue_held_by == "Deactivated"
    requeued = conversion.workload_from_dict(_workload_dict(conditions=[
        {"type": "Requeued", "status": "True", "reason": "Reactivated"}]))
    assert requeued.requeue_held_by == ""
