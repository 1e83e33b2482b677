"""Decision agreement: the reference scheduler and real Kueue, given the same queues and Workloads,
admit the same Workloads to the same flavors and list the rest in the same order.

Each implementation gets its own fresh cluster (their CRDs differ). Everything is created while the
scheduler cannot admit: one of the two flavors is missing, which keeps every ClusterQueue inactive in
both. Workloads are created 1.1 s apart, so creation timestamps (1 s resolution) order them and the
UID tie-break, which differs between clusters, never decides. Then the scheduler starts, and creating
the missing flavor makes every queue active in one event.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import apiservice, kubeconfig, rest, schedulerproc
from harness.clusters import bringup, spec as specs
from harness.implementations.kueue import starting
from harness.nodes import pools
from harness.progress import LineProgress
from harness.toolchain import building

from .conftest import unique_name
from .kueue_objects import BASE, VISIBILITY, create, listed, local_queue

pytestmark = pytest.mark.integration

FLAVORS = ("on-demand", "spot")
QUEUES = {"lq-strict": "cq-strict", "lq-best": "cq-best"}


def flavor(name):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": name}}


def quota(nominal, borrowing=None, lending=None):
    out = {"name": "cpu", "nominalQuota": str(nominal)}
    if borrowing is not None:
        out["borrowingLimit"] = str(borrowing)
    if lending is not None:
        out["lendingLimit"] = str(lending)
    return out


def cluster_queue(name, strategy, on_demand, spot):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name},
            "spec": {"cohortName": "co", "queueingStrategy": strategy, "namespaceSelector": {},
                     "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                         {"name": "on-demand", "resources": [on_demand]}, {"name": "spot", "resources": [spot]}]}]}}


def queue_objects():
    """A cohort of a StrictFIFO and a BestEffortFIFO queue over two flavors, with borrowing and lending limits."""
    return [
        cluster_queue("cq-strict", "StrictFIFO", quota(6, borrowing=2, lending=1), quota(2, borrowing=0)),
        cluster_queue("cq-best", "BestEffortFIFO", quota(4, borrowing=3, lending=2), quota(3, lending=0)),
        *(local_queue(lq, cq) for lq, cq in QUEUES.items()),
    ]


SIZES = [2, 1, 3, 2, 3, 1, 2, 3, 1, 2, None, 2, 1, 3, 2, 1, 2, 3, 1, 2, 4, 1]
"""CPUs of w-00.. (even ones to cq-strict, odd ones to cq-best; every third from w-01 has priority 100).
w-10 is cq-strict's second head; its size is the test's parameter."""


def sizes(strict_head_cpu: int) -> list[int]:
    return [strict_head_cpu if cpu is None else cpu for cpu in SIZES]


def workloads(strict_head_cpu: int):
    """22 Workloads of 1-7 CPUs and two priorities: more than the cohort holds (15 CPUs)."""
    out = []
    for i, cpu in enumerate(sizes(strict_head_cpu)):
        lq = "lq-strict" if i % 2 == 0 else "lq-best"
        priority = 100 if i % 3 == 1 else 0
        out.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                    "metadata": {"name": f"w-{i:02d}", "namespace": "default"},
                    "spec": {"queueName": lq, "priority": priority, "podSets": [{
                        "name": "main", "count": 1,
                        "template": {"spec": {"containers": [{"name": "c", "image": "x",
                                                              "resources": {"requests": {"cpu": str(cpu)}}}]}}}]}})
    return out


@dataclass(frozen=True)
class Decisions:
    admitted: dict[str, tuple[str, str]]
    """Workload -> (ClusterQueue, flavor of its cpu)."""
    pending: dict[str, list[str]]
    """ClusterQueue -> pending Workloads in visibility order."""


def _admission(item) -> tuple[str, str] | None:
    conditions = (item.get("status") or {}).get("conditions") or []
    if not any(c["type"] == "Admitted" and c["status"] == "True" for c in conditions):
        return None
    admission = item["status"]["admission"]
    return admission["clusterQueue"], admission["podSetAssignments"][0]["flavors"]["cpu"]


def read_decisions(creds) -> Decisions:
    admitted = {w["metadata"]["name"]: a for w in listed(creds, "workloads") if (a := _admission(w))}
    pending = {}
    for cq in QUEUES.values():
        status, body = rest.get(creds, f"{VISIBILITY}/clusterqueues/{cq}/pendingworkloads?limit=1000")
        assert status == 200, body[:300]
        pending[cq] = [i["metadata"]["name"] for i in json.loads(body)["items"]]
    return Decisions(admitted, pending)


def settled(creds, total: int, quiet_seconds: float = 6.0, timeout: float = 120.0) -> Decisions:
    """Decisions once nothing changed for quiet_seconds and every Workload is either admitted or listed."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        now = read_decisions(creds)
        complete = len(now.admitted) + sum(map(len, now.pending.values())) == total
        if now != last or not complete:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_seconds:
            return now
        time.sleep(1.0)
    raise AssertionError(f"decisions did not settle within {timeout:.0f}s; last: {last}")


def decide(implementation: str, strict_head_cpu: int, log_dir: Path) -> Decisions:
    """One fresh cluster: objects first, then the scheduler, then the flavor that lets it admit."""
    name = unique_name(f"agree-{implementation[:3]}")
    handle = None
    try:
        info, _ = bringup.up(specs.ClusterSpec(name=name), [pools.NodePool(count=10)], LineProgress(interval=10.0))
        creds = kubeconfig.load(info.kubeconfig)
        if implementation == "kueue":
            starting.install_api(info)
        else:
            apiservice.install_crds(creds)
        create(creds, [flavor("spot"), *queue_objects()])
        for obj in workloads(strict_head_cpu):
            create(creds, [obj])
            time.sleep(1.1)
        if implementation == "kueue":
            handle = starting.start(info, log_dir=log_dir)
        else:
            handle = schedulerproc.start(info, strategy="aggregated-indexed", log_dir=log_dir)
        time.sleep(3.0)
        assert read_decisions(creds).admitted == {}, "a queue admitted with one of its flavors missing"
        rest.apply(creds, f"{BASE}/resourceflavors/on-demand", flavor("on-demand"))
        return settled(creds, total=len(SIZES))
    finally:
        if handle is not None:
            handle.stop()
        bringup.down(name)


@pytest.mark.parametrize("strict_head_cpu, best_on_demand", [
    # 7 CPUs exceed cq-strict's nominal quota: it cannot fit even after preemption, so cq-best
    # borrows cq-strict's unused on-demand quota, but only up to cq-strict's lendingLimit (4 + 1).
    (7, 5),
    # 6 CPUs fit cq-strict's nominal quota once it reclaims: Kueue holds that quota back for it
    # (no preemption policy lets it reclaim later), so cq-best borrows nothing (4).
    (6, 4),
])
def test_reference_and_kueue_decide_alike(binaries, state_dir, tmp_path, strict_head_cpu, best_on_demand):
    building.ensure_kueue(LineProgress(interval=10.0))
    ours = decide("reference", strict_head_cpu, tmp_path)
    kueue = decide("kueue", strict_head_cpu, tmp_path)
    # The scenario exercises what it claims (the reference's core decides this, and so must Kueue):
    cpus = sizes(strict_head_cpu)
    assert sum(cpus[int(name[2:])] for name, (cq, fl) in ours.admitted.items()
               if (cq, fl) == ("cq-best", "on-demand")) == best_on_demand
    assert "w-03" in ours.pending["cq-best"], "BestEffortFIFO parks a head that does not fit"
    assert ("w-05" in ours.admitted) is (best_on_demand == 5), "and admits a later one that does, if quota is left"
    assert ours.pending["cq-strict"][0] == "w-10" and "w-08" in ours.pending["cq-strict"], \
        "StrictFIFO waits behind its big head although a 1-CPU Workload would fit"
    differences = [f"{name}: reference {ours.admitted.get(name)}, kueue {kueue.admitted.get(name)}"
                   for name in sorted(set(ours.admitted) | set(kueue.admitted))
                   if ours.admitted.get(name) != kueue.admitted.get(name)]
    assert not differences, "admissions differ:\n" + "\n".join(differences)
    for cq in QUEUES.values():
        assert ours.pending[cq] == kueue.pending[cq], f"{cq} pending order: reference {ours.pending[cq]}, kueue {kueue.pending[cq]}"
