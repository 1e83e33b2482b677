"""The Workload the TAS object-size phase asks for and what its status says (pure)."""

from __future__ import annotations

from scheduler.api import groups


def name_of(pods: int) -> str:
    return f"pods-{pods}"


def workload(pods: int, namespace: str, queue: str, cpu: str, preferred_level: str) -> dict:
    """One pod set of `pods` pods of `cpu` each, preferring one domain of `preferred_level`."""
    return {"apiVersion": groups.API_VERSION, "kind": "Workload",
            "metadata": {"name": name_of(pods), "namespace": namespace},
            "spec": {"queueName": queue, "priority": 0, "podSets": [{
                "name": "main", "count": pods, "topologyRequest": {"preferred": preferred_level},
                "template": {"spec": {"containers": [{"name": "c", "image": "x",
                                                      "resources": {"requests": {"cpu": cpu}}}]}}}]}}


def hosts_in(admission: dict) -> int:
    """Hosts the assignment names (v1beta2: the domain count of every slice of every pod set)."""
    total = 0
    for assignment in admission.get("podSetAssignments") or ():
        for slice_ in (assignment.get("topologyAssignment") or {}).get("slices") or ():
            total += int(slice_.get("domainCount") or 0)
    return total


def conditions(status: dict) -> list[dict]:
    """The Workload's conditions as the API shows them: type, status, reason, message."""
    return [{k: str(c.get(k) or "") for k in ("type", "status", "reason", "message")}
            for c in status.get("conditions") or ()]
