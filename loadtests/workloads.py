"""Kueue v1beta2 Workload objects as JSON: building them and reading their state. Pure.

Shapes follow kueue.x-k8s.io/v1beta2: spec.queueName, spec.podSets[{name, count, template}],
spec.priority / spec.priorityClassName, status.conditions (QuotaReserved, Admitted, Finished).
"""

from __future__ import annotations

import datetime as dt
import enum

from loadtests import settings as load_settings
from scheduler.api import groups
from scheduler.controller import estimating
from scheduler.core.quantities import parse_quantity

GROUP = groups.GROUP
VERSION = groups.VERSION
API_VERSION = groups.API_VERSION
CHURN_LABEL = "kqbench.io/churn-user"
RUNTIME_ANNOTATION = estimating.RUNTIME_ANNOTATION
"""How long the Workload runs once admitted: whichever churn user holds it then finishes it on time."""


class Phase(enum.Enum):
    PENDING = "pending"
    ADMITTED = "admitted"
    FINISHED = "finished"


def collection_path(namespace: str) -> str:
    return f"/apis/{API_VERSION}/namespaces/{namespace}/workloads"


def object_path(namespace: str, name: str) -> str:
    return f"{collection_path(namespace)}/{name}"


def build(name: str, namespace: str, queue: str, kind: load_settings.WorkloadKind, owner: str,
          priority_class: str | None = None) -> dict:
    """A Workload in `queue` shaped by one mix entry, labelled with the churn user that owns it."""
    # A zero request is left out: a ClusterQueue that does not cover it would refuse the Workload for it.
    requests = {name: value for name, value in (("cpu", kind.cpu), ("memory", kind.memory)) if parse_quantity(value)}
    if kind.gpus:
        requests["nvidia.com/gpu"] = str(kind.gpus)
    pod_sets = [
        {
            "name": "main" if kind.pod_sets == 1 else f"ps{i}",
            "count": kind.pods,
            "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                "resources": {"requests": dict(requests)}}],
            }},
        }
        for i in range(kind.pod_sets)
    ]
    # Always written, also when 0: Kueue v0.17.0's visibility endpoint panics on a pending Workload
    # without spec.priority and answers 503 for its whole ClusterQueue (its job integration always sets it).
    spec: dict = {"queueName": queue, "podSets": pod_sets, "priority": kind.priority, "active": True}
    if priority_class:
        spec["priorityClassName"] = priority_class
        spec["priorityClassSource"] = f"{GROUP}/workloadpriorityclass"
    return {
        "apiVersion": API_VERSION,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": namespace, "labels": {CHURN_LABEL: owner},
                     "annotations": {RUNTIME_ANNOTATION: f"{kind.runtime_seconds:g}"}},
        "spec": spec,
    }


def runtime_seconds(obj: dict) -> float | None:
    """The runtime a churn user wrote on the Workload, None when absent or not a number."""
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(RUNTIME_ANNOTATION)
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def admitted_seconds_ago(obj: dict, now: dt.datetime) -> float | None:
    """Seconds since its Admitted condition turned True (whole seconds, as the API stores it), None when
    it is not admitted or the time is missing."""
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Admitted" and c.get("status") == "True" and c.get("lastTransitionTime"):
            try:
                since = dt.datetime.fromisoformat(c["lastTransitionTime"].replace("Z", "+00:00"))
            except ValueError:
                return None
            return (now - since).total_seconds()
    return None


def _true(conditions: list[dict], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def phase(obj: dict) -> Phase:
    """Finished beats Admitted beats pending; Admitted needs quota reserved and checks passed."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    if _true(conditions, "Finished"):
        return Phase.FINISHED
    if _true(conditions, "Admitted"):
        return Phase.ADMITTED
    return Phase.PENDING


def finished_patch(obj: dict, now: dt.datetime, generation: int | None = None) -> dict:
    """Merge patch for /status that adds Finished=True (merge patches replace lists, so keep the others)."""
    conditions = [c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") != "Finished"]
    conditions.append({
        "type": "Finished", "status": "True", "reason": "Succeeded", "message": "kqbench churn: runtime elapsed",
        "lastTransitionTime": now.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "observedGeneration": generation if generation is not None else obj.get("metadata", {}).get("generation", 1),
    })
    return {"status": {"conditions": conditions}}
