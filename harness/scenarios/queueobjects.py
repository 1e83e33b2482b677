"""Kueue objects of a scenario's `queues:` section (pure), and applying them to a cluster."""

from __future__ import annotations

from harness.clusters import state
from harness.kube import kubeconfig, rest
from harness.scenarios import sections
from scheduler.api import groups

API = groups.API_VERSION
BASE = groups.PATH


def _quota(resource: sections.ResourceQuotaSpec) -> dict:
    out = {"name": resource.name, "nominalQuota": resource.nominal}
    if resource.borrowing_limit is not None:
        out["borrowingLimit"] = resource.borrowing_limit
    if resource.lending_limit is not None:
        out["lendingLimit"] = resource.lending_limit
    return out


def _groups(groups: list[sections.ResourceGroupSpec]) -> list[dict]:
    return [{"coveredResources": list(g.covered_resources),
             "flavors": [{"name": f.flavor, "resources": [_quota(r) for r in f.resources]} for f in g.flavors]}
            for g in groups]


def manifests(queues: sections.QueuesSection) -> list[tuple[str, dict]]:
    """(object path, object) in apply order: namespaces, priority classes, topologies, flavors, cohorts, CQs, LQs."""
    out: list[tuple[str, dict]] = []
    namespaces = sorted({ns for lq in queues.local_queues for ns, _, _ in lq.expanded()})
    for ns in namespaces:
        out.append((f"/api/v1/namespaces/{ns}", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
    for pc in queues.priority_classes:
        out.append((f"{BASE}/workloadpriorityclasses/{pc.name}",
                    {"apiVersion": API, "kind": "WorkloadPriorityClass", "metadata": {"name": pc.name}, "value": pc.value}))
    for topology in queues.topologies:
        out.append((f"{BASE}/topologies/{topology.name}",
                    {"apiVersion": API, "kind": "Topology", "metadata": {"name": topology.name},
                     "spec": {"levels": [{"nodeLabel": label} for label in topology.levels]}}))
    for flavor in queues.flavors:
        spec: dict = {"nodeLabels": dict(flavor.node_labels)} if flavor.node_labels else {}
        if flavor.topology_name:
            spec["topologyName"] = flavor.topology_name
        out.append((f"{BASE}/resourceflavors/{flavor.name}",
                    {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": flavor.name}, "spec": spec}))
    for cohort in queues.cohorts:
        for expanded in sections.expand_each(cohort.each, name=cohort.name, parent=cohort.parent):
            spec = {"parentName": expanded["parent"]} if expanded["parent"] else {}
            spec |= _fair_sharing(cohort.fair_sharing_weight)
            out.append((f"{BASE}/cohorts/{expanded['name']}",
                        {"apiVersion": API, "kind": "Cohort", "metadata": {"name": expanded["name"]}, "spec": spec}))
    for cq in queues.cluster_queues:
        for name, cohort in cq.expanded():
            spec = {"resourceGroups": _groups(cq.resource_groups), "queueingStrategy": cq.queueing_strategy,
                    "namespaceSelector": {}}
            if cohort:
                spec["cohortName"] = cohort
            if cq.preemption is not None:
                spec["preemption"] = {"withinClusterQueue": cq.preemption.within_cluster_queue,
                                      "reclaimWithinCohort": cq.preemption.reclaim_within_cohort}
            spec |= _fair_sharing(cq.fair_sharing_weight)
            if cq.admission_mode is not None:
                spec["admissionScope"] = {"admissionMode": cq.admission_mode}
            out.append((f"{BASE}/clusterqueues/{name}",
                        {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}))
    for lq in queues.local_queues:
        for ns, name, cq in lq.expanded():
            out.append((f"{BASE}/namespaces/{ns}/localqueues/{name}",
                        {"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": name, "namespace": ns},
                         "spec": {"clusterQueue": cq, **_fair_sharing(lq.fair_sharing_weight)}}))
    return out


def _fair_sharing(weight: float | None) -> dict:
    """spec.fairSharing with the weight as a quantity string; nothing when unset (Kueue's default 1)."""
    return {} if weight is None else {"fairSharing": {"weight": f"{weight:g}"}}


def install(cluster: state.ClusterInfo, queues: sections.QueuesSection) -> int:
    """Server-side apply every object (the CRDs must be Established); returns how many."""
    creds = kubeconfig.load(cluster.kubeconfig)
    objects = manifests(queues)
    for path, obj in objects:
        rest.apply(creds, path, obj)
    return len(objects)
