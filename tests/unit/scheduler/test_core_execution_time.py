"""spec.maximumExecutionTimeSeconds: the deadline, the accumulated time, and the deactivation it leads to
(Kueue v0.17.0 and v0.19.2 alike: pkg/controller/core/workload_controller.go reconcileMaxExecutionTime,
pkg/workload/admissionchecks.go SyncAdmittedCondition)."""

import dataclasses

import pytest

from scheduler.core import activation, conversion, executiontime
from scheduler.core.activation import Change
from scheduler.core.scheduling import run_cycle
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, admit, manager_with

EXCEEDED = (executiontime.EXCEEDED, executiontime.EXCEEDED_MESSAGE)


def _admitted(max_seconds=15, accumulated=None, admitted_at=100.0, **fields):
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
    admit(manager, WorkloadBuilder("w").obj(), "cq")
    workload = manager.workload(("ns", "w"))
    return dataclasses.replace(workload, admitted_at=admitted_at, max_execution_seconds=max_seconds,
                               accumulated_execution_seconds=accumulated, **fields)


@pytest.mark.parametrize("max_seconds, accumulated, expected", [
    (15, None, 115.0),  # admitted at 100 with the whole limit left
    (15, 0, 115.0),
    (15, 6, 109.0),  # 6 s used in earlier admissions: 9 s left
    (15, 20, 95.0),  # used up before this admission: due at once (remaining <= 0)
    (0, None, None),  # no limit
])
def test_deadline_counts_from_the_admission_less_the_accumulated_time(max_seconds, accumulated, expected):
    assert executiontime.deadline(_admitted(max_seconds, accumulated)) == expected


def test_no_deadline_without_an_admission_or_once_finished():
    assert executiontime.deadline(WorkloadBuilder("w").obj()) is None  # pending
    assert executiontime.deadline(_admitted(finished=True)) is None


@pytest.mark.parametrize("now, target, expected", [
    (114.999, None, False),  # remainingTime > 0: wait
    (115.0, None, True),  # remainingTime == 0 is exceeded
    (200.0, None, True),
    (200.0, EXCEEDED, False),  # already targeted: written once
])
def test_exceeded_at_the_deadline_and_only_once(now, target, expected):
    assert executiontime.exceeded(_admitted(deactivation_target=target), now) is expected


@pytest.mark.parametrize("accumulated, now, expected", [
    (None, 107.9, 7),  # whole seconds, truncated as Go's int32(d.Seconds())
    (None, 100.4, 0),  # written as 0, no longer absent
    (6, 109.0, 15),  # added to what earlier admissions used
])
def test_releasing_the_admission_adds_the_seconds_it_was_admitted(accumulated, now, expected):
    assert executiontime.accumulated_after_release(_admitted(accumulated=accumulated), now) == expected


def test_a_pending_workload_keeps_its_accumulated_time():
    pending = dataclasses.replace(WorkloadBuilder("w").obj(), accumulated_execution_seconds=4)
    assert executiontime.accumulated_after_release(pending, 500.0) == 4


def test_an_active_target_is_deactivated_before_all_else_and_evicted_with_the_cause():
    targeted = _admitted(deactivation_target=EXCEEDED)
    assert activation.change_for(targeted) is Change.DEACTIVATE
    stopped = dataclasses.replace(targeted, active=False)
    assert activation.change_for(stopped) is Change.EVICT_ADMITTED
    assert activation.eviction_reason(stopped) == (
        "DeactivatedDueToMaximumExecutionTimeExceeded",
        "The workload is deactivated due to exceeding the maximum execution time")
    assert activation.eviction_reason(dataclasses.replace(stopped, deactivation_target=None)) == (
        "Deactivated", "The workload is deactivated")
    assert executiontime.kept_after_eviction(stopped)
    assert not executiontime.kept_after_eviction(dataclasses.replace(stopped, deactivation_target=("Other", "m")))


def test_the_deactivation_releases_the_quota_and_the_next_workload_is_admitted():
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "2"})).obj())
    admit(manager, WorkloadBuilder("limited").request(cpu="2").obj(), "cq")
    manager.add_workload(WorkloadBuilder("next").created(2000).request(cpu="2").obj())
    assert [type(d).__name__ for d in run_cycle(manager, now=10)] == ["Park"]
    limited = manager.workload(("ns", "limited"))
    manager.update_workload(dataclasses.replace(limited, max_execution_seconds=5, deactivation_target=EXCEEDED))
    assert manager.cache.admitted(("ns", "limited")) is not None, "targeted, still active: it holds its quota"
    manager.update_workload(dataclasses.replace(limited, active=False, deactivation_target=EXCEEDED))
    assert manager.cache.admitted(("ns", "limited")) is None
    assert [(type(d).__name__, d.workload.name) for d in run_cycle(manager, now=11)] == [("Admit", "next")]


def test_a_workload_requeued_false_for_an_exceeded_limit_is_held():
    """Kueue marks Requeued=True (Reactivated) only for reason Deactivated; one DeactivatedDueTo... stays held."""
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
    held = dataclasses.replace(WorkloadBuilder("w").obj(),
                               requeue_held_by="DeactivatedDueToMaximumExecutionTimeExceeded")
    assert held.requeue_held
    manager.add_workload(held)
    assert run_cycle(manager, now=1) == []
    assert activation.change_for(held) is None, "no Reactivated for a caused deactivation"


def _workload_dict(spec=None, status=None):
    return {"metadata": {"name": "w", "namespace": "ns", "uid": "u", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"queueName": "lq", "podSets": [], **(spec or {})}, "status": status or {}}


def test_decoding_reads_the_limit_the_accumulated_time_and_a_deactivation_target():
    plain = conversion.workload_from_dict(_workload_dict())
    assert (plain.max_execution_seconds, plain.accumulated_execution_seconds, plain.deactivation_target) == (
        0, None, None)
    decoded = conversion.workload_from_dict(_workload_dict(
        {"maximumExecutionTimeSeconds": 15},
        {"accumulatedPastExecutionTimeSeconds": 0, "conditions": [
            {"type": "DeactivationTarget", "status": "True", "reason": "MaximumExecutionTimeExceeded",
             "message": "exceeding the maximum execution time"}]}))
    assert decoded.max_execution_seconds == 15
    assert decoded.accumulated_execution_seconds == 0, "0 is written, not absent"
    assert decoded.deactivation_target == EXCEEDED
