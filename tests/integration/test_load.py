"""Locust load against a real kube-apiserver: every request name succeeds, and the apiserver counted what Locust did.

The Workload CRD installed here is a throwaway (unknown fields preserved, status subresource) and a
thread stands in for the scheduler by admitting pending Workloads, so the churn's whole life cycle
(create, admit, finish, delete) runs with no other client touching what is counted. No visibility
server is registered in this cluster: position queries must then fail cleanly with a "not served"
reason, never crash or hang. test_load_with_scheduler.py runs the same users against the real one.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import psutil
import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from harness.kube import kubeconfig
from harness.metrics import samples, scraping
from loadtests import naming, running, settings as load_settings

from .conftest import kwok_cluster, run_cli

pytestmark = pytest.mark.integration

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
CHURN_NS = "kqbench-churn"


def workload_crd() -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"workloads.{GROUP}"},
        "spec": {
            "group": GROUP, "scope": "Namespaced",
            "names": {"plural": "workloads", "singular": "workload", "kind": "Workload", "listKind": "WorkloadList"},
            "versions": [{"name": VERSION, "served": True, "storage": True, "subresources": {"status": {}},
                          "schema": {"openAPIV3Schema": {"type": "object",
                                                         "x-kubernetes-preserve-unknown-fields": True}}}],
        },
    }


def install_workload_crd(api_client, server_check, timeout: float = 60.0) -> None:
    client.ApiextensionsV1Api(api_client).create_custom_resource_definition(workload_crd())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, _ = server_check(f"/apis/{GROUP}/{VERSION}/workloads?limit=1")
        if status == 200:
            return
        time.sleep(0.3)
    raise AssertionError("the Workload CRD was not served in time")


@pytest.fixture(scope="module")
def load_cluster(binaries, state_dir):
    """A 3-node kwok cluster with a throwaway Workload CRD; stopped after the module, also on failure."""
    with kwok_cluster("load", nodes=3) as info:
        creds = kubeconfig.load(info.kubeconfig)
        api_client = config.new_client_from_config(config_file=info.kubeconfig)
        from harness.kube import rest

        install_workload_crd(api_client, lambda path: rest.get(creds, path))
        yield info, creds, api_client


def target_of(creds: kubeconfig.Credentials) -> load_settings.Target:
    return load_settings.Target(server=creds.server, ca_file=creds.ca_file, cert_file=creds.cert_file,
                                key_file=creds.key_file, token=creds.token)


class StandInAdmitter(threading.Thread):
    """Admits up to `per_round` pending Workloads every `period` s (PUT /status, cluster-scoped LIST),

    so that its requests never share (verb, resource, scope) with the churn's and counts stay comparable.
    """

    def __init__(self, api_client, per_round: int = 3, period: float = 0.5, max_rounds: int = 400) -> None:
        super().__init__(daemon=True)
        self.api = client.CustomObjectsApi(api_client)
        self.per_round, self.period, self.max_rounds = per_round, period, max_rounds
        self.stop_event = threading.Event()
        self.admitted = 0

    def run(self) -> None:
        for _ in range(self.max_rounds):
            if self.stop_event.wait(self.period):
                return
            items = self.api.list_cluster_custom_object(GROUP, VERSION, "workloads")["items"]
            pending = [w for w in items if not (w.get("status") or {}).get("conditions")][: self.per_round]
            for workload in pending:
                now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                workload["status"] = {"conditions": [
                    {"type": kind, "status": "True", "reason": "StandIn", "message": "test admitter",
                     "lastTransitionTime": now} for kind in ("QuotaReserved", "Admitted")]}
                try:
                    self.api.replace_namespaced_custom_object_status(
                        GROUP, VERSION, workload["metadata"]["namespace"], "workloads",
                        workload["metadata"]["name"], workload)
                    self.admitted += 1
                except ApiException:
                    pass  # changed or deleted under us: next round


def apiserver_counts(info) -> Counter:
    """apiserver_request_total summed by (verb, resource, subresource, scope)."""
    target = scraping.targets(info)[0]
    scrape = samples.parse(scraping.fetch(target), target.source, time.monotonic())
    counts: Counter = Counter()
    for (metric, labels), value in scrape.values.items():
        if metric == "apiserver_request_total":
            label = dict(labels)
            counts[(label.get("verb"), label.get("resource"), label.get("subresource", ""), label.get("scope"))] += value
    return counts


# Request names only our load sends, with the apiserver labels they must be counted under.
COMPARABLE = {
    "POST workloads churn": ("POST", "workloads", "", "resource"),
    "LIST workloads churn-refresh": ("LIST", "workloads", "", "namespace"),
    "PATCH workloads/status churn-finish": ("PATCH", "workloads", "status", "resource"),
    "DELETE workloads churn": ("DELETE", "workloads", "", "resource"),
    "GET configmaps bystander": ("GET", "configmaps", "", "resource"),
    "PATCH configmaps bystander": ("PATCH", "configmaps", "", "resource"),
    "LIST configmaps bystander": ("LIST", "configmaps", "", "namespace"),
}


def churn_plan(creds, **changes) -> load_settings.RunPlan:
    settings = load_settings.LoadSettings(
        target=target_of(creds),
        churn=load_settings.ChurnSettings(
            namespace=CHURN_NS, local_queues=("lq-0", "lq-1"), create_per_second=3.0, pending_target=6,
            refresh_seconds=1.0, mix=(load_settings.WorkloadKind(weight=3, runtime_seconds=2.0),
                                      load_settings.WorkloadKind(weight=1, priority=100, pods=4, runtime_seconds=4.0))),
        query=load_settings.QuerySettings(mode="visibility-cq", per_second=2.0, max_offset=10),
        bystander=load_settings.BystanderSettings(per_second=5.0),
    )
    base = dict(settings=settings, locustfile=running.BUILTIN_LOCUSTFILE,
                user_weights={"WorkloadChurn": 2, "PositionQuerier": 1, "Bystander": 3}, users=6, spawn_rate=6.0,
                run_time=25.0)
    return load_settings.RunPlan(**{**base, **changes})


def test_churn_querier_and_bystanders_are_counted_by_the_apiserver(load_cluster, tmp_path):
    info, creds, api_client = load_cluster
    admitter = StandInAdmitter(api_client)
    before = apiserver_counts(info)
    admitter.start()
    try:
        result = running.run(churn_plan(creds), tmp_path / "run")
    finally:
        admitter.stop_event.set()
        admitter.join(timeout=30)
    after = apiserver_counts(info)

    totals = result.totals.set_index("name")
    assert result.summary["stopped_by"] == "run time"
    assert admitter.admitted > 0
    # Every name succeeds, except the visibility query (no visibility server in this cluster).
    visibility = "GET clusterqueues/pendingworkloads visibility-cq"
    for name, row in totals.iterrows():
        if name != visibility:
            assert row.successes > 0, f"{name} never succeeded: {result.failures.to_dict('records')}"
    assert set(COMPARABLE) <= set(totals.index), sorted(totals.index)
    assert visibility in totals.index and totals.loc[visibility, "requests"] > 0
    if totals.loc[visibility, "successes"] == 0:
        reasons = set(result.failures[result.failures["name"] == visibility]["reason"])
        assert reasons and all(naming.VISIBILITY_NOT_SERVED in r for r in reasons), reasons
    # Other names fail not at all (a 409 on setup counts as success).
    others = result.failures[result.failures["name"] != visibility]
    assert others.empty, others.to_dict("records")

    # Locust's counts agree with the apiserver's own counter.
    for name, key in COMPARABLE.items():
        locust_count = int(totals.loc[name, "requests"])
        apiserver_count = after[key] - before[key]
        assert abs(apiserver_count - locust_count) <= max(2, 0.03 * locust_count), (name, locust_count, apiserver_count)

    # Time series: intervals cover the run, and active names have percentiles.
    history = result.history
    assert history["t"].max() == pytest.approx(result.summary["load_seconds"], abs=1.0)
    active = history[(history["name"] == "GET configmaps bystander") & (history["requests"] > 0)]
    assert len(active) >= 15 and active["p50_ms"].notna().all()
    assert history.groupby("name")["requests"].sum().to_dict() == totals["requests"].to_dict()


def test_churn_holds_pending_depth_at_its_target(load_cluster, tmp_path):
    _info, creds, api_client = load_cluster
    plan = churn_plan(creds, user_weights={"WorkloadChurn": 1}, users=2, run_time=8.0)
    namespace = "kqbench-churn-depth"  # apart from other tests' Workloads: every one here is this run's
    plan = dataclasses.replace(plan, settings=dataclasses.replace(
        plan.settings, churn=dataclasses.replace(plan.settings.churn, namespace=namespace)))
    running.run(plan, tmp_path / "run")  # nothing admits: depth climbs to the target and stays
    items = client.CustomObjectsApi(api_client).list_namespaced_custom_object(
        GROUP, VERSION, namespace, "workloads")["items"]
    pending = Counter(w["metadata"]["labels"]["kqbench.io/churn-user"] for w in items)
    assert list(pending.values()) == [6, 6], pending
    sample = items[-1]["spec"]
    assert sample["queueName"] in ("lq-0", "lq-1") and sample["podSets"][0]["count"] in (1, 4)


def test_master_and_two_workers_list_and_watch(load_cluster, tmp_path):
    _info, creds, _api = load_cluster
    settings = load_settings.LoadSettings(
        target=target_of(creds),
        listwatch=load_settings.ListWatchSettings(resource="pods", page_size=2, per_second=2.0, hold_seconds=3,
                                                  watch_modes=("watchlist", "list-watch")),
        bystander=load_settings.BystanderSettings(per_second=3.0))
    plan = load_settings.RunPlan(settings=settings, locustfile=running.BUILTIN_LOCUSTFILE,
                                 user_weights={"Bystander": 2, "Lister": 1, "Watcher": 1}, users=8, spawn_rate=8.0,
                                 run_time=15.0, workers=2)
    started = time.time()
    result = running.run(plan, tmp_path / "run")
    totals = result.totals.set_index("name")
    assert result.summary["workers"] == 2 and result.summary["cpu_seconds_workers"] > 0
    assert len(result.workers) == 2 and int(result.workers["requests"].sum()) == result.summary["requests"]
    for name in ("LIST pods rv0", "LIST pods consistent", "LIST pods paginated", "LIST-ALL-PAGES pods paginated",
                 "WATCH pods watchlist", "WATCH pods list-watch", "LIST pods list-watch", "GET configmaps bystander"):
        assert name in totals.index and totals.loc[name, "successes"] > 0, (name, sorted(totals.index))
    assert result.failures.empty, result.failures.to_dict("records")
    # No worker outlives the run.
    workers = [p for p in psutil.process_iter(["cmdline", "create_time"])
               if (p.info["cmdline"] or [])[1:3] == ["-m", "loadtests.worker"]
               and p.info["create_time"] >= started - 1]
    assert workers == [], [p.info["cmdline"] for p in workers]


def test_a_request_bound_stops_the_run_early(load_cluster, tmp_path):
    _info, creds, _api = load_cluster
    plan = load_settings.RunPlan(settings=load_settings.LoadSettings(target=target_of(creds)),
                                 locustfile=running.BUILTIN_LOCUSTFILE, user_weights={"Bystander": 1}, users=2,
                                 spawn_rate=2.0, run_time=120.0, max_requests=40)
    started = time.monotonic()
    result = running.run(plan, tmp_path / "run")
    assert result.summary["stopped_by"] == "request count"
    assert 40 <= result.summary["requests"] <= 60
    assert time.monotonic() - started < 60


def test_the_memory_guard_stops_the_run_and_keeps_its_results(load_cluster, tmp_path):
    _info, creds, _api = load_cluster
    # more than any machine has available: the first sample trips the guard
    plan = load_settings.RunPlan(settings=load_settings.LoadSettings(target=target_of(creds)),
                                 locustfile=running.BUILTIN_LOCUSTFILE, user_weights={"Bystander": 1}, users=2,
                                 spawn_rate=2.0, run_time=120.0, min_available_mb=2**40)
    result = running.run(plan, tmp_path / "run")
    assert result.summary["stopped_by"].startswith("memory guard: "), result.summary
    assert result.summary["load_seconds"] < 60
    assert not result.totals.empty


def test_cli_runs_by_hand_and_refuses_bad_input(load_cluster, tmp_path):
    info, _creds, _api = load_cluster
    out = tmp_path / "cli"
    done = run_cli("load", "--name", info.name, "--users", "2", "--spawn-rate", "2", "--run-time", "4s",
                   "--user-classes", "Bystander=1", "--out", str(out), timeout=180)
    assert done.returncode == 0, done.stderr
    assert "GET configmaps" in done.stdout
    assert not pd.read_parquet(Path(out) / "totals.parquet").empty
    for args, message in [(["--run-time", "banana"], "time span"), (["--user-classes", "Nobody=1"], "Nobody"),
                          (["--query-mode", "psychic"], "psychic")]:
        bad = run_cli("load", "--name", info.name, *args, "--out", str(tmp_path / "bad"), timeout=120)
        assert bad.returncode == 2, (args, bad.stderr)
        errors = [line for line in bad.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and message in errors[0] and "Traceback" not in bad.stderr, bad.stderr
