"""Nodes loaded straight into etcd on a real cluster: served Ready, the same to kubectl as POSTed nodes,
never a silent overwrite, etcd's refusals reported with what was written, and kube-scheduler and kwok
run a Job's pods on them."""

from __future__ import annotations

import json
import subprocess

import pytest

from prometheus_client.parser import text_string_to_metric_families

from harness.clusters import bringup, kwokconfig, state
from harness.etcd import etcdwriting
from harness.kube import kubeconfig, rest, waiting
from harness.metrics import scraping
from harness.nodes import creating, pools

from .conftest import kwok_cluster_with_report, leftover_processes, run_cli, unique_name

pytestmark = pytest.mark.integration

BULK_NODES = 200
SELECTOR = f"{pools.POOL_LABEL}=kwok"


@pytest.fixture(scope="module")
def bulk_cluster(binaries, state_dir, tmp_path_factory):
    """`kqbench cluster up --nodes 200 --bulk` as a user runs it; stopped after the module, also on failure."""
    name = unique_name("bulk")
    record = tmp_path_factory.mktemp("bulk") / "bringup.json"
    try:
        result = run_cli("cluster", "up", "--name", name, "--nodes", str(BULK_NODES), "--bulk", "--record", str(record),
                         timeout=300)
        assert result.returncode == 0, result.stderr
        yield state.load(name), json.loads(record.read_text())
    finally:
        bringup.down(name)
        assert leftover_processes(name) == [], "cluster processes outlived `down`"


def kubectl(binaries, info, *args: str) -> str:
    out = subprocess.run([str(binaries.kubectl), "--kubeconfig", info.kubeconfig, *args],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def uids(info) -> dict[str, str]:
    nodes = rest.get_json(kubeconfig.load(info.kubeconfig), f"/api/v1/nodes?labelSelector={SELECTOR}")["items"]
    return {n["metadata"]["name"]: n["metadata"]["uid"] for n in nodes}


def test_bulk_up_serves_every_node_ready_and_records_the_path(bulk_cluster, binaries):
    info, record = bulk_cluster
    assert record["node_path"] == "bulk-at-start" and record["version"] == bringup.REPORT_VERSION
    assert record["nodes_ready"] == BULK_NODES and record["node_value_bytes"] > 1000 * BULK_NODES
    assert creating.count_ready(kubeconfig.load(info.kubeconfig), SELECTOR) == (BULK_NODES, BULK_NODES)
    nodes = json.loads(kubectl(binaries, info, "get", "nodes", "-o", "json"))["items"]
    assert len(nodes) == BULK_NODES
    assert len({n["metadata"]["uid"] for n in nodes}) == BULK_NODES
    assert all(n["metadata"]["creationTimestamp"] and n["metadata"]["resourceVersion"] for n in nodes)
    lines = kubectl(binaries, info, "get", "nodes", "--no-headers").splitlines()
    assert len(lines) == BULK_NODES and all(line.split()[1] == "Ready" for line in lines)


def test_bulk_nodes_are_what_kubectl_shows_for_posted_nodes(bulk_cluster, binaries):
    info, _ = bulk_cluster
    added = run_cli("cluster", "add-nodes", "--name", info.name, "--nodes", "1", "--pool", "post", timeout=120)
    assert added.returncode == 0, added.stderr

    def wide(name: str) -> list[str]:
        columns = kubectl(binaries, info, "get", "node", name, "-o", "wide", "--no-headers").split()
        return columns[1:3] + columns[4:]  # all but NAME and AGE

    assert wide("kwok-000000") == wide("post-000000")

    def comparable(name: str) -> dict:
        node = json.loads(kubectl(binaries, info, "get", "node", name, "-o", "json"))
        for field in ("name", "uid", "resourceVersion", "creationTimestamp"):
            node["metadata"].pop(field)
        node["metadata"]["labels"].pop(pools.POOL_LABEL)
        node["metadata"]["labels"].pop("kubernetes.io/hostname")
        for condition in node["status"]["conditions"]:
            condition["lastHeartbeatTime"] = condition["lastTransitionTime"] = "T"
        return node

    assert comparable("kwok-000000") == comparable("post-000000")


def test_a_second_bulk_load_of_existing_names_is_refused_before_any_write(bulk_cluster):
    info, _ = bulk_cluster
    before = uids(info)
    # 200 names exist, 50 would be new: none of the 50 may be written either.
    result = run_cli("cluster", "add-nodes", "--name", info.name, "--nodes", str(BULK_NODES + 50), "--bulk",
                     timeout=120)
    assert result.returncode == 2
    assert f"200 of the {BULK_NODES + 50} nodes to load already exist" in result.stderr
    assert "nothing was written" in result.stderr and "--replace" in result.stderr
    assert uids(info) == before
    present = etcdwriting.existing(info.etcd_url, b"/registry/minions/", [b"/registry/minions/kwok-000249"])
    assert present == []


def test_replace_overwrites_the_nodes_with_new_objects(bulk_cluster):
    info, _ = bulk_cluster
    before = uids(info)
    result = run_cli("cluster", "add-nodes", "--name", info.name, "--nodes", str(BULK_NODES), "--bulk", "--replace",
                     timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"{BULK_NODES} replaced" in result.stdout
    after = uids(info)
    assert set(after) == set(before)
    assert not set(after.values()) & set(before.values()), "a replaced node kept its old uid"
    assert creating.count_ready(kubeconfig.load(info.kubeconfig), SELECTOR) == (BULK_NODES, BULK_NODES)


def test_an_etcd_refusal_stops_the_load_with_its_message_and_what_was_written(bulk_cluster):
    info, _ = bulk_cluster
    prefix = b"/kqbench-test/refused/"
    entries = [(prefix + b"%04d" % i, b"x" * 100) for i in range(300)]
    entries[130] = (entries[130][0], b"x" * (1700 * 1024))  # above etcd's 1.5 MiB request limit
    with pytest.raises(etcdwriting.WriteRefused) as refused:
        etcdwriting.write(info.etcd_url, entries, lambda *a, **k: None, concurrency=1)
    assert "request is too large" in str(refused.value)
    assert "130 of 300 objects were written" in str(refused.value)  # one per revision: all before it
    assert len(etcdwriting.existing(info.etcd_url, prefix, [k for k, _ in entries])) == 130


def test_with_transactions_in_flight_the_count_written_is_exact(bulk_cluster):
    info, _ = bulk_cluster
    prefix = b"/kqbench-test/concurrent/"
    entries = [(prefix + b"%05d" % i, b"y" * 100) for i in range(3000)]
    entries[1500] = (entries[1500][0], b"y" * (1700 * 1024))
    with pytest.raises(etcdwriting.WriteRefused) as refused:
        etcdwriting.write(info.etcd_url, entries, lambda *a, **k: None, concurrency=8)
    written = len(etcdwriting.existing(info.etcd_url, prefix, [k for k, _ in entries]))
    assert 0 < written < 3000
    assert f"{written} of 3000 objects were written" in str(refused.value)


def test_a_key_that_appears_after_the_check_is_refused_not_overwritten(bulk_cluster):
    info, _ = bulk_cluster
    prefix = b"/kqbench-test/raced/"
    etcdwriting.write(info.etcd_url, [(prefix + b"a", b"first")], lambda *a, **k: None)
    with pytest.raises(etcdwriting.WriteRefused, match="found one of its keys in etcd, written there after the check"):
        # Two in one transaction: the refusal of one key leaves the other unwritten too.
        etcdwriting.write(info.etcd_url, [(prefix + b"b", b"new"), (prefix + b"a", b"second")], lambda *a, **k: None,
                          size=2)
    assert etcdwriting.existing(info.etcd_url, prefix, [prefix + b"a", prefix + b"b"]) == [prefix + b"a"]


@pytest.fixture(scope="module")
def jobs_cluster(binaries, state_dir):
    """50 bulk nodes in a cluster that runs Jobs (job controller, kube-scheduler, kwok's pod stages)."""
    with kwok_cluster_with_report("bulkjobs", [pools.NodePool(count=50)], jobs=True, bulk=True) as (info, report):
        yield info, report


def test_kube_scheduler_places_a_jobs_pods_on_bulk_nodes_and_kwok_runs_them(jobs_cluster):
    info, report = jobs_cluster
    assert report.node_path == "bulk-at-start" and report.nodes_ready == 50
    # Written many to a revision while kube-apiserver was down: kube-scheduler, connected before,
    # must have listed them all again (a cut-off watch resumed inside a revision would miss some).
    target = next(t for t in scraping.targets(info) if t.source == "kube-scheduler")

    def cached_nodes() -> list[float]:
        text = scraping.fetch(target)
        return [s.value for f in text_string_to_metric_families(text) if f.name == "scheduler_cache_size"
                for s in f.samples if s.labels.get("type") == "nodes"]

    waiting.poll(lambda: cached_nodes() == [50.0], timeout=60, interval=0.5,
                 failure=lambda: f"kube-scheduler caches {cached_nodes()} nodes, not the 50 loaded")
    creds = kubeconfig.load(info.kubeconfig)
    node = rest.get_json(creds, "/api/v1/nodes/kwok-000000")
    assert "taints" not in node["spec"], "a Jobs cluster's apiserver adds no not-ready taint, nor may bulk loading"
    pod = {"restartPolicy": "Never", "nodeSelector": {pools.POOL_LABEL: "kwok"},
           "containers": [{"name": "c", "image": "registry.example/train:1", "resources": {"requests": {"cpu": "1"}}}]}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "on-bulk", "namespace": "default"},
           "spec": {"parallelism": 4, "completions": 4, "backoffLimit": 0,
                    "template": {"metadata": {"annotations": {kwokconfig.RUNTIME_ANNOTATION: "1s"}}, "spec": pod}}}
    status, body = rest.request(creds, "POST", "/apis/batch/v1/namespaces/default/jobs", job)
    assert status == 201, body[:300]

    def complete() -> bool:
        conditions = rest.get_json(creds, "/apis/batch/v1/namespaces/default/jobs/on-bulk").get("status", {})
        return any(c["type"] == "Complete" and c["status"] == "True" for c in conditions.get("conditions", []))

    waiting.poll(complete, timeout=120, interval=0.5, failure=lambda: "the Job on bulk nodes never completed")
    pods = rest.get_json(creds, "/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io/job-name%3Don-bulk")
    placed = [p["spec"].get("nodeName", "") for p in pods["items"]]
    assert len(placed) == 4 and all(name.startswith("kwok-") for name in placed), placed
    assert all(p["status"]["phase"] == "Succeeded" for p in pods["items"])
