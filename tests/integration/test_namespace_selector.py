"""ClusterQueue namespaceSelector on a real cluster, the reference scheduler and real Kueue side by side.

A StrictFIFO ClusterQueue selects namespaces labelled ``kqbench-team: blue``; its older Workload sits in
an unlabelled namespace, its younger one in a selected namespace. A second ClusterQueue has no selector
at all. Then three steps, each observed once nothing changed for a while:

1. start: the selected Workload is admitted past the older one (a mismatch does not block StrictFIFO);
   the older one and the one under the selector-less queue stay pending, listed by the visibility API,
   with ``QuotaReserved=False`` "Workload namespace doesn't match ClusterQueue selector";
2. the admitted Workload finishes: quota is released, and the mismatched Workload still stays pending
   (Kueue's queueInadmissibleWorkloads keeps it inadmissible while its namespace is not selected);
3. its namespace gets the label: it is admitted (cqNamespaceHandler.Update retries the queue).

Each implementation gets its own fresh cluster; everything is created before the scheduler starts, 1.1 s
apart, so creation time orders the Workloads.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from harness.implementations.kueue import starting
from harness.kube import apiservice, kubeconfig, rest
from harness.progress import LineProgress
from harness.toolchain import building
from scheduler.api import groups

from .conftest import kwok_cluster, running_scheduler
from .kueue_objects import BASE, VISIBILITY, create, flavor, listed, local_queue, workload

pytestmark = [pytest.mark.integration, pytest.mark.nightly]
"""Real Kueue beside the reference on one feature: the nightly tier, with the differential tester's runs;
`make test` keeps the reference scheduler's own tests of the feature."""

LABEL = {"kqbench-team": "blue"}
MISMATCH = "Workload namespace doesn't match ClusterQueue selector"
QUEUES = ("cq-selective", "cq-no-selector")
WORKLOADS = (("ns-out", "w-out", "lq"), ("ns-in", "w-in", "lq"), ("ns-in", "w-none", "lq-none"))
"""(namespace, name, LocalQueue) in creation order."""


def namespace(name: str, labels: dict[str, str]) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def cluster_queue(name: str, strategy: str, selector: dict | None) -> dict:
    spec = {"queueingStrategy": strategy, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
        {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "4"}]}]}]}
    if selector is not None:
        spec["namespaceSelector"] = selector
    return {"apiVersion": groups.API_VERSION, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def queue_objects() -> list[dict]:
    return [flavor("default"),
            cluster_queue("cq-selective", "StrictFIFO", {"matchLabels": LABEL}),
            cluster_queue("cq-no-selector", "BestEffortFIFO", None),  # absent: selects no namespace
            local_queue("lq", "cq-selective", "ns-in"), local_queue("lq", "cq-selective", "ns-out"),
            local_queue("lq-none", "cq-no-selector", "ns-in")]


def _state(obj: dict) -> tuple:
    conditions = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or ()}
    if (conditions.get("Finished") or {}).get("status") == "True":
        return ("finished",)
    if (conditions.get("Admitted") or {}).get("status") == "True":
        return ("admitted", obj["status"]["admission"]["clusterQueue"])
    reserved = conditions.get("QuotaReserved") or {}
    return ("pending", reserved.get("status"), reserved.get("reason"), reserved.get("message"))


def observe(creds) -> dict:
    """Each Workload's state, and each ClusterQueue's pending Workloads in visibility order (None while
    the visibility API is not there yet: kube-apiserver answers 503 until it sees the APIService
    available, Kueue 404 for a moment after it starts)."""
    seen: dict = {w["metadata"]["name"]: _state(w) for w in listed(creds, "workloads")}
    for cq in QUEUES:
        status, body = rest.get(creds, f"{VISIBILITY}/clusterqueues/{cq}/pendingworkloads?limit=0")
        assert status in (200, 404, 503), body[:300]
        seen[cq] = [i["metadata"]["name"] for i in json.loads(body)["items"]] if status == 200 else None
    return seen


def settled(creds, quiet_seconds: float = 6.0, timeout: float = 120.0) -> dict:
    """The observation once it has not changed for quiet_seconds."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        now = observe(creds)
        if now != last or None in now.values():
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_seconds:
            return now
        time.sleep(1.0)
    raise AssertionError(f"did not settle within {timeout:.0f}s; last: {last}")


def run(implementation: str, log_dir: Path) -> list[dict]:
    """The three steps on a fresh cluster; the observation after each."""
    with kwok_cluster(f"nssel-{implementation[:3]}", nodes=3) as info:
        creds = kubeconfig.load(info.kubeconfig)
        if implementation == "kueue":
            starting.install_api(info)
        else:
            apiservice.install_crds(creds)
        for ns, labels in (("ns-in", LABEL), ("ns-out", {})):
            rest.apply(creds, f"/api/v1/namespaces/{ns}", namespace(ns, labels))
        create(creds, queue_objects())
        for ns, wl, lq in WORKLOADS:
            create(creds, [workload(wl, lq, 0, 1, namespace=ns)])
            time.sleep(1.1)
        if implementation == "kueue":
            fields = {"implementation": "kueue", "qps": 50, "burst": 100}
        else:
            fields = {"strategy": "aggregated-indexed"}
        with running_scheduler(info, log_dir, **fields):
            steps = [settled(creds)]
            finished = {"apiVersion": groups.API_VERSION, "kind": "Workload",
                        "metadata": {"name": "w-in", "namespace": "ns-in"},
                        "status": {"conditions": [{"type": "Finished", "status": "True", "reason": "Succeeded",
                                                   "message": "kqbench test", "lastTransitionTime": "2024-01-01T00:00:00Z"}]}}
            rest.apply(creds, f"{BASE}/namespaces/ns-in/workloads/w-in/status", finished, manager="kqbench-test")
            steps.append(settled(creds))
            rest.apply(creds, "/api/v1/namespaces/ns-out", namespace("ns-out", LABEL))
            steps.append(settled(creds))
            return steps


PENDING_MISMATCH = ("pending", "False", "Pending", MISMATCH)
EXPECTED = [
    {"w-out": PENDING_MISMATCH, "w-in": ("admitted", "cq-selective"), "w-none": PENDING_MISMATCH,
     "cq-selective": ["w-out"], "cq-no-selector": ["w-none"]},
    {"w-out": PENDING_MISMATCH, "w-in": ("finished",), "w-none": PENDING_MISMATCH,
     "cq-selective": ["w-out"], "cq-no-selector": ["w-none"]},
    {"w-out": ("admitted", "cq-selective"), "w-in": ("finished",), "w-none": PENDING_MISMATCH,
     "cq-selective": [], "cq-no-selector": ["w-none"]},
]


def test_namespace_selector_decides_alike(binaries, state_dir, tmp_path):
    building.ensure_kueue(LineProgress(interval=10.0))
    ours = run("reference", tmp_path)
    assert ours == EXPECTED, f"reference: {ours}"
    kueue = run("kueue", tmp_path)
    for step, (mine, theirs) in enumerate(zip(ours, kueue), start=1):
        assert mine == theirs, f"step {step}: reference {mine}, kueue {theirs}"
