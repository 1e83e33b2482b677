"""batch/v1 Jobs through the reference scheduler on a real cluster: the real job controller makes
the pods, the real kube-scheduler binds them to KWOK nodes, kwok runs them for their annotated
runtime; the reference scheduler creates, admits and finishes the Workloads and (un)suspends the
Jobs."""

from __future__ import annotations

import json
import time

import pytest

from harness.clusters import kwokconfig
from harness.kube import apiservice, kubeconfig, rest
from harness.nodes import pools
from scheduler.core import conditions, jobs as corejobs

from . import kueue_objects as ko
from .conftest import kwok_cluster_with_report, running_scheduler

pytestmark = pytest.mark.integration

NAMESPACE = "default"
JOBS = f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs"
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"
SPOT = {pools.POOL_LABEL: "spot"}


def job(name: str, queue: str, runtime: str, parallelism: int = 2, node_selector: dict | None = None) -> dict:
    """A suspended Job of ``parallelism`` pods of 500m CPU, each running ``runtime`` on a KWOK node."""
    pod_spec = {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "registry.example/train:1",
                                "resources": {"requests": {"cpu": "500m"}}}]}
    if node_selector:
        pod_spec["nodeSelector"] = node_selector
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {corejobs.QUEUE_LABEL: queue}},
            "spec": {"suspend": True, "parallelism": parallelism, "completions": parallelism, "backoffLimit": 0,
                     "template": {"metadata": {"annotations": {kwokconfig.RUNTIME_ANNOTATION: runtime}},
                                  "spec": pod_spec}}}


def post(creds, path: str, obj: dict) -> dict:
    status, body = rest.request(creds, "POST", path, obj)
    assert status == 201, f"POST {path}: {status} {body[:300]!r}"
    return json.loads(body)


def items(creds, path: str) -> list[dict]:
    return rest.get_json(creds, path)["items"]


def job_of(pod: dict) -> str | None:
    return (pod["metadata"].get("labels") or {}).get("batch.kubernetes.io/job-name")


def merge_patch(creds, path: str, patch: dict) -> None:
    status, body = rest.request(creds, "PATCH", path, patch, "application/merge-patch+json")
    assert status == 200, f"PATCH {path}: {status} {body[:300]!r}"


def spot_flavor() -> dict:
    return {**ko.flavor("spot"), "spec": {"nodeLabels": SPOT}}


def cluster_queue(name: str, cpu: int) -> dict:
    cq = ko.cluster_queue(name, cpu, cohort=name)
    cq["spec"]["resourceGroups"][0]["flavors"][0]["name"] = "spot"
    return cq


@pytest.fixture(scope="module")
def cluster(binaries, state_dir):
    """10 nodes, 8 of them in the spot pool the flavor selects; the scheduler manages Jobs."""
    node_pools = [pools.NodePool(name="spot", count=8), pools.NodePool(name="other", count=2)]
    with kwok_cluster_with_report("jobs", node_pools, jobs=True) as (info, _):
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        with running_scheduler(info, no_client_limit=True, manage_jobs=True) as handle:
            yield creds, handle.process


def test_twenty_jobs_run_five_at_a_time_on_the_flavors_nodes_and_release_their_quota(cluster):
    creds, scheduler = cluster
    ko.create(creds, [spot_flavor(), cluster_queue("cq-jobs", 5), ko.local_queue("lq-jobs", "cq-jobs")])
    names = [f"train-{i:02d}" for i in range(20)]
    for name in names:  # 1 CPU per Job: room for 5 at a time
        post(creds, JOBS, job(name, "lq-jobs", runtime="2s"))

    most_running = 0

    def all_complete() -> bool:
        nonlocal most_running
        ours = [j for j in items(creds, JOBS) if j["metadata"]["name"] in names]
        running = [j for j in ours if j["spec"].get("suspend") is False and not conditions.is_true(j, "Complete")]
        most_running = max(most_running, len(running))
        return len(ours) == 20 and all(conditions.is_true(j, "Complete") for j in ours)

    assert ko.wait_for(all_complete, timeout=100, interval=0.25), "not every Job completed"
    assert 2 <= most_running <= 5, f"{most_running} Jobs ran at once (room for 5)"

    workloads = {w["metadata"]["ownerReferences"][0]["name"]: w for w in ko.listed(creds, "workloads")
                 if corejobs.owner_job(w) is not None}
    assert set(workloads) == set(names)
    for name, workload in workloads.items():
        assert workload["metadata"]["name"].startswith(f"job-{name}-")
        assert workload["spec"]["podSets"][0]["count"] == 2
        assert conditions.is_true(workload, "Finished"), f"{name}'s Workload is not Finished"
        finished = next(c for c in workload["status"]["conditions"] if c["type"] == "Finished")
        assert finished["reason"] == "Succeeded"

    pods = [p for p in items(creds, PODS) if job_of(p) in names]
    assert len(pods) == 40
    for pod in pods:
        assert pod["spec"].get("nodeSelector") == SPOT, "the flavor's node labels reach the pod"
        assert pod["spec"]["nodeName"].startswith("spot-"), "kube-scheduler honoured them"
        assert pod["status"]["phase"] == "Succeeded"

    def quota_released() -> bool:
        status = rest.get_json(creds, f"{ko.BASE}/clusterqueues/cq-jobs").get("status") or {}
        usage = [r for f in status.get("flavorsUsage") or () for r in f["resources"]]
        return status.get("reservingWorkloads") == 0 and status.get("pendingWorkloads") == 0 and \
            usage and all(r["total"] in ("0", 0) for r in usage)
    assert ko.wait_for(quota_released, timeout=15), "the ClusterQueue still holds quota"

    # One write per step and Job: none repeated from a stale view.
    metrics = scheduler.metrics_text()
    for step in ("create-workload", "start-job", "finish-workload"):
        assert ko.metric_sum(metrics, "kqbench_scheduler_job_steps_total", step=step) == 20, step


def test_an_evicted_workload_suspends_its_job_and_restores_its_node_selector(cluster):
    creds, scheduler = cluster
    ko.create(creds, [spot_flavor(), cluster_queue("cq-evict", 1), ko.local_queue("lq-evict", "cq-evict")])
    own = {"kubernetes.io/os": "linux"}
    created = post(creds, JOBS, job("long", "lq-evict", runtime="10m", node_selector=own))
    path = f"{JOBS}/long"

    def running_pods() -> list[dict]:
        return [p for p in items(creds, PODS) if job_of(p) == "long" and p["status"].get("phase") == "Running"]
    assert ko.wait_for(lambda: len(running_pods()) == 2, timeout=45), "the admitted Job's pods never ran"
    started = rest.get_json(creds, path)
    assert started["spec"]["template"]["spec"]["nodeSelector"] == {**own, **SPOT}

    owner = ("long", created["metadata"]["uid"])
    workload = next(w for w in ko.listed(creds, "workloads") if corejobs.owner_job(w) == owner)
    workload_path = f"{ko.BASE}/namespaces/{NAMESPACE}/workloads/{workload['metadata']['name']}"
    merge_patch(creds, workload_path, {"spec": {"active": False}})  # kubectl kueue stop workload

    def stopped_and_restored() -> bool:
        current = rest.get_json(creds, path)
        return (current["spec"].get("suspend") is True
                and current["spec"]["template"]["spec"].get("nodeSelector") == own
                and not (current.get("status") or {}).get("active"))
    assert ko.wait_for(stopped_and_restored, timeout=45), f"not stopped and restored: {rest.get_json(creds, path)}"
    assert ko.wait_for(lambda: not running_pods(), timeout=30), "the stopped Job's pods are still there"
    evicted = rest.get_json(creds, workload_path)
    assert conditions.is_true(evicted, "Evicted") and not (evicted.get("status") or {}).get("admission")

    # Resumed, it is admitted and started again with the flavor's labels.
    merge_patch(creds, workload_path, {"spec": {"active": True}})
    assert ko.wait_for(lambda: len(running_pods()) == 2, timeout=45), "the resumed Job's pods never ran"
    assert rest.get_json(creds, path)["spec"]["template"]["spec"]["nodeSelector"] == {**own, **SPOT}

    # Deleting the Job takes its Workload along (garbage collector) and frees the quota.
    status, body = rest.request(creds, "DELETE", path, {"propagationPolicy": "Background"})
    assert status == 200, body[:300]
    def workload_gone() -> bool:
        return workload["metadata"]["name"] not in {w["metadata"]["name"] for w in ko.listed(creds, "workloads")}
    assert ko.wait_for(workload_gone, timeout=45), "the Workload outlived its Job"
    assert ko.metric_sum(scheduler.metrics_text(), "kqbench_scheduler_job_steps_total", step="stop-job") == 1
