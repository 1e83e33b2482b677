"""Pending Workloads loaded straight into etcd on a real cluster: served as a POSTed Workload is, never
a silent overwrite, and held pending by the reference scheduler, which admits them once quota allows."""

from __future__ import annotations

import json
import subprocess

import pytest

from harness.etcd import etcdwriting
from harness.kube import apiservice, kubeconfig, rest
from harness.progress import LineProgress
from harness.workloads import bulkloading, storing
from scheduler.api import groups

from .conftest import kwok_cluster, run_cli, running_scheduler
from .kueue_objects import BASE, VISIBILITY, create, flavor, local_queue, metric_sum, path_of, wait_for

pytestmark = pytest.mark.integration

COUNT = 300
NAMESPACE = "bulk-ns"
PREFIX = "wl"


def cluster_queue(cpu: int) -> dict:
    """One flavor covering what every loaded Workload asks for (1 CPU, 1Gi)."""
    quotas = [{"name": "cpu", "nominalQuota": str(cpu)}, {"name": "memory", "nominalQuota": f"{cpu}Gi"}]
    return {"apiVersion": groups.API_VERSION, "kind": "ClusterQueue", "metadata": {"name": "cq"},
            "spec": {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                     "resourceGroups": [{"coveredResources": ["cpu", "memory"],
                                         "flavors": [{"name": "default", "resources": quotas}]}]}}


@pytest.fixture(scope="module")
def loaded(binaries, state_dir, tmp_path_factory):
    """A cluster, the reference scheduler on a LocalQueue whose ClusterQueue has no quota, and COUNT Workloads loaded by the CLI
    as a user runs it; everything stopped after the module, also on failure."""
    with kwok_cluster("bulkwl") as info:
        creds = kubeconfig.load(info.kubeconfig)
        with running_scheduler(info, tmp_path_factory.mktemp("logs")) as handle:
            scheduler = handle.process
            bulkloading.ensure_namespace(creds, NAMESPACE)
            create(creds, [flavor("default"), cluster_queue(0), local_queue("lq", "cq", NAMESPACE)])
            result = run_cli("cluster", "load-workloads", "--name", info.name, "--count", str(COUNT), "--queue", "lq",
                             "--namespace", NAMESPACE, "--prefix", PREFIX, "--scheduler-metrics", scheduler.metrics_url,
                             timeout=120)
            yield info, creds, scheduler, result


def workloads_in_api(creds) -> list[dict]:
    return rest.get_json(creds, f"{BASE}/namespaces/{NAMESPACE}/workloads")["items"]


def test_kube_apiserver_serves_every_loaded_workload_as_it_serves_a_posted_one(loaded, binaries):
    info, creds, _, result = loaded
    assert result.returncode == 0, result.stderr
    assert f"{COUNT} of {COUNT} Workloads served in {NAMESPACE}" in result.stdout
    out = subprocess.run([str(binaries.kubectl), "--kubeconfig", info.kubeconfig, "get", "workloads", "-n", NAMESPACE,
                          "-o", "json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    items = json.loads(out.stdout)["items"]
    assert sorted(w["metadata"]["name"] for w in items) == [f"{PREFIX}-{i:07d}" for i in range(COUNT)]
    assert len({w["metadata"]["uid"] for w in items}) == COUNT
    assert all(w["metadata"]["resourceVersion"] and w["metadata"]["generation"] == 1 for w in items)

    posted_body = storing.Batch(count=1, queue="lq", namespace=NAMESPACE, prefix="posted").manifest(0)
    status, body = rest.request(creds, "POST", f"{BASE}/namespaces/{NAMESPACE}/workloads", posted_body)
    assert status == 201, body
    posted = json.loads(body)
    bulk = rest.get_json(creds, path_of({**posted_body, "metadata": {"name": f"{PREFIX}-0000000",
                                                                      "namespace": NAMESPACE}}))

    def comparable(workload: dict) -> dict:
        metadata = {k: v for k, v in workload["metadata"].items()
                    if k not in ("name", "uid", "resourceVersion", "creationTimestamp", "managedFields", "labels")}
        return {**workload, "metadata": metadata, "status": None}

    assert comparable(bulk) == comparable(posted)


def test_a_second_load_of_existing_names_is_refused_before_any_write(loaded):
    info, creds, _, _ = loaded
    before = {w["metadata"]["name"]: w["metadata"]["uid"] for w in workloads_in_api(creds)}
    # Five more than exist: the new names must not be written either.
    again = run_cli("cluster", "load-workloads", "--name", info.name, "--count", str(COUNT + 5), "--queue", "lq",
                    "--namespace", NAMESPACE, "--prefix", PREFIX, timeout=60)
    assert again.returncode != 0
    assert f"{COUNT} of the {COUNT + 5} Workloads to load already exist" in again.stderr
    assert "nothing was written" in again.stderr.strip().splitlines()[-1]
    keys = [storing.key(NAMESPACE, f"{PREFIX}-{i:07d}") for i in range(COUNT, COUNT + 5)]
    assert etcdwriting.existing(info.etcd_url, storing.namespace_prefix(NAMESPACE), keys) == []
    assert {w["metadata"]["name"]: w["metadata"]["uid"] for w in workloads_in_api(creds)} == before


def test_the_scheduler_holds_them_pending_and_admits_them_once_quota_allows(loaded):
    info, creds, scheduler, result = loaded
    assert "the reference scheduler holds them pending" in result.stdout
    assert bulkloading.scheduler_pending(scheduler.metrics_url, "cq") >= COUNT
    apiservice.wait_available(creds)
    listed = rest.get_json(creds, f"{VISIBILITY}/namespaces/{NAMESPACE}/localqueues/lq/pendingworkloads?limit=1000")
    assert {w["metadata"]["name"] for w in listed["items"]} >= {f"{PREFIX}-{i:07d}" for i in range(COUNT)}

    create(creds, [cluster_queue(COUNT + 1)])  # room for every loaded one and the POSTed one

    def admitted_in_api() -> bool:
        return sum(1 for w in workloads_in_api(creds) if "admission" in w.get("status", {})) == COUNT + 1
    assert wait_for(admitted_in_api, timeout=60)
    assert metric_sum(scheduler.metrics_text(), "kqbench_scheduler_admitted_workloads") == COUNT + 1
    assert bulkloading.scheduler_pending(scheduler.metrics_url) == 0


def test_loaded_before_anything_watches_them_with_kube_apiserver_stopped(binaries, state_dir, tmp_path):
    """`load_at_start`: many Workloads to a revision while kube-apiserver is down, two queues; the restarted
    kube-apiserver serves every one and a scheduler started afterwards holds them all pending."""
    with kwok_cluster("bulkwl0") as info:
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        bulkloading.ensure_namespace(creds, NAMESPACE)
        create(creds, [flavor("default"), cluster_queue(0), local_queue("lq", "cq", NAMESPACE),
                       local_queue("lq2", "cq", NAMESPACE)])
        batches = [storing.Batch(count=150, queue="lq", namespace=NAMESPACE, prefix="a"),
                   storing.Batch(count=151, queue="lq2", namespace=NAMESPACE, prefix="b")]
        report = bulkloading.load_at_start(info, batches, LineProgress(interval=10.0), timeout=120)
        assert (report.requested, report.served) == (301, 301)
        assert report.transactions < 301  # many to a revision: nothing was watching
        assert len(workloads_in_api(creds)) == 301
        again = storing.Batch(count=1, queue="lq", namespace=NAMESPACE, prefix="a")
        with pytest.raises(etcdwriting.NamesExist):
            bulkloading.load_at_start(info, [again], LineProgress(interval=10.0), timeout=120)
        with running_scheduler(info, tmp_path) as handle:
            scheduler = handle.process
            assert wait_for(lambda: bulkloading.scheduler_pending(scheduler.metrics_url, "cq") >= 301, timeout=60)
