"""Topology-aware scheduling, the reference scheduler against real Kueue v0.17.0 on the same input: the
same Workloads admitted onto the same nodes with the same counts, and the one no rack holds pending
with the same message.

Each implementation gets its own fresh cluster of 8 nodes (2 blocks x 2
racks x 2 hosts of 4 cpu); everything is created while the TAS flavor is missing (every queue
inactive), Workloads 1.1 s apart so creation order decides, then the flavor makes the queue active.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import apiservice, kubeconfig, rest, schedulerproc
from harness.clusters import bringup, spec as specs
from harness.implementations.kueue import starting
from harness.nodes import pools, topologies as nodetopologies
from harness.progress import LineProgress
from harness.toolchain import building
from scheduler.core import topologyconversion

from .conftest import unique_name
from .kueue_objects import BASE, create, listed, local_queue, wait_for
from .test_tas import NODES, SHAPE, TOPOLOGY, tas_objects, tas_workload

pytestmark = pytest.mark.integration

WORKLOADS = [
    tas_workload("w-0-rack-6", 6, required=nodetopologies.RACK_LABEL),
    tas_workload("w-1-block-12", 12, required=nodetopologies.BLOCK_LABEL),
    tas_workload("w-2-preferred-rack-5", 5, preferred=nodetopologies.RACK_LABEL),
    tas_workload("w-3-unconstrained-3", 3, unconstrained=True),
    tas_workload("w-4-host-2", 2, required=nodetopologies.HOSTNAME_LABEL),
    # Last, so both try it once every other is placed: its message counts the nodes that state excludes,
    # and Kueue retries a parked Workload only when an event requeues it, which races the admissions.
    tas_workload("w-5-rack-9", 9, required=nodetopologies.RACK_LABEL),
]


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


def decide(implementation: str, log_dir: Path, workloads: list[dict] = WORKLOADS,
           then: Callable[[kubeconfig.Credentials], object] | None = None, preemption: dict | None = None):
    """Decisions once settled, and what ``then`` returns when given the cluster after that."""
    name = unique_name(f"tas-{implementation[:3]}")
    handle = None
    try:
        info, _ = bringup.up(specs.ClusterSpec(name=name, schedulable_nodes=True),
                             [pools.NodePool(count=NODES, cpu="4", topology=SHAPE)], LineProgress(interval=10.0))
        creds = kubeconfig.load(info.kubeconfig)
        if implementation == "kueue":
            starting.install_api(info)
        else:
            apiservice.install_crds(creds)
        topology = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": TOPOLOGY},
                    "spec": {"levels": [{"nodeLabel": label} for label in nodetopologies.LEVELS]}}
        rest.apply(creds, f"{BASE}/topologies/{TOPOLOGY}", topology)
        flavor, cq, *queues = tas_objects()
        if preemption:
            cq["spec"]["preemption"] = preemption
        create(creds, [cq, *queues])
        for obj in workloads:
            create(creds, [obj])
            time.sleep(1.1)
        if implementation == "kueue":
            handle = starting.start(info, log_dir=log_dir)
        else:
            handle = schedulerproc.start(info, log_dir=log_dir, extra_args=("--write-pending-reasons",))
        time.sleep(3.0)
        assert not any(isinstance(v, tuple) for v in _decisions(creds).values()), "admitted without its flavor"
        create(creds, [flavor])
        assert wait_for(lambda: any(isinstance(v, tuple) for v in _decisions(creds).values()), timeout=60)
        settled = _settled(creds, len(workloads))
        return settled, then(creds) if then else None
    finally:
        if handle is not None:
            handle.stop()
        bringup.down(name)


def test_reference_and_kueue_place_alike(binaries, state_dir, tmp_path):
    building.ensure_kueue(LineProgress(interval=10.0))
    ours, _ = decide("reference", tmp_path)
    kueue, _ = decide("kueue", tmp_path)
    # The input exercises what it claims: a pod set no rack holds is pending, the others are placed.
    assert isinstance(ours["w-5-rack-9"], str) and "allows to fit only" in ours["w-5-rack-9"], ours
    assert sum(isinstance(v, tuple) for v in ours.values()) == len(WORKLOADS) - 1, ours
    differences = [f"{name}:\n  reference {ours.get(name)}\n  kueue     {kueue.get(name)}"
                   for name in sorted(set(ours) | set(kueue)) if ours.get(name) != kueue.get(name)]
    assert not differences, "decisions differ:\n" + "\n".join(differences)


def _evicted(creds) -> list[str]:
    return sorted(w["metadata"]["name"] for w in listed(creds, "workloads")
                  if any(c["type"] == "Evicted" and c["status"] == "True" for c in (w.get("status") or {}).get("conditions") or ()))


def _preempt_for_a_rack(creds) -> list[str]:
    """A higher-priority Workload wanting a rack when every rack is full: who is evicted for it."""
    create(creds, [{**tas_workload("high-rack-4", 4, required=nodetopologies.RACK_LABEL),
                    **{"spec": {**tas_workload("high-rack-4", 4, required=nodetopologies.RACK_LABEL)["spec"],
                                "priority": 10}}}])
    return wait_for(lambda: _evicted(creds), timeout=60)


FULL_RACKS = [{**w, "spec": {**w["spec"], "priority": p}} for p, w in enumerate(
    tas_workload(f"low-{p}-rack-8", 8, required=nodetopologies.RACK_LABEL) for p in range(4))]


def test_reference_and_kueue_preempt_alike_for_a_rack(binaries, state_dir, tmp_path):
    """Every rack full (quota is not: 36 of 100 CPU): the newcomer of priority 10 needs a rack, so the
    lowest-priority Workload holding one is preempted, in both."""
    building.ensure_kueue(LineProgress(interval=10.0))
    preemption = {"withinClusterQueue": "LowerPriority"}
    ours, ours_evicted = decide("reference", tmp_path, FULL_RACKS, _preempt_for_a_rack, preemption)
    kueue, kueue_evicted = decide("kueue", tmp_path, FULL_RACKS, _preempt_for_a_rack, preemption)
    assert sum(isinstance(v, tuple) for v in ours.values()) == 4, ours
    assert ours == kueue
    assert ours_evicted == kueue_evicted == ["low-0-rack-8"]
