"""Admission fair sharing, the reference scheduler beside real Kueue v0.17.0 on the same input: the
pending order the visibility API gives a UsageBasedAdmissionFairSharing ClusterQueue, and which Workload
it admits when quota frees up.

One ClusterQueue of 4 CPUs, LocalQueues lq-a (weight 0.5), lq-b and lq-c. A 4-CPU Workload of lq-a
runs first, so lq-a has usage (its entry penalty at once, then its decayed usage) while lq-b and lq-c
have exactly none. Then five 4-CPU Workloads wait, created 1.1 s apart (timestamps, not UIDs, order
them): a1 first and at priority 100, which the classical order would put first; by usage it goes after
every Workload of lq-b and lq-c. Deleting the running Workload frees room for one: b1, the first of
the unused LocalQueues; c1 is then the head, lq-c still unused. What depends on timing (how far lq-b's
penalty and lq-a's decay have moved by then) is left out of the comparison.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from harness.implementations.kueue import starting
from harness.kube import apiservice, kubeconfig, rest
from harness.progress import LineProgress
from harness.toolchain import building

from .conftest import kwok_cluster, running_scheduler
from .kueue_objects import BASE, VISIBILITY, create, flavor, listed, local_queue, workload

pytestmark = [pytest.mark.integration, pytest.mark.nightly]
"""Real Kueue beside the reference on one feature: the nightly tier, with the differential tester's runs;
`make test` keeps the reference scheduler's own tests of the feature."""

HALF_LIFE_SECONDS, SAMPLING_SECONDS = 60.0, 1.0
WAITING = [("a1", "lq-a", 100), ("b1", "lq-b", 0), ("c1", "lq-c", 0), ("b2", "lq-b", 0), ("a2", "lq-a", 0)]


def queue_objects():
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
          "spec": {"queueingStrategy": "BestEffortFIFO", "namespaceSelector": {},
                   "admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"},
                   "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                       {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "4"}]}]}]}}
    lqs = [local_queue(name, "cq") for name in ("lq-a", "lq-b", "lq-c")]
    lqs[0]["spec"]["fairSharing"] = {"weight": "0.5"}
    return [flavor(), cq, *lqs]


def admitted(creds) -> set[str]:
    def is_admitted(w) -> bool:
        conditions = (w.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Admitted" and c["status"] == "True" for c in conditions)

    return {w["metadata"]["name"] for w in listed(creds, "workloads") if is_admitted(w)}


def pending(creds) -> list[str]:
    status, body = rest.get(creds, f"{VISIBILITY}/clusterqueues/cq/pendingworkloads?limit=100")
    assert status == 200, body[:300]
    return [item["metadata"]["name"] for item in json.loads(body)["items"]]


def until(read, done, timeout=90.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = read()
        if done(value):
            return value
        time.sleep(0.5)
    raise AssertionError(f"not reached within {timeout:.0f}s; last: {value}")


def consumed_cpu(creds, lq: str) -> str | None:
    """The cpu of a LocalQueue's status.fairSharing.admissionFairSharingStatus.consumedResources."""
    obj = rest.get_json(creds, f"{BASE}/namespaces/default/localqueues/{lq}")
    afs = ((obj.get("status") or {}).get("fairSharing") or {}).get("admissionFairSharingStatus") or {}
    return (afs.get("consumedResources") or {}).get("cpu")


def decide(implementation: str, log_dir: Path) -> tuple[list[str], set[str], list[str]]:
    """(pending order while a0 runs, admitted after it is deleted, pending order then)."""
    with kwok_cluster(f"afs-{implementation[:3]}", nodes=2) as info:
        creds = kubeconfig.load(info.kubeconfig)
        if implementation == "kueue":
            starting.install_api(info)
            fields = {"implementation": "kueue", "qps": 50, "burst": 100}
        else:
            apiservice.install_crds(creds)
            fields = {"strategy": "aggregated-indexed"}
        with running_scheduler(info, log_dir, **fields, admission_fair_sharing=True,
                               usage_half_life_seconds=HALF_LIFE_SECONDS,
                               usage_sampling_interval_seconds=SAMPLING_SECONDS):
            create(creds, queue_objects())
            create(creds, [workload("a0", "lq-a", 0, 4)])
            until(lambda: admitted(creds), lambda names: names == {"a0"})
            for wl_name, lq, priority in WAITING:
                create(creds, [workload(wl_name, lq, priority, 4)])
                time.sleep(1.1)
            before = until(lambda: pending(creds), lambda names: len(names) == len(WAITING))
            # both write lq-a's sampled usage to its status (the value depends on when it was sampled)
            until(lambda: consumed_cpu(creds, "lq-a"), lambda cpu: cpu not in (None, "0"))
            status, body = rest.request(creds, "DELETE", f"{BASE}/namespaces/default/workloads/a0")
            assert status in (200, 202), body[:300]
            after = until(lambda: admitted(creds), lambda names: "a0" not in names and len(names) == 1)
            return before, after, until(lambda: pending(creds), lambda names: len(names) == len(WAITING) - 1)


def test_reference_and_kueue_order_and_admit_alike_by_local_queue_usage(binaries, state_dir, tmp_path):
    building.ensure_kueue(LineProgress(interval=10.0))
    ours = decide("reference", tmp_path)
    # what the case claims, as the reference decides it: usage before priority, unused queues first
    assert ours[0] == ["b1", "c1", "b2", "a1", "a2"]
    assert ours[1] == {"b1"} and ours[2][0] == "c1"
    kueue = decide("kueue", tmp_path)
    assert kueue[0] == ours[0], f"pending order: reference {ours[0]}, kueue {kueue[0]}"
    assert kueue[1] == ours[1], f"admitted: reference {ours[1]}, kueue {kueue[1]}"
    assert kueue[2][0] == ours[2][0], f"head after: reference {ours[2]}, kueue {kueue[2]}"
