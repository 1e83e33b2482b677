"""The objects a fixed-schedule generator creates, pinned: the same scenario sends the same stream.

Each driver's whole generation runs against a fake cluster that admits and finishes at once; the
POSTs it saw (order, path, body) are hashed. The hashes were taken from the generators before their
shared engine moved to harness.load, so a change of what or in which order they create fails here.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json

import pytest

from harness.drivers.jobs import generating as jobsgenerating, plans as jobplans
from harness.drivers.kueuebaseline import generating as baselinegenerating, plans as baselineplans
from harness.load import arrivals, creating
from harness.scenarios import loading
from loadtests import workloads as wl
from scheduler.kube import client as kube

WORKLOADS = f"/apis/{wl.API_VERSION}/workloads"
JOBS, PODS = "/apis/batch/v1/jobs", "/api/v1/pods"
QUEUES = [
    "queues.cohorts=[{name: c}]",
    "queues.cluster_queues=[{name: 'cq-{q}', each: {q: 2}, cohort: c, resource_groups: [{covered_resources: [cpu, "
    "memory], flavors: [{flavor: default, resources: [{name: cpu, nominal: 20}, {name: memory, nominal: 64Gi}]}]}]}]",
    "queues.local_queues=[{name: 'lq-{q}', cluster_queue: 'cq-{q}', each: {q: 2}}]",
    "queues.priority_classes=[{name: small, value: 50}, {name: large, value: 200}]",
]
MIX = ("load.mix=[{priority: 50, priority_class: small, pods: 2, cpu: '500m', memory: 1Gi, runtime_seconds: 0.01, "
       "per_second: 400, count: 3}, {priority: 200, priority_class: large, cpu: '4', memory: 2Gi, runtime_seconds: 0.02, "
       "per_second: 200, count: 2}]")

BASELINE_STREAM = "1f7000bf3b345045714e3090d22114a2a8122bfd1ead2151ce25b2fdd414a105"
"""sha256 of the POSTs, taken from the generators at 2b74192, before their engine moved."""
JOBS_STREAM = "e99c852dea20cf55ed07fd5c025f266165dbfea045a5a41ff943123e68ae6ebe"


class FakeCluster:
    """A KubeClient stand-in that plays the cluster: `react` turns each write into watch events."""

    def __init__(self, react) -> None:
        self.react = react
        self.calls: list[tuple[str, str, dict]] = []
        self.events: dict[str, asyncio.Queue] = {}
        self.revision = 1

    def _queue(self, path: str) -> asyncio.Queue:
        return self.events.setdefault(path, asyncio.Queue())

    async def list_all(self, path: str, page_size: int = 5000, label_selector: str = "") -> kube.ListResult:
        self._queue(path)
        return kube.ListResult([], "1")

    async def watch(self, path: str, resource_version: str, timeout_seconds: int = 300, label_selector: str = ""):
        queue = self._queue(path)
        while True:
            yield await queue.get()

    async def request(self, method, path, body=None, content_type="application/json", timeout=60.0) -> dict:
        self.calls.append((method, path, copy.deepcopy(body)))
        stored = None
        for watched, obj in self.react(method, path, body):
            self.revision += 1
            obj = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.revision)}}
            stored = stored or obj
            self._queue(watched).put_nowait({"type": "MODIFIED", "object": obj})
        return stored or {}

    async def close(self) -> None:
        pass

    def stream_hash(self) -> str:
        posts = [(path, body) for method, path, body in self.calls if method == "POST"]
        return hashlib.sha256(json.dumps(posts, sort_keys=True).encode()).hexdigest()


def _conditions(*types: str) -> list[dict]:
    return [{"type": t, "status": "True", "lastTransitionTime": "2025-01-01T00:00:01Z"} for t in types]


def _baseline_cluster() -> FakeCluster:
    created: dict[str, dict] = {}

    def react(method, path, body):
        if method == "POST":  # admitted at once
            created[body["metadata"]["name"]] = body
            return [(WORKLOADS, {**body, "status": {"admission": {"clusterQueue": "cq"},
                                                    "conditions": _conditions("QuotaReserved", "Admitted")}})]
        if method == "PATCH" and "fieldManager" in path:  # the generator finishes it
            obj = created[path.split("/status")[0].rsplit("/", 1)[1]]
            return [(WORKLOADS, {**obj, "status": {"admission": {"clusterQueue": "cq"},
                                                   "conditions": _conditions("QuotaReserved", "Admitted", "Finished")}})]
        return []
    return FakeCluster(react)


def _jobs_cluster() -> FakeCluster:
    def react(method, path, body):
        if method != "POST":
            return []
        meta = body["metadata"]
        job = {**body, "spec": {**body["spec"], "suspend": False}, "status": {"conditions": _conditions("Complete")}}
        workload = {"metadata": {"namespace": meta["namespace"], "name": f"job-{meta['name']}",
                                 "ownerReferences": [{"kind": "Job", "name": meta["name"]}]},
                    "status": {"admission": {"clusterQueue": "cq"}, "conditions": _conditions("Admitted", "Finished")}}
        pods = [(PODS, {"metadata": {"namespace": meta["namespace"], "name": f"{meta['name']}-{i}",
                                     "labels": {jobplans.JOB_NAME_LABEL: meta["name"]}},
                        "spec": {"nodeName": "n"}, "status": {"phase": "Succeeded"}})
                for i in range(body["spec"]["parallelism"])]
        return [(JOBS, body), (WORKLOADS, workload), *pods, (JOBS, job)]
    return FakeCluster(react)


def _generate(monkeypatch, module, fake: FakeCluster, plan, **settings):
    monkeypatch.setattr(kube, "KubeClient", lambda *args, **kwargs: fake)
    return module.generate(None, plan, creating.Settings(max_seconds=30.0, **settings), lambda text: None)


def test_kueue_baseline_creates_the_same_workloads_in_the_same_order(monkeypatch):
    scenario = loading.load("kueue-baseline", [*QUEUES, MIX]).scenario
    fake = _baseline_cluster()
    outcome = _generate(monkeypatch, baselinegenerating, fake, arrivals.from_scenario(scenario))
    assert not outcome.creating.timed_out and outcome.creating.failures == 0
    assert sorted(outcome.records) == sorted(c.name for c in arrivals.schedule(arrivals.from_scenario(scenario)))
    assert all(r.finished is not None for r in outcome.records.values())
    assert [b["metadata"]["name"] for m, _, b in fake.calls if m == "POST"][:4] == \
        ["small-lq-0-0", "small-lq-1-0", "large-lq-0-0", "large-lq-1-0"]
    assert all(b["metadata"]["labels"][baselineplans.CLASS_LABEL] for m, _, b in fake.calls if m == "POST")
    assert len([c for c in fake.calls if c[0] == "PATCH"]) == 10
    assert fake.stream_hash() == BASELINE_STREAM


def test_jobs_creates_the_same_jobs_in_the_same_order(monkeypatch):
    scenario = loading.load("jobs", [*QUEUES, MIX]).scenario
    fake = _jobs_cluster()
    plan = jobplans.from_scenario(scenario)
    outcome = _generate(monkeypatch, jobsgenerating, fake, plan, in_flight=4)
    assert not outcome.creating.timed_out and outcome.creating.failures == 0
    assert outcome.recorder.done() and len(outcome.recorder.pods) == plan.total_pods
    assert len(outcome.creating.lags) == plan.total_jobs
    assert fake.stream_hash() == JOBS_STREAM
