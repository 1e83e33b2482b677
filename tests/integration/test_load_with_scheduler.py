"""Load against the reference scheduler: real admissions drive the churn, positions come from the visibility API."""

from __future__ import annotations

import dataclasses

import pytest

from harness.kube import apiservice, kubeconfig, rest
from loadtests import running, settings as load_settings

from .conftest import kwok_cluster, running_scheduler

pytestmark = pytest.mark.integration

BASE = "/apis/kueue.x-k8s.io/v1beta2"
NAMESPACE = "kqbench-churn"


def queues(creds: kubeconfig.Credentials) -> None:
    rest.apply(creds, f"/api/v1/namespaces/{NAMESPACE}",
               {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    rest.apply(creds, f"{BASE}/resourceflavors/default",
               {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}})
    rest.apply(creds, f"{BASE}/clusterqueues/cq-0", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq-0"},
        # namespaceSelector {} selects every namespace; a missing one selects none (in Kueue and here).
        "spec": {"queueingStrategy": "BestEffortFIFO", "namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": ["cpu", "memory"], "flavors": [{"name": "default", "resources": [
                {"name": "cpu", "nominalQuota": "6"}, {"name": "memory", "nominalQuota": "64Gi"}]}]}]}})
    for name in ("lq-0", "lq-1"):
        rest.apply(creds, f"{BASE}/namespaces/{NAMESPACE}/localqueues/{name}", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": NAMESPACE}, "spec": {"clusterQueue": "cq-0"}})


@pytest.fixture(scope="module")
def scheduled_cluster(binaries, state_dir, tmp_path_factory):
    """A 3-node cluster running the reference scheduler with its visibility API; all stopped afterwards."""
    with kwok_cluster("loadsched", nodes=3) as info:
        creds = kubeconfig.load(info.kubeconfig)
        with running_scheduler(info, tmp_path_factory.mktemp("sched"), strategy="aggregated-indexed"):
            apiservice.wait_available(creds)
            queues(creds)
            yield info, creds


def plan_for(creds: kubeconfig.Credentials, mode: str, weights: dict[str, int], seconds: float) -> load_settings.RunPlan:
    settings = load_settings.LoadSettings(
        target=load_settings.Target(server=creds.server, ca_file=creds.ca_file, cert_file=creds.cert_file,
                                    key_file=creds.key_file, token=creds.token),
        churn=load_settings.ChurnSettings(
            namespace=NAMESPACE, local_queues=("lq-0", "lq-1"), create_per_second=3.0, pending_target=6,
            refresh_seconds=1.0, mix=(load_settings.WorkloadKind(weight=3, runtime_seconds=2.0),
                                      load_settings.WorkloadKind(weight=1, priority=100, pods=2, runtime_seconds=3.0))),
        query=load_settings.QuerySettings(mode=mode, cluster_queue="cq-0", namespace=NAMESPACE, local_queue="lq-0",
                                          per_second=3.0, limit=5, max_offset=4),
    )
    users = sum(weights.values())
    return load_settings.RunPlan(settings=settings, locustfile=running.BUILTIN_LOCUSTFILE, user_weights=weights,
                                 users=users, spawn_rate=float(users), run_time=seconds)


def test_churn_runs_its_life_cycle_on_real_admissions_and_positions_are_served(scheduled_cluster, tmp_path):
    _info, creds = scheduled_cluster
    plan = plan_for(creds, "visibility-cq", {"WorkloadChurn": 2, "PositionQuerier": 1, "Bystander": 1}, 20.0)
    result = running.run(plan, tmp_path / "cq")
    totals = result.totals.set_index("name")
    assert result.failures.empty, result.failures.to_dict("records")
    for name in ("POST workloads churn", "LIST workloads churn-refresh", "PATCH workloads/status churn-finish",
                 "DELETE workloads churn", "GET clusterqueues/pendingworkloads visibility-cq",
                 "GET configmaps bystander"):
        assert totals.loc[name, "successes"] > 0, (name, sorted(totals.index))

    lq = plan_for(creds, "visibility-lq", {"PositionQuerier": 2}, 6.0)
    lq = dataclasses.replace(lq, settings=dataclasses.replace(lq.settings, seed=1))
    result = running.run(lq, tmp_path / "lq")
    assert result.failures.empty, result.failures.to_dict("records")
    assert result.totals.set_index("name").loc["GET localqueues/pendingworkloads visibility-lq", "successes"] > 0


@pytest.mark.parametrize("mode, name", [
    ("workload-status", "GET workloads workload-status"),
    ("cq-status", "GET clusterqueues cq-status"),
])
def test_positions_read_where_other_strategies_put_them(scheduled_cluster, tmp_path, mode, name):
    _info, creds = scheduled_cluster
    result = running.run(plan_for(creds, mode, {"WorkloadChurn": 1, "PositionQuerier": 1}, 6.0), tmp_path / mode)
    assert result.failures.empty, result.failures.to_dict("records")
    assert result.totals.set_index("name").loc[name, "successes"] > 0, sorted(result.totals["name"])
