"""Admission checks with real Jobs, the reference scheduler against real Kueue on the same input, with
kqbench's check controller (harness.workloads.checkcontrolling) driving the checks for both.

A ClusterQueue names one AdmissionCheck of ours; four Jobs go to it, each with a rule in its pod template
(harness.workloads.checkrules): `ready-after=2s` (QuotaReserved, then Admitted once the check is Ready),
`retry=1` (Retry with requeueAfterSeconds 3: Kueue holds the reservation until then, evicts with reason
AdmissionCheck, the checks reset, Requeued=False until BackoffFinished, then reserved again and Ready),
`reject` (DeactivationTarget AdmissionCheck, then deactivated: Evicted DeactivatedDueToAdmissionCheck) and a
rule that does not parse (the check stays Pending, with the error as its message). A second ClusterQueue names
a check that does not exist: inactive (AdmissionCheckNotFound), its Job's Workload never reserved. An
AdmissionCheck without a controllerName is refused by the API server. What Kueue does: pkg/controller/core/
workload_controller.go (reconcileSyncAdmissionChecks, reconcileCheckBasedEviction, Reconcile's requeueAt
branches), pkg/workload/admissionchecks.go (SyncAdmittedCondition), pkg/cache/scheduler/clusterqueue.go
(inactiveReason). Both implementations are held to that, and to each other.
"""

from __future__ import annotations

import json
import time
import urllib.parse

import pytest

from harness.clusters import kwokconfig
from harness.kube import apiservice, kubeconfig, rest
from harness.toolchain import versions
from harness.workloads import checkcontrolling, checkrules
from scheduler.core import jobs as corejobs

from . import kueue_objects as ko
from .conftest import kwok_cluster, running_scheduler

pytestmark = pytest.mark.integration

NAMESPACE = "default"
JOBS = f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs"
CHECK = "kqbench-check"
MISSING = "no-such-check"
RULES = {"ready": "ready-after=2s", "retry": "retry=1", "reject": "reject", "badrule": "retyr=1"}
WATCH_SECONDS = 120.0
SETTLE_SECONDS = 4.0
UNMODELLED = {("QuotaReserved", "False", "Inadmissible")}
"""Kueue's workload controller marks a pending Workload whose ClusterQueue is inactive (for any cause: stopped, a
missing flavor or check) QuotaReserved=False Inadmissible "ClusterQueue <name> is inactive"
(workload_controller.go: v0.17.0's Reconcile ends with it, v0.19.2's resolveLegacyUnadmittedQuotaReservedCondition);
the reference scheduler does not write it (docs/lifecycle.md)."""
TRANSIENT = {"DeactivationTarget"}
"""Set by the Rejected check and removed by the deactivation's eviction (Kueue in that write, the reference in
the next): compared in the final state."""
_PINS = versions.load_pins()
IMPLEMENTATIONS = ["reference", *(f"kueue-{v}" if v == _PINS.kueue
                                  else pytest.param(f"kueue-{v}", marks=pytest.mark.nightly)
                                  for v in _PINS.kueue_known)]


def admission_check(name: str, controller: str = checkrules.CONTROLLER_NAME) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": name},
            "spec": {"controllerName": controller}}


def checked_queue(name: str, check: str) -> dict:
    cq = ko.cluster_queue(name, 8, cohort="solo")
    cq["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": check}]}
    return cq


def job(name: str, queue: str, rule: str | None) -> dict:
    """A suspended one-pod Job of 1 CPU, its pod Ready 1 s after it runs, running 5 min; the check rule on its
    pod template (which its Workload's pod set carries)."""
    annotations = {kwokconfig.READY_AFTER_ANNOTATION: "1s", kwokconfig.RUNTIME_ANNOTATION: "300s"}
    if rule is not None:
        annotations[checkrules.RULE_ANNOTATION] = rule
    pod_spec = {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "registry.example/train:1", "resources": {"requests": {"cpu": "1"}}}]}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {corejobs.QUEUE_LABEL: queue}},
            "spec": {"suspend": True, "parallelism": 1, "completions": 1, "backoffLimit": 0,
                     "template": {"metadata": {"annotations": annotations}, "spec": pod_spec}}}


def owner_job(workload: dict) -> str | None:
    return next((o.get("name") for o in workload["metadata"].get("ownerReferences") or [] if o.get("kind") == "Job"),
                None)


def marks_of(workload: dict) -> list[tuple[str, str, str]]:
    """(type, status, reason) of each condition, each check's ("check:<name>", state, retryCount), requeueAt set
    or not, and whether it is active."""
    status = workload.get("status") or {}
    marks = [(c["type"], c["status"], c.get("reason", "")) for c in status.get("conditions") or []]
    marks += [(f"check:{s['name']}", s["state"], str(s.get("retryCount", 0))) for s in status.get("admissionChecks") or []]
    marks.append(("requeueAt", str(bool((status.get("requeueState") or {}).get("requeueAt"))), ""))
    marks.append(("active", str(workload["spec"].get("active", True)), ""))
    return marks


def workloads_version(creds) -> str:
    return rest.get_json(creds, f"{ko.BASE}/namespaces/{NAMESPACE}/workloads")["metadata"]["resourceVersion"]


def record(creds, done, seconds: float, since: str | None = None) -> tuple[dict[str, list[tuple]], dict[str, dict]]:
    """Every distinct mark each Job's Workload shows in every version the watch delivers (in the order first seen),
    and the last object of each, until `done(last)` or `seconds`. From `since` (a resourceVersion taken before
    the Jobs were posted: every version of their Workloads), else from a list (the present state)."""
    seen: dict[str, list[tuple]] = {}
    last: dict[str, dict] = {}
    listed = {"items": []} if since is not None else rest.get_json(
        creds, f"{ko.BASE}/namespaces/{NAMESPACE}/workloads")
    version = ""

    def take(obj: dict) -> None:
        nonlocal version
        version = obj["metadata"].get("resourceVersion") or version
        name = owner_job(obj)
        if name is None or not obj.get("spec"):
            return
        last[name] = obj
        for mark in marks_of(obj):
            if mark not in seen.setdefault(name, []):
                seen[name].append(mark)

    for item in listed["items"]:
        take(item)
    version = since if since is not None else listed["metadata"]["resourceVersion"]  # items carry older versions
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not done(last):
        query = urllib.parse.urlencode({"watch": "1", "resourceVersion": version, "timeoutSeconds": "1",
                                        "allowWatchBookmarks": "true"})
        rest.watch(creds, f"{ko.BASE}/namespaces/{NAMESPACE}/workloads?{query}",
                   lambda event: take(event["object"]) if event["type"] in ("ADDED", "MODIFIED") else None,
                   timeout=30)
    return seen, last


def _finished_flow(last: dict[str, dict]) -> bool:
    def has(name, kind, status, reason=None):
        c = ko_condition(last.get(name), kind)
        return c is not None and c["status"] == status and (reason is None or c.get("reason") == reason)

    retried = last.get("retry") is not None and any(
        s.get("retryCount") for s in (last["retry"].get("status") or {}).get("admissionChecks") or [])
    return (has("ready", "Admitted", "True") and retried and has("retry", "Admitted", "True")
            and last.get("reject") is not None and last["reject"]["spec"].get("active", True) is False
            and has("reject", "QuotaReserved", "False")
            and "missing" in last and "badrule" in last and has("badrule", "QuotaReserved", "True"))


def ko_condition(workload: dict | None, kind: str) -> dict | None:
    return next((c for c in ((workload or {}).get("status") or {}).get("conditions") or [] if c["type"] == kind), None)


def final_state(workload: dict | None) -> dict:
    status = (workload or {}).get("status") or {}
    return {"conditions": {c["type"]: (c["status"], c.get("reason", "")) for c in status.get("conditions") or []},
            "checks": [(s["name"], s["state"], s.get("retryCount"), s.get("requeueAfterSeconds"))
                       for s in status.get("admissionChecks") or []],
            "requeueAt": bool((status.get("requeueState") or {}).get("requeueAt")),
            "active": (workload or {}).get("spec", {}).get("active", True)}


def queue_active(creds, name: str) -> tuple[str, str, str] | None:
    found = ko_condition(rest.get_json(creds, f"{ko.BASE}/clusterqueues/{name}"), "Active")
    return None if found is None else (found["status"], found.get("reason", ""), found.get("message", ""))


def run(implementation: str, log_dir) -> dict:
    fields: dict = {}
    if implementation == "reference":
        fields |= dict(manage_jobs=True, no_client_limit=True)
    else:
        fields |= dict(implementation="kueue", kueue_version=implementation.removeprefix("kueue-"), qps=50, burst=100)
    with kwok_cluster("checks", nodes=2, jobs=True) as info, running_scheduler(info, log_dir, **fields):
        creds = kubeconfig.load(info.kubeconfig)
        assert apiservice.installed_implementation(creds) == ("reference" if implementation == "reference" else "kueue")
        status, refused = rest.request(creds, "POST", f"{ko.BASE}/admissionchecks", admission_check("nameless", ""))
        with checkcontrolling.CheckController(creds) as controller:
            ko.create(creds, [ko.flavor(), admission_check(CHECK), checked_queue("cq", CHECK),
                              ko.local_queue("lq", "cq"), checked_queue("cq-missing", MISSING),
                              ko.local_queue("lq-missing", "cq-missing")])
            # the Jobs come once the check is Active: before, Kueue marks them Inadmissible (UNMODELLED)
            assert ko.wait_for(lambda: (queue_active(creds, "cq") or ("",))[0] == "True"), queue_active(creds, "cq")
            before = workloads_version(creds)
            for name, rule in RULES.items():
                posted, body = rest.request(creds, "POST", JOBS, job(name, "lq", rule))
                assert posted == 201, f"POST job {name}: {posted} {body[:300]!r}"
            posted, body = rest.request(creds, "POST", JOBS, job("missing", "lq-missing", "ready"))
            assert posted == 201, f"POST job missing: {posted} {body[:300]!r}"
            marks, last = record(creds, _finished_flow, WATCH_SECONDS, since=before)
            time.sleep(SETTLE_SECONDS)  # what the deactivation and the last writes leave
            _, last = record(creds, lambda _: False, 1.0)
            return {"marks": marks, "final": {name: final_state(last.get(name)) for name in (*RULES, "missing")},
                    "queues": {name: queue_active(creds, name) for name in ("cq", "cq-missing")},
                    "nameless": (status, refused.decode(errors="replace")), "rule_errors": dict(controller.rule_errors),
                    "controller_error": controller.error, "bad_message": [
                        s.get("message") for s in ((last.get("badrule") or {}).get("status") or {}).get(
                            "admissionChecks") or []]}


@pytest.fixture(scope="module")
def observed(binaries, state_dir):
    return {}


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_checks_admit_retry_reject_and_refuse_as_kueue_decides(implementation, observed, binaries, state_dir,
                                                                tmp_path):
    seen = run(implementation, tmp_path)
    observed[implementation] = seen
    (tmp_path / "observed.json").write_text(json.dumps(seen, indent=1, default=str))  # what a failure reads
    marks, final = seen["marks"], seen["final"]
    # the check Ready after 2 s: quota reserved first, Admitted only once it is Ready (no Admitted=False before:
    # without UnadmittedWorkloadsObservability, SyncAdmittedCondition writes only a flip)
    ready = [m[:2] for m in marks["ready"]]
    assert ready.index(("QuotaReserved", "True")) < ready.index(("check:" + CHECK, "Ready")) \
        < ready.index(("Admitted", "True")), marks["ready"]
    assert not any(m[:2] == ("Admitted", "False") for m in marks["ready"]), marks["ready"]
    assert final["ready"]["conditions"]["Admitted"] == ("True", "Admitted"), final["ready"]
    # Retry once: evicted (AdmissionCheck), quota released, held until BackoffFinished, reserved again, admitted
    for mark in (("Evicted", "True", "AdmissionCheck"), ("Requeued", "False", "AdmissionCheck"),
                 ("Requeued", "True", "BackoffFinished"), ("QuotaReserved", "False", "Pending"),
                 ("check:" + CHECK, "Retry", "0"), ("check:" + CHECK, "Pending", "1"), ("requeueAt", "True", "")):
        assert mark in marks["retry"], (mark, marks["retry"])
    assert final["retry"]["conditions"]["Admitted"] == ("True", "Admitted"), final["retry"]
    # Rejected: deactivated
    assert ("Evicted", "True", "DeactivatedDueToAdmissionCheck") in marks["reject"], marks["reject"]
    assert final["reject"]["active"] is False and "DeactivationTarget" not in final["reject"]["conditions"]
    # a rule that does not parse: the check stays Pending and says why; the Workload holds quota, not admitted
    assert seen["rule_errors"] and all("retyr=1" in m for m in seen["bad_message"]), seen
    assert final["badrule"]["conditions"]["QuotaReserved"] == ("True", "QuotaReserved")
    # a ClusterQueue naming a missing check: inactive, its Workload never reserved
    assert seen["queues"]["cq-missing"][:2] == ("False", "AdmissionCheckNotFound"), seen["queues"]
    assert seen["queues"]["cq"][:2] == ("True", "Ready"), seen["queues"]
    assert "QuotaReserved" not in final["missing"]["conditions"] or \
        final["missing"]["conditions"]["QuotaReserved"][0] == "False", final["missing"]
    # an AdmissionCheck naming no controller: refused by the API server
    assert seen["nameless"][0] == 422 and "controllerName" in seen["nameless"][1], seen["nameless"]
    assert seen["controller_error"] is None, seen["controller_error"]


def _compared(marks: list[tuple]) -> set[tuple]:
    return {tuple(m) for m in marks if m[0] not in TRANSIENT and tuple(m) not in UNMODELLED}


def _final_compared(final: dict) -> dict:
    return {name: {**state, "conditions": {kind: value for kind, value in state["conditions"].items()
                                           if (kind, *value) not in UNMODELLED}}
            for name, state in final.items()}


def test_both_implementations_go_through_the_same_conditions(observed):
    if not {"reference", f"kueue-{_PINS.kueue}"} <= set(observed):
        pytest.skip("needs the reference and the default Kueue run of this module")
    ours, theirs = observed["reference"], observed[f"kueue-{_PINS.kueue}"]
    for name in (*RULES, "missing"):
        assert (_compared(ours["marks"].get(name, [])) == _compared(theirs["marks"].get(name, []))), (
            name, ours["marks"].get(name), theirs["marks"].get(name))
    assert _final_compared(ours["final"]) == _final_compared(theirs["final"])
    assert ours["queues"] == theirs["queues"]
