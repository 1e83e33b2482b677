"""Topology-aware scheduling on a real cluster: nodes loaded with block and rack labels, the reference
scheduler admits pod sets into one rack or block with the assignment written as Kueue v0.17.0 writes it,
and a pod set no rack can hold stays pending with Kueue's message and no admission."""

from __future__ import annotations

import collections

import pytest

from harness.kube import apiservice, kubeconfig, rest
from harness.nodes import pools, topologies as nodetopologies
from scheduler.core import topologyconversion

from .conftest import kwok_cluster_with_report, running_scheduler
from .kueue_objects import BASE, create, listed, local_queue, wait_for

pytestmark = pytest.mark.integration

SHAPE = nodetopologies.NodeTopology(racks_per_block=2, hosts_per_rack=2)
NODES = 8  # 2 blocks x 2 racks x 2 hosts of 4 cpu: a rack holds 8 one-cpu pods, a block 16
TOPOLOGY = "dc"


def tas_objects() -> list[dict]:
    flavor = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "tas"},
              "spec": {"nodeLabels": {pools.POOL_LABEL: "kwok"}, "topologyName": TOPOLOGY}}
    quota = {"name": "cpu", "nominalQuota": "100"}
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
          "spec": {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                   "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "tas", "resources": [quota]}]}]}}
    return [flavor, cq, local_queue("lq", "cq")]


def tas_workload(name: str, pods: int, **request: str) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": "lq", "podSets": [{
                "name": "main", "count": pods, "topologyRequest": request,
                "template": {"spec": {"containers": [{"name": "c", "image": "x",
                                                      "resources": {"requests": {"cpu": "1"}}}]}}}]}}


@pytest.fixture(scope="module")
def cluster(binaries, state_dir):
    node_pools = [pools.NodePool(count=NODES, cpu="4", topology=SHAPE)]
    with kwok_cluster_with_report("tas", node_pools, bulk=True, schedulable_nodes=True) as (info, report):
        assert report.nodes_ready == NODES
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        topology = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": TOPOLOGY},
                    "spec": {"levels": [{"nodeLabel": label} for label in nodetopologies.LEVELS]}}
        rest.apply(creds, f"{BASE}/topologies/{TOPOLOGY}", topology)
        create(creds, tas_objects())
        yield info, creds


def test_bulk_loaded_nodes_carry_their_block_and_rack(cluster):
    _, creds = cluster
    nodes = rest.get_json(creds, "/api/v1/nodes")["items"]
    racks = collections.Counter(n["metadata"]["labels"][nodetopologies.RACK_LABEL] for n in nodes)
    blocks = {n["metadata"]["labels"][nodetopologies.BLOCK_LABEL] for n in nodes}
    assert racks == {f"block-{b}-rack-{r}": 2 for b in range(2) for r in range(2)}
    assert blocks == {"block-0", "block-1"}


def _admission(creds, name):
    item = rest.get_json(creds, f"{BASE}/namespaces/default/workloads/{name}")
    return (item.get("status") or {}).get("admission")


def _pending_message(creds, name):
    item = rest.get_json(creds, f"{BASE}/namespaces/default/workloads/{name}")
    for condition in (item.get("status") or {}).get("conditions") or ():
        if condition["type"] == "QuotaReserved" and condition["status"] == "False":
            return condition.get("message")
    return None


def test_pod_sets_land_in_one_rack_or_block_and_one_no_rack_holds_stays_pending(cluster):
    info, creds = cluster
    create(creds, [tas_workload("rack-6", 6, required=nodetopologies.RACK_LABEL),
                   tas_workload("block-12", 12, required=nodetopologies.BLOCK_LABEL),
                   tas_workload("rack-9", 9, required=nodetopologies.RACK_LABEL)])
    with running_scheduler(info, write_pending_reasons=True):
        assert wait_for(lambda: _admission(creds, "rack-6") and _admission(creds, "block-12"), timeout=60)
        nodes = {n["metadata"]["name"]: n["metadata"]["labels"] for n in rest.get_json(creds, "/api/v1/nodes")["items"]}
        for name, level, pods in (("rack-6", nodetopologies.RACK_LABEL, 6),
                                  ("block-12", nodetopologies.BLOCK_LABEL, 12)):
            [psa] = _admission(creds, name)["podSetAssignments"]
            assignment = topologyconversion.assignment_from_dict(psa["topologyAssignment"])
            assert assignment.levels == (nodetopologies.HOSTNAME_LABEL,)
            assert assignment.pods == pods
            assert len({nodes[d.values[0]][level] for d in assignment.domains}) == 1, (name, assignment)
            assert all(d.count <= 4 for d in assignment.domains)  # 4 cpu per node
        message = wait_for(lambda: _pending_message(creds, "rack-9"), timeout=30)
        # Whichever order the three came in, the emptiest rack left holds 8 of its 9 pods.
        assert message.startswith(f'couldn\'t assign flavors to pod set main: topology "{TOPOLOGY}" allows to fit '
                                  "only 8 out of 9 pod(s)"), message
        assert _admission(creds, "rack-9") is None
        assert sum(1 for w in listed(creds, "workloads") if (w.get("status") or {}).get("admission")) == 2


def test_a_flavor_whose_topology_levels_no_node_has_gets_a_warning_event(cluster):
    info, creds = cluster
    nowhere = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": "nowhere"},
               "spec": {"levels": [{"nodeLabel": "example.com/no-such-level"}, {"nodeLabel": nodetopologies.HOSTNAME_LABEL}]}}
    rest.apply(creds, f"{BASE}/topologies/nowhere", nowhere)
    create(creds, [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                    "metadata": {"name": "tas-nowhere"}, "spec": {"topologyName": "nowhere"}}])
    uid = rest.get_json(creds, f"{BASE}/resourceflavors/tas-nowhere")["metadata"]["uid"]
    # The fields `kubectl describe resourceflavor tas-nowhere` selects its events by.
    selector = ("involvedObject.kind=ResourceFlavor,involvedObject.name=tas-nowhere,"
                f"involvedObject.uid={uid}")
    with running_scheduler(info):
        events = wait_for(lambda: rest.get_json(creds, f"/api/v1/events?fieldSelector={selector}")["items"],
                          timeout=30)
        [event] = events
        assert (event["type"], event["reason"]) == ("Warning", "TopologyLevelsOnNoNode")
        assert event["message"] == ("no Ready node has every level of Topology nowhere "
                                    f"(example.com/no-such-level, {nodetopologies.HOSTNAME_LABEL})")
        # The flavor that has nodes gets none.
        others = rest.get_json(creds, "/api/v1/events?fieldSelector=involvedObject.kind=ResourceFlavor")["items"]
        assert {e["involvedObject"]["name"] for e in others} == {"tas-nowhere"}
