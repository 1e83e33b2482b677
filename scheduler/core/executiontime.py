"""``spec.maximumExecutionTimeSeconds``: when an admitted Workload is due for deactivation (Kueue's semantics).

Kueue v0.17.0 and v0.19.2 decide alike (pkg/controller/core/workload_controller.go
``reconcileMaxExecutionTime`` and the two branches on ``spec.active`` in ``Reconcile``;
pkg/workload/admissionchecks.go ``SyncAdmittedCondition``):

- an admitted Workload with a limit may stay admitted ``maximumExecutionTimeSeconds -
  accumulatedPastExecutionTimeSeconds`` seconds from its Admitted condition's lastTransitionTime; once
  none remain (``remainingTime > 0`` is false) it gets ``DeactivationTarget=True`` (reason
  ``MaximumExecutionTimeExceeded``, message "exceeding the maximum execution time") and its accumulated
  time is cleared, in one write;
- an active Workload with ``DeactivationTarget=True`` is set ``spec.active: false``;
- the deactivation evicts it as a stop does (scheduler.core.activation), with the cause in the reason and
  message: ``DeactivatedDueToMaximumExecutionTimeExceeded``, "The workload is deactivated due to exceeding
  the maximum execution time";
- whenever Admitted turns False (the admission is released), the whole seconds it was True (Go's
  ``int32(d.Seconds())``: truncated) are added to the accumulated time, so a Workload admitted again
  runs only the rest.

Pure: decides from a decoded Workload and a time; the controller keeps the timers and writes.
"""

from __future__ import annotations

from scheduler.core.workloads import Workload

DEACTIVATION_TARGET = "DeactivationTarget"
EXCEEDED = "MaximumExecutionTimeExceeded"
"""kueue.WorkloadMaximumExecutionTimeExceeded (apis/kueue/v1beta2/workload_types.go)."""
EXCEEDED_MESSAGE = "exceeding the maximum execution time"


def deadline(workload: Workload) -> float | None:
    """When an admitted Workload's execution time runs out (POSIX seconds); None without a limit or while not
    Admitted (with admission checks, Admitted comes after the reservation: the time counts from it)."""
    since = workload.admitted_since
    if not workload.max_execution_seconds or since is None or workload.finished:
        return None
    left = workload.max_execution_seconds - (workload.accumulated_execution_seconds or 0)
    return since + left


def exceeded(workload: Workload, now: float) -> bool:
    """Due now for ``DeactivationTarget=True``: past its deadline and not already targeted."""
    due = deadline(workload)
    return due is not None and now >= due and workload.deactivation_target is None


def accumulated_after_release(workload: Workload, now: float) -> int | None:
    """status.accumulatedPastExecutionTimeSeconds once its admission is released at ``now`` (None: stays absent)."""
    since = workload.admitted_since
    if since is None:  # never turned Admitted (checks pending): SyncAdmittedCondition adds nothing
        return workload.accumulated_execution_seconds
    return (workload.accumulated_execution_seconds or 0) + int(now - since)


def kept_after_eviction(workload: Workload) -> bool:
    """Whether the DeactivationTarget condition is still there once the deactivation evicted the Workload.

    Kueue's eviction removes it, but its next pass over a Workload still admitted past the limit sets it
    again (reconcileMaxExecutionTime): a bare Workload keeps its admission for good, a Job's until its
    reconciler releases it. The reference scheduler releases the admission in the eviction write, so it
    keeps the condition there, as Kueue ends up with it.
    """
    target = workload.deactivation_target
    return target is not None and target[0] == EXCEEDED
