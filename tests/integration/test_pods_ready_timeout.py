"""waitForPodsReady with real pods, the reference scheduler against real Kueue on the same input.

One Job whose pod never becomes Ready (kwok's `kqbench.io/ready-after: never`) and one whose pod is Ready
2 s after it runs, under waitForPodsReady with a 10 s timeout, a 1 s backoff and a backoff limit of 1
(Kueue's Configuration, the same fields for both implementations). What Kueue does (pkg/controller/core/
workload_controller.go reconcileNotReadyTimeout, triggerDeactivation; pkg/workload UpdateRequeueState):
the stuck Job's Workload is evicted with reason PodsReadyTimeout 10 s after admission with
requeueState.count 1, requeued after its backoff and admitted again, then, its second timeout past the
limit, deactivated (DeactivationTarget, reason RequeuingLimitExceeded); the ready Job's Workload turns
PodsReady=True and is never evicted. Both implementations are held to that, and to each other.
"""

from __future__ import annotations

import time
from datetime import datetime

import pytest

from harness.clusters import kwokconfig
from harness.kube import apiservice, kubeconfig, rest
from harness.toolchain import versions
from scheduler.core import jobs as corejobs

from . import kueue_objects as ko
from .conftest import kwok_cluster, running_scheduler

pytestmark = pytest.mark.integration

NAMESPACE = "default"
JOBS = f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs"
TIMEOUT_SECONDS = 10
SETTINGS = dict(wait_for_pods_ready=True, wait_for_pods_ready_timeout_seconds=TIMEOUT_SECONDS,
                wait_for_pods_ready_backoff_base_seconds=1, wait_for_pods_ready_backoff_max_seconds=10,
                wait_for_pods_ready_backoff_limit_count=1)
WATCH_SECONDS = 120.0
SETTLE_SECONDS = 3.0
TRANSIENT = {"DeactivationTarget"}
"""Set at the second timeout and removed by the deactivation's eviction (Kueue's Reconcile clears it in that
write, the reference scheduler in the next): seen or not at 0.5 s polls, it is compared in the final state."""
_PINS = versions.load_pins()
IMPLEMENTATIONS = ["reference", *(f"kueue-{v}" if v == _PINS.kueue
                                  else pytest.param(f"kueue-{v}", marks=pytest.mark.nightly)
                                  for v in _PINS.kueue_known)]


def job(name: str, ready_after: str) -> dict:
    """A suspended one-pod Job of 1 CPU, Ready `ready_after` after it runs, running 5 min."""
    annotations = {kwokconfig.READY_AFTER_ANNOTATION: ready_after, kwokconfig.RUNTIME_ANNOTATION: "300s"}
    pod_spec = {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "registry.example/train:1", "resources": {"requests": {"cpu": "1"}}}]}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {corejobs.QUEUE_LABEL: "lq"}},
            "spec": {"suspend": True, "parallelism": 1, "completions": 1, "backoffLimit": 0,
                     "template": {"metadata": {"annotations": annotations}, "spec": pod_spec}}}


def _time(text: str | None) -> float | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() if text else None


def workload_of(creds, job_name: str) -> dict | None:
    for item in ko.listed(creds, "workloads"):
        owners = item["metadata"].get("ownerReferences") or []
        if any(o.get("kind") == "Job" and o.get("name") == job_name for o in owners):
            return item
    return None


def conditions(workload: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (workload.get("status") or {}).get("conditions") or []}


def watch(creds, job_names: tuple[str, ...], done, seconds: float) -> dict[str, list[tuple]]:
    """Every distinct (type, status, reason) each Job's Workload shows, in the order first seen, and its
    requeue counts and admissions, polled every 0.5 s until `done(workloads)` or `seconds`."""
    seen: dict[str, list[tuple]] = {name: [] for name in job_names}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        workloads = {name: workload_of(creds, name) for name in job_names}
        for name, workload in workloads.items():
            if workload is None:
                continue
            status = workload.get("status") or {}
            marks = [(c["type"], c["status"], c.get("reason", ""), _time(c.get("lastTransitionTime")))
                     for c in conditions(workload).values()]
            marks.append(("requeueCount", str((status.get("requeueState") or {}).get("count", 0)), "", None))
            marks.append(("active", str(workload["spec"].get("active", True)), "", None))
            for mark in marks:
                if mark[:3] not in [m[:3] for m in seen[name]]:
                    seen[name].append(mark)
        if done(workloads):
            return seen
        time.sleep(0.5)
    return seen


def _deactivated(workload: dict | None) -> bool:
    return workload is not None and workload["spec"].get("active", True) is False


def run(implementation: str, log_dir) -> dict[str, list[tuple]]:
    fields = dict(SETTINGS)
    if implementation == "reference":
        fields |= dict(manage_jobs=True, no_client_limit=True)
    else:
        fields |= dict(implementation="kueue", kueue_version=implementation.removeprefix("kueue-"), qps=50, burst=100)
    with kwok_cluster("podsready", nodes=2, jobs=True) as info, running_scheduler(info, log_dir, **fields):
        creds = kubeconfig.load(info.kubeconfig)
        assert apiservice.installed_implementation(creds) == ("reference" if implementation == "reference" else "kueue")
        ko.create(creds, [ko.flavor(), ko.cluster_queue("cq", 4, cohort="solo"), ko.local_queue("lq", "cq")])
        for name, ready_after in (("stuck", kwokconfig.READY_NEVER), ("ready", "2s")):
            status, body = rest.request(creds, "POST", JOBS, job(name, ready_after))
            assert status == 201, f"POST job {name}: {status} {body[:300]!r}"
        marks = watch(creds, ("stuck", "ready"), lambda w: _deactivated(w["stuck"]), WATCH_SECONDS)
        time.sleep(SETTLE_SECONDS)  # what the deactivation leaves
        # One more look after it: Kueue's job reconciler writes Requeued=False after the deactivation's
        # eviction, sometimes after the poll that saw spec.active=false.
        for name, late in watch(creds, ("stuck", "ready"), lambda w: True, WATCH_SECONDS).items():
            marks[name] += [m for m in late if m[:3] not in [seen[:3] for seen in marks[name]]]
        marks["final"] = [final_state(workload_of(creds, name)) for name in ("stuck", "ready")]
        return marks


def final_state(workload: dict | None) -> dict:
    status = (workload or {}).get("status") or {}
    return {"conditions": {t: (c["status"], c.get("reason", "")) for t, c in conditions(workload or {}).items()},
            "requeueState": status.get("requeueState"), "active": (workload or {}).get("spec", {}).get("active", True)}


def reasons(marks: list[tuple], kind: str) -> list[str]:
    return [reason for type_, status, reason, _ in marks if type_ == kind and status == "True"]


@pytest.fixture(scope="module")
def observed(binaries, state_dir, tmp_path_factory):
    return {}


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_a_job_whose_pods_never_get_ready_is_evicted_requeued_then_deactivated(implementation, observed, binaries,
                                                                             state_dir, tmp_path):
    marks = run(implementation, tmp_path)
    observed[implementation] = marks
    stuck, ready = marks["stuck"], marks["ready"]
    by_kind = {m[0]: m for m in reversed(stuck)}  # the first time each kind was seen
    assert ("Evicted", "True", "PodsReadyTimeout") in [m[:3] for m in stuck], stuck
    assert ("requeueCount", "1", "") in [m[:3] for m in stuck], stuck
    assert ("active", "False", "") in [m[:3] for m in stuck], f"never deactivated: {stuck}"
    assert ("DeactivationTarget", "True", "RequeuingLimitExceeded") in [m[:3] for m in stuck] or \
        "DeactivatedDueToRequeuingLimitExceeded" in reasons(stuck, "Evicted"), stuck
    admitted_at = next(m[3] for m in stuck if m[:2] == ("Admitted", "True"))
    evicted_at = next(m[3] for m in stuck if m[:3] == ("Evicted", "True", "PodsReadyTimeout"))
    assert TIMEOUT_SECONDS - 1 <= evicted_at - admitted_at <= TIMEOUT_SECONDS + 5, (admitted_at, evicted_at)
    assert ("PodsReady", "True", "") in [(t, s, "") for t, s, _, _ in ready], ready
    assert not reasons(ready, "Evicted"), f"the ready Job was evicted: {ready}"
    assert by_kind


def test_both_implementations_go_through_the_same_conditions(observed):
    if not {"reference", f"kueue-{_PINS.kueue}"} <= set(observed):
        pytest.skip("needs the reference and the default Kueue run of this module")
    ours, theirs = observed["reference"], observed[f"kueue-{_PINS.kueue}"]
    for job_name in ("stuck", "ready"):
        assert ({m[:3] for m in ours[job_name] if m[0] not in TRANSIENT}
                == {m[:3] for m in theirs[job_name] if m[0] not in TRANSIENT}), (job_name, ours, theirs)
    assert ours["final"] == theirs["final"]
    assert ours["final"][0]["requeueState"] is None and "DeactivationTarget" not in ours["final"][0]["conditions"]
