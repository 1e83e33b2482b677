"""A case as the Kubernetes objects both implementations read, prefixed so cases share a cluster.

Cases that share nothing run side by side on one cluster: every cluster-scoped name (flavors,
cohorts and their parents, ClusterQueues, namespaces) gets the case's prefix, and namespaced objects live in the
prefixed namespaces. Decisions read back are mapped to the case's own names (``local_name``).

Each case also has a *gate*: a ResourceFlavor that every ClusterQueue of the case lists in a group
of its own, covering a resource no Workload requests. While the gate flavor is missing, Kueue and
the reference scheduler both treat every queue of the case as inactive (no admission, no
preemption); creating it activates them all in one event. It costs nothing to the decisions: a
group whose resources no pod set requests takes no part in flavor assignment.
"""

from __future__ import annotations

from harness.agreeing import cases
from harness.workloads import checkrules
from scheduler.api import groups

GROUP_VERSION = groups.API_VERSION
GATE_RESOURCE = "kqbench.io/agreement-gate"
GATE = "gate"
"""The gate flavor's name inside a case (prefixed like any other)."""
CASE_LABEL = "kqbench.io/agreement-case"
PODS_READY_ANNOTATION = "kqbench.io/agreement-pods-ready"
"""On a Workload the case marks podsReady: the tester's readying writes PodsReady=True once it is admitted."""


def prefix_of(index: int) -> str:
    return f"c{index:03d}"


def named(prefix: str, name: str) -> str:
    return f"{prefix}-{name}"


def local_name(prefix: str, name: str) -> str | None:
    """The case's own name of a prefixed one; None when it belongs to another case."""
    head = f"{prefix}-"
    return name[len(head):] if name.startswith(head) else None


def setup_objects(case: cases.Case, prefix: str) -> list[dict]:
    """Namespaces, flavors (without the gate), AdmissionChecks, Cohorts, ClusterQueues and LocalQueues, in
    creation order."""
    objects: list[dict] = []
    for ns in case.namespaces:
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": named(prefix, ns.name), "labels": {**ns.labels, CASE_LABEL: prefix}}})
    for flavor in case.flavors:
        objects.append(_flavor(named(prefix, flavor.name), flavor.nodeLabels))
    for check in case.admissionChecks:
        objects.append({"apiVersion": GROUP_VERSION, "kind": "AdmissionCheck",
                        "metadata": {"name": named(prefix, check.name)},
                        "spec": {"controllerName": checkrules.CONTROLLER_NAME}})
    for cohort in case.cohorts:
        objects.append(_cohort(cohort, prefix))
    for cq in case.clusterQueues:
        objects.append(_cluster_queue(cq, prefix))
    for lq in case.localQueues:
        objects.append({"apiVersion": GROUP_VERSION, "kind": "LocalQueue",
                        "metadata": {"name": lq.name, "namespace": named(prefix, lq.namespace)},
                        "spec": {"clusterQueue": named(prefix, lq.clusterQueue)}})
    return objects


def gate(prefix: str) -> dict:
    return _flavor(named(prefix, GATE), {})


def workload(wl: cases.Workload, prefix: str) -> dict:
    pod_sets = [{"name": ps.name, "count": ps.count, "template": {"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "agreement", "resources": {"requests": dict(ps.requests)}}]}}}
        for ps in wl.podSets]
    spec: dict = {"queueName": wl.queueName, "priority": wl.priority, "podSets": pod_sets}
    if wl.maximumExecutionTimeSeconds is not None:
        spec["maximumExecutionTimeSeconds"] = wl.maximumExecutionTimeSeconds
    annotations = {}
    if wl.checkRule is not None:
        annotations[checkrules.RULE_ANNOTATION] = wl.checkRule
    if wl.podsReady:
        annotations[PODS_READY_ANNOTATION] = "true"
    meta: dict = {"name": wl.name, "namespace": named(prefix, wl.namespace)}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": GROUP_VERSION, "kind": "Workload", "metadata": meta, "spec": spec}


def _flavor(name: str, labels: dict[str, str]) -> dict:
    spec = {"nodeLabels": dict(labels)} if labels else {}
    return {"apiVersion": GROUP_VERSION, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def _groups(groups: tuple[cases.ResourceGroup, ...], prefix: str) -> list[dict]:
    return [{"coveredResources": list(group.coveredResources), "flavors": [
        {"name": named(prefix, fq.name), "resources": [_quota(q) for q in fq.resources]} for fq in group.flavors]}
        for group in groups]


def _cohort(cohort: cases.Cohort, prefix: str) -> dict:
    spec: dict = {}
    if cohort.parentName:
        spec["parentName"] = named(prefix, cohort.parentName)
    if cohort.resourceGroups:
        spec["resourceGroups"] = _groups(cohort.resourceGroups, prefix)
    if cohort.fairSharing is not None:
        spec["fairSharing"] = {"weight": cohort.fairSharing.weight}
    return {"apiVersion": GROUP_VERSION, "kind": "Cohort", "metadata": {"name": named(prefix, cohort.name)},
            "spec": spec}


def _cluster_queue(cq: cases.ClusterQueue, prefix: str) -> dict:
    groups = _groups(cq.resourceGroups, prefix)
    groups.append({"coveredResources": [GATE_RESOURCE], "flavors": [
        {"name": named(prefix, GATE), "resources": [{"name": GATE_RESOURCE, "nominalQuota": "0"}]}]})
    preemption: dict = {"withinClusterQueue": cq.preemption.withinClusterQueue,
                        "reclaimWithinCohort": cq.preemption.reclaimWithinCohort}
    if cq.preemption.borrowWithinCohort is not None:
        preemption["borrowWithinCohort"] = cq.preemption.borrowWithinCohort.model_dump(exclude_none=True)
    spec: dict = {"queueingStrategy": cq.queueingStrategy, "preemption": preemption,
                  "flavorFungibility": cq.flavorFungibility.model_dump(), "resourceGroups": groups}
    if cq.namespaceSelector is not None:  # absent: Kueue selects no namespace
        spec["namespaceSelector"] = {"matchLabels": dict(cq.namespaceSelector)} if cq.namespaceSelector else {}
    if cq.cohort:
        spec["cohortName"] = named(prefix, cq.cohort)
    if cq.fairSharing is not None:
        spec["fairSharing"] = {"weight": cq.fairSharing.weight}
    if cq.admissionChecks:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": named(prefix, c)} for c in cq.admissionChecks]}
    return {"apiVersion": GROUP_VERSION, "kind": "ClusterQueue", "metadata": {"name": named(prefix, cq.name)},
            "spec": spec}


def _quota(quota: cases.Quota) -> dict:
    return {"name": quota.name, "nominalQuota": quota.nominalQuota,
            **({"borrowingLimit": quota.borrowingLimit} if quota.borrowingLimit is not None else {}),
            **({"lendingLimit": quota.lendingLimit} if quota.lendingLimit is not None else {})}
