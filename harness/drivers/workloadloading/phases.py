"""The workload-loading driver's phase: N pending Workloads into one LocalQueue, by POSTs or by bulk loading."""

from __future__ import annotations

from typing import Literal

from pydantic import PositiveFloat, PositiveInt

from harness.scenarios import base


class LoadWorkloadsPhase(base.Model):
    """`count` Workloads into LocalQueue `namespace/local_queue` (its ClusterQueue best without quota, so that
    they stay pending), POSTed through kube-apiserver or written into etcd; ends when the scheduler holds them."""

    kind: Literal["load-workloads"] = "load-workloads"
    path: Literal["posts", "bulk"] = "bulk"
    """posts: POSTs through kube-apiserver (harness.kube.posting); bulk: straight into etcd
    (harness.workloads.bulkloading, what `kqbench cluster load-workloads` does)."""
    count: PositiveInt = 10_000
    namespace: str = "kqbench-loading"
    local_queue: str = "lq"
    """One of the scenario's queues.local_queues; its ClusterQueue's pending gauge says when the scheduler holds them."""
    concurrency: PositiveInt = 48
    """posts only: POSTs in flight."""
    timeout_seconds: PositiveFloat = 900.0
    """Bound on the whole phase: writing, serving and the scheduler taking them."""


PHASES = (LoadWorkloadsPhase,)
