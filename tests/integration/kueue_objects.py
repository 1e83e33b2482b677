"""Builders for Kueue objects in integration tests, and fast bulk creation on a real apiserver."""

from __future__ import annotations

import time

import orjson

from harness.kube import posting, rest
from harness.metrics.samples import metric_sum  # noqa: F401  (the tests reach it as ko.metric_sum)

BASE = "/apis/kueue.x-k8s.io/v1beta2"
VISIBILITY = "/apis/visibility.kueue.x-k8s.io/v1beta2"


def flavor(name="default"):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": name}}


def cluster_queue(name, cpu, cohort="co", borrowing_limit=None, preemption=None):
    quota = {"name": "cpu", "nominalQuota": str(cpu)}
    if borrowing_limit is not None:
        quota["borrowingLimit"] = str(borrowing_limit)
    # namespaceSelector {} selects every namespace; in Kueue's API a missing one selects none.
    spec = {"cohortName": cohort, "queueingStrategy": "BestEffortFIFO", "namespaceSelector": {},
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [quota]}]}]}
    if preemption:
        spec["preemption"] = preemption
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def local_queue(name, cq, namespace="default"):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"clusterQueue": cq}}


def workload(name, queue, priority, cpu, namespace="default"):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"queueName": queue, "priority": priority, "podSets": [{
                "name": "main", "count": 1,
                "template": {"spec": {"containers": [{"name": "c", "image": "x",
                                                      "resources": {"requests": {"cpu": str(cpu)}}}]}}}]}}


def path_of(obj):
    name = obj["metadata"]["name"]
    plural = obj["kind"].lower() + "s"
    if "namespace" in obj["metadata"]:
        return f"{BASE}/namespaces/{obj['metadata']['namespace']}/{plural}/{name}"
    return f"{BASE}/{plural}/{name}"


def create(creds, objects):
    for obj in objects:
        rest.apply(creds, path_of(obj), obj)


def listed(creds, plural):
    return rest.get_json(creds, f"{BASE}/{plural}")["items"]


def queue_order(w):
    """Kueue's order in a ClusterQueue: higher priority, earlier creation, then uid."""
    return (-w["spec"].get("priority", 0), w["metadata"]["creationTimestamp"], w["metadata"]["uid"])


def bulk_create(creds, objects: list[dict], concurrency: int = 48) -> float:
    """POST many namespaced objects concurrently (existing ones count); returns seconds taken."""
    jobs = [(path_of(obj).rsplit("/", 1)[0], lambda obj=obj: orjson.dumps(obj)) for obj in objects]
    return posting.post_all(creds, jobs, concurrency, timeout=600)


def wait_for(predicate, timeout=90.0, interval=0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()
