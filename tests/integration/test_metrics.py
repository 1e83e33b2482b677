"""Measurements on a real cluster: 1000 ConfigMaps of 10 KiB created, listed, half deleted; the
collected deltas, the etcd census and the process samples must show exactly that."""

from __future__ import annotations

import concurrent.futures
import json
import ssl
import time
import urllib.request

import pandas as pd

import pytest

from harness.kube import kubeconfig, rest
from harness.metrics import census, collector, etcdreading, frames
from tests.integration.conftest import kwok_cluster, run_cli

pytestmark = pytest.mark.integration

NAMESPACE = "kqbench-metrics"
CONFIGMAPS = 1000
VALUE_BYTES = 10 * 1024
LISTS = 3


@pytest.fixture(scope="module")
def cluster_1(binaries, state_dir):
    """A kwok cluster with one node; stopped after the module, also when a test fails."""
    with kwok_cluster("itm") as info:
        yield info


class Api:
    """The few writes this test makes, with one TLS context for all of them."""

    def __init__(self, creds: kubeconfig.Credentials) -> None:
        self.creds = creds
        self.context: ssl.SSLContext = creds.ssl_context()

    def call(self, method: str, path: str, body: dict | None = None) -> int:
        request = urllib.request.Request(self.creds.server + path, method=method,
                                         data=None if body is None else json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json", **self.creds.headers()})
        with urllib.request.urlopen(request, context=self.context, timeout=30) as response:
            response.read()
            return response.status


def _configmap(index: int) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{index:04d}"},
            "data": {"payload": "x" * VALUE_BYTES}}


def _parallel(calls) -> list[int]:
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda call: call(), calls))


def _request_delta(frame, phase, verb, code, scope):
    return frames.total(frame, metric="apiserver_request_total", stat="delta", phase=phase,
                        resource="configmaps", verb=verb, code=code, scope=scope)


@pytest.fixture(scope="module")
def measured(cluster_1, tmp_path_factory):
    """Run the three phases under a collector; returns (frames, census of the namespace after creating)."""
    api = Api(kubeconfig.load(cluster_1.kubeconfig))
    api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    # kube-controller-manager publishes kube-root-ca.crt into every new namespace: let that POST
    # happen before measuring, so the create phase counts only ours.
    for _ in range(120):
        status, _ = rest.get(api.creds, f"/api/v1/namespaces/{NAMESPACE}/configmaps/kube-root-ca.crt")
        if status == 200:
            break
        time.sleep(0.5)
    base = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    run = collector.Collector(cluster_1, collector.CollectorSettings(interval_seconds=1.0))
    run.start("idle")
    try:
        run.mark_phase("create")
        assert set(_parallel([lambda i=i: api.call("POST", base, _configmap(i)) for i in range(CONFIGMAPS)])) == {201}
        run.mark_phase("list")
        for _ in range(LISTS):
            listed = rest.get_json(api.creds, base)
            assert len(listed["items"]) == CONFIGMAPS + 1
        after_create = census.summarise(etcdreading.read_sizes(cluster_1.etcd_url, f"/registry/configmaps/{NAMESPACE}/"))
        run.mark_phase("delete")
        deleted = _parallel([lambda i=i: api.call("DELETE", f"{base}/cm-{i:04d}") for i in range(0, CONFIGMAPS, 2)])
        assert set(deleted) == {200}
        result = run.stop()
    finally:
        run.close()
    return result, after_create


def test_request_deltas_match_what_was_done(measured):
    result, _ = measured
    summary = result.summary
    assert _request_delta(summary, "create", "POST", "201", "resource") == CONFIGMAPS
    assert _request_delta(summary, "list", "LIST", "200", "namespace") == LISTS
    assert _request_delta(summary, "delete", "DELETE", "200", "resource") == CONFIGMAPS // 2
    assert _request_delta(summary, "create", "DELETE", "200", "resource") == 0
    assert _request_delta(summary, "delete", "POST", "201", "resource") == 0
    latency = frames.pick(summary, metric="apiserver_request_sli_duration_seconds", phase="create",
                          verb="POST", resource="configmaps", scope="resource")
    assert frames.total(latency, stat="count") == CONFIGMAPS
    assert 0 < frames.total(latency, stat="p50") <= frames.total(latency, stat="p99")


def test_storage_and_watch_cache_counters_move_with_the_work(measured):
    result, _ = measured
    summary = result.summary
    etcd_creates = frames.total(summary, metric="etcd_requests_total", stat="delta", phase="create",
                                resource="configmaps", operation="create")
    assert etcd_creates == CONFIGMAPS
    assert frames.total(summary, source="etcd", metric="etcd_mvcc_put_total", stat="delta", phase="create") >= CONFIGMAPS
    assert frames.total(summary, source="etcd", metric="etcd_mvcc_delete_total", stat="delta", phase="delete") >= CONFIGMAPS // 2
    lists_served = (frames.total(summary, metric="apiserver_cache_list_total", stat="delta", phase="list", resource="configmaps")
                    + frames.total(summary, metric="apiserver_storage_list_total", stat="delta", phase="list", resource="configmaps"))
    assert lists_served >= LISTS
    watch_events = frames.total(summary, metric="apiserver_watch_events_total", stat="delta", phase="create", resource="configmaps")
    # kube-controller-manager's root-CA publisher watches every configmap: each create is an event.
    assert watch_events >= CONFIGMAPS
    db = frames.pick(summary, source="etcd", metric="etcd_mvcc_db_total_size_in_bytes", stat="last", phase="create")
    assert db["value"].item() >= CONFIGMAPS * VALUE_BYTES


def test_census_shows_the_configmaps_with_their_sizes(measured, cluster_1):
    result, after_create = measured
    ours = after_create.resource("configmaps")
    assert ours.count == CONFIGMAPS + 1  # and kube-root-ca.crt
    # Stored as protobuf: the 10 KiB value plus name, namespace, uid, timestamps, managedFields.
    assert VALUE_BYTES < ours.p50_bytes < VALUE_BYTES + 1024
    assert VALUE_BYTES * CONFIGMAPS < ours.total_bytes < (VALUE_BYTES + 1024) * (CONFIGMAPS + 1)
    at_stop = result.census.set_index("resource").loc["configmaps"]
    assert CONFIGMAPS // 2 < at_stop["count"] < CONFIGMAPS // 2 + 20  # plus the cluster's own configmaps
    printed = run_cli("etcd", "census", "--name", cluster_1.name, "--json", "--top", "3")
    assert printed.returncode == 0, printed.stderr
    answer = json.loads(printed.stdout)
    configmaps = next(r for r in answer["resources"] if r["resource"] == "configmaps")
    assert configmaps["count"] == at_stop["count"]
    assert len(answer["largest"]) == 3 and answer["flagged"] == []


def test_process_samples_exist_for_apiserver_and_etcd(measured):
    result, _ = measured
    for component in ("kube-apiserver", "etcd"):
        samples = frames.pick(result.observations, source="process", metric="rss_bytes", component=component)
        assert len(samples) >= 4 and (samples["value"] > 0).all()
        cpu = frames.total(result.summary, source="process", metric="cpu_seconds", stat="delta",
                           phase="create", component=component)
        assert cpu > 0


def test_tables_are_tidy_and_write_as_parquet_and_csv(measured, tmp_path):
    result, _ = measured
    assert (result.scrapes["error"] == "").all()
    assert (result.scrapes["kind"] == "background").any()
    assert list(result.observations.columns) == ["source", "metric", "labels", "phase", "t", "value"]
    assert set(result.observations["phase"]) >= {"idle", "create", "list", "delete"}
    assert not result.slo.empty and set(result.slo["kind"]) >= {"mutating", "read-list"}
    names = result.names.set_index("family")
    assert names.loc["apiserver_request_total", "server_version"] == "v1.35.4"
    for name, table in result.tables().items():
        table.to_parquet(tmp_path / f"{name}.parquet")
        table.to_csv(tmp_path / f"{name}.csv", index=False)
        assert len(pd.read_parquet(tmp_path / f"{name}.parquet")) == len(table)
