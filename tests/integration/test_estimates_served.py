"""Expected admission times served through kube-apiserver's aggregated visibility path (docs/eta.md).

One ClusterQueue with quota for one Workload, the reference scheduler running the simulator:

- w1 (declares 4 s) is admitted first; then w2 (priority 3, declares 3 s), w3 (priority 2, runtime from
  spec.maximumExecutionTimeSeconds) and w4 (priority 1, in another LocalQueue, no runtime) wait;
- their entries carry estimates ordered as their positions, w4 a reason and no time, on both the
  ClusterQueue's and the LocalQueues' pendingworkloads;
- once wall time passes w2's estimate, w1 is marked Finished: w2's real admission comes no earlier than
  its estimate, and w3's next estimate no earlier than w2's admission plus w2's runtime.

Asserted as orderings and reasons, never as tolerances of time.
"""

from __future__ import annotations

import json
import time
from datetime import datetime

import pytest

from harness.kube import apiservice, kubeconfig, rest
from scheduler.controller import estimating
from scheduler.core import conversion, estimates

from . import kueue_objects as ko
from .conftest import kwok_cluster, running_scheduler

pytestmark = pytest.mark.integration

CQ_PATH = f"{ko.VISIBILITY}/clusterqueues/cq/pendingworkloads"
LQ_PATH = f"{ko.VISIBILITY}/namespaces/default/localqueues/{{}}/pendingworkloads"
FIRST_RUNTIME, RUNTIME = 4, 3


def workload(name: str, queue: str, priority: int, runtime: int | None = None, max_execution: int | None = None) -> dict:
    obj = ko.workload(name, queue, priority, 1)
    if runtime is not None:
        obj["metadata"]["annotations"] = {estimating.RUNTIME_ANNOTATION: str(runtime)}
    if max_execution is not None:
        obj["spec"]["maximumExecutionTimeSeconds"] = max_execution
    return obj


def seconds(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def entries(creds, path: str) -> list[dict] | None:
    """The pending-workload entries, None while kube-apiserver cannot reach the visibility server yet."""
    status, body = rest.get(creds, path)
    assert status in (200, 503), body[:300]
    return json.loads(body)["items"] if status == 200 else None


def reserved_at(creds, name: str) -> float | None:
    """When the Workload's quota was reserved (its QuotaReserved condition), None while it is not."""
    obj = rest.get_json(creds, f"{ko.BASE}/namespaces/default/workloads/{name}")
    for condition in (obj.get("status") or {}).get("conditions") or ():
        if condition["type"] == "QuotaReserved" and condition["status"] == "True":
            return seconds(condition["lastTransitionTime"])
    return None


def estimated(items: list[dict] | None, names: list[str]) -> bool:
    """Every entry listed in this order, each estimated by a refresh that saw it."""
    return (items is not None and [i["metadata"]["name"] for i in items] == names
            and all(i.get("estimateReason") != estimating.NOT_ESTIMATED for i in items))


def finish(creds, name: str) -> None:
    body = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {"name": name, "namespace": "default"},
            "status": {"conditions": [{"type": "Finished", "status": "True", "reason": "Succeeded", "message": "kqbench test",
                                       "lastTransitionTime": conversion.format_timestamp(time.time())}]}}
    rest.apply(creds, f"{ko.BASE}/namespaces/default/workloads/{name}/status", body, manager="kqbench-test")


def test_estimates_are_served_with_the_positions(binaries, state_dir, tmp_path):
    with kwok_cluster("eta") as info:
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        ko.create(creds, [ko.flavor(), ko.cluster_queue("cq", 1, cohort="solo"), ko.local_queue("lq-a", "cq"),
                          ko.local_queue("lq-b", "cq"), workload("w1", "lq-a", 0, runtime=FIRST_RUNTIME)])
        with running_scheduler(info, tmp_path, strategy="aggregated-indexed", estimator="simulator",
                               estimate_refresh_seconds=0.5) as handle:
            apiservice.wait_available(creds)
            first_admitted = ko.wait_for(lambda: reserved_at(creds, "w1"), timeout=30)
            assert first_admitted, "w1 was never admitted"
            ko.create(creds, [workload("w2", "lq-a", 3, runtime=RUNTIME), workload("w3", "lq-a", 2, max_execution=30),
                              workload("w4", "lq-b", 1)])

            items = ko.wait_for(lambda: (lambda got: got if estimated(got, ["w2", "w3", "w4"]) else None)(
                entries(creds, CQ_PATH)), timeout=20, interval=0.25)
            assert items, f"no estimates for all three: {entries(creds, CQ_PATH)}"
            print("entry:", json.dumps(items[0]))
            w2, w3, w4 = items
            assert [i["positionInClusterQueue"] for i in items] == [0, 1, 2]
            assert w2["estimator"] == w3["estimator"] == w4["estimator"] == "simulator"
            # The simulator: w2 when w1 ends (its admission plus its declared runtime, or now when that passed),
            # w3 after w2's runtime; w4 is admitted in the forecast, but nothing says how long it runs.
            assert seconds(w2["estimatedAdmissionTime"]) >= first_admitted + FIRST_RUNTIME
            assert seconds(w2["estimatedAdmissionTime"]) < seconds(w3["estimatedAdmissionTime"])
            assert w4["estimateReason"] == estimates.NO_RUNTIME and "estimatedAdmissionTime" not in w4
            assert all(i["estimateAgeSeconds"] == 0 and i["estimateSnapshotTime"] for i in items)

            lq_a, lq_b = entries(creds, LQ_PATH.format("lq-a")), entries(creds, LQ_PATH.format("lq-b"))
            assert [(i["metadata"]["name"], i["positionInLocalQueue"]) for i in lq_a] == [("w2", 0), ("w3", 1)]
            assert all(i["estimator"] == "simulator" and "estimatedAdmissionTime" in i for i in lq_a)
            assert [(i["metadata"]["name"], i["estimateReason"]) for i in lq_b] == [("w4", estimates.NO_RUNTIME)]

            # A later refresh is served although the queue did not change (the page cache knows the refresh).
            snapshot = w2["estimateSnapshotTime"]
            assert ko.wait_for(lambda: any(i["estimateSnapshotTime"] != snapshot for i in entries(creds, CQ_PATH)),
                               timeout=10, interval=0.25), "the estimates were never refreshed"

            # w1 finishes once w2's estimate has come; w2 cannot be admitted before it.
            expected = seconds(entries(creds, CQ_PATH)[0]["estimatedAdmissionTime"])
            ko.wait_for(lambda: time.time() >= expected, timeout=FIRST_RUNTIME + 10, interval=0.1)
            finish(creds, "w1")
            admitted = ko.wait_for(lambda: reserved_at(creds, "w2"), timeout=20, interval=0.25)
            assert admitted, "w2 was never admitted after w1 finished"
            assert admitted >= expected
            print(f"w2: estimated {expected:.0f}, admitted {admitted:.0f} ({admitted - expected:+.0f} s)")

            after = ko.wait_for(lambda: (lambda got: got if estimated(got, ["w3", "w4"])
                                         and seconds(got[0]["estimateSnapshotTime"]) >= admitted else None)(
                entries(creds, CQ_PATH)), timeout=20, interval=0.25)
            assert after, f"no refresh after w2's admission: {entries(creds, CQ_PATH)}"
            assert seconds(after[0]["estimatedAdmissionTime"]) >= admitted + RUNTIME
            assert after[1]["estimateReason"] == estimates.NO_RUNTIME

            metrics = handle.process.metrics_text()
            assert ko.metric_sum(metrics, "kqbench_scheduler_estimated_wait_seconds_count", cluster_queue="cq") >= 2
            assert ko.metric_sum(metrics, "kqbench_scheduler_estimate_refresh_cpu_seconds_count") >= 2
            assert ko.metric_sum(metrics, "kqbench_scheduler_estimates_without_time", cluster_queue="cq",
                                 reason=estimates.NO_RUNTIME) == 1
