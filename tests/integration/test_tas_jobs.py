"""Topology-aware scheduling for batch/v1 Jobs on a real cluster: the reference scheduler admits a Job's
pod set into one rack, starts the Job with Kueue's topology scheduling gate, and its ungater gives each
pod its assigned host; the real job controller makes the pods, the real kube-scheduler binds them, and
the pods' nodes are checked against the Workload's topology assignment."""

from __future__ import annotations

import collections

import pytest

from harness.clusters import kwokconfig
from harness.kube import apiservice, kubeconfig, rest
from harness.nodes import pools, topologies as nodetopologies
from scheduler.api import groups
from scheduler.core import conditions, jobs as corejobs, topologyconversion

from . import kueue_objects as ko
from .conftest import kwok_cluster_with_report, running_scheduler
from .test_jobs import JOBS, NAMESPACE, PODS, items, job_of, merge_patch, post

pytestmark = pytest.mark.integration

SHAPE = nodetopologies.NodeTopology(racks_per_block=2, hosts_per_rack=2)
NODES = 8  # 2 blocks x 2 racks x 2 hosts of 4 cpu: a rack holds 8 one-cpu pods
TOPOLOGY = "dc"
RACK = nodetopologies.RACK_LABEL


def tas_job(name: str, pods: int, runtime: str, indexed: bool, **annotations: str) -> dict:
    """A suspended Job of ``pods`` one-cpu pods in the TAS queue, each running ``runtime`` on a KWOK node."""
    template_annotations = {kwokconfig.RUNTIME_ANNOTATION: runtime, **annotations}
    spec = {"suspend": True, "parallelism": pods, "completions": pods, "backoffLimit": 0,
            "template": {"metadata": {"annotations": template_annotations},
                         "spec": {"restartPolicy": "Never", "containers": [
                             {"name": "c", "image": "registry.example/train:1",
                              "resources": {"requests": {"cpu": "1"}}}]}}}
    if indexed:
        spec["completionMode"] = "Indexed"
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {corejobs.QUEUE_LABEL: "lq-tas"}},
            "spec": spec}


@pytest.fixture(scope="module")
def cluster(binaries, state_dir):
    node_pools = [pools.NodePool(name="tas", count=NODES, cpu="4", topology=SHAPE)]
    with kwok_cluster_with_report("tasjobs", node_pools, jobs=True) as (info, report):
        assert report.nodes_ready == NODES
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        topology = {"apiVersion": groups.API_VERSION, "kind": "Topology", "metadata": {"name": TOPOLOGY},
                    "spec": {"levels": [{"nodeLabel": label} for label in nodetopologies.LEVELS]}}
        rest.apply(creds, f"{ko.BASE}/topologies/{TOPOLOGY}", topology)
        flavor = {"apiVersion": groups.API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": "tas"},
                  "spec": {"nodeLabels": {pools.POOL_LABEL: "tas"}, "topologyName": TOPOLOGY}}
        cq = ko.cluster_queue("cq-tas", 32)
        cq["spec"]["resourceGroups"][0]["flavors"][0]["name"] = "tas"
        ko.create(creds, [flavor, cq, ko.local_queue("lq-tas", "cq-tas")])
        with running_scheduler(info, no_client_limit=True, manage_jobs=True) as handle:
            yield creds, handle.process


def _workload_of(creds, job: dict) -> dict | None:
    owner = (job["metadata"]["name"], job["metadata"]["uid"])
    return next((w for w in ko.listed(creds, "workloads") if corejobs.owner_job(w) == owner), None)


def _hosts(workload: dict) -> collections.Counter:
    """Pods per host as the Workload's topology assignment gives them."""
    [psa] = workload["status"]["admission"]["podSetAssignments"]
    assignment = topologyconversion.assignment_from_dict(psa["topologyAssignment"])
    assert assignment.levels[-1] == nodetopologies.HOSTNAME_LABEL
    return collections.Counter({d.values[-1]: d.count for d in assignment.domains})


def _pods(creds, name: str) -> list[dict]:
    return [p for p in items(creds, PODS) if job_of(p) == name]


@pytest.mark.parametrize("indexed", [True, False], ids=["indexed", "non-indexed"])
def test_a_jobs_pods_land_on_the_hosts_of_its_topology_assignment(cluster, indexed):
    creds, scheduler = cluster
    name = f"rack-{'indexed' if indexed else 'plain'}"
    created = post(creds, JOBS, tas_job(name, 6, runtime="3s", indexed=indexed,
                                        **{corejobs.REQUIRED_TOPOLOGY_ANNOTATION: RACK}))
    assert ko.wait_for(lambda: (w := _workload_of(creds, created)) and (w.get("status") or {}).get("admission"),
                       timeout=60), "the Job's Workload was not admitted"
    workload = _workload_of(creds, created)
    assert workload["spec"]["podSets"][0]["topologyRequest"] == {
        "required": RACK, "podIndexLabel": corejobs.COMPLETION_INDEX_LABEL}
    assigned = _hosts(workload)

    def all_bound() -> bool:
        pods = _pods(creds, name)
        return len(pods) == 6 and all(p["spec"].get("nodeName") for p in pods)
    assert ko.wait_for(all_bound, timeout=60), f"pods not bound: {[p['spec'] for p in _pods(creds, name)]}"
    pods = _pods(creds, name)
    for pod in pods:
        assert corejobs.TOPOLOGY_GATE not in [g["name"] for g in pod["spec"].get("schedulingGates") or ()]
        assert pod["spec"]["nodeSelector"][nodetopologies.HOSTNAME_LABEL] == pod["spec"]["nodeName"], \
            "the ungater's host is where kube-scheduler put it"
        assert pod["metadata"]["annotations"][corejobs.WORKLOAD_ANNOTATION] == workload["metadata"]["name"]
    assert collections.Counter(p["spec"]["nodeName"] for p in pods) == assigned
    nodes = {n["metadata"]["name"]: n["metadata"]["labels"] for n in rest.get_json(creds, "/api/v1/nodes")["items"]}
    assert len({nodes[host][RACK] for host in assigned}) == 1, f"required rack: one rack ({assigned})"
    if indexed:  # by rank: index i goes to the host holding the i-th pod of the assignment, in its order
        order = [host for host, count in sorted(assigned.items()) for _ in range(count)]
        by_index = {int(p["metadata"]["labels"][corejobs.COMPLETION_INDEX_LABEL]): p["spec"]["nodeName"] for p in pods}
        assert [by_index[i] for i in range(6)] == order

    path = f"{JOBS}/{name}"
    assert ko.wait_for(lambda: conditions.is_true(rest.get_json(creds, path), "Complete"), timeout=60)
    assert ko.wait_for(lambda: conditions.is_true(_workload_of(creds, created), "Finished"), timeout=30)
    assert ko.metric_sum(scheduler.metrics_text(), "kqbench_scheduler_job_steps_total", step="ungate-pod") >= 6


def test_a_stopped_job_gets_its_template_back_without_the_gate(cluster):
    creds, _ = cluster
    created = post(creds, JOBS, tas_job("long", 2, runtime="10m", indexed=False))
    path = f"{JOBS}/long"

    def running() -> list[dict]:
        return [p for p in _pods(creds, "long") if p["status"].get("phase") == "Running"]
    assert ko.wait_for(lambda: len(running()) == 2, timeout=60), "the admitted Job's pods never ran"
    template = rest.get_json(creds, path)["spec"]["template"]
    assert [g["name"] for g in template["spec"]["schedulingGates"]] == [corejobs.TOPOLOGY_GATE]
    assert template["metadata"]["annotations"][corejobs.UNCONSTRAINED_TOPOLOGY_ANNOTATION] == "true", "implicit TAS"
    assert template["metadata"]["labels"][corejobs.POD_SET_LABEL] == "main"

    workload = _workload_of(creds, created)
    merge_patch(creds, f"{ko.BASE}/namespaces/{NAMESPACE}/workloads/{workload['metadata']['name']}",
                {"spec": {"active": False}})

    def restored() -> bool:
        job = rest.get_json(creds, path)
        meta, spec = job["spec"]["template"]["metadata"], job["spec"]["template"]["spec"]
        return (job["spec"].get("suspend") is True and not spec.get("schedulingGates")
                and corejobs.WORKLOAD_ANNOTATION not in (meta.get("annotations") or {})
                and corejobs.POD_SET_LABEL not in (meta.get("labels") or {}))
    assert ko.wait_for(restored, timeout=60), f"not restored: {rest.get_json(creds, path)['spec']}"
