"""Preemption on a real cluster: exactly the needed evictions are written, once each, and the
evicted workloads queue again."""

from __future__ import annotations

import pytest

from harness.kube import apiservice, kubeconfig

from . import kueue_objects as ko
from .conftest import kwok_cluster, running_scheduler

pytestmark = pytest.mark.integration


def conditions(workload: dict) -> dict[str, str]:
    return {c["type"]: c["status"] for c in (workload.get("status") or {}).get("conditions") or []}


def test_higher_priority_evicts_exactly_what_it_needs_once(binaries, state_dir):
    with kwok_cluster("preempt") as info:
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        ko.create(creds, [ko.flavor(), ko.local_queue("lq", "cq"),
                          ko.cluster_queue("cq", 6, cohort="solo", preemption={"withinClusterQueue": "LowerPriority"})])
        ko.create(creds, [ko.workload(f"low-{i}", "lq", 0, 1) for i in range(6)])
        with running_scheduler(info, no_client_limit=True) as scheduler:
            handle = scheduler.process

            def admitted(prefix):
                return [w for w in ko.listed(creds, "workloads")
                        if w["metadata"]["name"].startswith(prefix) and (w.get("status") or {}).get("admission")]

            assert ko.wait_for(lambda: len(admitted("low-")) == 6, timeout=30)
            # Two high-priority workloads of 2 CPUs each need 4 of the 6 CPUs the low ones hold.
            ko.create(creds, [ko.workload(f"high-{i}", "lq", 100, 2) for i in range(2)])
            assert ko.wait_for(lambda: len(admitted("high-")) == 2, timeout=60)
            evicted = [w for w in ko.listed(creds, "workloads")
                       if w["metadata"]["name"].startswith("low-") and conditions(w).get("Evicted") == "True"]
            assert len(evicted) == 4
            assert all(not (w.get("status") or {}).get("admission") for w in evicted), "evicted ones release quota"
            assert len(admitted("low-")) == 2
            text = handle.metrics_text()
            assert ko.metric_sum(text, "kqbench_scheduler_evicted_total") == 4, "each eviction written once"
            # The evicted ones queue again (the quota is full: 2 x 2 CPUs high + 2 x 1 CPU low).
            assert ko.wait_for(lambda: ko.metric_sum(handle.metrics_text(), "kqbench_scheduler_pending_workloads",
                                                     cluster_queue="cq") == 4, timeout=20)
