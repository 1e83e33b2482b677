"""Status bodies the controller applies for activation changes and queue status (pure).

Every body is a server-side apply configuration for the status subresource under the
controller's one field manager: what it lists is what the scheduler owns afterwards, and a field
it owned but leaves out is removed (that is how an eviction clears ``status.admission``).
Conditions keep their ``lastTransitionTime`` while their status stays the same, as
``meta.SetStatusCondition`` does in Kueue.
"""

from __future__ import annotations

import time

from scheduler.core import activation, queuestatus
from scheduler.core.workloads import Workload

GROUP_VERSION = "kueue.x-k8s.io/v1beta2"


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


def _workload_body(workload: Workload, status: dict) -> dict:
    return {"apiVersion": GROUP_VERSION, "kind": "Workload",
            "metadata": {"name": workload.name, "namespace": workload.namespace}, "status": status}


def activation_status(workload: Workload, change: activation.Change, previous: list[dict], now: float) -> dict:
    """The apply configuration for a stop (deactivation) or resume (reactivation) of a Workload."""
    message = activation.DEACTIVATED_MESSAGE
    if change is activation.Change.REACTIVATE:
        # Re-list what the deactivation wrote so that applying does not drop it; only Requeued changes.
        kept = [c for c in previous if c.get("type") in ("Evicted", "QuotaReserved", "Admitted")]
        requeued = condition("Requeued", True, activation.REACTIVATED, activation.REACTIVATED_MESSAGE, now)
        return _workload_body(workload, {"conditions": [*kept, requeued]})
    conditions = [condition("Evicted", True, activation.DEACTIVATED, message, now)]
    if change is activation.Change.EVICT_ADMITTED:
        # Omitting status.admission removes it: the quota reservation ends with this write.
        conditions += [
            condition("QuotaReserved", False, "Pending", message, now),
            condition("Admitted", False, "NoReservation", "The workload has no reservation", now),
            condition("Requeued", False, activation.DEACTIVATED, message, now),
        ]
    return _workload_body(workload, {"conditions": [keep_transition(c, previous) for c in conditions]})


def queue_status(kind: str, name: str, namespace: str | None, status: queuestatus.QueueStatus,
                 previous: list[dict] | None, now: float) -> dict:
    """The apply configuration of a ClusterQueue's or LocalQueue's counts and Active condition."""
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    active = status.active
    active_condition = keep_transition(condition("Active", active.status, active.reason, active.message, now),
                                       previous)
    return {"apiVersion": GROUP_VERSION, "kind": kind, "metadata": metadata,
            "status": {"pendingWorkloads": status.pending, "reservingWorkloads": status.admitted,
                       "admittedWorkloads": status.admitted, "conditions": [active_condition]}}
