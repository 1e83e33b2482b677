"""What a harness writes for Workloads that have no Job: the Finished condition a completed job
would bring, and the release of an evicted Workload's quota that Kueue's job reconciler would do
(Kueue leaves a preempted bare Workload holding its quota). Shared by the kueue-baseline driver and
the differential tester."""

from __future__ import annotations

import time

from loadtests import workloads


def eviction_release(obj: dict, now: float) -> dict:
    """The status merge patch that finishes an eviction as Kueue's runner does
    (UnsetQuotaReservationWithCondition): QuotaReserved=False/Pending, no admission, Admitted=False;
    guarded by the resourceVersion it was computed from."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    patched = []
    for c in (obj.get("status") or {}).get("conditions") or ():
        if c.get("type") == "QuotaReserved":
            c = {**c, "status": "False", "reason": "Pending", "message": "Evicted by the test runner",
                 "lastTransitionTime": stamp}
        elif c.get("type") == "Admitted" and c.get("status") == "True":
            c = {**c, "status": "False", "reason": "NoReservation", "message": "The workload has no reservation",
                 "lastTransitionTime": stamp}
        patched.append(c)
    meta = obj.get("metadata") or {}
    return {"metadata": {"resourceVersion": meta.get("resourceVersion", "")},
            "status": {"admission": None, "conditions": patched}}


def finished_apply(namespace: str, name: str, now: float, message: str) -> dict:
    """The apply configuration that adds Finished=True and nothing else (apply it under a field manager
    of its own, so that a scheduler's conditions stay)."""
    return {"apiVersion": workloads.API_VERSION, "kind": "Workload", "metadata": {"name": name, "namespace": namespace},
            "status": {"conditions": [{
                "type": "Finished", "status": "True", "reason": "Succeeded",
                "message": message,
                "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))}]}}
