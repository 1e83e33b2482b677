"""Topology-aware scheduling, the reference scheduler against real Kueue v0.17.0 on the same input: the
same Workloads admitted onto the same nodes with the same counts, the one no rack holds pending with the
same message, and the same Workload preempted for a rack.

Each implementation gets its own fresh cluster of two pools of 8 nodes (2 blocks x 2 racks x 2 hosts of
4 cpu each), one TAS flavor and ClusterQueue per pool, so that the two inputs run side by side without
sharing a node: everything is created while the TAS flavors are missing (every queue inactive),
Workloads 1.1 s apart so creation order decides, then the flavors make the queues active.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.implementations.kueue import starting
from harness.kube import apiservice, kubeconfig, rest
from harness.nodes import pools, topologies as nodetopologies
from harness.progress import LineProgress
from harness.toolchain import building
from scheduler.api import groups
from scheduler.core import topologyconversion

from .conftest import kwok_cluster_with_report, running_scheduler
from .kueue_objects import BASE, create, listed, local_queue, wait_for
from .test_tas import NODES, SHAPE, TOPOLOGY, tas_workload

pytestmark = [pytest.mark.integration, pytest.mark.nightly]
"""Real Kueue beside the reference on one feature: the nightly tier, with the differential tester's runs;
`make test` keeps the reference scheduler's own tests of the feature."""

PLACE, PREEMPT = "place", "preempt"
"""The two inputs, each on its own pool, flavor, ClusterQueue and LocalQueue of that name."""


def _queued(workload: dict, pool: str, priority: int = 0) -> dict:
    return {**workload, "spec": {**workload["spec"], "queueName": pool, "priority": priority}}


WORKLOADS = [_queued(w, PLACE) for w in (
    tas_workload("w-0-rack-6", 6, required=nodetopologies.RACK_LABEL),
    tas_workload("w-1-block-12", 12, required=nodetopologies.BLOCK_LABEL),
    tas_workload("w-2-preferred-rack-5", 5, preferred=nodetopologies.RACK_LABEL),
    tas_workload("w-3-unconstrained-3", 3, unconstrained=True),
    tas_workload("w-4-host-2", 2, required=nodetopologies.HOSTNAME_LABEL),
    # Last, so both try it once every other is placed: its message counts the nodes that state excludes,
    # and Kueue retries a parked Workload only when an event requeues it, which races the admissions.
    tas_workload("w-5-rack-9", 9, required=nodetopologies.RACK_LABEL),
)]
FULL_RACKS = [_queued(tas_workload(f"low-{p}-rack-8", 8, required=nodetopologies.RACK_LABEL), PREEMPT, p)
              for p in range(4)]
"""Every rack of the preempt pool full (quota is not: 32 of 100 CPU)."""
NEWCOMER = _queued(tas_workload("high-rack-4", 4, required=nodetopologies.RACK_LABEL), PREEMPT, 10)


def _queue_objects(pool: str, preemption: dict | None = None) -> tuple[dict, list[dict]]:
    """The pool's TAS flavor (created last: it activates the queue) and its ClusterQueue and LocalQueue."""
    flavor = {"apiVersion": groups.API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": pool},
              "spec": {"nodeLabels": {pools.POOL_LABEL: pool}, "topologyName": TOPOLOGY}}
    spec = {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
            "resourceGroups": [{"coveredResources": ["cpu"],
                                "flavors": [{"name": pool, "resources": [{"name": "cpu", "nominalQuota": "100"}]}]}]}
    if preemption:
        spec["preemption"] = preemption
    cq = {"apiVersion": groups.API_VERSION, "kind": "ClusterQueue", "metadata": {"name": pool}, "spec": spec}
    return flavor, [cq, local_queue(pool, pool)]


def _decisions(creds) -> dict[str, object]:
    """Per Workload: its pods per node when admitted, else its QuotaReserved=False message."""
    out: dict[str, object] = {}
    for item in listed(creds, "workloads"):
        status = item.get("status") or {}
        name = item["metadata"]["name"]
        if status.get("admission"):
            [psa] = status["admission"]["podSetAssignments"]
            assignment = topologyconversion.assignment_from_dict(psa["topologyAssignment"])
            out[name] = (assignment.levels, tuple((d.values, d.count) for d in assignment.domains))
        else:
            out[name] = next((c.get("message") for c in status.get("conditions") or ()
                              if c["type"] == "QuotaReserved" and c["status"] == "False"), None)
    return out


def _settled(creds, total: int, quiet_seconds: float = 6.0, timeout: float = 120.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        now = _decisions(creds)
        if now != last or any(v is None for v in now.values()) or len(now) < total:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_seconds:
            return now
        time.sleep(1.0)
    raise AssertionError(f"decisions did not settle within {timeout:.0f}s; last: {last}")


def _evicted(creds) -> list[str]:
    return sorted(w["metadata"]["name"] for w in listed(creds, "workloads")
                  if any(c["type"] == "Evicted" and c["status"] == "True" for c in (w.get("status") or {}).get("conditions") or ()))


def decide(implementation: str, log_dir: Path) -> tuple[dict[str, object], list[str]]:
    """Both inputs' decisions once settled, then who is evicted when a priority-10 Workload needs a rack
    of the full preempt pool."""
    node_pools = [pools.NodePool(name=pool, count=NODES, cpu="4", topology=SHAPE) for pool in (PLACE, PREEMPT)]
    with kwok_cluster_with_report(f"tas-{implementation[:3]}", node_pools, schedulable_nodes=True) as (info, _):
        creds = kubeconfig.load(info.kubeconfig)
        if implementation == "kueue":
            starting.install_api(info)
        else:
            apiservice.install_crds(creds)
        topology = {"apiVersion": groups.API_VERSION, "kind": "Topology", "metadata": {"name": TOPOLOGY},
                    "spec": {"levels": [{"nodeLabel": label} for label in nodetopologies.LEVELS]}}
        rest.apply(creds, f"{BASE}/topologies/{TOPOLOGY}", topology)
        place_flavor, place_queues = _queue_objects(PLACE)
        preempt_flavor, preempt_queues = _queue_objects(PREEMPT, {"withinClusterQueue": "LowerPriority"})
        create(creds, [*place_queues, *preempt_queues])
        for i, workload in enumerate(WORKLOADS):
            create(creds, [workload, *FULL_RACKS[i:i + 1]])
            time.sleep(1.1)
        if implementation == "kueue":
            fields = {"implementation": "kueue", "qps": 50, "burst": 100}
        else:
            fields = {"write_pending_reasons": True}
        with running_scheduler(info, log_dir, **fields):
            time.sleep(3.0)
            assert not any(isinstance(v, tuple) for v in _decisions(creds).values()), "admitted without its flavor"
            create(creds, [place_flavor, preempt_flavor])
            assert wait_for(lambda: any(isinstance(v, tuple) for v in _decisions(creds).values()), timeout=60)
            settled = _settled(creds, len(WORKLOADS) + len(FULL_RACKS))
            create(creds, [NEWCOMER])
            return settled, wait_for(lambda: _evicted(creds), timeout=60)


@pytest.fixture(scope="module")
def decided(binaries, state_dir, tmp_path_factory):
    building.ensure_kueue(LineProgress(interval=10.0))
    logs = tmp_path_factory.mktemp("tas-agreement-logs")
    return {implementation: decide(implementation, logs) for implementation in ("reference", "kueue")}


def _differences(ours: dict, kueue: dict, names: list[str]) -> list[str]:
    return [f"{name}:\n  reference {ours.get(name)}\n  kueue     {kueue.get(name)}"
            for name in names if ours.get(name) != kueue.get(name)]


def test_reference_and_kueue_place_alike(decided):
    (ours, _), (kueue, _) = decided["reference"], decided["kueue"]
    names = [w["metadata"]["name"] for w in WORKLOADS]
    # The input exercises what it claims: a pod set no rack holds is pending, the others are placed.
    assert isinstance(ours["w-5-rack-9"], str) and "allows to fit only" in ours["w-5-rack-9"], ours
    assert sum(isinstance(ours[n], tuple) for n in names) == len(WORKLOADS) - 1, ours
    differences = _differences(ours, kueue, names)
    assert not differences, "decisions differ:\n" + "\n".join(differences)


def test_reference_and_kueue_preempt_alike_for_a_rack(decided):
    """Every rack full: the newcomer of priority 10 needs a rack, so the lowest-priority Workload holding
    one is preempted, in both."""
    (ours, ours_evicted), (kueue, kueue_evicted) = decided["reference"], decided["kueue"]
    names = [w["metadata"]["name"] for w in FULL_RACKS]
    assert all(isinstance(ours[n], tuple) for n in names), ours
    assert not _differences(ours, kueue, names)
    assert ours_evicted == kueue_evicted == ["low-0-rack-8"]
