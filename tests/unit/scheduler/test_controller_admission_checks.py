"""The admission checks' writes at the controller's edge (scheduler.controller.admissionchecking.plan), in Kueue's
Reconcile order, from Workload objects as the API shows them, and the statuses the reservation and a release
write with checks (scheduler.controller.statuses)."""

import dataclasses

import pytest

from scheduler.controller import admissionchecking, statuses
from scheduler.core import conversion
from scheduler.core.kinds import AdmissionCheckStrategyRule
from scheduler_builders import ClusterQueueBuilder

NOW = 1_735_732_800.0
CQ = dataclasses.replace(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj(),
                         admission_checks=(AdmissionCheckStrategyRule("check"),))
ADMISSION = {"clusterQueue": "cq", "podSetAssignments": [{"name": "main", "flavors": {"cpu": "default"},
                                                          "resourceUsage": {"cpu": "1"}, "count": 1}]}


def _at(seconds):
    return statuses.rfc3339(seconds)


def _state(state, since=NOW - 10, retries=None, after=None):
    entry = {"name": "check", "state": state, "message": "", "lastTransitionTime": _at(since)}
    if retries is not None:
        entry["retryCount"] = retries
    if after is not None:
        entry["requeueAfterSeconds"] = after
    return entry


def _obj(checks=(), reserved=None, admitted=None, evicted=None, requeue_at=None, active=True, target=None,
         requeued=None):
    conditions = []
    for kind, value in (("QuotaReserved", reserved), ("Admitted", admitted), ("Evicted", evicted),
                        ("DeactivationTarget", target), ("Requeued", requeued)):
        if value is not None:
            status, reason = value
            conditions.append({"type": kind, "status": status, "reason": reason, "message": "",
                               "lastTransitionTime": _at(NOW - 20)})
    status = {"conditions": conditions, "admissionChecks": list(checks)}
    if reserved is not None and reserved[0] == "True":
        status["admission"] = ADMISSION
    if requeue_at is not None:
        status["requeueState"] = {"requeueAt": _at(requeue_at)}
    return {"metadata": {"name": "w", "namespace": "ns", "resourceVersion": "7", "creationTimestamp": _at(NOW - 100)},
            "spec": {"queueName": "lq", "active": active, "podSets": [{"name": "main", "count": 1, "template": {
                "spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}}}]},
            "status": status}


def _plan(obj, cq=CQ, now=NOW):
    return admissionchecking.plan(conversion.workload_from_dict(obj), obj, cq, now)


def _status(write):
    return write.body["status"]


def test_a_pending_workload_gets_its_checks_pending_and_no_admitted_condition():
    write, later = _plan(_obj())
    assert later is None and _status(write)["admissionChecks"] == [
        {"name": "check", "state": "Pending", "message": "", "lastTransitionTime": _at(NOW)}]
    assert write.body["metadata"] == {"resourceVersion": "7"}
    assert _plan(_obj(checks=[_state("Pending")])) == (None, None)  # synced; Admitted written only on a flip


def test_admitted_once_quota_is_reserved_and_every_check_is_ready():
    waiting = _obj(checks=[_state("Pending")], reserved=("True", "QuotaReserved"))
    assert _plan(waiting) == (None, None)  # no flip, no Admitted condition
    ready = _obj(checks=[_state("Ready")], reserved=("True", "QuotaReserved"))
    write, _ = _plan(ready)
    admitted = next(c for c in _status(write)["conditions"] if c["type"] == "Admitted")
    assert (admitted["status"], admitted["reason"], admitted["lastTransitionTime"]) == ("True", "Admitted", _at(NOW))
    assert {c["type"] for c in _status(write)["conditions"]} == {"QuotaReserved", "Admitted"}  # the list, whole


def test_a_release_writes_admitted_false_only_where_it_flips():
    admitted = conversion.workload_from_dict(_obj(checks=[_state("Ready")], reserved=("True", "QuotaReserved"),
                                                  admitted=("True", "Admitted")))
    assert statuses.admitted_after_release(admitted, NOW)["reason"] == "NoReservationUnsatisfiedChecks"
    never = conversion.workload_from_dict(_obj(checks=[_state("Retry")], reserved=("True", "QuotaReserved")))
    assert statuses.admitted_after_release(never, NOW) is None
    plain = conversion.workload_from_dict(_obj(reserved=("True", "QuotaReserved"), admitted=("True", "Admitted")))
    assert statuses.admitted_after_release(plain, NOW)["reason"] == "NoReservation"


def test_a_retry_with_a_backoff_first_sets_requeue_at_then_waits_then_evicts_and_releases():
    retry = [_state("Retry", since=NOW - 1, after=3)]
    held = dict(reserved=("True", "QuotaReserved"))
    write, _ = _plan(_obj(checks=retry, **held))
    assert _status(write) == {"requeueState": {"requeueAt": _at(NOW + 2)}}
    assert _plan(_obj(checks=retry, requeue_at=NOW + 2, **held)) == (None, NOW + 2)
    write, _ = _plan(_obj(checks=retry, requeue_at=NOW + 2, **held), now=NOW + 2)
    status = _status(write)
    assert write.evicted_from == "cq" and status["admission"] is None
    conditions = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    # never Admitted, so no Admitted condition after the release either
    assert conditions == {"QuotaReserved": ("False", "Pending"), "Evicted": ("True", "AdmissionCheck"),
                          "Requeued": ("False", "AdmissionCheck")}
    assert status["admissionChecks"] == [{
        "name": "check", "state": "Pending", "message": "Reset to Pending after eviction. Previously: Retry",
        "lastTransitionTime": _at(NOW + 2), "requeueAfterSeconds": 3, "retryCount": 1}]


def test_a_retry_eviction_holding_evicted_quota_leaves_the_reservation_as_kueues_evict_does():
    """Kueue's Evict writes Evicted and resets the checks; the admission stays until the job is stopped."""
    obj = _obj(checks=[_state("Retry", since=NOW - 1)], reserved=("True", "QuotaReserved"),
               admitted=("True", "Admitted"))
    write, _ = admissionchecking.plan(conversion.workload_from_dict(obj), obj, CQ, NOW, hold_evicted_quota=True)
    status = _status(write)
    assert "admission" not in status and statuses.ACCUMULATED not in status
    conditions = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert conditions == {"QuotaReserved": ("True", "QuotaReserved"), "Admitted": ("True", "Admitted"),
                          "Evicted": ("True", "AdmissionCheck")}
    assert [c["state"] for c in status["admissionChecks"]] == ["Pending"]
    evicted = {**obj, "status": {**obj["status"], "conditions": status["conditions"],
                                 "admissionChecks": status["admissionChecks"]}}
    # evicted and holding: nothing more to write until someone releases it
    assert admissionchecking.plan(conversion.workload_from_dict(evicted), evicted, CQ, NOW + 1,
                                  hold_evicted_quota=True) == (None, None)


def test_a_rejected_check_sets_the_deactivation_target_then_the_eviction_leaves_it_to_be_tidied():
    write, _ = _plan(_obj(checks=[_state("Rejected")], reserved=("True", "QuotaReserved")))
    target = next(c for c in _status(write)["conditions"] if c["type"] == "DeactivationTarget")
    assert (target["status"], target["reason"], target["message"]) == (
        "True", "AdmissionCheck", 'AdmissionCheck in Rejected state: "check"')
    # deactivated and evicted by scheduler.core.activation: the target goes and the check resets, in one write
    evicted = _obj(checks=[_state("Rejected")], active=False, target=("True", "AdmissionCheck"),
                   evicted=("True", "DeactivatedDueToAdmissionCheck"), reserved=("False", "Pending"))
    write, _ = _plan(evicted)
    assert [c["type"] for c in _status(write)["conditions"]] == ["QuotaReserved", "Evicted"]
    assert _status(write)["admissionChecks"][0]["state"] == "Pending"


def test_a_workload_in_its_backoff_is_left_to_the_backoff_and_one_outside_checks_to_nobody():
    held = _obj(checks=[_state("Pending", retries=1)], requeued=("False", "AdmissionCheck"), evicted=("True", "AdmissionCheck"))
    assert _plan(held) == (None, None)  # scheduler.controller.podsreadiness writes BackoffFinished
    checking = admissionchecking.AdmissionChecking(lambda workload: None)
    plain = _obj()
    assert not checking.observe(conversion.workload_from_dict(plain), plain, NOW)
    assert checking.next_due() is None


@pytest.mark.parametrize("states, required, admitted", [
    ((), frozenset(), ("True", "Admitted")),  # no checks: Admitted in the reservation's own write
    # checks pending: none either (without UnadmittedWorkloadsObservability Admitted is written only on a flip)
    ([_state("Pending")], frozenset({"check"}), None),
    ([_state("Ready")], frozenset({"check"}), ("True", "Admitted")),
    ((), frozenset({"check"}), None),  # its checks not yet written: none (the workload controller syncs it later)
])
def test_the_reservation_writes_admitted_as_kueues_scheduler_does(states, required, admitted):
    workload = conversion.workload_from_dict(_obj(checks=states))
    body = statuses.admission_status(workload, conversion.WorkloadDecoder()._admission(ADMISSION), NOW,
                                     required_checks=required)
    found = [(c["status"], c["reason"]) for c in body["status"]["conditions"] if c["type"] == "Admitted"]
    assert found == ([admitted] if admitted else [])
