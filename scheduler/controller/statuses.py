"""Status bodies the controller writes for admissions, evictions, activation changes and queue status (pure).

Every body is a server-side apply configuration for the status subresource under the
controller's field manager (but for the two merge patches of an exceeded execution time): what it
lists is what the scheduler owns afterwards, and a field it owned but leaves out is removed (that
is how an eviction clears ``status.admission``). Hence two applies of one Workload under one
manager must not race: the last would undo the other; and every apply under the main manager carries the
conditions it wrote before and still stand (``cleared``): one left out loses what the manager wrote of it, and
a condition left without ``status`` is refused.
Conditions keep their ``lastTransitionTime`` while their status stays the same, as
``meta.SetStatusCondition`` does in Kueue.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from scheduler.api import groups
from scheduler.core import activation, admissionchecks, conversion, executiontime, queuestatus
from scheduler.core.quantities import format_quantity
from scheduler.core.workloads import Admission, AdmittedCondition, Workload

GROUP_VERSION = groups.API_VERSION
FIELD_MANAGER = "kqbench-scheduler"
REQUEUE_FIELD_MANAGER = "kqbench-scheduler-requeue"
PENDING_FIELD_MANAGER = "kqbench-scheduler-pending"
EVICTION_FIELD_MANAGER = "kqbench-scheduler-eviction"
"""Owns only the Evicted and Preempted conditions of an eviction that leaves the quota held: applied under
the main manager, that body would remove the admission and the QuotaReserved condition the main one owns."""
"""Owns only the QuotaReserved=False condition of a workload turned away: applied under the main
manager, that one-condition body would remove the other conditions the main manager owns."""
ACCUMULATED = "accumulatedPastExecutionTimeSeconds"


@dataclass(frozen=True, slots=True)
class Write:
    """A status write a due timer calls for (waitForPodsReady, admission checks); ``evicted_from``: the
    ClusterQueue an eviction leaves."""

    body: dict
    evicted_from: str | None = None


def rfc3339(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def condition(kind: str, status: bool, reason: str, message: str, now: float) -> dict:
    return {"type": kind, "status": "True" if status else "False", "reason": reason, "message": message,
            "lastTransitionTime": rfc3339(now)}


def keep_transition(new: dict, previous: list[dict] | None) -> dict:
    """``new`` with the previous condition's lastTransitionTime when its status did not change."""
    for old in previous or ():
        if old.get("type") == new["type"]:
            if old.get("status") == new["status"] and old.get("lastTransitionTime"):
                return {**new, "lastTransitionTime": old["lastTransitionTime"]}
            break
    return new


def conditions_of(obj: dict) -> list[dict]:
    return (obj.get("status") or {}).get("conditions") or []


def merged(previous: list[dict], changed: list[dict]) -> list[dict]:
    """The whole conditions list with ``changed`` put in by type, each keeping its lastTransitionTime while its
    status stays (what a JSON merge patch of the conditions must carry: it replaces the list)."""
    by_type = {c["type"]: keep_transition(c, previous) for c in changed}
    out = [by_type.pop(c.get("type"), c) for c in previous]
    return out + list(by_type.values())


def admitted(condition_: AdmittedCondition) -> dict:
    """An Admitted condition as the API holds it."""
    return condition("Admitted", condition_.status, condition_.reason, condition_.message, condition_.last_transition)


def admitted_after_release(workload: Workload, now: float) -> dict | None:
    """The Admitted condition once the reservation is released at ``now`` (None: the Workload has none).

    Without admission checks, False with NoReservation. With them, as Kueue's SyncAdmittedCondition leaves it
    after the eviction reset every check to Pending: NoReservationUnsatisfiedChecks if it was Admitted, else
    unchanged (a Workload never admitted keeps UnsatisfiedChecks: the condition is written only on a flip)."""
    if not workload.admission_checks:
        return condition("Admitted", False, "NoReservation", "The workload has no reservation", now)
    states = admissionchecks.reset_on_eviction(workload.admission_checks, now)
    synced = admissionchecks.sync_admitted(False, states, workload.admitted_condition, now)
    return admitted(synced.condition) if synced.condition is not None else None


def cleared(workload: Workload, but: str = "") -> list[dict]:
    """The Workload's False Evicted and Preempted conditions as they are (but ``but``): an apply under the main
    manager must carry them, or it strips the fields it wrote and leaves a condition the API refuses."""
    return [condition(c.kind, False, c.reason, c.message, c.last_transition) for c in workload.cleared
            if c.kind != but]


def _workload_body(workload: Workload, status: dict) -> dict:
    return {"apiVersion": GROUP_VERSION, "kind": "Workload",
            "metadata": {"name": workload.name, "namespace": workload.namespace}, "status": status}


def with_accumulated(status: dict, seconds: int | None) -> dict:
    """``status`` carrying accumulatedPastExecutionTimeSeconds when there is one: every apply under the main
    manager must, or it removes the value an earlier one wrote."""
    if seconds is not None:
        status[ACCUMULATED] = seconds
    return status


def eviction_status(workload: Workload, reason: str, message: str, previous: list[dict], now: float) -> dict:
    """Evicted with ``reason`` and the quota reservation cleared in the same write, as the job
    reconciler would (a bare Workload has none): omitting status.admission removes it under apply.
    The seconds it was admitted are added to its accumulated execution time (Kueue's SyncAdmittedCondition
    as Admitted turns False); a DeactivationTarget for an exceeded limit stays (executiontime)."""
    after = admitted_after_release(workload, now)
    conditions = [
        condition("Evicted", True, reason, message, now),
        condition("QuotaReserved", False, "Pending", message, now),
        *([after] if after is not None else []),
        condition("Requeued", False, reason, message, now),
        *cleared(workload, but="Evicted"),
    ]
    if executiontime.kept_after_eviction(workload):
        conditions.append(deactivation_target(workload.deactivation_target, now))  # type: ignore[arg-type]
    status = {"conditions": [keep_transition(c, previous) for c in conditions]}
    return _workload_body(workload, with_accumulated(status, executiontime.accumulated_after_release(workload, now)))


def deactivation_target(target: tuple[str, str], now: float) -> dict:
    """DeactivationTarget=True with (reason, message), as pkg/workload SetDeactivationTarget writes it."""
    return condition(executiontime.DEACTIVATION_TARGET, True, target[0], target[1], now)


def exceeded_status(previous: list[dict], resource_version: str, now: float) -> dict:
    """A JSON merge patch of the status: DeactivationTarget=True (MaximumExecutionTimeExceeded) added to the
    conditions and the accumulated execution time removed, in one write, as reconcileMaxExecutionTime does.
    A merge patch because apply cannot remove a field another manager owns; only onto ``resource_version``
    (the conditions list is replaced whole, so a change since must not be overwritten)."""
    target = deactivation_target((executiontime.EXCEEDED, executiontime.EXCEEDED_MESSAGE), now)
    conditions = [c for c in previous if c.get("type") != executiontime.DEACTIVATION_TARGET] + [target]
    return {"metadata": {"resourceVersion": resource_version},
            "status": {"conditions": conditions, ACCUMULATED: None}}


def deactivation_spec(resource_version: str) -> dict:
    """A JSON merge patch of the Workload (not its status) setting spec.active to false, onto
    ``resource_version`` as Kueue's Update of the object it read."""
    return {"metadata": {"resourceVersion": resource_version}, "spec": {"active": False}}


def admitted_at_reservation(workload: Workload, required_checks: frozenset[str], now: float) -> dict | None:
    """The Admitted condition the reservation's write carries (None: none): True at once without admission
    checks; with them as Kueue's scheduler syncs it (admissionchecks.admitted_at_reservation), the states
    read as reset to Pending if the Workload is still marked Evicted (the reset of its eviction)."""
    states = workload.admission_checks
    if not states and not required_checks:
        return condition("Admitted", True, "Admitted", "The workload is admitted", now)
    if workload.evicted:
        states = admissionchecks.reset_on_eviction(states, now)
    synced = admissionchecks.admitted_at_reservation(states, required_checks, workload.admitted_condition, now,
                                                     workload.accumulated_execution_seconds)
    kept = synced.condition if synced is not None else workload.admitted_condition
    return admitted(kept) if kept is not None else None


def admission_status(workload: Workload, admission: Admission, now: float, hostname_prefix_runs: bool = False,
                     required_checks: frozenset[str] = frozenset()) -> dict:
    """The apply configuration that admits a workload; an Evicted one is no longer (Kueue's
    SetQuotaReservation turns Evicted and Preempted False). ``hostname_prefix_runs``: the topology
    assignment in Kueue v0.19's encoding (topologyconversion.assignment_to_dict). ``required_checks``: the
    admission checks this admission needs (admissionchecks.checks_for_admission): with any, Admitted waits."""
    cq = admission.cluster_queue
    admitted_now = admitted_at_reservation(workload, required_checks, now)
    conditions = [
        condition("QuotaReserved", True, "QuotaReserved", f"Quota reserved in ClusterQueue {cq}", now),
        *([admitted_now] if admitted_now is not None else []),
    ]
    # SetQuotaReservation turns False only the ones that are True (pkg/workload resetActiveCondition)
    conditions += [condition(kind, False, "QuotaReserved", "Previously evicted", now)
                   for kind, true in (("Evicted", workload.evicted), ("Preempted", workload.preempted)) if true]
    conditions += cleared(workload)
    status = {"admission": conversion.admission_to_dict(admission, hostname_prefix_runs), "conditions": conditions}
    return _workload_body(workload, with_accumulated(status, workload.accumulated_execution_seconds))


def preemption_status(workload: Workload, preemptor: Workload, now: float, reason: str = "InClusterQueue",
                      hold: bool = False) -> dict:
    """The apply configuration that evicts a workload; omitting admission removes it (we owned it).
    ``reason``: why it was chosen (Kueue's Preempted condition reasons: InClusterQueue, InCohortReclamation, ...).
    ``hold``: Evicted and Preempted only, applied under ``EVICTION_FIELD_MANAGER``: the quota stays held.
    Otherwise the seconds it was admitted are added to its accumulated execution time, as Admitted turns False."""
    message = f"Preempted to accommodate {preemptor.namespace}/{preemptor.name}"
    conditions = [condition("Evicted", True, "Preempted", message, now),
                  condition("Preempted", True, reason, message, now)]
    status: dict = {"conditions": conditions}
    if not hold:
        status["conditions"] = [condition("QuotaReserved", False, "Preempted", message, now),
                                condition("Admitted", False, "Preempted", message, now), *conditions]
        with_accumulated(status, executiontime.accumulated_after_release(workload, now))
    return _workload_body(workload, status)


def requeued_status(workload: Workload, reason: str, message: str, now: float) -> dict:
    """Requeued=True only. Applied under its own field manager (``REQUEUE_FIELD_MANAGER``) so that it
    can neither undo nor be undone by an admission written meanwhile under the main one."""
    return _workload_body(workload, {"conditions": [condition("Requeued", True, reason, message, now)]})


def pending_status(workload: Workload, message: str, previous: list[dict], resource_version: str,
                   now: float) -> dict:
    """QuotaReserved=False with reason Pending and why, as Kueue's scheduler writes for a head it turns
    away (pkg/scheduler/scheduler.go requeueAndUpdate, workload.UnsetQuotaReservationWithCondition).
    Only onto ``resource_version``, the object the decision saw: an admission written since must stay."""
    reserved = keep_transition(condition("QuotaReserved", False, "Pending", message, now), previous)
    body = _workload_body(workload, {"conditions": [reserved]})
    body["metadata"]["resourceVersion"] = resource_version
    return body


def activation_status(workload: Workload, change: activation.Change, previous: list[dict], now: float) -> dict:
    """The apply configuration for a stop (deactivation) or resume (reactivation) of a Workload
    (not for ``Change.DEACTIVATE``, a write of its spec: ``deactivation_spec``)."""
    if change is activation.Change.REACTIVATE:
        return requeued_status(workload, activation.REACTIVATED, activation.REACTIVATED_MESSAGE, now)
    reason, message = activation.eviction_reason(workload)
    if change is activation.Change.EVICT_ADMITTED:
        return eviction_status(workload, reason, message, previous, now)
    evicted = keep_transition(condition("Evicted", True, reason, message, now), previous)
    status = {"conditions": [evicted, *cleared(workload, but="Evicted")]}
    return _workload_body(workload, with_accumulated(status, workload.accumulated_execution_seconds))


def queue_status(kind: str, name: str, namespace: str | None, status: queuestatus.QueueStatus,
                 previous: list[dict] | None, now: float) -> dict:
    """The apply configuration of a ClusterQueue's or LocalQueue's counts and Active condition."""
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    active = status.active
    active_condition = keep_transition(condition("Active", active.status, active.reason, active.message, now),
                                       previous)
    body = {"pendingWorkloads": status.pending, "reservingWorkloads": status.admitted,
            "admittedWorkloads": status.admitted, "conditions": [active_condition]}
    if kind == "ClusterQueue":
        flavors = flavors_usage(status.usage)
        body |= {"flavorsUsage": flavors, "flavorsReservation": flavors}
    if status.consumed is not None:
        consumed = status.consumed
        body["fairSharing"] = {"admissionFairSharingStatus": {
            "consumedResources": {name: format_quantity(milli) for name, milli in consumed.resources},
            "lastUpdate": rfc3339(consumed.last_update)}}
    return {"apiVersion": GROUP_VERSION, "kind": kind, "metadata": metadata, "status": body}


def flavors_usage(usage: tuple[queuestatus.ResourceUsage, ...]) -> list[dict]:
    """Kueue's status.flavorsUsage: one entry per flavor, its resources with total and borrowed."""
    flavors: dict[str, list[dict]] = {}
    for u in usage:
        flavors.setdefault(u.flavor, []).append(
            {"name": u.resource, "total": format_quantity(u.total), "borrowed": format_quantity(u.borrowed)})
    return [{"name": name, "resources": resources} for name, resources in flavors.items()]


def warning_event(api_version: str, kind: str, name: str, uid: str, reason: str, message: str, now: float) -> dict:
    """A core/v1 Warning Event about a cluster-scoped object, in `default` as kube's own components put
    those, with the uid `kubectl describe` matches events by."""
    stamp = rfc3339(now)
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"generateName": f"{name}.", "namespace": "default"},
            "involvedObject": {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid},
            "reason": reason, "message": message, "type": "Warning", "count": 1,
            "firstTimestamp": stamp, "lastTimestamp": stamp,
            "source": {"component": FIELD_MANAGER}, "reportingComponent": FIELD_MANAGER}
