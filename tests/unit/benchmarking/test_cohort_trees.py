"""The cohort-tree benchmark's worlds: each mode turns on only its own ordering, and a cycle has work."""

from __future__ import annotations

import pytest

from benchmarks.micro import bench_cohort_trees as bench
from scheduler.core.decisions import Admit
from scheduler.core.scheduling import decide_cycle


@pytest.mark.parametrize("mode", bench.MODES)
def test_only_the_admission_mode_orders_by_local_queue_usage_and_every_cycle_admits(mode):
    manager = bench.tree_world(10, mode)
    flags = {cq.usage_based_admission for cq in manager.cache.quotas.cluster_queues.values()}
    assert flags == {mode == "admission"}
    assert manager.fair_sharing.enabled is (mode == "fair")
    assert any(isinstance(d, Admit) for d in decide_cycle(manager))
