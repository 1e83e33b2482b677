"""Lifecycle decisions read from Workloads and compared; when the next timed step is due; the tester's own
writes for a bare Workload (PodsReady, the release of an evicted one)."""

from __future__ import annotations

import calendar
import dataclasses
import time

import pytest
import yaml

from harness.agreeing import cases, comparing, decisions, driving, lifecycles, readying, rendering, timing
from harness.agreeing.decisions import Decisions

from .test_cases import MINIMAL

T0 = "2026-12-07T12:00:00Z"
T0_SECONDS = calendar.timegm(time.strptime(T0, "%Y-%m-%dT%H:%M:%SZ"))
SETTINGS = lifecycles.WaitForPodsReady(timeoutSeconds=5, backoffBaseSeconds=1, backoffMaxSeconds=2, backoffLimitCount=1)


def workload(name="w0", namespace="c001-ns-a", active=True, conditions=(), status=None, spec=None, annotations=None):
    """A Workload object: conditions as (type, status, reason) at T0."""
    meta = {"name": name, "namespace": namespace, **({"annotations": annotations} if annotations else {})}
    return {"metadata": meta, "spec": {"active": active, **(spec or {})},
            "status": {"conditions": [{"type": t, "status": s, "reason": r, "lastTransitionTime": T0}
                                      for t, s, r in conditions], **(status or {})}}


@pytest.mark.parametrize("obj, reason", [
    (workload(), None),
    (workload(active=False), ""),
    (workload(active=False, conditions=[("DeactivationTarget", "True", "RequeuingLimitExceeded")]),
     "RequeuingLimitExceeded"),
    (workload(active=False, conditions=[("DeactivationTarget", "True", "MaximumExecutionTimeExceeded"),
                                        ("Evicted", "True", "DeactivatedDueToMaximumExecutionTimeExceeded")]),
     "DeactivatedDueToMaximumExecutionTimeExceeded"),
    (workload(active=False, conditions=[("Evicted", "True", "Preempted")]), ""),
])
def test_a_deactivation_is_read_with_its_reason(obj, reason):
    assert decisions.deactivation_of(obj) == reason


def test_lifecycle_decisions_are_read_per_case_in_its_own_names():
    checked = workload("w1", status={"admissionChecks": [
        {"name": "c001-ac1", "state": "Ready"}, {"name": "c001-ac0", "state": "Pending", "retryCount": 1}]})
    requeued = workload("w2", status={"requeueState": {"count": 2, "requeueAt": T0}})
    other = workload("w9", namespace="c002-ns-a", active=False)
    got = decisions.lifecycle_by_case([workload(), workload("w3", active=False), checked, requeued, other], ["c001"])
    assert got == {"c001": ({"w3": ""}, {"w2": 2}, {"w1": (("ac0", "Pending", 1), ("ac1", "Ready", 0))})}


def test_lifecycle_decisions_survive_their_json_form_and_old_runs_lack_them():
    point = Decisions(deactivated={"w0": "DeactivatedDueToAdmissionCheck"}, requeues={"w1": 1},
                      checks={"w2": (("ac0", "Ready", 0),)})
    assert decisions.from_json(dataclasses.asdict(point)) == point
    old = {k: v for k, v in dataclasses.asdict(Decisions()).items() if k not in ("deactivated", "requeues", "checks")}
    assert decisions.from_json(old) == Decisions()


def test_lifecycle_decisions_count_only_where_either_side_marked_a_workload():
    case = cases.parse(yaml.safe_load(MINIMAL))
    a = Decisions(deactivated={"w0": "DeactivatedDueToRequeuingLimitExceeded"}, requeues={"w0": 2})
    b = Decisions(deactivated={"w0": "DeactivatedDueToRequeuingLimitExceeded"}, requeues={"w0": 1},
                  checks={"w0": (("ac0", "Pending", 1),)})
    result = comparing.compare(case, [a], [b])
    # w0's admission (nowhere on both), its deactivation, its requeue count, its checks.
    assert (result.decisions, result.agreeing) == (4, 2)
    assert sorted(d.klass for d in result.differences) == ["checks: only b", "requeue: different"]
    assert all(k in comparing.DECISION_KINDS for k in ("deactivation", "requeue", "checks"))
    plain = comparing.compare(case, [Decisions()], [Decisions()])
    assert plain.decisions == 1, "no lifecycle mark on either side: no lifecycle decision"


def _due(obj, settings=None, now=T0_SECONDS - 1):
    return timing.next_due([obj], {"c001": settings}, now, 120)


@pytest.mark.parametrize("obj, settings, after", [
    (workload(spec={"maximumExecutionTimeSeconds": 4}, conditions=[("Admitted", "True", "Admitted")]), None, 4),
    (workload(spec={"maximumExecutionTimeSeconds": 4}, conditions=[("Admitted", "True", "Admitted")],
              status={"accumulatedPastExecutionTimeSeconds": 3}), None, 1),
    (workload(conditions=[("Admitted", "True", "Admitted")]), SETTINGS, 5),
    (workload(conditions=[("Admitted", "True", "Admitted"), ("PodsReady", "True", "Started")]), SETTINGS, None),
    (workload(conditions=[("Admitted", "True", "Admitted"), ("Evicted", "True", "Preempted")]), SETTINGS, None),
    (workload(status={"requeueState": {"count": 1, "requeueAt": "2026-12-07T12:00:02Z"}}), SETTINGS, 2),
    (workload(status={"admissionChecks": [{"name": "c001-ac0", "state": "Retry", "requeueAfterSeconds": 3,
                                           "lastTransitionTime": T0}]}), None, 3),
    (workload(conditions=[("QuotaReserved", "True", "QuotaReserved")], annotations={
        "kqbench.io/check-rule": "ready-after=2s"}, status={"admissionChecks": [{"name": "c001-ac0", "state": "Pending"}]}),
     None, 2),
    (workload(active=False, spec={"maximumExecutionTimeSeconds": 4}, conditions=[("Admitted", "True", "Admitted")]),
     None, None),
    (workload(namespace="c002-ns-a", spec={"maximumExecutionTimeSeconds": 4},
              conditions=[("Admitted", "True", "Admitted")]), None, None),
])
def test_the_next_timed_step_comes_from_the_objects_times(obj, settings, after):
    assert _due(obj, settings) == (None if after is None else T0_SECONDS + after)


def test_steps_past_or_beyond_the_horizon_are_not_waited_for():
    limited = workload(spec={"maximumExecutionTimeSeconds": 4}, conditions=[("Admitted", "True", "Admitted")])
    assert _due(limited, now=T0_SECONDS + 4) is None
    assert timing.next_due([limited], {"c001": None}, T0_SECONDS - 10, 5) is None


@pytest.mark.parametrize("obj, awaits", [
    (workload(conditions=[("QuotaReserved", "True", "QuotaReserved")],
              status={"admissionChecks": [{"name": "c001-ac0", "state": "Pending"}]}), True),
    (workload(conditions=[("QuotaReserved", "True", "QuotaReserved")],
              status={"admissionChecks": [{"name": "c001-ac0", "state": "Ready"}]}), False),
    (workload(status={"admissionChecks": [{"name": "c001-ac0", "state": "Pending"}]}), False),  # no quota yet
    (workload(conditions=[("QuotaReserved", "True", "QuotaReserved"), ("Evicted", "True", "AdmissionCheck")],
              status={"admissionChecks": [{"name": "c001-ac0", "state": "Pending"}]}), False),  # on its way out
    (workload(active=False, conditions=[("QuotaReserved", "True", "QuotaReserved")],
              status={"admissionChecks": [{"name": "c001-ac0", "state": "Pending"}]}), False),
])
def test_a_check_awaits_its_verdict_only_on_a_workload_holding_quota(obj, awaits):
    assert timing.awaits_check(obj) is awaits


def test_lifecycle_evictions_are_counted_from_a_time_and_preemptions_left_out():
    objs = [workload("a", conditions=[("Evicted", "True", "PodsReadyTimeout")]),
            workload("b", conditions=[("Evicted", "True", "Preempted")]),
            workload("c", conditions=[("Evicted", "False", "QuotaReserved")]),
            workload("d", conditions=[("Evicted", "True", "DeactivatedDueToMaximumExecutionTimeExceeded")])]
    found = timing.lifecycle_evictions_since(objs, T0_SECONDS + 0.4)  # whole seconds: T0 counts
    assert found == {"PodsReadyTimeout": [0], "DeactivatedDueToMaximumExecutionTimeExceeded": [0]}
    assert timing.lifecycle_evictions_since(objs, T0_SECONDS + 1) == {}
    assert timing.describe_early(found) == ("2 (DeactivatedDueToMaximumExecutionTimeExceeded 1, PodsReadyTimeout 1, "
                                            "0-0 s after the opening)")


def test_readying_marks_only_admitted_marked_workloads_not_yet_ready():
    marked = {rendering.PODS_READY_ANNOTATION: "true"}
    assert readying.due_ready(workload(annotations=marked, conditions=[("Admitted", "True", "Admitted")]))
    assert not readying.due_ready(workload(conditions=[("Admitted", "True", "Admitted")]))
    assert not readying.due_ready(workload(annotations=marked, conditions=[("QuotaReserved", "True", "QuotaReserved")]))
    assert not readying.due_ready(workload(annotations=marked, conditions=[
        ("Admitted", "True", "Admitted"), ("PodsReady", "True", "Started")]))
    assert not readying.due_ready(workload(annotations=marked, conditions=[
        ("Admitted", "True", "Admitted"), ("Evicted", "True", "Preempted")]))
    body = readying.pods_ready_apply("ns", "w0", T0_SECONDS)
    assert body["status"]["conditions"] == [{"type": "PodsReady", "status": "True", "reason": "Started",
                                             "message": "All pods reached readiness and the workload is running",
                                             "lastTransitionTime": T0}]


def _conditions(body: dict) -> dict[str, tuple]:
    return {c["type"]: (c["status"], c["reason"]) for c in body["status"]["conditions"]}


def test_a_release_writes_requeued_false_and_the_admitted_seconds_as_kueues_job_reconciler():
    timed_out = workload(conditions=[("QuotaReserved", "True", "QuotaReserved"), ("Admitted", "True", "Admitted"),
                                     ("Evicted", "True", "PodsReadyTimeout")],
                         status={"admission": {"clusterQueue": "c001-cq0"}, "accumulatedPastExecutionTimeSeconds": 2})
    body = driving.release_body(timed_out, T0_SECONDS + 7.9)
    assert _conditions(body) == {"QuotaReserved": ("False", "Pending"), "Admitted": ("False", "NoReservation"),
                                 "Evicted": ("True", "PodsReadyTimeout"), "Requeued": ("False", "PodsReadyTimeout")}
    assert body["status"]["admission"] is None and body["status"]["accumulatedPastExecutionTimeSeconds"] == 9
    preempted = workload(conditions=[("QuotaReserved", "True", "QuotaReserved"), ("Evicted", "True", "Preempted")])
    assert "Requeued" not in _conditions(driving.release_body(preempted, T0_SECONDS + 1))
    assert "accumulatedPastExecutionTimeSeconds" not in driving.release_body(preempted, T0_SECONDS + 1)["status"]
