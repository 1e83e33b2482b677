"""Late and never-ready pods on a real cluster: kwok's pod stages (a cluster with Jobs) run a bound pod
and make it Ready after its `kqbench.io/ready-after` annotation, never for "never", at once without it.
Plain pods bound by spec.nodeName (no scheduler involved), and one Job whose late-ready pod runs its
run time from Ready."""

from __future__ import annotations

import json
import time
from datetime import datetime

import pytest

from harness.clusters import kwokconfig
from harness.kube import kubeconfig, rest, waiting
from harness.nodes import pools

from .conftest import kwok_cluster

pytestmark = pytest.mark.integration

NAMESPACE = "default"
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"
JOBS = f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs"
NODES = pools.NodePool(count=1)


def plain_pod(name: str, ready_after: str | None) -> dict:
    annotations = {kwokconfig.READY_AFTER_ANNOTATION: ready_after} if ready_after is not None else {}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NAMESPACE, "annotations": annotations},
            "spec": {"nodeName": NODES.node_name(0), "automountServiceAccountToken": False,
                     "containers": [{"name": "c", "image": "registry.example/serve:1"}]}}


def late_job(name: str) -> dict:
    """A Job of one pod, Ready 2 s after it runs, then running 1 s (bound by kube-scheduler)."""
    annotations = {kwokconfig.READY_AFTER_ANNOTATION: "2s", kwokconfig.RUNTIME_ANNOTATION: "1s"}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"backoffLimit": 0, "template": {
                "metadata": {"annotations": annotations},
                "spec": {"restartPolicy": "Never", "automountServiceAccountToken": False,
                         "containers": [{"name": "c", "image": "registry.example/train:1"}]}}}}


def ready_condition(pod: dict) -> dict:
    return next((c for c in pod["status"].get("conditions") or () if c["type"] == "Ready"), {})


def timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_pod_is_ready_after_its_annotation_never_for_never_and_at_once_without(binaries, state_dir):
    with kwok_cluster("ready", nodes=NODES.count, jobs=True) as info:
        creds = kubeconfig.load(info.kubeconfig)

        def get(pod: str) -> dict:
            return rest.get_json(creds, f"{PODS}/{pod}")

        # The ServiceAccount admission plugin refuses pods until the namespace's default account exists.
        waiting.poll(lambda: rest.get(creds, f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/default")[0] == 200,
                     timeout=30, interval=0.5, failure=lambda: "no default ServiceAccount")
        for pod, ready_after in (("plain", None), ("late", "3s"), ("never", kwokconfig.READY_NEVER)):
            status, body = rest.request(creds, "POST", PODS, plain_pod(pod, ready_after))
            assert status == 201, f"POST {pod}: {status} {body[:300]!r}"
        status, body = rest.request(creds, "POST", JOBS, late_job("late-job"))
        assert status == 201, f"POST the Job: {status} {body[:300]!r}"

        def all_running() -> bool:
            return all(get(p)["status"].get("phase") == "Running" for p in ("plain", "late", "never"))
        waiting.poll(all_running, timeout=30, interval=0.2, failure=lambda: "not every pod ran")
        running_seen = time.monotonic()
        assert ready_condition(get("plain"))["status"] == "True", "no annotation: Ready as it runs"
        for pod in ("late", "never"):
            current = get(pod)
            condition = ready_condition(current)
            assert (condition["status"], condition.get("reason")) == ("False", "ContainersNotReady"), \
                json.dumps(current["status"])
            assert [c["ready"] for c in current["status"]["containerStatuses"]] == [False]

        time.sleep(max(0.0, running_seen + 1.0 - time.monotonic()))
        assert ready_condition(get("late"))["status"] == "False", "Ready at 1 s of its 3 s"
        waiting.poll(lambda: ready_condition(get("late")).get("status") == "True", timeout=15, interval=0.2,
                     failure=lambda: f"late pod not Ready: {json.dumps(get('late')['status'])}")
        late = get("late")
        condition = ready_condition(late)
        waited = timestamp(condition["lastTransitionTime"]) - timestamp(late["status"]["startTime"])
        # The API keeps whole seconds; two stamps at least 3 s apart still differ by 3 once truncated.
        assert waited.total_seconds() >= 3, f"Ready {waited} after it started (3 s asked)"
        assert "reason" not in condition, "the not-ready reason is dropped with the flip"
        assert [(c["ready"], c["state"]["running"]["startedAt"]) for c in late["status"]["containerStatuses"]] == [
            (True, late["status"]["startTime"])], "the container keeps its start"

        time.sleep(max(0.0, running_seen + 10.0 - time.monotonic()))
        never = get("never")
        assert never["status"]["phase"] == "Running" and ready_condition(never)["status"] == "False", \
            json.dumps(never["status"])
        assert get("plain")["status"]["phase"] == "Running", "not a Job's pod: runs on"

        def complete() -> bool:
            conditions = rest.get_json(creds, f"{JOBS}/late-job").get("status", {}).get("conditions") or ()
            return any(c["type"] == "Complete" and c["status"] == "True" for c in conditions)
        waiting.poll(complete, timeout=30, interval=0.5, failure=lambda: "the late-ready Job never completed")
        [job_pod] = rest.get_json(creds, f"{PODS}?labelSelector=batch.kubernetes.io/job-name%3Dlate-job")["items"]
        finished = job_pod["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"]
        ran = timestamp(finished) - timestamp(job_pod["status"]["startTime"])
        # 2 s unready, then 1 s of run time: at least 3 s between the stamps; a run time counted from
        # Running would leave 1 or 2.
        assert job_pod["status"]["phase"] == "Succeeded"
        assert ran.total_seconds() >= 3, f"finished {ran} after it started"
