"""Status apply bodies for stop/resume of a Workload and for queue status (conditions as Kueue writes them)."""

import dataclasses

from scheduler.controller import statuses
from scheduler.core import activation, queuestatus
from scheduler.core.activation import Change
from scheduler.core.workloads import Workload

NOW = 1_700_000_000.0
EARLIER = "2023-01-01T00:00:00Z"
WORKLOAD = Workload("ns", "w", "u", "lq", 0, 0.0, ())


def _by_type(body):
    return {c["type"]: c for c in body["status"]["conditions"]}


def test_stopping_an_admitted_workload_evicts_it_and_clears_the_admission():
    body = statuses.activation_status(WORKLOAD, Change.EVICT_ADMITTED, [], NOW)
    assert "admission" not in body["status"], "omitting it removes the reservation under apply"
    conditions = _by_type(body)
    assert {t: (c["status"], c["reason"]) for t, c in conditions.items()} == {
        "Evicted": ("True", "Deactivated"), "QuotaReserved": ("False", "Pending"),
        "Admitted": ("False", "NoReservation"), "Requeued": ("False", "Deactivated")}
    assert conditions["Evicted"]["message"] == "The workload is deactivated"
    assert body["metadata"] == {"name": "w", "namespace": "ns"}


def test_stopping_a_pending_workload_only_marks_it_evicted():
    body = statuses.activation_status(WORKLOAD, Change.MARK_EVICTED, [], NOW)
    assert list(_by_type(body)) == ["Evicted"]


def test_resuming_writes_only_requeued_so_a_concurrent_admission_is_untouched():
    previous = [{"type": "Evicted", "status": "True", "reason": "Deactivated", "lastTransitionTime": EARLIER}]
    body = statuses.activation_status(WORKLOAD, Change.REACTIVATE, previous, NOW)
    assert list(_by_type(body)) == ["Requeued"]
    requeued = _by_type(body)["Requeued"]
    assert (requeued["status"], requeued["reason"]) == ("True", activation.REACTIVATED)
    assert requeued["lastTransitionTime"] == statuses.rfc3339(NOW)
    assert statuses.REQUEUE_FIELD_MANAGER != statuses.FIELD_MANAGER


def test_drain_eviction_carries_the_queue_reason():
    body = statuses.eviction_status(WORKLOAD, "ClusterQueueStopped", "The ClusterQueue is stopped", [], NOW)
    conditions = _by_type(body)
    assert conditions["Evicted"]["reason"] == conditions["Requeued"]["reason"] == "ClusterQueueStopped"
    assert conditions["QuotaReserved"]["status"] == "False" and "admission" not in body["status"]


def test_transition_time_is_kept_while_the_status_stays():
    previous = [{"type": "Active", "status": "True", "reason": "Ready", "lastTransitionTime": EARLIER}]
    same = statuses.keep_transition(statuses.condition("Active", True, "Ready", "m", NOW), previous)
    assert same["lastTransitionTime"] == EARLIER
    flipped = statuses.keep_transition(statuses.condition("Active", False, "Stopped", "m", NOW), previous)
    assert flipped["lastTransitionTime"] == statuses.rfc3339(NOW)


def test_queue_status_carries_counts_and_the_active_condition():
    status = queuestatus.QueueStatus(5, 2, queuestatus.Active(False, "Stopped", "Can't admit new workloads: is stopped."))
    body = statuses.queue_status("ClusterQueue", "cq", None, status, None, NOW)
    assert body["metadata"] == {"name": "cq"}
    assert body["status"]["pendingWorkloads"] == 5
    assert body["status"]["admittedWorkloads"] == body["status"]["reservingWorkloads"] == 2
    (active,) = body["status"]["conditions"]
    assert (active["type"], active["status"], active["reason"]) == ("Active", "False", "Stopped")
    lq = statuses.queue_status("LocalQueue", "lq", "ns", status, None, NOW)
    assert lq["metadata"] == {"name": "lq", "namespace": "ns"}


def test_cluster_queue_status_carries_flavors_usage_as_kueue_writes_it():
    usage = (queuestatus.ResourceUsage("default", "cpu", 20500, 500), queuestatus.ResourceUsage("spot", "cpu", 0, 0))
    status = queuestatus.QueueStatus(0, 3, queuestatus.Active(True, "Ready", "Can admit new workloads"), usage)
    body = statuses.queue_status("ClusterQueue", "cq", None, status, None, NOW)["status"]
    assert body["flavorsUsage"] == body["flavorsReservation"] == [
        {"name": "default", "resources": [{"name": "cpu", "total": "20500m", "borrowed": "500m"}]},
        {"name": "spot", "resources": [{"name": "cpu", "total": "0", "borrowed": "0"}]}]
    assert "flavorsUsage" not in statuses.queue_status("LocalQueue", "lq", "ns", status, None, NOW)["status"]


def test_a_turned_away_workload_gets_only_its_quota_reserved_condition_onto_the_version_seen():
    previous = [{"type": "QuotaReserved", "status": "False", "reason": "Preempted", "lastTransitionTime": EARLIER}]
    body = statuses.pending_status(WORKLOAD, "Workload namespace doesn't match ClusterQueue selector", previous, "42", NOW)
    (condition,) = body["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == ("QuotaReserved", "False", "Pending")
    assert condition["lastTransitionTime"] == EARLIER, "still False: Kueue's SetStatusCondition keeps the time"
    assert body["metadata"] == {"name": "w", "namespace": "ns", "resourceVersion": "42"}
    assert statuses.PENDING_FIELD_MANAGER not in (statuses.FIELD_MANAGER, statuses.REQUEUE_FIELD_MANAGER)


def test_a_preemption_that_holds_the_quota_writes_only_evicted_and_preempted_under_its_own_manager():
    preemptor = Workload("ns", "p", "u2", "lq", 9, 0.0, ())
    held = statuses.preemption_status(WORKLOAD, preemptor, NOW, "InCohortReclamation", hold=True)
    assert {t: (c["status"], c["reason"]) for t, c in _by_type(held).items()} == {
        "Evicted": ("True", "Preempted"), "Preempted": ("True", "InCohortReclamation")}
    assert statuses.EVICTION_FIELD_MANAGER not in (statuses.FIELD_MANAGER, statuses.REQUEUE_FIELD_MANAGER)
    cleared = statuses.preemption_status(WORKLOAD, preemptor, NOW, "InCohortReclamation")
    assert _by_type(cleared)["QuotaReserved"]["status"] == "False" and "admission" not in cleared["status"]


def test_admitting_an_evicted_workload_turns_evicted_and_preempted_false_as_kueue_does():
    from scheduler.core.workloads import Admission

    admission = Admission("cq", ())
    fresh = _by_type(statuses.admission_status(WORKLOAD, admission, NOW))
    assert list(fresh) == ["QuotaReserved", "Admitted"]
    again = _by_type(statuses.admission_status(dataclasses.replace(WORKLOAD, evicted=True, preempted=True), admission,
                                               NOW))
    assert {t: c["status"] for t, c in again.items()} == {
        "QuotaReserved": "True", "Admitted": "True", "Evicted": "False", "Preempted": "False"}
    # evicted for another cause (a PodsReady timeout): no Preempted condition to turn False, none added
    timed_out = _by_type(statuses.admission_status(dataclasses.replace(WORKLOAD, evicted=True), admission, NOW))
    assert {t: c["status"] for t, c in timed_out.items()} == {"QuotaReserved": "True", "Admitted": "True",
                                                               "Evicted": "False"}


def test_every_apply_of_the_main_manager_carries_the_false_evicted_and_preempted_conditions_as_they_are():
    from scheduler.core.conversion import WorkloadDecoder
    from scheduler.core.workloads import Admission

    previously = {"type": "Preempted", "status": "False", "reason": "QuotaReserved", "message": "Previously evicted",
                  "lastTransitionTime": EARLIER}
    timed_out = {"type": "Evicted", "status": "True", "reason": "PodsReadyTimeout", "message": "m",
                 "lastTransitionTime": EARLIER}
    obj = {"metadata": {"name": "w", "namespace": "ns", "creationTimestamp": EARLIER},
           "spec": {"queueName": "lq"}, "status": {"conditions": [previously, timed_out]}}
    workload = WorkloadDecoder().decode(obj)
    assert workload.evicted and not workload.preempted
    admitted = _by_type(statuses.admission_status(workload, Admission("cq", ()), NOW))
    assert admitted["Preempted"] == previously
    assert (admitted["Evicted"]["status"], admitted["Evicted"]["reason"]) == ("False", "QuotaReserved")
    for body in (statuses.eviction_status(workload, "ClusterQueueStopped", "m", [], NOW),
                 statuses.activation_status(workload, Change.MARK_EVICTED, [], NOW)):
        assert _by_type(body)["Preempted"] == previously
        assert _by_type(body)["Evicted"]["status"] == "True"
    assert "Preempted" not in _by_type(statuses.admission_status(WORKLOAD, Admission("cq", ()), NOW))
