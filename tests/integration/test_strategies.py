"""The five position strategies on a real cluster: each offers a correct position its own way, its
write counters move as expected, and single-object fails at etcd's limit while admissions go on."""

from __future__ import annotations

import json
import subprocess

import pytest

from harness.kube import apiservice, kubeconfig, rest

from . import kueue_objects as ko
from .conftest import kwok_cluster, running_scheduler

pytestmark = pytest.mark.integration
PENDING_QUOTA = 10  # CPUs: 10 of the 300 one-CPU workloads are admitted, 290 stay pending
WORKLOADS = 300


@pytest.fixture(scope="module")
def cluster(binaries, state_dir):
    with kwok_cluster("strat") as info:
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        ko.create(creds, [ko.flavor(), ko.cluster_queue("cq", PENDING_QUOTA, cohort="one")]
                  + [ko.local_queue(f"lq-{i}", "cq") for i in range(3)])
        ko.bulk_create(creds, [ko.workload(f"wl-{i:04d}", f"lq-{i % 3}", i % 4, 1) for i in range(WORKLOADS)])
        yield info, creds


def expected_order(creds) -> list[dict]:
    def pending(w):
        return w["spec"]["queueName"].startswith("lq-") and not (w.get("status") or {}).get("admission")
    return sorted((w for w in ko.listed(creds, "workloads") if pending(w)), key=ko.queue_order)


@pytest.fixture
def running(cluster, request):
    """The scheduler with the strategy of the test's parameter, stopped afterwards."""
    info, creds = cluster
    strategy, extra = request.param
    with running_scheduler(info, strategy=strategy, **extra) as scheduler:
        handle = scheduler.process
        assert ko.wait_for(lambda: sum((w.get("status") or {}).get("admission") is not None
                                       for w in ko.listed(creds, "workloads")) >= PENDING_QUOTA, timeout=60)
        yield info, creds, handle


def writes(handle, resource=None) -> float:
    labels = {"resource": resource} if resource else {}
    return ko.metric_sum(handle.metrics_text(), "kqbench_positions_writes_total", **labels)


@pytest.mark.parametrize("running", [("status-field", {})], indirect=True)
def test_status_field_puts_positions_on_every_pending_workload(running):
    _, creds, handle = running
    order = expected_order(creds)
    assert len(order) == WORKLOADS - PENDING_QUOTA

    def all_published():
        by_name = {w["metadata"]["name"]: w.get("status") or {} for w in ko.listed(creds, "workloads")}
        return all(by_name[w["metadata"]["name"]].get("positionInClusterQueue") == i for i, w in enumerate(order))

    assert ko.wait_for(all_published, timeout=90), "positions in Workload status never matched the queue order"
    lq_of = {w["metadata"]["name"]: w["spec"]["queueName"] for w in order}
    w = ko.listed(creds, "workloads")
    sample = next(x for x in w if x["metadata"]["name"] == order[7]["metadata"]["name"])
    expected_lq = [o["metadata"]["name"] for o in order if lq_of[o["metadata"]["name"]] == sample["spec"]["queueName"]]
    assert sample["status"]["positionInLocalQueue"] == expected_lq.index(sample["metadata"]["name"])
    # One write per pending workload at least: the cost grows with the queue.
    assert writes(handle, "workloads/status") >= len(order)
    assert ko.metric_sum(handle.metrics_text(), "kqbench_positions_staleness_seconds_count") >= len(order)


@pytest.mark.parametrize("running", [("single-object", {"single_object_interval_seconds": 0.5})], indirect=True)
def test_single_object_holds_the_whole_ordered_list(running):
    _, creds, handle = running
    order = [w["metadata"]["name"] for w in expected_order(creds)]

    def published():
        status, body = rest.get(creds, "/apis/kqbench.dev/v1alpha1/queuepositions/cq")
        return json.loads(body) if status == 200 else None

    obj = ko.wait_for(lambda: (o := published()) and [p["name"] for p in o["positions"]] == order and o, timeout=60)
    assert obj, "the single object never matched the queue order"
    assert obj["pending"] == len(order)
    assert 0 < writes(handle, "queuepositions") < 20, "one write per change, not per workload"
    assert ko.metric_sum(handle.metrics_text(), "kqbench_positions_largest_object_bytes") > len(order) * 50


@pytest.mark.parametrize("running", [("cq-status-topn", {"top_n": 10, "refresh_seconds": 1})], indirect=True)
def test_cq_status_topn_lists_the_head_only(running):
    _, creds, handle = running
    order = [w["metadata"]["name"] for w in expected_order(creds)]

    def head():
        cq = rest.get_json(creds, f"{ko.BASE}/clusterqueues/cq")
        items = ((cq.get("status") or {}).get("pendingWorkloadsStatus") or {}).get("clusterQueuePendingWorkload") or []
        return [i["name"] for i in items] == order[:10]

    assert ko.wait_for(head, timeout=30), "ClusterQueue status never listed the first 10"
    coverage = ko.metric_sum(handle.metrics_text(), "kqbench_positions_coverage_ratio")
    assert coverage == pytest.approx(10 / len(order))
    assert writes(handle) < 20


@pytest.mark.parametrize("running", [("aggregated-snapshot", {}), ("aggregated-indexed", {})], indirect=True)
def test_aggregated_strategies_answer_through_the_apiserver_and_write_nothing(running, binaries):
    info, creds, handle = running
    apiservice.wait_available(creds)
    order = [w["metadata"]["name"] for w in expected_order(creds)]
    out = subprocess.run([str(binaries.kubectl), "--kubeconfig", info.kubeconfig, "get", "--raw",
                          f"{ko.VISIBILITY}/clusterqueues/cq/pendingworkloads?offset=100&limit=20"],
                         capture_output=True, text=True, timeout=30, check=True)
    items = json.loads(out.stdout)["items"]
    assert [i["metadata"]["name"] for i in items] == order[100:120]
    assert [i["positionInClusterQueue"] for i in items] == list(range(100, 120))
    assert writes(handle) == 0
    served = ko.metric_sum(handle.metrics_text(), "kqbench_visibility_request_duration_seconds_count")
    assert served >= 1


@pytest.mark.parametrize("running", [("single-object", {"single_object_interval_seconds": 1})], indirect=True)
def test_single_object_past_etcd_limit_records_the_failure_and_admission_goes_on(running):
    _, creds, handle = running
    ko.create(creds, [ko.cluster_queue("big", 0, cohort="big"), ko.local_queue("lq-big", "big")])
    # Long names make each entry ~150 bytes: about 11k entries pass etcd's 1.5 MiB request limit.
    long = "distributed-training-job-with-a-long-descriptive-name"
    ko.bulk_create(creds, [ko.workload(f"{long}-{i:05d}", "lq-big", 0, 1) for i in range(13_000)])

    def failed():
        return ko.metric_sum(handle.metrics_text(), "kqbench_positions_first_too_large_pending") > 0

    assert ko.wait_for(failed, timeout=180), "the single object never hit etcd's limit"
    text = handle.metrics_text()
    pending_at_failure = ko.metric_sum(text, "kqbench_positions_first_too_large_pending")
    size_at_failure = ko.metric_sum(text, "kqbench_positions_first_too_large_bytes")
    assert 5_000 < pending_at_failure <= 13_000
    assert size_at_failure > 1.5 * 2**20
    assert ko.metric_sum(text, "kqbench_positions_write_failures_total", reason="TooLarge") >= 1
    # The scheduler carries on: give the big queue quota and it admits.
    ko.create(creds, [ko.cluster_queue("big", 5, cohort="big")])
    assert ko.wait_for(lambda: ko.metric_sum(handle.metrics_text(), "kqbench_scheduler_admitted_total",
                                             cluster_queue="big") >= 5, timeout=60)
    assert handle.alive()
